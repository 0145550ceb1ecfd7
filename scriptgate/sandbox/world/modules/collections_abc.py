"""The ``collections.abc`` stand-in: the ``typing`` stand-in's aliases under their abc names.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

The real ``collections.abc`` classes rest on ``ABCMeta``, whose ``register`` changes
``isinstance`` for the whole process; a script gets the same opaque ``typing`` aliases
``typing`` gives (:data:`.typing.ABC_ALIASES`: ``Mapping`` is ``typing.Mapping``), so
``isinstance(x, Mapping)`` and ``Mapping[str, int]`` work and no attribute is readable.
They are not base classes (``class M(Mapping)`` is refused, as with ``typing``'s).
``import collections.abc`` binds ``collections`` (whose ``abc`` member is this namespace),
``from collections.abc import Mapping`` reads it, as in CPython.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.modules.typing import ABC_ALIASES

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "collections.abc"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = tuple(ABC_ALIASES)
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (the aliases are ``typing``'s opaque ones)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return dict(ABC_ALIASES)
