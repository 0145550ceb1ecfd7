"""The known length of a lazy input (``scriptgate/sandbox/guards/known_length.py``, findings10 F05).

The attack scripts are ``f10-*`` in ``attacks_onecall.py``; the host's peak growth is
pinned in ``test_memory.py``. These pin the allow-list: what is known and what is not.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.guards.known_length import known_length


def _gen() -> Iterator[int]:
    yield 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (range(10), (10, 32)),
        (range(0, 100, 7), (15, 32)),
        (iter(range(5)), (5, 32)),
        ({1: 2, 3: 4}.keys(), (2, 0)),
        (iter([1, 2, 3]), (3, 0)),
        (zip(range(10), range(4), strict=False), (4, 64 + 64)),
        (enumerate("abc"), (3, 64 + 32)),
        (map(abs, range(6)), (6, 32)),
        (range(sys.maxsize + 10), (sys.maxsize, 32)),
    ],
    ids=["range", "step", "range-iter", "keys", "list-iter", "zip", "enumerate", "map", "huge"],
)
def test_known_length_of_builtin_lazy_inputs(value: Any, expected: tuple[int, int]) -> None:
    assert known_length(value) == expected


def test_known_length_zip_pairs_are_not_stored_in_a_dict() -> None:
    assert known_length(zip(range(3), range(3), strict=True), stored=False) == (3, 64)


@pytest.mark.parametrize(
    "value",
    [_gen(), zip(range(3), _gen(), strict=False), iter(_gen()), map(abs, _gen()), 5, [1, 2], zip()],
    ids=[
        "generator",
        "zip-of-generator",
        "iter-generator",
        "map-generator",
        "int",
        "list",
        "empty-zip",
    ],
)
def test_known_length_unknown_inputs_are_none(value: Any) -> None:
    assert known_length(value) is None
