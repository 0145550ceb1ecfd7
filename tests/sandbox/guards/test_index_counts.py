"""Size guards read counts without running code of the operand (issue 13, F06 second layer).

Should a class with ``__index__`` ever reach a script again (F06 built one through a held
metaclass), ``"ab" * x``, ``[0] * x`` and the str width methods must not trust the int
its ``__index__`` returns: an exact int is read as it is, an ``int`` subclass through
``int``'s own methods, anything else with ``__index__`` is refused before C calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from scriptgate.sandbox.guards.allocations import bounded_method, repeat_count
from scriptgate.sandbox.guards.attributes import guarded_mul
from scriptgate.sandbox.guards.errors import ScriptStop


def _bounded(obj: Any, name: str) -> Callable[..., Any]:
    method = bounded_method(obj, name)
    assert method is not None
    return method


class _HugeIndex:
    """What F06's metaclass made: an object whose ``__index__`` claims a huge count."""

    calls = 0

    def __index__(self) -> int:
        _HugeIndex.calls += 1
        return 300_000_000


class _LyingInt(int):
    """An int subclass whose own methods lie about its size."""

    def bit_length(self) -> int:
        return 1

    def __index__(self) -> int:
        return 1


@pytest.mark.parametrize(
    "operation",
    [
        lambda x: guarded_mul("ab", x),
        lambda x: guarded_mul(x, "ab"),
        lambda x: guarded_mul([0], x),
        lambda x: guarded_mul(b"y", x),
        lambda x: _bounded("x", "ljust")(x),
        lambda x: _bounded("1", "zfill")(x),
        lambda x: _bounded("1", "center")(x),
        lambda x: _bounded("a\tb", "expandtabs")(x),
    ],
    ids=["str*x", "x*str", "list*x", "bytes*x", "ljust", "zfill", "center", "expandtabs"],
)
def test_index_counts_foreign_index_is_refused_before_c_reads_it(
    operation: Callable[[Any], Any],
) -> None:
    _HugeIndex.calls = 0
    with pytest.raises(TypeError, match="must be an int in the sandbox"):
        operation(_HugeIndex())
    assert _HugeIndex.calls == 0  # never asked: its answer is not trusted


def test_index_counts_int_subclass_is_measured_by_its_int_value() -> None:
    big = _LyingInt(20_000_000)
    assert repeat_count(big) == 20_000_000
    with pytest.raises(ScriptStop, match="repeated sequence"):
        guarded_mul("ab", big)
    with pytest.raises(ScriptStop, match="ljust"):
        _bounded("x", "ljust")(_LyingInt(10**9))


def test_index_counts_int_subclass_product_uses_ints_own_bit_length() -> None:
    huge = _LyingInt(1 << 900_000)
    with pytest.raises(ScriptStop, match="int product"):
        guarded_mul(huge, huge)


def test_index_counts_plain_counts_still_work() -> None:
    assert guarded_mul("ab", 3) == "ababab"
    assert guarded_mul(2, [1]) == [1, 1]
    assert guarded_mul("ab", True) == "ab"
    assert _bounded("7", "zfill")(3) == "007"
    assert _bounded("a\tb", "expandtabs")(2) == "a b"
    assert repeat_count("not a count") is None
    with pytest.raises(TypeError):
        guarded_mul("ab", "cd")  # Python's own error, unchanged
