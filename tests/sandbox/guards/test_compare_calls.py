"""Builtins, container methods and stand-in modules that compare or hash in C (issue 5).

``sorted``/``min``/``max``/``list.sort``, ``lst.index``, ``d.get``, ``s.add``,
``set()``/``dict()`` and every hash feed, ``functools.cache``, ``groupby`` and the
sorting statistics functions each check, before the real C call, the values it
compares or hashes (``guards`` "comparing and hashing calls", ``dagguard``). Each
site is proved twice: a script handing it values built from shared references
(which would stall the host for ever without the check) ends with a size limit,
and the same call on ordinary values gives what plain Python gives — results,
exceptions and the order key functions run in.
"""

from __future__ import annotations

import collections
import json
from typing import Any

import anyio
import pytest

from scriptgate.sandbox.guards import comparisons as dagguard
from scriptgate.sandbox.guards.attributes import (
    FAST_RECEIVER_SLOW_NAMES,
    hash_bounded,
    hashed_ok,
    hashed_whole,
)
from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

LIMITS = Limits(timeout=20, max_steps=5_000_000)

_LISTS = (
    "a = [0] * 1000\nb = [0] * 1000\nfor i in range(4):\n    a = [a] * 1000\n    b = [b] * 1000\n"
)
"""Two distinct equal lists standing for 10**15 items each (a few kilobytes)."""
_FPAIRS = (
    "F = frozenset({1})\nG = frozenset({1})\nfor i in range(60):\n"
    "    F, G = frozenset({(F, G)}), frozenset({(G, F)})\n"
)
_TUPLE = "t = 0\nfor i in range(50):\n    t = (t, t)\n"
"""A tuple standing for 2**50 items."""
_FROZEN = (
    "F = frozenset({1})\nG = frozenset({1})\nfor i in range(60):\n"
    "    F, G = frozenset({(F, G)}), frozenset({(G, F)})\n"
)
"""Two equal frozensets with equal hashes, cheap to hash, 2**60 comparisons to compare."""
_SHARED = "shared references"


def run(source: str) -> ScriptResult:
    return anyio.run(Sandbox([], limits=LIMITS).run, source)


def outcome(result: ScriptResult) -> Any:
    if result.ok:
        return ("ok", result.value)
    assert result.error is not None
    return ("error", result.error.kind, result.error.type, result.error.message)


def plain(source: str) -> Any:
    """What plain Python gives for ``source`` (its last line an expression), as JSON."""
    *body, last = source.split("\n")
    namespace: dict[str, Any] = {"__name__": "__plain__"}
    try:
        exec("\n".join(body), namespace)
        value = eval(last, namespace)
    except Exception as error:
        return ("error", "runtime", type(error).__name__, str(error))
    return ("ok", json.loads(json.dumps(value)))


def refused(source: str) -> None:
    result = run(source)
    assert result.error is not None, f"ran: {result.value!r}"
    assert result.error.kind == "limit", result.error
    assert result.error.type == "LimitExceeded"
    assert _SHARED in result.error.message or "too deep" in result.error.message


# ----------------------------------------------------------------------------- refusals

REFUSED = {
    # builtins
    "sorted": _LISTS + "sorted([a, b, a])",
    "sorted-key": _LISTS + "sorted([0, 1], key=lambda i: [a, b][i])",
    "sorted-key-reverse": _LISTS + "sorted([0, 1], key=lambda i: [a, b][i], reverse=True)",
    "sorted-generator": _LISTS + "sorted(x for x in (a, b))",
    "min": _LISTS + "min([a, b])",
    "max-arguments": _LISTS + "max(a, b)",
    "max-key": _LISTS + "max([0, 1], key=lambda i: [a, b][i])",
    "min-key-arguments": _LISTS + "min(0, 1, key=lambda i: [a, b][i])",
    "max-default": _LISTS + "max(iter([a, b]), default=0)",
    "set": _TUPLE + "set([t])",
    "set-tuple-input": _TUPLE + "set((1, t))",
    "frozenset-generator": _TUPLE + "frozenset(x for x in [t])",
    "set-large-input": _TUPLE + "set([0] * 1000 + [t])",
    "set-repeated-tuple": "t = (0,) * 1000\nt = (t,) * 1000\nset([t] * 100000)",
    "set-of-deque": _TUPLE + "from collections import deque\nset(deque([t]))",
    "set-of-values": _TUPLE + "set({1: t}.values())",
    "set-of-items": _TUPLE + "set({1: t}.items())",
    "dict": _TUPLE + "dict([(t, 1)])",
    "dict-list-pair": _TUPLE + "dict([[t, 1]])",
    "dict-generator-pair": _TUPLE + "dict([(x for x in (t, 1))])",
    "dict-zip": _TUPLE + "dict(zip([t], [1]))",
    "set-display-star": _TUPLE + "{*[t]}",
    # the names used as values: the builtins are checking stand-ins of the real types
    "set-alias": _TUPLE + "f = set\nf([t])",
    "frozenset-mapped": _TUPLE + "list(map(frozenset, [[t]]))",
    "dict-alias": _TUPLE + "make = dict\nmake([(t, 1)])",
    "set-subclass": _TUPLE + "class S(set):\n    pass\nS([t])",
    "frozenset-subclass": _TUPLE + "class F(frozenset):\n    pass\nF([t])",
    "dict-subclass": _TUPLE + "class D(dict):\n    pass\nD([(t, 1)])",
    "defaultdict-factory": _TUPLE
    + "from collections import defaultdict\nd = defaultdict(lambda: set([t]))\nd[1]",
    "set-frozenset-pair": _FROZEN + "set([F, G])",
    # list, tuple, deque methods compare the argument with each item
    "list-index": _LISTS + "[a, b].index(b)",
    "list-count": _LISTS + "([a] * 2).count(b)",
    "list-remove": _LISTS + "xs = [a]\nxs.remove(b)",
    "tuple-index": _LISTS + "(a, a).index(b)",
    "tuple-count": _LISTS + "(a,).count(b)",
    "deque-index": _LISTS + "from collections import deque\ndeque([a]).index(b)",
    "deque-remove": _LISTS + "from collections import deque\ndeque([a]).remove(b)",
    "namedtuple-count": _LISTS
    + "from collections import namedtuple\nP = namedtuple('P', 'x')\nP(a).count(b)",
    "list-subclass-index": _LISTS + "class L(list):\n    pass\nL([a]).index(b)",
    "list-sort": _LISTS + "xs = [a, b]\nxs.sort()",
    "list-sort-key": _LISTS + "xs = [0, 1]\nxs.sort(key=lambda i: [a, b][i])",
    "list-sort-stored": _LISTS + "xs = [a, b]\nsort = xs.sort\nsort(reverse=True)",
    "list-subclass-sort": _LISTS + "class L(list):\n    pass\nL([a, b]).sort()",
    # dict and set methods hash the argument
    "dict-get": _TUPLE + "{}.get(t)",
    "dict-get-default": _TUPLE + "{}.get(t, 0)",
    "dict-setdefault": _TUPLE + "d = {}\nd.setdefault(t)",
    "dict-pop": _TUPLE + "d = {}\nd.pop(t, 0)",
    "dict-get-mapped": _TUPLE + "list(map({}.get, [t]))",
    "dict-get-frozenset-pair": _FROZEN + "{G: 1}.get(F)",
    "set-add": _TUPLE + "s = set()\ns.add(t)",
    "set-add-frozenset-pair": _FROZEN + "s = {G}\ns.add(F)",
    "set-discard": _TUPLE + "s = set()\ns.discard(t)",
    "set-remove": _TUPLE + "s = {1}\ns.remove(t)",
    "set-update": _TUPLE + "s = set()\ns.update([t])",
    "set-union-many": _TUPLE + "{1}.union([1], [t])",
    "set-isdisjoint": _TUPLE + "{1}.isdisjoint([t])",
    "frozenset-union": _TUPLE + "frozenset().union((t,))",
    "dict-update": _TUPLE + "d = {}\nd.update([(t, 1)])",
    "dict-fromkeys": _TUPLE + "dict.fromkeys([t])",
    "dict-fromkeys-instance": _TUPLE + "{}.fromkeys(iter([t]))",
    "dict-ior": _TUPLE + "d = {}\nd |= [(t, 1)]",
    "dict-subclass-get": _TUPLE + "class D(dict):\n    pass\nD().get(t)",
    "set-subclass-add": _TUPLE + "class S(set):\n    pass\nS().add(t)",
    "keys-isdisjoint": _TUPLE + "{1: 2}.keys().isdisjoint([t])",
    "items-isdisjoint": _LISTS + "{1: a}.items().isdisjoint([(1, b)])",
    # collections
    "counter": _TUPLE + "from collections import Counter\nCounter([t])",
    "counter-update": _TUPLE + "from collections import Counter\nc = Counter()\nc.update([t])",
    "counter-subtract": _TUPLE
    + "from collections import Counter\nc = Counter()\nc.subtract(iter([t]))",
    "counter-update-unbound": _TUPLE
    + "from collections import Counter\nc = Counter()\nCounter.update(c, [t])",
    "counter-get": _TUPLE + "from collections import Counter\nCounter().get(t)",
    "counter-most-common": _LISTS
    + "from collections import Counter\nc = Counter()\nc[1] = a\nc[2] = b\nc.most_common(1)",
    "ordereddict": _TUPLE + "from collections import OrderedDict\nOrderedDict([(t, 1)])",
    "ordereddict-move-to-end": _TUPLE
    + "from collections import OrderedDict\nOrderedDict({1: 2}).move_to_end(t)",
    "ordereddict-pop": _TUPLE + "from collections import OrderedDict\nOrderedDict().pop(t, 0)",
    "defaultdict": _TUPLE + "from collections import defaultdict\ndefaultdict(int, [(t, 1)])",
    "defaultdict-get": _TUPLE + "from collections import defaultdict\ndefaultdict(int).get(t)",
    # stand-in modules
    "functools-cache": _TUPLE + "import functools\n@functools.cache\ndef f(x):\n    return 1\nf(t)",
    "lru-cache-keyword": _TUPLE
    + "import functools\n@functools.lru_cache(maxsize=8)\ndef f(x=0):\n    return 1\nf(x=t)",
    "lru-cache-bare": _TUPLE
    + "import functools\n@functools.lru_cache\ndef f(x):\n    return 1\nf(t)",
    "lru-cache-method": _TUPLE
    + "import functools\nclass A:\n    @functools.cache\n    def f(self, x):\n        return 1\nA().f(t)",
    "groupby": _LISTS + "import itertools\nlist(itertools.groupby([a, b]))",
    "groupby-key": _LISTS
    + "import itertools\nlist(itertools.groupby([0, 1], key=lambda i: [a, b][i]))",
    "statistics-median": _LISTS + "import statistics\nstatistics.median([a, b, a])",
    "statistics-median-low": _LISTS + "import statistics\nstatistics.median_low([a, b])",
    "statistics-median-high": _LISTS + "import statistics\nstatistics.median_high([a, b])",
    "statistics-quantiles": _LISTS + "import statistics\nstatistics.quantiles([a, b, a])",
    "statistics-mode": _TUPLE + "import statistics\nstatistics.mode([t, t])",
    "statistics-multimode": _TUPLE + "import statistics\nstatistics.multimode(iter([t]))",
    # set operators hash one side into the other and compare elements whose hashes match
    "set-and-frozenset-pair": _FPAIRS + "{F} & {G}",
    "set-or-frozenset-pair": _FPAIRS + "{F} | {G}",
    "set-sub-frozenset-pair": _FPAIRS + "{F} - {G}",
    "set-xor-frozenset-pair": _FPAIRS + "{F} ^ {G}",
    "set-iand": _FPAIRS + "s = {F}\ns &= {G}",
    "set-ior": _FPAIRS + "s = {F}\ns |= {G}",
    "set-isub": _FPAIRS + "s = {F}\ns -= {G}",
    "set-ixor": _FPAIRS + "s = {F}\ns ^= {G}",
    "set-item-iand": _FPAIRS + "d = {'s': {F}}\nd['s'] &= {G}",
    "dict-merge-frozenset-pair": _FPAIRS + "{F: 1} | {G: 2}",
    "keys-view-and-list": _TUPLE + "{1: 2}.keys() & [t]",
    "keys-view-or-generator": _TUPLE + "{1: 2}.keys() | (x for x in [t])",
    "keys-view-sub-reflected": _TUPLE + "[t] - {1: 2}.keys()",
    "items-view-xor": _TUPLE + "{1: 2}.items() ^ [t]",
    "set-operator-in-generator": _FPAIRS + "list({F} & x for x in [{G}])",
}


@pytest.mark.parametrize("source", REFUSED.values(), ids=list(REFUSED))
def test_compare_calls_shared_reference_values_are_refused(source: str) -> None:
    refused(source)


def test_compare_calls_refusal_cannot_be_caught() -> None:
    result = run(_TUPLE + "try:\n    {}.get(t)\nexcept Exception:\n    pass\n'swallowed'")
    assert result.error is not None
    assert result.error.kind == "limit"
    assert result.error.line == 5


def test_compare_calls_hash_builtin_measures_a_shared_tuple() -> None:
    result = run(_TUPLE + "hash(t)")
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "hashing this value" in result.error.message


# ----------------------------------------------------------------------------- plain results

SAME_AS_PYTHON = {
    # sorted, min, max
    "sorted": "sorted([3, 1, 2])",
    "sorted-reverse": "sorted('hello', reverse=True)",
    "sorted-dict": "sorted({3: 'x', 1: 'y'})",
    "sorted-generator": "sorted(x * 2 for x in [2, 1, 3])",
    "sorted-rows": "sorted([[2, 'a'], [1, 'b'], [2, 'A']])",
    "sorted-empty": "sorted([])",
    "sorted-stable-key": "sorted([(1, 'b'), (0, 'z'), (1, 'a'), (0, 'y')], key=lambda p: p[0])",
    "sorted-stable-key-reverse": (
        "sorted([(1, 'b'), (0, 'z'), (1, 'a'), (0, 'y')], key=lambda p: p[0], reverse=True)"
    ),
    "sorted-key-none": "sorted([2, 1], key=None)",
    "sorted-one-key-call": "calls = []\n[sorted([5], key=lambda x: calls.append(x)), calls]",
    "sorted-mixed": "sorted([1, 'a'])",
    "sorted-key-not-callable": "sorted([1, 2], key=5)",
    "sorted-key-raises": "sorted([1, 0], key=lambda x: 1 / x)",
    "sorted-key-stops-midway": "sorted([1, 2, 3], key=lambda x: next(iter([])) if x == 2 else x)",
    "sorted-key-stops-last": "sorted([1, 2, 3], key=lambda x: next(iter([])) if x == 3 else x)",
    "list-sort-key-stops-keeps-list": (
        "xs = [3, 1, 2]\ntry:\n    xs.sort(key=lambda x: next(iter([])) if x == 1 else x)\n"
        "except StopIteration:\n    pass\nxs"
    ),
    "list-sort-key-stops-last": "xs = [3, 1, 2]\nxs.sort(key=lambda x: next(iter([])) if x == 2 else x)",
    "max-key-stops": "max([1, 2, 3], key=lambda x: next(iter([])) if x == 2 else x)",
    "min-generator-key-stops": (
        "min((x for x in [1, 2, 3]), key=lambda x: next(iter([])) if x == 2 else x)"
    ),
    "sorted-reverse-wrong": "sorted([2, 1], reverse='x')",
    "sorted-cmp-to-key": (
        "import functools\nsorted([3, 1, 2], key=functools.cmp_to_key(lambda a, b: b - a))"
    ),
    "min": "min([3, 1, 2])",
    "max-arguments": "max(3, 1, 2)",
    "min-strings": "min('bca')",
    "max-rows": "max([[1, 2], [1, 3]])",
    "max-default": "max([], default=None)",
    "min-default-unused": "min([4, 2], default=0)",
    "min-first-of-equal-keys": "min([1, 3, -1], key=abs)",
    "max-first-of-equal-keys": "max([(1, 'a'), (1, 'b')], key=lambda p: p[0])",
    "max-generator-key": "max((x * 2 for x in [1, 5, 2]), key=lambda x: -x)",
    "min-arguments-key": "min(4, 2, 9, key=lambda x: x % 3)",
    "min-dict": "min({2: 0, 1: 0})",
    "min-set": "min({(2, 1), (1, 5)})",
    "max-key-none": "max([1, 2], key=None)",
    "min-empty": "min([])",
    "max-empty-key": "max([], key=len)",
    "max-default-with-arguments": "max(1, 2, default=0)",
    "min-mixed": "min([1, 'a'])",
    "max-unknown-keyword": "max([1, 2], foo=1)",
    "min-no-argument": "min()",
    "max-not-iterable": "max(5)",
    "max-key-not-callable": "max([1, 2], key=5)",
    # list, tuple, range, deque methods
    "list-index": "[1, 2, 3].index(2)",
    "list-index-start": "[1, 2, 3, 2].index(2, 2)",
    "list-index-row": "[[1], [2]].index([2])",
    "list-index-missing": "[1].index(5)",
    "list-index-no-argument": "[1].index()",
    "list-count": "[[1], [1], 1].count([1])",
    "list-remove": "xs = [[1], [2], [1]]\nxs.remove([1])\nxs",
    "list-remove-missing": "[].remove(1)",
    "list-pop": "xs = [1, 2]\n[xs.pop(), xs.pop(0), xs]",
    "tuple-count": "(1, 2, 1).count(1)",
    "tuple-index": "(1, [2]).index([2])",
    "tuple-index-missing": "(1,).index(2)",
    "range-index": "[range(10).index(3), range(5).count(9)]",
    "deque": (
        "from collections import deque\nd = deque([[1], [2], [2]])\nd.remove([1])\n"
        "[list(d), d.count([2]), d.index([2])]"
    ),
    "deque-remove-missing": "from collections import deque\ndeque([1]).remove(2)",
    "namedtuple": "from collections import namedtuple\nP = namedtuple('P', 'x y')\n[P(1, [2]).index([2]), P(1, 1).count(1)]",
    "list-subclass": "class L(list):\n    pass\nxs = L([3, [1], [1]])\n[xs.count([1]), xs.index(3)]",
    # list.sort
    "list-sort": "xs = [3, 1, 2]\nxs.sort()\nxs",
    "list-sort-reverse": "xs = [[2], [1], [3]]\nxs.sort(reverse=True)\nxs",
    "list-sort-key-reverse": (
        "xs = [(1, 'b'), (0, 'z'), (1, 'a')]\nxs.sort(key=lambda p: p[0], reverse=True)\nxs"
    ),
    "list-sort-returns-none": "[3, 1].sort()",
    "list-sort-positional": "[2, 1].sort(1)",
    "list-sort-unknown-keyword": "[2, 1].sort(cmp=1)",
    "list-sort-mixed": "xs = [1, 'a']\nxs.sort()",
    "list-sort-key-sees-empty-list": (
        "xs = [3, 1, 2]\nseen = []\nxs.sort(key=lambda x: seen.append(len(xs)) or x)\n[xs, seen]"
    ),
    "list-sort-key-raises-keeps-list": (
        "xs = [2, 0, 1]\ntry:\n    xs.sort(key=lambda x: 1 / x)\nexcept ZeroDivisionError:\n    pass\nxs"
    ),
    "list-sort-modified": "xs = [3, 1]\nxs.sort(key=lambda x: xs.append(x) or x)",
    "list-subclass-sort": "class L(list):\n    pass\nxs = L([2, 1])\nxs.sort()\nlist(xs)",
    # dict, set, collections methods
    "dict-methods": (
        "d = {(1, 2): 'a'}\n[d.get((1, 2)), d.get((3,), 'no'), d.setdefault((4,), 5), "
        "d.pop((1, 2)), d.pop('x', None), sorted(d.items())]"
    ),
    "dict-pop-missing": "{}.pop((1, 2))",
    "dict-get-no-argument": "{}.get()",
    "dict-get-keyword": "{}.get(key=1)",
    "dict-get-unhashable": "{}.get([1])",
    "set-methods": (
        "s = set()\ns.add((1, 2))\ns.add(frozenset({1}))\ns.discard(5)\ns.discard((9,))\n"
        "s.remove((1, 2))\n[len(s), frozenset({1}) in s, s.pop() == frozenset({1}), len(s)]"
    ),
    "set-remove-missing": "set().remove((1,))",
    "set-add-unhashable": "set().add([1])",
    "counter": (
        "from collections import Counter\nc = Counter([(1,), (1,), (2,)])\n"
        "[c.most_common(1), c.most_common(), c.get((1,)), sorted(Counter('abca').items())]"
    ),
    "ordereddict": (
        "from collections import OrderedDict\no = OrderedDict([((1,), 1), (2, 2)])\n"
        "o.move_to_end((1,))\n[list(o.keys()), o.pop(2), o.get((1,))]"
    ),
    "ordereddict-move-missing": "from collections import OrderedDict\nOrderedDict().move_to_end(1)",
    "views": (
        "d = {1: 2, (3,): 4}\n[d.keys().isdisjoint([(3,)]), d.items().isdisjoint([(1, 2)]), "
        "d.keys().isdisjoint({5}), d.items().isdisjoint(iter([(1, 3)]))]"
    ),
    # hash feeds
    "feeds": (
        "[sorted(set([(1, 2), (1, 2), (3,)])), sorted(frozenset(iter([(1,), (2,)]))), "
        "sorted(dict([(1, 2), [3, 4], 'ab']).items()), sorted(dict(x for x in [(1, 2)]).items()), sorted({*[(1,), (1,)]}), "
        "sorted(dict.fromkeys([(1,), (2,)])), sorted(set(range(300)))[:3], "
        "len(set([(i, i) for i in range(1000)])), sorted(dict([(x for x in (1, 2))]).items()), "
        "sorted(dict([{5: 0, 6: 0}]).items()), len(dict(zip(range(600), range(600)))), "
        "sorted(set({1: 2}.items()))]"
    ),
    "builtin-types": (
        "from collections import defaultdict\nclass S(set):\n    pass\nclass F(frozenset):\n    pass\n"
        "class D(dict):\n    def total(self):\n        return sum(self.values())\n"
        "dd = defaultdict(set)\ndd['a'].add(1)\nf = dict\n"
        "[isinstance({}, dict), isinstance([], dict), isinstance(S([1]), set), issubclass(S, set), "
        "issubclass(bool, dict), isinstance(frozenset([1]), (list, frozenset)), sorted(S([3, 1])), "
        "sorted(F([2, 1])), D(a=1, b=2).total(), sorted(f(a=1).items()), len(dict.fromkeys(range(5))), "
        "sorted(dd['a']), isinstance(D(), dict), len(set(range(1000))), len(list(map(set, [[1], [2, 2]]))), "
        "isinstance(set(), frozenset), issubclass(frozenset, set), sorted(map(len, map(frozenset, ['ab', 'a'])))]"
    ),
    "builtin-types-errors": "f = set\nf(5)",
    "builtin-dict-bad-pair": "f = dict\nf([(1, 2, 3)])",
    "feed-namedtuple": (
        "from collections import namedtuple\nP = namedtuple('P', 'k v')\n[sorted(dict([P(1, 2)]).items()), sorted(set(P(3, 4)))]"
    ),
    "feed-pair-too-long": "dict([(1, 2, 3)])",
    "feed-pair-not-a-sequence": "dict([5])",
    "feed-unhashable": "set([[1]])",
    "feed-unhashable-key": "dict([([1], 2)])",
    "feed-unhashable-second": "s = set()\ns.update([1], [[2]])",
    "feed-not-iterable": "set(5)",
    "feed-error-keeps-earlier-items": (
        "s = set()\ndef g():\n    yield 1\n    yield 2\n    raise ValueError('boom')\n"
        "try:\n    s.update(g())\nexcept ValueError as e:\n    r = str(e)\n[sorted(s), r]"
    ),
    "feed-error-keeps-earlier-chunks": (
        "s = set()\ndef g():\n    yield from range(600)\n    raise ValueError('boom')\n"
        "try:\n    s.update(g())\nexcept ValueError as e:\n    r = str(e)\n[len(s), r]"
    ),
    "feed-counter": (
        "from collections import Counter\nc = Counter(iter([(1,), (1,)]))\nc.update({(1,): 5})\n"
        "c.subtract([(1,)])\n[sorted(c.items()), sorted(Counter({'a': 2}).items())]"
    ),
    "feed-defaultdict": (
        "from collections import defaultdict\nd = defaultdict(list, [((1,), [2])])\nd[(3,)].append(1)\nsorted(d.items())"
    ),
    # stand-in modules
    "lru-cache": (
        "import functools\n@functools.lru_cache(maxsize=2)\ndef f(*a, **k):\n    return [a, sorted(k.items())]\n"
        "[f(1, (2, 3)), f(1, (2, 3)), f(x=(1,)), f.cache_info().hits, f.cache_info().maxsize, "
        "f.cache_parameters()['maxsize']]"
    ),
    "lru-cache-bare": "import functools\n@functools.lru_cache\ndef f(x):\n    return x * 2\n[f(2), f(2), f.cache_info().hits]",
    "lru-cache-clear": (
        "import functools\n@functools.cache\ndef f(x):\n    return x\nf(1)\nf.cache_clear()\n[f(1), f.cache_info().misses]"
    ),
    "lru-cache-method": (
        "import functools\nclass A:\n    @functools.cache\n    def f(self, x):\n        return x * 2\n"
        "a = A()\n[a.f(2), a.f(2)]"
    ),
    "lru-cache-bad-size": "import functools\nfunctools.lru_cache('x')",
    "lru-cache-unhashable": "import functools\n@functools.cache\ndef f(x):\n    return 1\nf([1])",
    "groupby": (
        "import itertools\n[[(k, list(g)) for k, g in itertools.groupby([[1], [1], [2], [1]])], "
        "[k for k, _ in itertools.groupby([1, 2, 3, 4], key=lambda x: x // 2)], "
        "[(k, len(list(g))) for k, g in itertools.groupby('aabccc')]]"
    ),
    "statistics": (
        "import statistics\n[statistics.median([3, 1, 2]), statistics.median_low([[2], [1]]), "
        "statistics.median_high([(1,), (3,), (2,), (0,)]), statistics.quantiles([1, 2, 3, 4, 5], n=4), "
        "statistics.mode([(1,), (1,), (2,)]), statistics.multimode('aabbc'), statistics.mean([1, 2])]"
    ),
    "statistics-median-mixed": "import statistics\nstatistics.median([1, 'a'])",
    "set-operators": (
        "a, b = {1, 2, (3, 4)}, {2, (3, 4), 5}\n[sorted(a & b, key=str), sorted(a | b, key=str), "
        "sorted(a - b, key=str), sorted(a ^ b, key=str), sorted({1: 2, 3: 4}.keys() & [3, 9]), "
        "sorted({1: 2}.keys() | (x for x in [7])), sorted([1, 5] - {1: 2}.keys()), "
        "sorted({1: 2}.items() ^ [(1, 2), (3, 4)]), {'a': 1} | {'b': 2}, "
        "7 - 2, 6 & 3, 6 | 1, 6 ^ 3, 2.5 - 1.0, True - False]"
    ),
    "set-augmented": (
        "x = 7\ny = 2\nx -= y\nz = {1, 2}\nz -= {1}\nw = {1}\nw |= {2}\nw &= {2, 3}\nw ^= {3}\n"
        "d = {'s': {1}}\nd['s'] |= {4}\nd['s'] -= [1]\n[x, sorted(z), sorted(w), sorted(d['s'])]"
    ),
    "set-operator-errors": "[{1} & 5]",
    "keys-view-operator-errors": "{1: 2}.keys() - 5",
    "int-minus-str": "a = 5\nb = 'x'\na - b",
    # min/max of more than SELECT_PIECE items that are not plain scalars run in pieces:
    # the same comparisons, in the same order, and the first extreme item (ties by id)
    "min-max-pieced": (
        "from fractions import Fraction\nxs = [Fraction(i % 997, 7) for i in range(9000)]\n"
        "ys = [(i % 5, i) for i in range(9000)]\n[str(min(xs)), str(max(xs)), min(ys), max(ys), "
        "xs.index(max(xs)), str(max(xs, key=lambda f: -f)), str(min(xs, default=0)), "
        "min(ys, key=lambda t: t[0]), max(ys, key=lambda t: t[0])]"
    ),
    "min-max-pieced-compare-order": (
        "seen = []\nclass A:\n    def __init__(self, v, t):\n        self.v, self.t = v, t\n"
        "    def __lt__(self, other):\n        seen.append((self.t, other.t))\n"
        "        return self.v < other.v\n    def __gt__(self, other):\n"
        "        seen.append((self.t, other.t))\n        return self.v > other.v\n"
        "xs = [A(i % 7, i) for i in range(9000)]\n[min(xs).t, max(xs).t, len(seen), seen[4094:4099], "
        "seen[-3:]]"
    ),
    "min-pieced-error-past-a-piece": "min([(1,)] * 5000 + [1])",
    # findings18 L08: large Fractions compare through BudgetKey: the same results
    "costly-fraction-compares": (
        "from fractions import Fraction\nxs = [Fraction(3**3000 + i % 3, 7**1700 + 2) for i in range(7)]\n"
        "ys = list(xs)\nys.sort(reverse=True)\n[[str(v)[-6:] for v in sorted(xs)], "
        "[str(v)[-6:] for v in ys], str(max(xs))[-6:], str(min(xs))[-6:], "
        "str(max(xs, key=lambda f: -f))[-6:], xs.index(max(xs)), xs.index(min(xs))]"
    ),
}


@pytest.mark.parametrize("source", SAME_AS_PYTHON.values(), ids=list(SAME_AS_PYTHON))
def test_compare_calls_give_what_python_gives(source: str) -> None:
    expected = plain(source)
    got = outcome(run(source))
    if expected[0] == "error":
        assert got[:3] == expected[:3], got
        assert got[3] == expected[3], got
    else:
        assert got == expected


# ----------------------------------------------------------------------------- key functions


KEY_CALLS = {
    "sorted": "sorted(items(), key=key)",
    "sorted-reverse": "sorted(items(), key=key, reverse=True)",
    "min": "min(items(), key=key)",
    "max": "max(items(), key=key)",
    "max-default": "max(items(), key=key, default=None)",
    "min-list": "min(list(items()), key=key)",
    "list-sort": "xs = list(items())\nseen.append('sort')\nxs.sort(key=key)\nxs",
    "list-sort-reverse": "xs = list(items())\nseen.append('sort')\nxs.sort(key=key, reverse=True)\nxs",
}


@pytest.mark.parametrize("call", KEY_CALLS.values(), ids=list(KEY_CALLS))
def test_compare_calls_key_runs_once_per_item_in_order(call: str) -> None:
    # the items are read and the key computed as Python does: once each, in order,
    # interleaved with reading the iterable; results (stability, reverse) are Python's
    *body, last = call.split("\n")
    source = (
        "seen = []\n"
        "def items():\n    for p in [(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd'), (3, 'e')]:\n"
        "        seen.append(('item', p[1]))\n        yield p\n"
        "def key(p):\n    seen.append(('key', p[1]))\n    return p[0]\n"
        + "".join(line + "\n" for line in body)
        + f"[{last}, seen]"
    )
    expected = plain(source)
    assert expected[0] == "ok"
    assert outcome(run(source)) == expected


def test_compare_calls_key_results_are_checked_before_any_comparison() -> None:
    # the keys of a sort are checked after the last key call and before the first
    # comparison: a DAG key is refused even when the items are plain
    refused(_LISTS + "calls = []\nxs = [0, 1]\nxs.sort(key=lambda i: calls.append(i) or [a, b][i])")
    result = run(
        "calls = []\nxs = [1, 0]\nxs.sort(key=lambda i: calls.append(i) or i)\n[xs, calls]"
    )
    assert result.value == [[0, 1], [1, 0]]


# ----------------------------------------------------------------------------- the checks


def _pairs(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = (value, value)
    return value


def test_compare_calls_hashed_ok_checks_what_each_input_hashes() -> None:
    dag = _pairs(50)
    assert hashed_ok([1, "a", (1, 2), None], "set") == [1, "a", (1, 2), None]
    assert hashed_ok([(1, [2]), [3, 4]], "dict") == [(1, [2]), [3, 4]]  # keys 1 and 3
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_ok([dag], "set")
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_ok([(dag, 1)], "dict")
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_ok([[dag, 1]], "dict")
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_ok([iter((dag, 1))], "dict")  # a pair dict() would iterate itself
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_ok([(1, dag)], "counter")  # a Counter hashes its items, not pairs' keys


def test_compare_calls_hashed_ok_refuses_a_chunk_repeating_one_large_tuple() -> None:
    # one tuple of a million items hashes in milliseconds (each passes alone); 256
    # of them in one C call are checked together and refused
    row = tuple([tuple(range(1000))] * 1000)
    assert dagguard.hash_ok(row) is row
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_ok([row] * 256, "set")
    distinct = [tuple(range(i, i + 3)) for i in range(256)]
    assert hashed_ok(distinct, "set") is distinct  # rows of plain data pass


def test_compare_calls_hashed_whole_passes_stored_hashes_and_copies_the_rest() -> None:
    stored = {1, 2}
    assert hashed_whole(stored, "set") is stored
    counter = collections.Counter("ab")
    assert hashed_whole(counter, "dict") is counter
    assert hashed_whole(None, "counter") is None
    assert hashed_whole(collections.deque([(1,), 2]), "set") == [(1,), 2]
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_whole(collections.deque([_pairs(50)]), "set")
    with pytest.raises(ScriptStop, match=_SHARED):
        hashed_whole({1: _pairs(50)}.values(), "frozenset")


def test_compare_calls_hash_bounded_compares_frozensets_too() -> None:
    # F and G are equal with equal hashes; a lookup of F where G is stored compares them
    f: Any = frozenset({1})
    g: Any = frozenset({1})
    for _ in range(60):
        f, g = frozenset({(f, g)}), frozenset({(g, f)})
    assert isinstance(hash(f), int)  # the hash alone is cheap: the stored item hashes
    with pytest.raises(ScriptStop, match=_SHARED):
        hash_bounded(f)
    assert hash_bounded((1, "a")) == (1, "a")
    assert hash_bounded(frozenset({(1, 2)})) == frozenset({(1, 2)})


def test_compare_calls_methods_are_left_to_the_attribute_guard() -> None:
    # `o.name` for these names is not compiled inline: the guard hands out the wrappers
    assert {"index", "count", "remove", "sort", "get", "setdefault", "pop", "add"} <= set(
        FAST_RECEIVER_SLOW_NAMES
    )
    assert {"append", "keys", "items", "values", "split"}.isdisjoint(FAST_RECEIVER_SLOW_NAMES)


def test_compare_calls_min_max_check_the_budget_between_pieces() -> None:
    # findings (residual): min of 3 M Fractions was one 2 s C call past a 1 s deadline
    from fractions import Fraction

    from scriptgate.sandbox.guards.ticking import TICK_STEPS
    from scriptgate.sandbox.world.builtins import SELECT_PIECE, _pieced_select

    checks: list[Any] = []
    items = [Fraction(i % 13, 3) for i in range(3 * SELECT_PIECE + 5)]
    for real in (min, max):
        checks.clear()
        assert _pieced_select(real, items, checks.append) is real(items)
        assert checks == [TICK_STEPS] * 3
    keys = [-item for item in items]
    assert _pieced_select(min, range(len(keys)), checks.append, keys.__getitem__) == min(
        range(len(keys)), key=keys.__getitem__
    )


@pytest.mark.parametrize(
    "call", ["sorted(xs)", "xs.sort()", "max(xs)", "min(xs, default=0)", "max(xs, key=abs)"]
)
def test_compare_calls_costly_fraction_comparisons_end_at_the_deadline(call: str) -> None:
    # findings18 L08: a sort or max of a few hundred large Fractions made thousands of
    # comparisons (each a host-Python cross-multiplication) in one C call: 31-75 s
    from sandbox_support import ends_at_the_deadline

    source = (
        "from fractions import Fraction\nA = Fraction(3**40000 + 1, 7**23000 + 2)\n"
        "B = Fraction(5**29000 + 3, 11**19000 + 4)\nxs = [A, B] * 300\n" + call
    )
    ends_at_the_deadline(source, 1.5)
