"""The ``collections`` stand-in: constructors that feed what they hash in chunks.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``Counter``, ``OrderedDict`` and
``defaultdict`` check what they hash (:func:`guards.fed`); namedtuples are tuples
(their ``index`` and ``count`` are wrapped by the attribute guard); ``ChainMap`` is the
sandbox's own class (:mod:`.chainmap`).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.attributes import fed
from scriptgate.sandbox.guards.boundary import HOLDABLE_MARK, SUBCLASSABLE_MARK
from scriptgate.sandbox.guards.edges import SCRIPT_TYPES
from scriptgate.sandbox.world.deque_type import growing_deque
from scriptgate.sandbox.world.modules.chainmap import ChainMap
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = [
    "DEQUE",
    "FED_COUNTER",
    "FED_DEFAULTDICT",
    "FED_ORDERED_DICT",
    "HOLDABLE",
    "MEMBERS",
    "NAME",
    "build",
]

NAME = "collections"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "Counter", "defaultdict", "OrderedDict", "deque", "namedtuple", "ChainMap",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (
    collections.Counter, collections.defaultdict, collections.OrderedDict, collections.deque,
    ChainMap,
)  # fmt: skip
"""Value types this stand-in hands to scripts (namedtuple classes are tuples)."""


def _namedtuple(typename: str, field_names: Any, *, defaults: Any = None) -> type:
    names = (
        field_names.replace(",", " ").split() if isinstance(field_names, str) else list(field_names)
    )
    for name in [typename, *names]:
        if not isinstance(name, str) or name.startswith("_"):
            raise ValueError(f"invalid namedtuple name {name!r} in the sandbox")
    made: type = collections.namedtuple(  # type: ignore[misc]
        typename,
        names,
        defaults=defaults,  # type: ignore[misc]
        module="__script__",  # its repr: the script's class
    )
    setattr(made, HOLDABLE_MARK, True)  # the run's own class: holdable, _asdict() readable
    setattr(made, SUBCLASSABLE_MARK, True)  # class P(namedtuple("P", "x y")): a tuple
    return made


class _FedMeta(type):
    """Metaclass of the collections stand-ins: ``isinstance``/``issubclass`` mean the real class."""

    def __instancecheck__(cls, obj: Any) -> bool:
        real = cls.__dict__.get("_real_")
        return isinstance(obj, real) if real is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        real = cls.__dict__.get("_real_")
        return issubclass(sub, real) if real is not None else type.__subclasscheck__(cls, sub)


def _fed_class(real: type, position: int, into: str = "dict") -> type:
    """``real`` whose constructor feeds its iterable argument in chunks (hash flooding).

    ``Counter(xs)``, ``OrderedDict(pairs)`` and ``defaultdict(f, pairs)`` hash a
    whole input in one C call (quadratic when the hashes collide); the argument
    at ``position`` goes through the run's chunked feed (:func:`guards.fed`), which
    also checks that what is hashed of it (``into``: ``"dict"`` a pair's key,
    ``"counter"`` an item) hashes in bounded time. Calling the stand-in returns a real
    instance; a script class may subclass it (its ``__init__`` feeds the same way).
    """

    def feed(args: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(args) > position:
            return (*args[:position], fed(args[position], into), *args[position + 1 :])
        return args

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is stand_in:
            return real(*feed(args), **kwargs)
        return real.__new__(cls, *args, **kwargs)

    real_init: Callable[..., None] = real.__init__  # type: ignore[misc]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *feed(args), **kwargs)

    stand_in = _FedMeta(
        real.__name__,
        (real,),
        {
            "__new__": __new__,
            "__init__": __init__,
            "__slots__": (),
            "__module__": "collections",
            "__qualname__": real.__name__,
            "__doc__": real.__doc__,
            "_real_": real,
        },
    )
    return stand_in


_FED_COUNTER = _fed_class(collections.Counter, 0, "counter")  # hashes items, not pairs
_FED_ORDERED_DICT = _fed_class(collections.OrderedDict, 0)
_FED_DEFAULTDICT = _fed_class(collections.defaultdict, 1)

HOLDABLE = (
    *HOLDABLE,
    _FED_COUNTER,
    _FED_ORDERED_DICT,
    _FED_DEFAULTDICT,
    type({}.keys().__iter__()),
    type(collections.OrderedDict().keys()),
    type(collections.OrderedDict().values()),
    type(collections.OrderedDict().items()),
    type(iter(collections.OrderedDict())),
    type(iter(collections.OrderedDict().values())),
    type(iter(collections.OrderedDict().items())),
)

SUBCLASSABLE: tuple[type, ...] = (_FED_COUNTER, _FED_ORDERED_DICT, _FED_DEFAULTDICT)
"""The dict classes (``class C(Counter)``): their guards read the ``dict`` base, never a
method a subclass overrides (attacks ``counter-elements-subclass``,
``hash-flood-counter-subclass``)."""


_DEQUE = growing_deque()
SCRIPT_TYPES[collections.deque] = _DEQUE  # type(d) is deque, d.__class__ is deque
HOLDABLE = (*HOLDABLE, _DEQUE)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "Counter": _FED_COUNTER,
        "defaultdict": _FED_DEFAULTDICT,
        "OrderedDict": _FED_ORDERED_DICT,
        "deque": _DEQUE,  # the constructor reads its iterable growth-checked (findings7 F02)
        "namedtuple": _namedtuple,
        "ChainMap": ChainMap,
    }


FED_COUNTER = _FED_COUNTER
"""The sandbox's ``Counter`` (the ``typing.Counter`` alias's origin)."""
FED_ORDERED_DICT = _FED_ORDERED_DICT
"""The sandbox's ``OrderedDict``."""
FED_DEFAULTDICT = _FED_DEFAULTDICT
"""The sandbox's ``defaultdict``."""
DEQUE = _DEQUE
"""The sandbox's ``deque``."""
