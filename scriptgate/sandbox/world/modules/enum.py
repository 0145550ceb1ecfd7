"""The ``enum`` stand-in: ``class Color(Enum)`` as in Python, on the real enum machinery.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

The stand-in bases (``Enum``, ``IntEnum``, ``StrEnum``, ``Flag``, ``IntFlag``) are
subclasses of the real ones under :class:`ScriptEnumType`, a subclass of the real
``EnumType``. A script's class statement reaches it through the script metaclass
(``type(name, bases, namespace)`` hands over to the most derived metaclass): the class
body arrives as a plain dict in definition order, which is replayed into the real
``_EnumDict`` (so ``auto()``, aliases and the member rules are Python's), then the real
``EnumType`` builds the class. What a script can reach stays small:

- the metaclass is not holdable (``type(Color)`` and ``Color.__class__`` are refused),
  nor are ``__members__`` (a host ``mappingproxy``) and the ``_member_map_`` internals;
  iterate the class, or use ``Color['RED']``/``Color(1)``;
- member values and lookup keys are hashed through :func:`guards.hash_bounded`
  (``Color(dag)`` cannot hash a shared-reference DAG unguarded);
- the functional API (``Enum('Color', 'RED GREEN')``) is refused with a one-line hint
  (its classes are made by the real metaclass, outside the script);
- ``class Color(str, Enum)`` (the script's ``str`` mixed in) works: the metaclass also
  derives from the script ``str``'s metaclass;
- ``dir(Color)`` (what the object boundary reads for class attributes) adds the public
  names the script's own classes define, so ``Color.from_text(...)`` classmethods work.
"""

from __future__ import annotations

import enum as _enum
from typing import Any

from scriptgate.sandbox.guards.attributes import hash_bounded
from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK
from scriptgate.sandbox.guards.sizes import SafeStr
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_FLAG_BITS", "MEMBERS", "NAME", "ScriptEnumType", "build"]

NAME = "enum"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "auto", "unique",
)  # fmt: skip
"""The members a script may use."""

_FUNCTIONAL = (
    "the functional Enum API is not available in the sandbox: write a class "
    "(class Color(Enum):\n    RED = 1)"
)


MAX_FLAG_BITS = 1_000
"""The widest value a ``Flag`` member (or a value looked up in one) may have, in bits:
iterating a member walks its bits one by one in C (finding G06: ``2**200000 - 1`` took
10-18 s in one ``list(F.A)``)."""


def _flag_bits(value: Any) -> None:
    if isinstance(value, int) and int.bit_length(int.__index__(value)) > MAX_FLAG_BITS:
        raise ValueError(
            f"a Flag value wider than {MAX_FLAG_BITS} bits is refused in the sandbox"
            " (use auto() or small powers of two)"
        )


_STR_META: type = type(SafeStr)


class ScriptEnumType(_enum.EnumType, _STR_META):  # type: ignore[misc]
    """The metaclass of the stand-in enum bases (never handed to a script).

    It also derives from the metaclass of the script's ``str`` (:class:`SafeStr`, whose
    metaclass only makes ``isinstance(x, str)`` mean the builtin), so the common
    ``class Color(str, Enum)`` has one most-derived metaclass instead of a conflict.
    """

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> Any:
        if type(namespace) is dict:  # a script's class body: replay it into an _EnumDict
            prepared = mcls.__prepare__(name, bases, **kwargs)
            prepared[SCRIPT_CLASS_MARK] = True  # members' __init__ writes `self.x` already
            for key, value in namespace.items():
                if not key.startswith("_"):
                    hash_bounded(value)
                prepared[key] = value
            namespace = prepared
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)  # type: ignore[arg-type]
        if issubclass(cls, _enum.Flag):
            for member in cls._member_map_.values():
                _flag_bits(member._value_)
        return cls

    def __call__(cls, value: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            raise TypeError(_FUNCTIONAL)
        if cls.__dict__.get(SCRIPT_CLASS_MARK) is None and not cls._member_map_:
            raise TypeError(_FUNCTIONAL)
        if issubclass(cls, _enum.Flag):
            _flag_bits(value)
        return super().__call__(hash_bounded(value))

    def __getitem__(cls, name: Any) -> Any:
        return super().__getitem__(hash_bounded(name))

    def __dir__(cls) -> list[str]:
        names = set(super().__dir__())
        for klass in cls.__mro__:
            if klass.__dict__.get(SCRIPT_CLASS_MARK):
                names.update(n for n in klass.__dict__ if not n.startswith("_"))
        return sorted(names)


class Enum(_enum.Enum, metaclass=ScriptEnumType):
    """``Enum``: subclass it (``class Color(Enum): RED = 1``)."""


class IntEnum(_enum.IntEnum, metaclass=ScriptEnumType):
    """``IntEnum``: members are ints."""


class StrEnum(_enum.StrEnum, metaclass=ScriptEnumType):
    """``StrEnum``: members are strs (``auto()`` gives the lower-cased name)."""


class Flag(_enum.Flag, metaclass=ScriptEnumType):
    """``Flag``: members combine with ``|``, ``&``, ``^`` and ``~``."""


class IntFlag(_enum.IntFlag, metaclass=ScriptEnumType):
    """``IntFlag``: a ``Flag`` whose members are ints."""


for _base in (Enum, IntEnum, StrEnum, Flag, IntFlag):
    _base.__module__ = "enum"


def unique(enumeration: Any) -> Any:
    """``@unique``: refuse aliases (two names for one value) in a script's enum class."""
    if not isinstance(enumeration, ScriptEnumType):
        raise TypeError("@unique takes an enum class the script defines")
    return _enum.unique(enumeration)


HOLDABLE: tuple[type, ...] = (Enum, IntEnum, StrEnum, Flag, IntFlag, _enum.auto)
"""Value types this stand-in hands to scripts (the script's enum classes are its own)."""
SUBCLASSABLE: tuple[type, ...] = (Enum, IntEnum, StrEnum, Flag, IntFlag)
"""The bases of a script's enums (the metaclass checks the class body as it is made)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "Enum": Enum,
        "IntEnum": IntEnum,
        "StrEnum": StrEnum,
        "Flag": Flag,
        "IntFlag": IntFlag,
        "auto": _enum.auto,
        "unique": unique,
    }
