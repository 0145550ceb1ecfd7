"""``typing.Protocol`` and ``typing.runtime_checkable`` for the class syntax.

Part of ``world/modules/`` (used by the ``typing`` stand-in, not importable itself); uses
``guards/`` and must not import the engine, isolation or the model-facing text.

The real ``Protocol`` is a host class under ``typing``'s ABC metaclass (whose attributes
lead to ``collections.abc`` and ``register``). This stand-in is a stateless base class
(:data:`guards.STATELESS_BASE_MARK`: the script's subclasses keep the private-name rule)
under :class:`_ProtocolMeta`, a metaclass never handed to a script. As in CPython:

- a class that names ``Protocol`` among its bases is a protocol: it cannot be
  instantiated, and ``isinstance``/``issubclass`` with it raise ``TypeError`` unless it is
  decorated ``@runtime_checkable``; structural typing is otherwise a no-op at run time;
- a ``@runtime_checkable`` protocol checks that the object has each member the protocol
  (and its protocol bases) defines: dunder and private names are looked up in the
  classes' own ``__dict__``\\ s (no code runs), public names through the attribute guard;
- a class that subclasses a protocol without naming ``Protocol`` is an ordinary class
  (nominal ``isinstance``).

``Protocol[T]`` is ``Protocol`` (type parameters are annotations only).
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.guards.attributes import STATELESS_BASE_MARK, guarded_read

__all__ = ["HOLDABLE", "SUBCLASSABLE", "Protocol", "runtime_checkable"]

_PROTOCOL_MARK = "__scriptgate_protocol__"
_CHECKABLE_MARK = "__scriptgate_runtime_checkable__"
_NOT_MEMBERS = frozenset(
    {
        "__module__", "__qualname__", "__doc__", "__annotations__", "__dict__", "__weakref__",
        "__init__", "__new__", "__slots__", "__init_subclass__", "__class_getitem__",
        "__abstractmethods__", "__parameters__", "__orig_bases__",
        _PROTOCOL_MARK, _CHECKABLE_MARK,
    }
)  # fmt: skip
_MARKS_PREFIX = "__scriptgate_"


def _is_protocol(cls: type) -> bool:
    return cls.__dict__.get(_PROTOCOL_MARK) is True


def _members(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is Protocol or klass is object or not _is_protocol(klass):
            continue
        own = klass.__dict__
        names.update(n for n in own if n not in _NOT_MEMBERS and not n.startswith(_MARKS_PREFIX))
        annotations = own.get("__annotations__")
        if type(annotations) is dict:
            names.update(n for n in annotations if type(n) is str)
    return names


def _class_has(kind: type, name: str) -> bool:
    return any(name in klass.__dict__ for klass in kind.__mro__)


def _refuse_check(cls: type) -> None:
    if cls.__dict__.get(_CHECKABLE_MARK) is not True:
        raise TypeError(
            "Instance and class checks can only be used with @runtime_checkable protocols"
        )


class _ProtocolMeta(type):
    """The metaclass of ``Protocol`` and its subclasses (never handed to a script)."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> Any:
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        if any(base is Protocol for base in bases):
            for base in bases:
                if base is not Protocol and not (
                    isinstance(base, _ProtocolMeta) and _is_protocol(base)
                ):
                    raise TypeError(
                        f"Protocols can only inherit from other protocols, got {base!r}"
                    )
            type.__setattr__(cls, _PROTOCOL_MARK, True)
        return cls

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Protocol or _is_protocol(cls):
            raise TypeError("Protocols cannot be instantiated")
        return super().__call__(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is Protocol or not _is_protocol(cls):
            if cls is Protocol:
                _refuse_check(cls)
            return type.__instancecheck__(cls, obj)
        _refuse_check(cls)
        if type.__instancecheck__(cls, obj):
            return True
        kind = type(obj)
        for name in _members(cls):
            if name.startswith("_"):
                if not _class_has(kind, name):
                    return False
                continue
            try:
                guarded_read(obj, name)
            except (AttributeError, TypeError):
                return False
        return True

    def __subclasscheck__(cls, other: Any) -> bool:
        if cls is Protocol or not _is_protocol(cls):
            if cls is Protocol:
                _refuse_check(cls)
            return type.__subclasscheck__(cls, other)
        _refuse_check(cls)
        if not isinstance(other, type):
            raise TypeError("issubclass() arg 1 must be a class")
        members = _members(cls)
        for name in members:
            if not callable(_own_value(cls, name)):
                raise TypeError("Protocols with non-method members don't support issubclass()")
        return type.__subclasscheck__(cls, other) or all(_class_has(other, n) for n in members)


def _own_value(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None  # an annotation only: a data member


class Protocol(metaclass=_ProtocolMeta):
    """``class HasLen(Protocol): def __len__(self) -> int: ...`` (structural types are
    annotations; ``@runtime_checkable`` makes ``isinstance`` check the members)."""

    __slots__ = ()

    def __class_getitem__(cls, params: Any) -> Any:
        return cls  # Protocol[T]: the type parameters are annotations only


Protocol.__module__ = "typing"
type.__setattr__(Protocol, STATELESS_BASE_MARK, True)


def runtime_checkable(cls: Any) -> Any:
    """``@runtime_checkable``: let ``isinstance(x, P)`` check ``P``'s members."""
    if not (isinstance(cls, _ProtocolMeta) and _is_protocol(cls)):
        raise TypeError(f"@runtime_checkable can be only applied to protocol classes, got {cls!r}")
    type.__setattr__(cls, _CHECKABLE_MARK, True)
    return cls


HOLDABLE: tuple[type, ...] = (Protocol,)
"""The stand-in base a script may subclass (its protocol classes are its own)."""
SUBCLASSABLE: tuple[type, ...] = (Protocol,)
"""Its guards read only the classes' own ``__dict__``\\ s and the attribute guard."""
