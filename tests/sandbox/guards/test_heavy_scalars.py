"""C loops over large scalars are bounded before they run (issue 13, findings10 F01-F03/F06).

``sorted([a, a - 1] * 10000)`` of 8 M-bit ints (or of 5 MB strings) passed the "scalars
compare in bounded time" fast path and sorted for 8 s in one C call; the guard's own size
check, ``max(map(abs, items))``, compared the ints themselves (2.6 s before a refusal);
``sum([a] * 20000)`` added megabyte ints in one C call for 10 s. Now:

- the size check reads sizes, never values (:func:`comparisons._heavy_int_in`), so a list
  of large scalars is weighed by :func:`comparisons.items_ok` at once;
- ``sorted``/``min``/``max``/``heapify`` send large scalars to that weighing;
- ``sum`` adds in pieces with a budget check between two (:func:`ticking.pieced_sum`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from scriptgate.sandbox.guards.comparisons import light_scalars
from scriptgate.sandbox.guards.ticking import SUM_PIECE, TICK_STEPS, pieced_sum
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

_BIG = (1 << 8_000_000) - 1


def test_heavy_scalars_size_check_reads_sizes_not_values() -> None:
    items = [_BIG, _BIG - 1] * 10_000  # equal but for the last digit: every compare scans all
    start = time.monotonic()
    assert not light_scalars(items)
    assert time.monotonic() - start < 0.5  # comparing the values took 2.6 s


@pytest.mark.parametrize(
    ("items", "light"),
    [
        ([1, 2, 3], True),
        ([1.5, 2, -(1 << 100)], True),
        (["a" * 256, "b"], True),
        (["a" * 257, "b"], False),
        ([1 << 2048, 1], False),
        ([-(1 << 2048), 1], False),
        ([(1 << 2048) - 1, True, None], True),
        ([[1], 2], False),
    ],
    ids=[
        "ints",
        "mixed-numbers",
        "short-str",
        "long-str",
        "big-int",
        "big-negative",
        "edge",
        "list",
    ],
)
def test_heavy_scalars_light_scalars_sorts_the_small_from_the_large(
    items: list[Any], light: bool
) -> None:
    assert light_scalars(items) is light


class _Stop(Exception):
    pass


def test_heavy_scalars_pieced_sum_checks_between_pieces() -> None:
    seen: list[int] = []

    def items() -> Any:
        for value in range(10**6):
            seen.append(value)
            yield value

    def charge(value: Any) -> Any:
        assert value is TICK_STEPS
        raise _Stop

    with pytest.raises(_Stop):
        pieced_sum(items(), 0, charge)
    assert len(seen) == SUM_PIECE  # the first piece, then the check stopped it


@pytest.mark.parametrize(
    ("values", "start"),
    [
        (list(range(100_000)), 0),
        ([0.1] * 70_001, 0.0),
        ([0.1, 1e16, -1e16, 0.3] * 5000, 0.5),
        ([Decimal("0.1")] * 1000, Decimal(0)),
        ([Fraction(1, 3)] * 600, Fraction(0)),
        ([True, 2, 3.5] * 300, 1),
        ([], 7),
    ],
    ids=["ints", "floats", "float-cancellation", "decimal", "fraction", "mixed", "empty"],
)
def test_heavy_scalars_pieced_sum_is_sum(values: list[Any], start: Any) -> None:
    got = pieced_sum(values, start, lambda value: value)
    assert got == sum(values, start)
    assert type(got) is type(sum(values, start))


def test_heavy_scalars_pieced_sum_raises_as_sum() -> None:
    with pytest.raises(TypeError, match="unsupported operand"):
        pieced_sum([1] * 300 + ["a"], 0, lambda value: value)


@pytest.fixture(scope="module", params=["in_process", "process"])
def short(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """One sandbox per mode under a 0.5 s deadline, shared by the module's end-to-end tests."""
    box = Sandbox(limits=Limits(timeout=0.5), isolation=request.param)
    yield box
    box.close()


@pytest.mark.parametrize(
    "call",
    ["sorted(L)", "max(L)", "min(L)", "import heapq\nheapq.heapify(L)", "sum(L)", "sum(L, 0)",
     "sorted(S)", "max(S)"],
)  # fmt: skip
def test_heavy_scalars_one_call_ends_near_the_deadline(short: Sandbox, call: str) -> None:
    source = (
        "a = int('f' * 2_000_000, 16)\nL = [a, a - 1] * 10_000\n"
        "s = 'a' * 5_000_000\nS = [s + 'b', s] * 1000\n" + call
    )
    start = time.monotonic()
    result = short.run_sync(source)
    elapsed = time.monotonic() - start
    assert result.error is not None, "ran to the end"
    assert result.error.kind == "limit", result.error
    assert elapsed < 3.0, f"{elapsed:.1f} s under a 0.5 s deadline"  # it ran 3-15 s
