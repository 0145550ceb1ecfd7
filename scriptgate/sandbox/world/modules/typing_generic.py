"""``typing.Generic`` for the class syntax (``class Stack(Generic[T]): ...``).

Part of ``world/modules/`` (used by the ``typing`` stand-in, not importable itself); uses
``guards/`` and must not import the engine, isolation or the model-facing text.

The real ``Generic`` is a host class whose ``__class_getitem__`` builds ``typing``
aliases (``__origin__``, ``__parameters__``, ``__orig_bases__`` lead back to ``typing``'s
internals). This stand-in is a stateless base class (:data:`guards.STATELESS_BASE_MARK`:
the script's subclasses keep the private-name rule) with no metaclass: type parameters
are annotations only, so ``Generic[T]``, ``Stack[int]`` and ``Pair[K, V]`` are the class
itself (nothing about the parameters is read, hashed or stored). As in CPython,
``Generic()`` itself cannot be instantiated.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.guards.attributes import STATELESS_BASE_MARK

__all__ = ["HOLDABLE", "SUBCLASSABLE", "Generic"]

_NOT_ALONE = (
    "Type Generic cannot be instantiated; it can be used only as a base class "
    "(class Box(Generic[T]): ...)"
)


class Generic:
    """``class Box(Generic[T]): ...`` — a base whose type parameters are annotations only."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Instances of the script's subclasses; ``Generic()`` itself is refused."""
        if cls is Generic:
            raise TypeError(_NOT_ALONE)
        return object.__new__(cls)

    def __class_getitem__(cls, params: Any) -> Any:
        """``Generic[T]`` / ``Box[int]``: the class itself (parameters are annotations)."""
        return cls


Generic.__module__ = "typing"
type.__setattr__(Generic, STATELESS_BASE_MARK, True)

HOLDABLE: tuple[type, ...] = (Generic,)
"""The stand-in base a script may subclass (its generic classes are its own)."""
SUBCLASSABLE: tuple[type, ...] = (Generic,)
"""It has no guards of its own that call script methods."""
