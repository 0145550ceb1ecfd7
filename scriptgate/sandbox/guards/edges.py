"""Sharp edges of issue 14 the attribute guard hands out: ``@x.setter`` on a script property,
the class ``x.__class__`` gives.

Owns :func:`property_copier` (``prop.setter``/``getter``/``deleter`` of a property whose
functions are the script's own) and :data:`SCRIPT_TYPES`. It sits below :mod:`.attributes` (which calls it) and
imports only :mod:`.constants`; it must not widen what a script may hold: the property it
returns again has only script functions (or ``None``) for ``fget``/``fset``/``fdel``.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.constants import FILENAME

__all__ = ["PROPERTY_COPIERS", "SCRIPT_TYPES", "property_copier", "script_property", "script_type"]

SCRIPT_TYPES: dict[type, type] = {}
"""Real builtin type → the class the script knows by that name (``str`` → the size-checked
``str``, ``bytes`` → the size-checked ``bytes``…), filled by ``world/builtins``: ``type(x)``
and ``x.__class__`` hand out the checked class, never the real one (``b''.__class__(10**9)``
would allocate in one call)."""


def script_type(kind: type) -> type:
    """The class a script gets for ``type(x)`` / ``x.__class__`` when ``x``'s type is ``kind``."""
    return SCRIPT_TYPES.get(kind, kind)


PROPERTY_COPIERS = frozenset({"setter", "getter", "deleter"})
"""The ``property`` methods a script may read on its own properties."""


def _script_function(obj: Any) -> bool:
    return type(obj) is types.FunctionType and obj.__code__.co_filename == FILENAME


def script_property(obj: Any) -> bool:
    """Whether ``obj`` is exactly a ``property`` whose functions are all the script's own."""
    if type(obj) is not property:
        return False
    return all(part is None or _script_function(part) for part in (obj.fget, obj.fset, obj.fdel))


def property_copier(prop: Any, name: str) -> Callable[[Any], Any]:
    """``prop.setter`` (``getter``, ``deleter``) of a script property, taking a script function.

    test_names_edges_property_*: the copy is made by the real method, so ``@x.setter``
    behaves as in Python; a host function, a builtin or a callable object as the new
    accessor is refused, as is a property with any host function in it.
    """
    if not script_property(prop):
        raise AttributeError(
            f'"{name}" of a property is available only when its functions are your own '
            "(define the getter with `def` in the class)"
        )
    method = getattr(prop, name)

    def copier(function: Any) -> Any:
        if not _script_function(function):
            raise TypeError(
                f"property.{name}() takes a function you defined (def or lambda), "
                f"not a {type(function).__name__} from outside the script"
            )
        return method(function)

    copier.__name__ = name
    copier.__qualname__ = f"property.{name}"
    return copier
