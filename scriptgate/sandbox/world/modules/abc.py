"""The ``abc`` stand-in: ``ABC`` and ``abstractmethod``, without a metaclass.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

``ABC`` is the sandbox's own base class. CPython's rests on ``ABCMeta``, a metaclass (which
a script must never hold) whose ``register`` changes ``isinstance`` for every caller of the
process; this one has neither. When a script class subclasses it, ``__init_subclass__``
collects the names whose values are marked abstract (defined here, or inherited and not
overridden) into ``__abstractmethods__``, and CPython's own ``object.__new__`` then refuses
to instantiate the class with the usual ``TypeError``. ``abstractmethod`` marks only the
script's own functions. ``register`` is refused with a hint (subclass the ABC instead).
``ABC`` keeps no state and defines no private name, so the script's subclasses keep the
private-name rule of the script's own classes (:data:`guards.STATELESS_BASE_MARK`).
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.guards.attributes import STATELESS_BASE_MARK, script_function
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["ABC", "HOLDABLE", "MEMBERS", "NAME", "SUBCLASSABLE", "abstractmethod", "build"]

NAME = "abc"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("ABC", "abstractmethod")
"""The members a script may use."""


def _abstract(value: Any) -> bool:
    try:
        return getattr(value, "__isabstractmethod__", False) is True
    except Exception:  # a script descriptor whose read fails: not abstract
        return False


class ABC:
    """``class Shape(ABC):`` — a class with ``@abstractmethod`` methods left unimplemented
    cannot be instantiated (``TypeError``), as in CPython."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = {name for name, value in cls.__dict__.items() if _abstract(value)}
        for base in cls.__bases__:
            for name in getattr(base, "__abstractmethods__", ()):
                if _abstract(getattr(cls, name, None)):
                    names.add(name)
        type.__setattr__(cls, "__abstractmethods__", frozenset(names))

    @classmethod
    def register(cls, subclass: Any) -> Any:
        """Refused: virtual subclasses are not available in the sandbox."""
        raise TypeError(
            "ABC.register is not available in the sandbox: subclass the ABC instead "
            f"(class {getattr(subclass, '__name__', 'Impl')}({cls.__name__}): ...)"
        )


ABC.__module__ = "abc"
setattr(ABC, STATELESS_BASE_MARK, True)


def abstractmethod(funcobj: Any) -> Any:
    """``@abstractmethod``: mark a method the subclasses must implement."""
    target = funcobj.__func__ if type(funcobj) in (classmethod, staticmethod) else funcobj
    if not script_function(target):
        raise TypeError("abstractmethod decorates a function you define (a def in the class)")
    target.__isabstractmethod__ = True
    return funcobj


HOLDABLE: tuple[type, ...] = (ABC,)
"""Value types this stand-in hands to scripts (the script's ABCs are its own classes)."""
SUBCLASSABLE: tuple[type, ...] = (ABC,)
"""``class Plugin(ABC)``: its only hook reads the class being made (no overridable method)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"ABC": ABC, "abstractmethod": abstractmethod}
