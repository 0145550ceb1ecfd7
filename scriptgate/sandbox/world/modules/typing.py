"""The ``typing`` stand-in: annotation helpers (they do nothing at run time).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import typing
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "typing"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Iterable",
    "Iterator", "Callable", "Sequence", "Mapping", "Literal", "TypedDict", "cast", "TypeVar",
    "Protocol", "NamedTuple", "Generic", "Final", "ClassVar", "Awaitable", "Generator",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (typing.TypeVar,)
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {name: getattr(typing, name) for name in MEMBERS}
