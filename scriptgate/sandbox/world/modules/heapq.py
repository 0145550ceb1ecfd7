"""The ``heapq`` stand-in: the real heap functions, once what they compare is bounded.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The heap functions compare items in C: a
non-scalar item is checked (dagguard, :func:`guards.comparisons.operand_ok`)
before it goes in, ``heapify``/``nlargest``/``nsmallest`` check all items together.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from scriptgate.sandbox.guards.comparisons import SCALARS, items_ok, light_scalars, operand_ok
from scriptgate.sandbox.guards.memory import charge_copy, growth_checked
from scriptgate.sandbox.guards.ticking import ticked
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "heapq"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "heappush", "heappop", "heapify", "heappushpop", "heapreplace", "nlargest",
    "nsmallest", "merge",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (heaps are lists)."""


def _item(value: Any) -> Any:
    return value if type(value) in SCALARS else operand_ok(value)


def _all(items: list[Any]) -> list[Any]:
    if len(items) > 1 and not light_scalars(items):
        items_ok(items)
    return items


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    charge = run.charge

    def heappush(heap: list[Any], item: Any) -> None:
        heapq.heappush(heap, _item(item))

    def heappushpop(heap: list[Any], item: Any) -> Any:
        return heapq.heappushpop(heap, _item(item))

    def heapreplace(heap: list[Any], item: Any) -> Any:
        return heapq.heapreplace(heap, _item(item))

    def heapify(heap: list[Any]) -> None:
        heapq.heapify(_all(heap))

    def selected(real: Any, n: int, iterable: Any, key: Any) -> list[Any]:
        # the copy's growth is read (F03: nsmallest(3, range(3*10**7)) grew the host
        # 1.15 GB); the host's heapq loop is pure Python: it reads ticked pieces (F03)
        items = list(growth_checked(charge(charge_copy(iterable, "list")), "list"))
        if key is None:
            return list(real(n, ticked(_all(items), charge)))
        keys = _all([key(item) for item in ticked(items, charge)])
        order = real(n, ticked(range(len(items)), charge), key=keys.__getitem__)
        return [items[i] for i in order]

    def nlargest(n: int, iterable: Any, key: Any = None) -> list[Any]:
        return selected(heapq.nlargest, n, iterable, key)

    def nsmallest(n: int, iterable: Any, key: Any = None) -> list[Any]:
        return selected(heapq.nsmallest, n, iterable, key)

    def merge(*iterables: Any, key: Any = None, reverse: bool = False) -> Iterator[Any]:
        checked = [map(_item, charge(it)) for it in iterables]
        checked_key = None if key is None else (lambda item: _item(key(item)))
        return run.ticking(heapq.merge(*checked, key=checked_key, reverse=reverse))

    return {
        "heappush": heappush,
        "heappop": heapq.heappop,
        "heapify": heapify,
        "heappushpop": heappushpop,
        "heapreplace": heapreplace,
        "nlargest": nlargest,
        "nsmallest": nsmallest,
        "merge": merge,
    }
