"""The chunked feed of every entry point that hashes a whole input (guards: hash feeding).

A set or dict built or updated from a large input hashes it in one C call; with
colliding hashes that call is quadratic and no budget check runs inside it. The
attack scripts (``attacks_extra.DEADLINE_ATTACKS``, ``hash-flood-*``) show the
deadline stopping the real floods in both modes; here a step limit proves each
entry point feeds a large input in chunks (one step per item, checked every 256
items): without the feed the C call charges nothing and the script ends ``ok``.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

from scriptgate.sandbox.guards.attributes import Budget, make_guards, needs_feed
from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

_BIG = "xs = [7] * 20000\n"  # charges no steps: the feed is all that counts
_PAIRS = "xs = [(7, 0)] * 20000\n"

ENTRY_POINTS = {
    "set-constructor": _BIG + "set(xs)",
    "set-update": _BIG + "s = set()\ns.update(xs)",
    "set-update-many": _BIG + "s = set()\ns.update([1], xs)",
    "set-union": _BIG + "{1}.union(xs)",
    "frozenset-union": _BIG + "frozenset([1]).union(xs)",
    "set-intersection": _BIG + "{1}.intersection(xs)",
    "set-intersection-update": _BIG + "s = {1}\ns.intersection_update(xs)",
    "set-difference": _BIG + "{1}.difference(xs)",
    "set-difference-update": _BIG + "s = {1}\ns.difference_update(xs)",
    "set-symmetric-difference": _BIG + "{1}.symmetric_difference(xs)",
    "set-symmetric-difference-update": _BIG + "s = {1}\ns.symmetric_difference_update(xs)",
    "set-issubset": _BIG + "{1}.issubset(xs)",
    "set-issuperset": _BIG + "{7}.issuperset(xs)",
    "set-isdisjoint": _BIG + "{-1}.isdisjoint(xs)",
    "set-method-stored": _BIG + "add_all = set().update\nadd_all(xs)",
    "set-getattr-builtin": _BIG + "getattr(set(), 'update')(xs)",
    "set-subclass-update": _BIG + "class S(set):\n    pass\ns = S()\ns.update(xs)",
    "dict-subclass-update": _PAIRS + "class D(dict):\n    pass\nd = D()\nd.update(xs)",
    "set-display-star": _BIG + "{*xs}",
    "set-display-star-mixed": _BIG + "{0, *xs}",
    "set-of-range": "set(range(4500))\nset(range(4500))",
    "set-of-generator": _BIG + "def g():\n    yield from xs\nset(g())",
    "set-of-map": _BIG + "set(map(abs, xs))",
    "dict-constructor": _PAIRS + "dict(xs)",
    "dict-update": _PAIRS + "d = {}\nd.update(xs)",
    "dict-ior": _PAIRS + "d = {}\nd |= xs",
    "dict-item-ior": _PAIRS + "d = {'a': {}}\nd['a'] |= xs",
    "dict-fromkeys": _BIG + "dict.fromkeys(xs)",
    "dict-fromkeys-instance": _BIG + "{}.fromkeys(xs)",
    "counter": _BIG + "import collections\ncollections.Counter(xs)",
    "counter-update": _BIG + "from collections import Counter\nc = Counter()\nc.update(xs)",
    "counter-subtract": _BIG + "from collections import Counter\nc = Counter()\nc.subtract(xs)",
    "counter-update-unbound": _BIG
    + "from collections import Counter\nc = Counter()\nCounter.update(c, xs)",
    "counter-subtract-unbound": _BIG
    + "import collections\nc = collections.Counter()\ncollections.Counter.subtract(c, xs)",
    "defaultdict-fromkeys": _BIG + "from collections import defaultdict\ndefaultdict.fromkeys(xs)",
    "counter-subclass": _BIG
    + "from collections import Counter\nclass C(Counter):\n    pass\nC(xs)",
    "defaultdict": _PAIRS + "from collections import defaultdict\ndefaultdict(int, xs)",
    "ordereddict": _PAIRS + "from collections import OrderedDict\nOrderedDict(xs)",
    "statistics-mode": _BIG + "import statistics\nstatistics.mode(xs)",
    "statistics-multimode": _BIG + "import statistics\nstatistics.multimode(xs)",
    "ordereddict-fromkeys": _BIG + "from collections import OrderedDict\nOrderedDict.fromkeys(xs)",
}


def _run(source: str, max_steps: int) -> ScriptResult:
    sandbox = Sandbox([], limits=Limits(max_steps=max_steps, timeout=None))
    try:
        return sandbox.run_sync(source)
    finally:
        sandbox.close()


@pytest.mark.parametrize("source", ENTRY_POINTS.values(), ids=list(ENTRY_POINTS))
def test_hash_feed_large_input_is_charged_in_chunks(source: str) -> None:
    result = _run(source + "\nNone", 5_000)
    assert result.error is not None, "the input was hashed without a budget check"
    assert result.error.kind == "limit"
    assert "step limit" in result.error.message
    # under a step limit that allows it, the same script runs to the end
    assert _run(source + "\nNone", 200_000).ok


@pytest.mark.parametrize(
    "source",
    [
        "s = set()\nfor i in range(50):\n    s.update(list(range(200)))\nlen(s)",
        "d = {}\nfor i in range(50):\n    d.update([(1, 2)] * 200)\nlen(d)",
        "len({*list(range(200))}) + len(dict.fromkeys(tuple(range(200))))",
        "import collections\nlen(collections.Counter(list(range(200))))",
    ],
)
def test_hash_feed_small_inputs_are_not_charged(source: str) -> None:
    # up to 256 items an input is passed whole (one type check and a len): a step
    # limit far below the items hashed is never reached by the calls themselves
    result = _run(source, 400)
    assert result.ok, result.error


def test_hash_feed_needs_feed_decisions() -> None:
    assert not needs_feed([0] * 256, "set")
    assert needs_feed([0] * 257, "set")
    assert needs_feed(tuple(range(300)), "dict")
    assert needs_feed(range(300), "set")
    assert not needs_feed(range(10), "set")
    assert needs_feed(iter([]), "set")  # iterators and generators: always (they drain in C)
    assert needs_feed((x for x in ()), "dict")
    assert needs_feed(collections.deque(range(300)), "set")
    # stored hashes, few distinct items, or the mapping protocol: passed whole
    assert not needs_feed(set(range(1000)), "set")
    assert not needs_feed(frozenset(range(1000)), "set")
    assert not needs_feed(dict.fromkeys(range(1000)), "dict")
    assert not needs_feed(collections.Counter(range(1000)), "set")
    assert not needs_feed("x" * 1000, "set")

    class Mapping:
        def keys(self) -> list[Any]:
            return []

        def __iter__(self) -> Any:
            return iter([])

    assert not needs_feed(Mapping(), "dict")
    assert needs_feed(Mapping(), "set")
    assert not needs_feed(None, "dict")  # Counter(None), c.update(None): no input at all
    assert not needs_feed(5, "set")  # set(5) raises its own TypeError


def test_hash_feed_copy_hook_feeds_iterators() -> None:
    # `_copy_` (set()/dict() arguments) feeds an iterator in chunks too: `set(map(f, xs))`
    budget = Budget(Limits(max_steps=1_000, timeout=None))
    copy = make_guards(budget, print_fn=print)["_copy_"]
    fed = copy(iter(range(5_000)), "set")
    with pytest.raises(ScriptStop, match="step limit"):
        set(fed)


def test_hash_feed_stand_ins_behave_like_the_real_classes() -> None:
    source = (
        "from collections import Counter, OrderedDict, defaultdict\n"
        "class Tally(Counter):\n    def total_of(self, k):\n        return self[k] * 10\n"
        "t = Tally(['a'] * 300 + ['b'])\n"
        "o = OrderedDict.fromkeys(range(300))\n"
        "dd = defaultdict(list)\ndd['x'].append(1)\n"
        "t['c'] = 5\nc0 = Counter(None)\nc0.update(None)\n"
        "[t.total_of('a'), isinstance(t, Counter), isinstance(t, Tally), isinstance(Counter(), Counter),"
        " issubclass(Tally, Counter), isinstance({}, Counter), isinstance(o, OrderedDict),"
        " isinstance(o, dict), list(o)[-1], dd['x'], Counter('abca').most_common(1), len(Counter(a=2)),"
        " t['c'], len(c0), isinstance(t, (OrderedDict, Counter))]"
    )
    result = _run(source, 100_000)
    assert result.ok, result.error
    expected = [
        3000,
        True,
        True,
        True,
        True,
        False,
        True,
        True,
        299,
        [1],
        [["a", 2]],
        1,
        5,
        0,
        True,
    ]
    assert result.value == expected


def test_hash_feed_statistics_mode_results_unchanged() -> None:
    source = (
        "import statistics\n"
        "xs = [3] * 400 + [1, 2] * 100\n"
        "[statistics.mode(xs), statistics.multimode([1, 2] * 300), statistics.mode('aab')]"
    )
    result = _run(source, 100_000)
    assert result.ok, result.error
    assert result.value == [3, [1, 2], "a"]
