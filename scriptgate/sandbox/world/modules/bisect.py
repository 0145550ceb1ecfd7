"""The ``bisect`` stand-in: binary search and sorted insertion, with bounded comparisons.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``bisect`` compares the probe with items of
the list in C: a non-scalar probe (or key) is checked first (dagguard).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.comparisons import SCALARS, operand_ok
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "bisect"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "bisect", "bisect_left", "bisect_right", "insort", "insort_left", "insort_right",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (none: ints and lists)."""


def _item(value: Any) -> Any:
    return value if type(value) in SCALARS else operand_ok(value)


def _checked(real: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(a: Any, x: Any, lo: int = 0, hi: int | None = None, *, key: Any = None) -> Any:
        checked_key = None if key is None else (lambda item: _item(key(item)))
        if hi is None:
            return real(a, _item(x), lo, key=checked_key)
        return real(a, _item(x), lo, hi, key=checked_key)

    wrapper.__name__ = real.__name__
    return wrapper


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {name: _checked(getattr(bisect, name)) for name in MEMBERS}
