"""The stand-ins added for issue 14: each member's feature and its attack next to it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import modules


async def _run(source: str) -> ScriptResult:
    return await Sandbox(limits=Limits(timeout=3)).run(source)


def run(source: str) -> ScriptResult:
    return anyio.run(_run, source)


def value(source: str) -> Any:
    result = run(source)
    assert result.ok, result.error
    return result.value


def plain(source: str) -> Any:
    """What plain Python gives for ``source`` whose last line is an expression."""
    *body, last = source.rstrip().split("\n")
    scope: dict[str, Any] = {}
    exec("\n".join(body), scope)
    return eval(last, scope)


def refused(source: str, kind: str, words: str) -> None:
    result = run(source)
    assert result.error is not None, result.value
    assert result.error.kind == kind, result.error
    assert words in result.error.message, result.error.message


FEATURES = {
    "heapq": "import heapq\nh = []\nfor x in [5, 1, 4, 2]:\n    heapq.heappush(h, x)\n"
    "([heapq.heappop(h) for _ in range(4)], heapq.nlargest(2, [3, 1, 9, 7]),"
    " heapq.nsmallest(2, ['bb', 'a', 'ccc'], key=len), list(heapq.merge([1, 3], [2, 4])))",
    "heapq-tuples": "import heapq\nh = [(3, 'c'), (1, 'a'), (2, 'b')]\nheapq.heapify(h)\n"
    "[heapq.heappop(h)[1] for _ in range(3)]",
    "bisect": "import bisect\na = [1, 3, 5]\nbisect.insort(a, 4)\n"
    "(a, bisect.bisect_left(a, 3), bisect.bisect(a, 10), bisect.bisect_right(a, 3, key=None))",
    "operator": "from operator import itemgetter, attrgetter, methodcaller, add, mul\n"
    "rows = [{'a': 2, 'b': 'x'}, {'a': 1, 'b': 'y'}]\n"
    "(sorted(rows, key=itemgetter('a')), [itemgetter('a', 'b')(r) for r in rows],"
    " methodcaller('upper')('x'), add(1, 2), mul(3, 4), attrgetter('real')(5))",
    "operator-compare": "import operator\n"
    "(operator.eq([1], [1]), operator.lt(1, 2), operator.contains([1, 2], 2), operator.neg(3))",
    "copy": "import copy\na = [[1, 2], {'k': [3]}, (4, [5])]\nb = copy.deepcopy(a)\n"
    "b[0].append(9)\nb[2][1].append(6)\n(a, b, copy.copy(a) == a, copy.copy(a) is a)",
    "copy-shared": "import copy\ns = [1]\nb = copy.deepcopy([s, s])\nb[0].append(2)\nb",
    "textwrap": "import textwrap\n(textwrap.wrap('the quick brown fox jumps', 10),"
    " textwrap.dedent('  a\\n  b'), textwrap.shorten('hello world foo', 12),"
    " textwrap.indent('a\\nb', '> '), textwrap.fill('aa bb cc', 5))",
    "string-capwords": "import string\nstring.capwords('hello   big world')",
    "functools-partial": "from functools import partial\n"
    "def f(a, b, c=0):\n    return a + b + c\np = partial(f, 1, c=5)\n(p(2), p(2, c=1), p.args)",
    "functools-wraps": "from functools import wraps\ndef deco(fn):\n    @wraps(fn)\n"
    "    def inner(*a):\n        return fn(*a) + 1\n    return inner\n@deco\ndef g(x):\n"
    "    return x * 2\ng(3)",
    "base64": "import base64\n(base64.b64encode(b'hi').decode(), base64.b64decode('aGk=').decode(),"
    " base64.urlsafe_b64encode(b'\\xff\\xfe').decode(), base64.b16encode(b'a').decode())",
    "hashlib": "import hashlib\nh = hashlib.sha256(b'abc')\nh.update(b'd')\n"
    "(h.hexdigest(), hashlib.md5('x'.encode()).hexdigest(), hashlib.new('sha1', b'').hexdigest(),"
    " h.copy().digest_size)",
    "random-Random": "import random\nr = random.Random(42)\n"
    "[r.randint(1, 100) for _ in range(3)] + [r.getrandbits(8), r.choice('abc')]",
    "typing-members": "from typing import cast, TypeVar, NamedTuple\nT = TypeVar('T')\n"
    "class P(NamedTuple):\n    x: int\n    y: int = 2\n[cast(int, 3), P(1).x, P(1).y]",
    "percent-inline": "n, f = 7, 2.5\n['u%d' % n, '%s-%05.1f' % ('a', f), '%d%%' % n, '%(a)s' % {'a': 1},"
    " '%s' % [1, 2], '%r' % None]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_stand_ins_match_plain_python(name: str) -> None:
    source = FEATURES[name]
    assert value(source) == _jsonish(plain(source))


def _jsonish(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonish(v) for k, v in value.items()}
    return value


ATTACKS = {
    "operator-attrgetter-dunder": (
        "import operator\noperator.attrgetter('__class__.__subclasses__')(1)",
        "runtime",
        "__subclasses__",
    ),
    "operator-attrgetter-dotted": (
        "import operator\noperator.attrgetter('real.__dict__')(1)",
        "runtime",
        "__dict__",
    ),
    "operator-methodcaller-dunder": (
        "import operator\noperator.methodcaller('__reduce_ex__', 2)([])",
        "runtime",
        "invalid attribute name",
    ),
    "operator-mul-huge": ("import operator\noperator.mul('a', 10 ** 10)", "limit", "too large"),
    "operator-pow-huge": ("import operator\noperator.pow(10, 10 ** 9)", "limit", "too large"),
    "operator-lshift-huge": ("import operator\noperator.lshift(1, 10 ** 10)", "limit", "too large"),
    "operator-eq-dag": (
        "import operator\na = []\nb = []\nfor i in range(60):\n    a = [a, a]\n    b = [b, b]\n"
        "operator.eq(a, b)",
        "limit",
        "",
    ),
    "heapq-dag-item": (
        "import heapq\na = []\nfor i in range(60):\n    a = [a, a]\nh = [a]\nheapq.heappush(h, a[:])",
        "limit",
        "",
    ),
    "heapq-nlargest-dag": (
        "import heapq\na = []\nb = []\nfor i in range(60):\n    a = [a, a]\n    b = [b, b]\n"
        "heapq.nlargest(1, [a, b])",
        "limit",
        "",
    ),
    "bisect-dag-probe": (
        "import bisect\na = []\nb = []\nfor i in range(60):\n    a = [a, a]\n    b = [b, b]\n"
        "bisect.bisect([a], b)",
        "limit",
        "",
    ),
    "copy-module": ("import copy\nimport json\ncopy.deepcopy(json)", "runtime", "not available"),
    "copy-function": ("import copy\ndef f():\n    pass\ncopy.copy(f)", "runtime", "not available"),
    "copy-huge": (
        "import copy\nx = list(range(10 ** 6))\nfor i in range(200):\n    x = copy.deepcopy([x, x])\n",
        "limit",
        "",
    ),
    "textwrap-width": ("import textwrap\ntextwrap.fill('a' * 10, width=10 ** 9)", "limit", "width"),
    "textwrap-indent": (
        "import textwrap\ntextwrap.indent('\\n' * 100000, 'x' * 100000)",
        "limit",
        "too large",
    ),
    "base64-huge": ("import base64\nbase64.b64encode(b'a' * 6_000_000)", "limit", "base64"),
    "hashlib-unknown": ("import hashlib\nhashlib.new('whirlpool')", "runtime", "unsupported"),
    "random-Random-choices-huge": (
        "import random\nrandom.Random(1).choices([1], k=10 ** 9)",
        "limit",
        "too large",
    ),
    "random-getrandbits-huge": ("import random\nrandom.getrandbits(10 ** 9)", "limit", "bits"),
    "random-Random-generator": (
        "import random\ngetattr(random.Random(1), '_rng')",
        "runtime",
        "not available",
    ),
    "random-seed-object": ("import random\nrandom.seed([1])", "runtime", "seed takes"),
    "typing-typevar-internals": (
        "from typing import TypeVar\ngetattr(TypeVar('T'), '__init__')",
        "runtime",
        "__init__",
    ),
    "percent-inline-huge-width": ("'%10000000000d' % 1", "limit", "width"),
    "percent-inline-star-width": ("'%*d' % (10 ** 9, 1)", "limit", "width above"),
    "percent-inline-shared-rows": (
        "x = ['y' * 1000] * 1000\nrows = [x] * 1000\n'%s' % (rows,)",
        "limit",
        "",
    ),
    "slice-chain": ("s = slice(1)\nfor i in range(1000):\n    s = slice(s)", "runtime", "slice"),
    "functools-partial-not-real": (
        "from functools import partial\np = partial(print)\np.__setstate__",
        "rejected",
        "_",
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_stand_ins_refuse(name: str) -> None:
    source, kind, words = ATTACKS[name]
    refused(source, kind, words)


def test_stand_ins_declare_holdable_types() -> None:
    assert all(isinstance(t, type) for t in modules.HOLDABLE)
    import hashlib

    assert type(hashlib.sha256()) in modules.HOLDABLE
    for name in ("heapq", "bisect", "operator", "copy", "textwrap", "base64", "hashlib"):
        assert name in modules.MODULE_NAMES


def test_stand_ins_hash_object_holds_no_host_path() -> None:
    # __class__ is readable (issue 14); what lies behind the hash object's class is not
    refused("import hashlib\nhashlib.sha256().__class__.__subclasses__()", "rejected", "_")
    assert value("import hashlib\nh = hashlib.sha256()\nh.name") == "sha256"
