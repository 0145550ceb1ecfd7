"""The ``typing`` stand-in: annotation helpers (they do nothing at run time).

``Generic`` is the stand-in base of :mod:`.typing_generic` (``class Box(Generic[T])``).

Part of ``world/modules/``; uses ``guards/`` (and the builtins' ``type`` stand-in) and must
not import the engine, isolation or the model-facing text.

The aliases (``List``, ``Mapping``, ``Hashable``, ``DefaultDict``…) and special forms
(``Optional``, ``NoReturn``, ``Self``…) are ``typing``'s own objects, held opaque
(:data:`OPAQUE_HOLDABLE`: no attribute readable, so ``Mapping.register`` is out of reach);
``isinstance`` with them asks ``collections.abc`` as CPython does. The aliases this
stand-in makes itself (:data:`ALIASES`) cannot be called (``Deque()`` would build a real
``deque`` past the sandbox's growth checks): call ``collections.deque()``. Their origin is
the sandbox's class where it has one (``Counter``, ``deque``, ``ChainMap``), so
``isinstance`` with them means the sandbox's classes. ``overload``, ``final``,
``no_type_check`` and ``assert_never`` are the sandbox's functions (CPython's ``overload``
keeps every decorated function in a process-wide registry); ``get_origin`` and
``get_args`` answer a ``collections.abc`` class with the alias of the same name
(``get_origin(Mapping[str, int]) is collections.abc.Mapping`` holds in the sandbox too),
the real ``type`` with a ``type`` of the sandbox (a metaclass is never handed out), and
anything else a script may not hold is refused (``check_value``). ``Literal`` is the
sandbox's own special form (:data:`LITERAL`): its values are checked before ``typing``'s
process-wide cache keeps them (a ``str``/``bytes`` value of at most
:data:`~scriptgate.sandbox.guards.boundary.MAX_FORWARD_REFERENCE` characters, an ``int`` of
at most :data:`MAX_LITERAL_INT_BITS` bits: ``Literal["y" * 9_000_000]`` kept 9 MB in the host
after the run, findings20 P02), then it is ``typing.Literal[...]`` itself.
``SupportsInt``, ``SupportsFloat`` and ``SupportsIndex`` are ``@runtime_checkable``
protocols of :mod:`.typing_protocol` (CPython's rest on ``typing``'s ABC metaclass).
"""

from __future__ import annotations

import collections as _collections
import collections.abc as _abc
import typing
from typing import Any, NoReturn

from scriptgate.sandbox.guards.boundary import MAX_FORWARD_REFERENCE, check_opaque_key, check_value
from scriptgate.sandbox.guards.edges import SCRIPT_TYPES
from scriptgate.sandbox.guards.sizes import safe_repr
from scriptgate.sandbox.world.builtins import TypeBuiltin
from scriptgate.sandbox.world.modules import typed_classes, typing_generic, typing_protocol
from scriptgate.sandbox.world.modules.chainmap import ChainMap
from scriptgate.sandbox.world.modules.collections import (
    DEQUE,
    FED_COUNTER,
    FED_DEFAULTDICT,
    FED_ORDERED_DICT,
)
from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.modules.typing_protocol import Protocol, runtime_checkable

__all__ = [
    "ABC_ALIASES", "ALIASES", "HOLDABLE", "LITERAL", "MAX_LITERAL_INT_BITS", "MEMBERS", "NAME",
    "build",
]  # fmt: skip

NAME = "typing"
"""The name a script imports."""
_REAL: tuple[str, ...] = (
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Iterable",
    "Iterator", "Callable", "Sequence", "Mapping", "Literal", "cast", "TypeVar",
    "Final", "ClassVar", "Awaitable", "Generator",
    "Type", "NoReturn", "Never", "Self", "TypeAlias", "Annotated", "AnyStr", "Text",
    "NewType", "Required", "NotRequired", "ParamSpec", "Concatenate",
)  # fmt: skip
"""Members that are ``typing``'s own objects (forms, ``TypeVar``, ``cast``)."""
_ALIASED: dict[str, tuple[Any, int]] = {
    "DefaultDict": (FED_DEFAULTDICT, 2),
    "Deque": (DEQUE, 1),
    "Counter": (FED_COUNTER, 1),
    "OrderedDict": (FED_ORDERED_DICT, 2),
    "ChainMap": (ChainMap, 2),
    "AsyncIterator": (_abc.AsyncIterator, 1),
    "AsyncIterable": (_abc.AsyncIterable, 1),
    "AsyncGenerator": (_abc.AsyncGenerator, 2),
    "Coroutine": (_abc.Coroutine, 3),
    "Hashable": (_abc.Hashable, 0),
    "Sized": (_abc.Sized, 0),
    "Collection": (_abc.Collection, 1),
    "Container": (_abc.Container, 1),
    "Reversible": (_abc.Reversible, 1),
    "MutableMapping": (_abc.MutableMapping, 2),
    "MutableSequence": (_abc.MutableSequence, 1),
    "MutableSet": (_abc.MutableSet, 1),
    "AbstractSet": (_abc.Set, 1),
    "KeysView": (_abc.KeysView, 1),
    "ValuesView": (_abc.ValuesView, 1),
    "ItemsView": (_abc.ItemsView, 2),
}
MEMBERS: tuple[str, ...] = (
    "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Iterable",
    "Iterator", "Callable", "Sequence", "Mapping", "Literal", "TypedDict", "cast", "TypeVar",
    "Protocol", "NamedTuple", "Generic", "Final", "ClassVar", "Awaitable", "Generator",
    "runtime_checkable",
    "Type", "NoReturn", "Never", "Self", "TypeAlias", "Annotated", "AnyStr", "Text",
    "NewType", "Required", "NotRequired", "ParamSpec", "Concatenate", *_ALIASED,
    "TYPE_CHECKING", "overload", "final", "no_type_check", "assert_never", "get_args",
    "get_origin", "SupportsInt", "SupportsFloat", "SupportsIndex",
)  # fmt: skip
"""The members a script may use."""


def _alias(name: str, origin: Any, params: int) -> Any:
    # inst=False: calling the alias is refused ("Type Deque cannot be instantiated")
    return typing._SpecialGenericAlias(origin, params, inst=False, name=name)  # type: ignore[attr-defined]


ALIASES: dict[str, Any] = {name: _alias(name, *spec) for name, spec in _ALIASED.items()}
"""The aliases this stand-in makes (not callable; origin the sandbox's class if it has one)."""

_ABC_NAMES = (
    "Iterable", "Iterator", "Callable", "Sequence", "Mapping", "Awaitable", "Generator",
    "AsyncIterator", "AsyncIterable", "AsyncGenerator", "Coroutine", "Hashable", "Sized",
    "Collection", "Container", "Reversible", "MutableMapping", "MutableSequence", "MutableSet",
    "KeysView", "ValuesView", "ItemsView",
)  # fmt: skip
ABC_ALIASES: dict[str, Any] = {
    name: ALIASES.get(name, getattr(typing, name, None)) for name in _ABC_NAMES
}
ABC_ALIASES["Set"] = ALIASES["AbstractSet"]
"""The objects ``collections.abc`` gives a script, by name (the ``typing`` aliases)."""
_FOR_ABC: dict[Any, Any] = {getattr(_abc, name): alias for name, alias in ABC_ALIASES.items()}
_FOR_ABC[_collections.ChainMap] = ChainMap


MAX_LITERAL_INT_BITS = 4_096
"""The largest ``int`` (in bits) a script may write as a ``Literal`` value."""


def _check_literal_value(value: Any) -> None:
    kind = type(value)
    if (kind is str or kind is bytes) and len(value) > MAX_FORWARD_REFERENCE:
        raise ValueError(
            f"a Literal value of {len(value)} characters is refused in the sandbox "
            f"(at most {MAX_FORWARD_REFERENCE}): typing keeps every Literal for the whole "
            "process; compare with the value instead (x == value)"
        )
    if kind is int and value.bit_length() > MAX_LITERAL_INT_BITS:
        raise ValueError(
            f"a Literal int of more than {MAX_LITERAL_INT_BITS} bits is refused in the sandbox: "
            "compare with the value instead (x == value)"
        )


def Literal(self: Any, parameters: Any) -> Any:  # the form takes its name from this
    """``Literal['a', 1]``: the values are checked, then it is ``typing.Literal[...]``."""
    for value in parameters if type(parameters) is tuple else (parameters,):
        _check_literal_value(value)
    check_opaque_key(typing.Literal, parameters)  # what else it holds compares without code
    return typing.Literal[parameters]


LITERAL: Any = typing._SpecialForm(Literal)  # type: ignore[call-arg]
"""The script's ``typing.Literal`` (shows as ``typing.Literal``; see the module's text)."""
_FOR_ABC[typing.Literal] = LITERAL  # get_origin(Literal[1]) is the script's Literal


def _safe(value: Any) -> Any:
    if type(value) is tuple:
        return tuple(_safe(item) for item in value)
    if type(value) is list:
        return [_safe(item) for item in value]
    if value is type:
        return _SCRIPT_TYPE  # get_origin(Type[int]): never the metaclass (its call makes classes)
    try:
        found = _FOR_ABC.get(value, value)
    except TypeError:  # unhashable
        found = value
    if type(found) is type:
        found = SCRIPT_TYPES.get(found, found)  # list: the script's
    return check_value(found)  # anything else the host's: refused


_SCRIPT_TYPE = TypeBuiltin()
"""What ``get_origin``/``get_args`` give for the real ``type``: the script's ``type``."""


def get_origin(tp: Any) -> Any:
    """``get_origin(List[int])`` is ``list`` (a ``collections.abc`` class: its alias)."""
    return _safe(typing.get_origin(tp))


def get_args(tp: Any) -> tuple[Any, ...]:
    """``get_args(Dict[str, int])`` is ``(str, int)``."""
    result: tuple[Any, ...] = _safe(typing.get_args(tp))
    return result


def _overload_dummy(*args: Any, **kwds: Any) -> NoReturn:
    raise NotImplementedError(
        "You should not call an overloaded function. "
        "A series of @overload-decorated functions "
        "outside a stub module should always be followed "
        "by an implementation that is not @overload-ed."
    )


def overload(func: Any) -> Any:
    """``@overload``: the decorated signature is an annotation only (calling it raises)."""
    return _overload_dummy


def final(f: Any) -> Any:
    """``@final``: an annotation only (returns ``f``)."""
    return f


def no_type_check(arg: Any) -> Any:
    """``@no_type_check``: an annotation only (returns ``arg``)."""
    return arg


def assert_never(arg: Any, /) -> NoReturn:
    """Raise ``AssertionError``: the code was meant to be unreachable."""
    value = safe_repr(arg)  # a huge value's text is refused before it is made
    if len(value) > 100:
        value = value[:100] + "..."
    raise AssertionError(f"Expected code to be unreachable, but got: {value}")


@runtime_checkable
class SupportsInt(Protocol):
    """An object with ``__int__``."""

    __slots__ = ()

    def __int__(self) -> int:
        raise NotImplementedError


@runtime_checkable
class SupportsFloat(Protocol):
    """An object with ``__float__``."""

    __slots__ = ()

    def __float__(self) -> float:
        raise NotImplementedError


@runtime_checkable
class SupportsIndex(Protocol):
    """An object with ``__index__``."""

    __slots__ = ()

    def __index__(self) -> int:
        raise NotImplementedError


for _protocol in (SupportsInt, SupportsFloat, SupportsIndex):
    _protocol.__module__ = "typing"

_CLASS_FORMS: tuple[type, ...] = tuple(
    value
    for value in (typing.Annotated, typing.NewType, typing.ParamSpec)
    if isinstance(value, type)
)
HOLDABLE: tuple[type, ...] = (
    typing.TypeVar, *_CLASS_FORMS, SupportsInt, SupportsFloat, SupportsIndex,
)  # fmt: skip
"""Value types this stand-in hands to scripts (``TypeVar``, ``ParamSpec`` and ``NewType``
values; ``Annotated`` is a class on Python 3.11 and 3.12)."""
SUBCLASSABLE: tuple[type, ...] = (SupportsInt, SupportsFloat, SupportsIndex)
"""The ``Supports*`` protocols (their guards are :mod:`.typing_protocol`'s)."""

_P: Any = getattr(typing, "ParamSpec")("_P")  # noqa: B009 (mypy: a ParamSpec has no type)
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
        type(typing.Annotated[int, "x"]),
        type(typing.Concatenate[int, _P]),
        type(_P.args),
        type(_P.kwargs),
        type(list[int]),
        type(int | str),
    }
)
"""Values a script may hold and pass (``typing`` aliases in annotations) but not look into:
their attributes forward to ``collections.abc`` (``typing.Mapping.register(list)``)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    members = {name: getattr(typing, name) for name in _REAL}
    members.update(ALIASES)
    members.update(
        Literal=LITERAL,
        NamedTuple=typed_classes.NamedTuple,
        TypedDict=typed_classes.TypedDict,
        Protocol=typing_protocol.Protocol,
        Generic=typing_generic.Generic,
        runtime_checkable=typing_protocol.runtime_checkable,
        Text=SCRIPT_TYPES.get(str, str),  # the script's str
        TYPE_CHECKING=False,
        overload=overload,
        final=final,
        no_type_check=no_type_check,
        assert_never=assert_never,
        get_args=get_args,
        get_origin=get_origin,
        SupportsInt=SupportsInt,
        SupportsFloat=SupportsFloat,
        SupportsIndex=SupportsIndex,
    )
    return {name: members[name] for name in MEMBERS}
