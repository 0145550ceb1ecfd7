"""Render-size and C-level consumption attacks (data only; run in both isolation modes).

Each script is a single long C call that ignores the wall-clock timeout unless a
guard refuses it first (``scriptgate/sandbox/sizeguard.py``): rendering a value
that holds a big list many times (``str``, ``repr``, ``ascii``, ``format``,
``%``, ``str.format``, f-strings, ``print``, ``json.dumps``, exception messages,
the script's value, tool-call arguments), quadratic ``sum()`` of lists, and
``list()`` of an unbounded C iterator (``Counter.elements()``).

Same :class:`Attack` records as ``attacks.py``, run under its :data:`ATTACK_LIMITS`
(200,000 steps, 100,000 output characters, 1 MB result, 3 s).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from sandbox_support import load

__all__ = ["RENDER_ATTACKS"]


def _base() -> ModuleType:
    return load("attacks.py")


Attack = _base().Attack
_UNSET: Any = _base()._UNSET


def _a(
    id: str,
    category: str,
    source: str,
    expect: str,
    message: str | None = None,
    value: Any = _UNSET,
) -> Any:
    return Attack("r-" + id, category, source, expect, message, value)


_BIG = "x = [1] * 10**6\ny = [x] * 100\n"
"""A list holding the same million-item list 100 times: ~300 MB of text."""
_DICT = "x = dict.fromkeys(range(190000), 10**9)\ny = [x] * 50\n"
_NEST = "x = [1] * 1000\ny = [x] * 1000\nz = [y] * 1000\n"
_TOO = "too large"

RENDER_ATTACKS: list[Any] = [
    # -- rendering a container to text ---------------------------------------------------------
    _a("repr-shared-rows", "8-render", _BIG + "len(repr(y))", "limit", _TOO),
    _a("str-shared-rows", "8-render", _BIG + "len(str(y))", "limit", _TOO),
    _a("ascii-shared-rows", "8-render", _BIG + "len(ascii(y))", "limit", _TOO),
    _a("format-builtin-shared-rows", "8-render", _BIG + "len(format(y))", "limit", _TOO),
    _a("print-shared-rows", "8-render", _BIG + "print(y)", "limit", "output"),
    _a("print-star-shared-rows", "8-render", _BIG + "print(*y)", "limit", "output"),
    _a("print-long-sep", "8-render", "print(*range(10), sep='x' * 2000000)", "limit", "output"),
    _a("json-dumps-shared-rows", "8-render", _BIG + "import json\nlen(json.dumps(y))", "limit", _TOO),
    _a("json-dumps-indent", "8-render", "import json\nx = [[1] * 100] * 100\nlen(json.dumps([x] * 30, indent=64))", "limit", _TOO),
    _a("json-dumps-default-amplifies", "8-render", "import json\nclass A:\n    pass\nx = [1] * 10**6\nlen(json.dumps([A()] * 100, default=lambda o: x))", "limit", _TOO),
    _a("json-dumps-non-ascii-escapes", "8-render", "import json\nlen(json.dumps('\\u00e9' * 5000000))", "limit", _TOO),
    _a("fstring-shared-rows", "8-render", _BIG + "len(f'{y}')", "limit", _TOO),
    _a("fstring-repr-shared-rows", "8-render", _BIG + "len(f'{y!r}')", "limit", _TOO),
    _a("fstring-ascii-shared-rows", "8-render", _BIG + "len(f'{y!a}')", "limit", _TOO),
    _a("fstring-spec-shared-rows", "8-render", _BIG + "len(f'{y!s:>10}')", "limit", _TOO),
    _a("str-format-shared-rows", "8-render", _BIG + "len('{}'.format(y))", "limit", _TOO),
    _a("str-format-repr-shared-rows", "8-render", _BIG + "len('{0!r}'.format(y))", "limit", _TOO),
    _a("str-format-map-shared-rows", "8-render", _BIG + "len('{v}'.format_map({'v': y}))", "limit", _TOO),
    _a("percent-shared-rows", "8-render", _BIG + "len('%s' % (y,))", "limit", _TOO),
    _a("percent-bare-list", "8-render", _BIG + "len('%r' % [y])", "limit", _TOO),
    _a("str-shared-dicts", "8-render", _DICT + "len(str(y))", "limit", _TOO),
    _a("str-three-levels", "8-render", _NEST + "len(str(z))", "limit", _TOO),
    _a("str-deque-shared", "8-render", _BIG + "import collections\nlen(str(collections.deque(y)))", "limit", _TOO),
    _a("str-tuple-set-mix", "8-render", _BIG + "len(str((frozenset([1]), tuple(y))))", "limit", _TOO),
    _a("str-dict-values-view", "8-render", "x = dict.fromkeys(range(100000), 'y' * 200)\nlen(str(x.values()))", "limit", _TOO),
    _a("str-exception-args", "8-render", _BIG + "e = ValueError(y)\nlen(str(e))", "limit", _TOO),
    _a("repr-exception-args", "8-render", _BIG + "len(repr(KeyError(1, y)))", "limit", _TOO),
    _a("str-subclass-call", "8-render", _BIG + "class S(str):\n    pass\nlen(S(y))", "limit", _TOO),
    _a("ascii-non-bmp-string", "8-render", "len(ascii('\\U0001f600' * 2000000))", "limit", _TOO),
    _a("str-self-reference-ok", "8-render", "a = []\na.append(a)\nstr(a) + repr([a, a])", "ok", value="[[...]][[[...]], [[...]]]"),
    _a("str-small-values-ok", "8-render", "str([1, 'a', None, 2.5, {'k': (1, 2)}]) + f'{[1]}{3:>3}' + '%s' % [2]", "ok", value="[1, 'a', None, 2.5, {'k': (1, 2)}][1]  3[2]"),
    # -- values the host renders or copies after (or outside) the script ---------------------------
    _a("raise-shared-rows", "8-render", _BIG + "raise ValueError(y)", "runtime", "..."),
    _a("assert-shared-rows", "8-render", _BIG + "assert False, y", "runtime", "..."),
    # refused for its values, counted per reference, before its bytes (findings18 L04)
    _a("value-shared-rows", "8-render", _BIG + "y", "limit", "values, more than the"),
    _a("tool-arguments-shared-rows", "8-render", _BIG + "echo(data=y)", "limit", _TOO),
    # -- quadratic sum() of sequences -----------------------------------------------------------
    _a("sum-lists-linear-ok", "8-cpu", "len(sum([[1]] * 50000, []))", "ok", value=50000),
    _a("sum-tuples-linear-ok", "8-cpu", "len(sum([(1, 2)] * 40000, ()))", "ok", value=80000),
    _a("sum-lists-charged", "8-cpu", "x = list(range(100000))\nlen(sum([x] * 200, []))", "limit", "step"),
    _a("sum-sorted-lists", "8-cpu", "x = list(range(100000))\nlen(sorted(sum([x] * 100, [])))", "limit", "step"),
    _a("sum-mixed-types-error", "8-cpu", "sum([[1], (2,)], [])", "runtime", "concatenate"),
    # -- C consumption of an unbounded iterator -----------------------------------------------------
    _a("counter-elements-list", "8-memory", "import collections\nc = collections.Counter(a=10**18)\nlist(c.elements())", "limit", _TOO),
    _a("counter-elements-sorted", "8-memory", "import collections\nc = collections.Counter(a=10**18)\nsorted(c.elements())", "limit", _TOO),
    _a("counter-elements-join", "8-memory", "import collections\nc = collections.Counter(a=10**18)\n''.join(c.elements())", "limit", _TOO),
    _a("counter-elements-sum-of-counts", "8-memory", "import collections\nc = collections.Counter({'a': 6000000, 'b': 6000000})\ntuple(c.elements())", "limit", _TOO),
    _a("counter-elements-unbound", "8-memory", "import collections\nc = collections.Counter(a=10**18)\nlist(collections.Counter.elements(c))", "limit", _TOO),
    _a("counter-elements-subclass", "8-memory", "import collections\nclass C(collections.Counter):\n    pass\nc = C(a=10**18)\nset(c.elements())", "limit", _TOO),
    _a("counter-elements-getattr", "8-memory", "import collections\nc = collections.Counter(a=10**18)\ndict.fromkeys(getattr(c, 'elements')())", "limit", _TOO),
    _a("re-finditer-list", "8-memory", "import re\nlen(list(re.finditer('', 'x' * 10**7)))", "limit", "step"),
    _a("re-pattern-finditer-list", "8-memory", "import re\np = re.compile('')\nlen(list(p.finditer('x' * 10**7)))", "limit", "step"),
    _a("re-pattern-finditer-stored", "8-memory", "import re\nf = re.compile('').finditer\nlen(tuple(f('x' * 10**7)))", "limit", "step"),
    _a("re-finditer-small-ok", "8-memory", "import re\np = re.compile('a')\n[m.start() for m in p.finditer('banana')] + [m.group() for m in re.finditer('n.', 'banana')]", "ok", value=[1, 3, 5, "na", "na"]),
    _a("counter-elements-small-ok", "8-memory", "import collections\nsorted(collections.Counter(a=2, b=1).elements())", "ok", value=["a", "a", "b"]),
]  # fmt: skip
"""Attacks that run in both isolation modes (registered in test_attack_suite.py)."""
