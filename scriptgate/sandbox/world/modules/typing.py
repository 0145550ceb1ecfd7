"""The ``typing`` stand-in: annotation helpers (they do nothing at run time).

``Generic`` is the stand-in base of :mod:`.typing_generic` (``class Box(Generic[T])``).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import typing
from typing import Any

from scriptgate.sandbox.world.modules import typed_classes, typing_generic, typing_protocol
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "typing"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Iterable",
    "Iterator", "Callable", "Sequence", "Mapping", "Literal", "TypedDict", "cast", "TypeVar",
    "Protocol", "NamedTuple", "Generic", "Final", "ClassVar", "Awaitable", "Generator",
    "runtime_checkable",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (typing.TypeVar,)

OPAQUE_HOLDABLE: tuple[type, ...] = tuple(
    {
        type(typing.Optional),
        type(typing.Optional[int]),  # noqa: UP045
        type(typing.List),  # noqa: UP006
        type(typing.List[int]),  # noqa: UP006
        type(typing.Callable),
        type(typing.Callable[[int], int]),
        type(typing.Literal[1]),
        type(typing.Union[int, str]),  # noqa: UP007
        type(typing.Any),
        type(list[int]),
        type(int | str),
    }
)
"""Values a script may hold and pass (``typing`` aliases in annotations) but not look into:
their attributes forward to ``collections.abc`` (``typing.Mapping.register(list)``)."""
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    members = {name: getattr(typing, name) for name in MEMBERS}
    members.update(
        NamedTuple=typed_classes.NamedTuple,
        TypedDict=typed_classes.TypedDict,
        Protocol=typing_protocol.Protocol,
        Generic=typing_generic.Generic,
        runtime_checkable=typing_protocol.runtime_checkable,
    )
    return members
