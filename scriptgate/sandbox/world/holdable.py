"""Collects the value types the world hands to scripts into the guards' allow-list.

Part of ``world/``: owns only :func:`register_world`, which reads the ``HOLDABLE`` (and
``OPAQUE_HOLDABLE``, ``SUBCLASSABLE``) tuple of the builtins and of every stand-in module under
``world/modules/`` — so a new module lists its own types in its own file — and registers
them with :mod:`scriptgate.sandbox.guards.boundary`. Must not import the engine, isolation
or the model.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from scriptgate.sandbox.guards.boundary import (
    register_holdable,
    register_opaque,
    register_subclassable,
)
from scriptgate.sandbox.world import builtins as world_builtins
from scriptgate.sandbox.world import modules as world_modules

__all__ = ["register_world", "world_modules_list"]

_DONE: list[bool] = []


def world_modules_list() -> list[ModuleType]:
    """The builtins module, the stand-in package and each stand-in module under it."""
    found: list[ModuleType] = [world_builtins, world_modules]
    for info in pkgutil.iter_modules(world_modules.__path__):
        found.append(importlib.import_module(f"{world_modules.__name__}.{info.name}"))
    return found


def register_world() -> None:
    """Register every ``HOLDABLE``/``OPAQUE_HOLDABLE`` type of the world (once per process)."""
    if _DONE:
        return
    for module in world_modules_list():
        register_holdable(getattr(module, "HOLDABLE", ()))
        register_opaque(getattr(module, "OPAQUE_HOLDABLE", ()))
        register_subclassable(getattr(module, "SUBCLASSABLE", ()))
    _DONE.append(True)
