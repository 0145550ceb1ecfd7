"""The shared-reference bound (``scriptgate.sandbox.guards.comparisons``), called directly.

The sites that call it (comparisons, hashing, sorting in scripts) are tested with
scripts elsewhere; these pin the measure itself: paths counted once each, distinct
containers walked once, amplification refused, plain data of any size passed.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

from scriptgate.sandbox.guards import comparisons as dagguard
from scriptgate.sandbox.guards.errors import ScriptStop


def _levels(fanout: int, depth: int, leaf: Any = 0) -> list[Any]:
    value: list[Any] = [leaf] * fanout
    for _ in range(depth - 1):
        value = [value] * fanout
    return value


def _pairs(depth: int, pack: Any = tuple) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = pack((value, value))
    return value


def test_dagguard_measure_counts_paths_and_distinct_items() -> None:
    grid = [[0] * 10] * 10  # one row shared ten times
    assert dagguard.measure(grid) == (10 + 100, 10 + 10)
    assert dagguard.measure([[1, 2], [3, 4]]) == (6, 6)
    assert dagguard.measure({"a": [1, 2], "b": 3}) == (4 + 2, 4 + 2)  # keys and values
    assert dagguard.measure(5) == (0, 0)
    assert dagguard.measure("text") == (0, 0)


def test_dagguard_measure_hashing_follows_tuples_only() -> None:
    inner = frozenset({(1, 2)})
    assert dagguard.measure((1, (2, 3), inner), hashing=True) == (5, 5)
    assert dagguard.measure([(1, 2)], hashing=True) == (0, 0)  # lists do not hash


@pytest.mark.parametrize(
    "value",
    [_levels(1000, 5), _pairs(60), _pairs(60, list)],
    ids=["five-levels-of-1000", "tuple-pairs-60", "list-pairs-60"],
)
def test_dagguard_measure_refuses_amplified_values_quickly(value: Any) -> None:
    assert dagguard.measure(value) is None
    with pytest.raises(ScriptStop, match="through shared references"):
        dagguard.compare_ok(value, _levels(1000, 5) if isinstance(value, list) else _pairs(60))


def test_dagguard_hash_ok_refuses_a_tuple_pair_dag() -> None:
    with pytest.raises(ScriptStop, match="hashing this value would take too long"):
        dagguard.hash_ok(_pairs(50))
    small = _pairs(10)
    assert dagguard.hash_ok(small) is small


def test_dagguard_plain_data_of_any_size_passes() -> None:
    rows = [{"id": i, "tags": [str(i), "x"], "pos": (i, i)} for i in range(20_000)]
    other = [dict(row) for row in rows]
    assert dagguard.compare_ok(rows, other)
    assert dagguard.operand_ok(rows) is rows
    flat = list(range(dagguard.CAP + 10))  # larger than CAP, but nothing is shared
    assert dagguard.compare_ok(flat, list(flat))


def test_dagguard_compare_ok_passes_when_one_side_is_small_or_the_same() -> None:
    big = _levels(1000, 5)
    assert dagguard.compare_ok(big, big)  # identical items compare by identity
    assert dagguard.compare_ok(big, 1)
    assert dagguard.compare_ok(big, [1, 2, 3])
    with pytest.raises(ScriptStop):
        dagguard.compare_ok(big, _levels(1000, 5))


def test_dagguard_contains_ok() -> None:
    big = _levels(1000, 5)
    assert dagguard.contains_ok(1, [big, big])
    assert dagguard.contains_ok([1, 2], [big] * 10)  # a small needle: each comparison is short
    assert dagguard.contains_ok(big, [[1], [2]])  # the haystack bounds the comparisons
    with pytest.raises(ScriptStop):
        dagguard.contains_ok(_levels(1000, 5), [big])
    with pytest.raises(ScriptStop):
        dagguard.contains_ok(_pairs(50), {1})
    assert dagguard.contains_ok((1, 2), {(1, 2)})
    assert dagguard.contains_ok(big, "text")
    assert dagguard.contains_ok(big, range(3))


def test_dagguard_items_ok() -> None:
    assert dagguard.items_ok([3, 1, 2])
    assert dagguard.items_ok([(i, str(i)) for i in range(1000)])
    assert dagguard.items_ok({"a": 1, "b": 2}.items())
    assert dagguard.items_ok([[i, [i]] for i in range(1000)])
    a, b = _levels(1000, 5), _levels(1000, 5)
    with pytest.raises(ScriptStop, match="comparing these items"):
        dagguard.items_ok([a, b, a])
    big = tuple(range(100_000))  # flat, but repeated: each `<` walks it all
    with pytest.raises(ScriptStop):
        dagguard.items_ok([big] * 1000)


def test_dagguard_nesting_is_refused_past_the_bound() -> None:
    deep: Any = ()
    for _ in range(dagguard.MAX_NESTING + 5):
        deep = (deep,)
    with pytest.raises(ScriptStop, match="levels deep"):
        dagguard.hash_ok(deep)
    ok: Any = ()
    for _ in range(100):
        ok = (ok,)
    assert dagguard.hash_ok(ok) is ok


def test_dagguard_walks_subclasses_views_and_slices() -> None:
    a, b = _levels(1000, 5), _levels(1000, 5)
    for left, right in [
        (collections.Counter({1: a}), collections.Counter({1: b})),
        (collections.OrderedDict(x=a), collections.OrderedDict(x=b)),
        (collections.deque([a]), collections.deque([b])),
        (slice(a, 1), slice(b, 1)),
        ({1: a}.items(), {1: b}.items()),
    ]:
        with pytest.raises(ScriptStop):
            dagguard.compare_ok(left, right)

    class Row(list[Any]):
        pass

    with pytest.raises(ScriptStop):
        dagguard.compare_ok(Row([a]), Row([b]))


def test_dagguard_repeated_large_scalars_are_weighed() -> None:
    # `[s] * n == [t] * n` with s, t equal but distinct 1 MB strings is n memcmps of 1 MB
    s, t = "x" * 1_000_000, "".join(["x"] * 1_000_000)
    assert s is not t
    with pytest.raises(ScriptStop, match="through shared references"):
        dagguard.compare_ok([s] * 10_000, [t] * 10_000)
    with pytest.raises(ScriptStop):
        dagguard.contains_ok(t, [s] * 10_000)
    with pytest.raises(ScriptStop):
        dagguard.items_ok([s, t] * 5_000)
    big = 10**100_000
    with pytest.raises(ScriptStop):
        dagguard.hash_ok((big,) * 100_000)
    # the same values once each, or small ones repeated, are plain data
    assert dagguard.compare_ok([s, "y"], [t, "y"])
    assert dagguard.contains_ok(t, [s, "y"])
    assert dagguard.contains("x" * 100, ["x" * 100] * 100_000)  # in pieces (long)
    assert dagguard.items_ok(["b", "a"] * 100_000)
    assert dagguard.hash_ok((big, big + 1)) == (big, big + 1)


def test_dagguard_hash_ok_bounds_the_comparison_a_matching_hash_makes() -> None:
    # equal frozensets built from each other hash cheaply but compare in 2**60 steps;
    # a set or dict lookup whose hash matches compares them
    f: Any = frozenset({1})
    g: Any = frozenset({1})
    for _ in range(60):
        f, g = frozenset({(f, g)}), frozenset({(g, f)})
    with pytest.raises(ScriptStop, match="through shared references"):
        dagguard.hash_ok(f)
    with pytest.raises(ScriptStop):
        dagguard.contains_ok(f, {g})
    plain = frozenset({(1, 2), (3, 4)})
    assert dagguard.hash_ok(plain) is plain
    assert dagguard.hash_ok(frozenset({1, 2})) == frozenset({1, 2})


def test_dagguard_items_ok_runs_no_code_of_the_items() -> None:
    # the fast path for int keys must not call a script class's __len__ or __iter__
    # (the methods of these a script class may define)
    calls: list[str] = []

    class Loud:
        def __len__(self) -> int:
            calls.append("len")
            return 0

        def __iter__(self) -> Any:
            calls.append("iter")
            return iter(())

    assert dagguard.items_ok([(Loud(), 1), (Loud(), 2)])
    assert dagguard.items_ok([Loud(), Loud()])
    assert dagguard.items_ok([(3, 1), (-2, 2), (True, 0)])
    assert calls == []


def test_dagguard_reads_subclasses_through_their_base_type() -> None:
    # a subclass's own __iter__/keys is not what C compares, and is never run by the walk
    calls: list[str] = []

    class Row(list[Any]):
        def __iter__(self) -> Any:
            calls.append("iter")
            return iter(())

    class Pair(tuple[Any, ...]):
        def __iter__(self) -> Any:
            calls.append("iter")
            return iter(())

    class Table(dict[Any, Any]):
        def keys(self) -> Any:
            calls.append("keys")
            return {}.keys()

    a, b = _levels(1000, 5), _levels(1000, 5)
    with pytest.raises(ScriptStop):
        dagguard.compare_ok(Row([a]), Row([b]))
    with pytest.raises(ScriptStop):
        dagguard.compare_ok(Table(x=a), Table(x=b))
    with pytest.raises(ScriptStop):
        dagguard.hash_ok(Pair((_pairs(50),)))
    assert calls == []


def test_dagguard_large_checked_work_is_charged_to_the_budget() -> None:
    # a loop checks its budget every few hundred iterations, and each checked comparison
    # may visit millions of items: those are charged as steps (with the deadline check)
    from scriptgate.sandbox import Limits, Sandbox

    script = (
        "a = [[0] * 300 for _ in range(300)]\nb = [[0] * 300 for _ in range(300)]\n"
        "n = 0\nfor i in range(100):\n    n += a == b\nn"
    )
    plenty = Sandbox([], limits=Limits(max_steps=10_000_000, timeout=60)).run_sync(script)
    assert plenty.ok, plenty.error
    assert plenty.value == 100
    few = Sandbox([], limits=Limits(max_steps=50_000, timeout=60)).run_sync(script)
    assert few.error is not None
    assert few.error.kind == "limit"
    assert "step limit" in few.error.message
