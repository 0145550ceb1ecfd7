"""``typing.NamedTuple`` and ``typing.TypedDict`` for the class syntax (``class P(NamedTuple)``).

Part of ``world/modules/`` (used by the ``typing`` stand-in, not importable itself); uses
``guards/`` and must not import the engine, isolation or the model-facing text.

The real ones are functions whose ``__mro_entries__`` put a host class under the script's
class, which the object boundary refuses. These stand-ins are classes whose metaclass
turns the class body (a plain dict, from the script metaclass) into

- for ``NamedTuple``: a ``collections.namedtuple`` class of the annotated fields (defaults
  from the assigned values) carrying the script's methods, marked as the run's own (as
  ``collections.namedtuple`` results are);
- for ``TypedDict``: a class whose call returns a plain ``dict`` (keys fed through the
  hash guard), with ``__annotations__`` merged from its TypedDict bases. Class keywords
  are not passed by the sandbox's class statement, so ``total=False`` is not available.

Their functional forms (``NamedTuple('P', [('x', int)])``, ``TypedDict('M', {'a': int})``)
work too. Neither metaclass is ever handed to a script.
"""

from __future__ import annotations

import collections
from typing import Any

from scriptgate.sandbox.guards.attributes import check_value, fed
from scriptgate.sandbox.guards.boundary import HOLDABLE_MARK
from scriptgate.sandbox.guards.memory import growth_checked

__all__ = ["HOLDABLE", "NamedTuple", "TypedDict"]

_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
     "_make", "_replace", "_asdict", "_source"}
)  # fmt: skip


def _make(name: str, fields: list[str], defaults: list[Any]) -> type:
    for item in [name, *fields]:
        if not isinstance(item, str) or not item.isidentifier() or item.startswith("_"):
            raise ValueError(f"invalid NamedTuple name {item!r} in the sandbox")
    made: type = collections.namedtuple(  # type: ignore[misc]
        name,
        fields,
        defaults=defaults or None,  # type: ignore[misc]
        module="__script__",
    )
    setattr(made, HOLDABLE_MARK, True)  # the run's own class: holdable, _asdict() readable
    return made


class _NamedTupleMeta(type):
    """Builds a namedtuple class from a ``class P(NamedTuple):`` body (never script-held)."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> Any:
        if not bases:
            return super().__new__(mcls, name, bases, namespace)
        if bases != (NamedTuple,):
            raise TypeError("a NamedTuple class can only inherit from NamedTuple")
        annotations = namespace.get("__annotations__", {})
        fields = list(annotations) if type(annotations) is dict else []
        defaults: list[Any] = []
        for field in fields:
            if field in namespace:
                defaults.append(check_value(namespace[field]))
            elif defaults:
                raise TypeError(
                    f"Non-default namedtuple field {field} cannot follow default field"
                    f"{'s' if len(defaults) > 1 else ''} "
                )
        made = _make(name, fields, defaults)
        made.__annotations__ = dict(annotations) if type(annotations) is dict else {}
        for key, value in namespace.items():
            if key in _PROHIBITED:
                raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
            if key in fields or key in ("__module__", "__annotations__"):
                continue
            type.__setattr__(made, key, value)
        return made

    def __call__(cls, typename: Any, fields: Any = None, /, **kwargs: Any) -> Any:
        if cls is not NamedTuple:
            return super().__call__(typename, fields, **kwargs)
        pairs = (
            list(growth_checked(fields, "list"))  # an iterator's growth read (F09)
            if fields is not None
            else list(kwargs.items())
        )
        names = []
        for pair in pairs:
            if type(pair) not in (tuple, list) or len(pair) != 2:
                raise TypeError(
                    "NamedTuple('P', [('x', int), ('y', int)]) takes (name, type) pairs"
                )
            names.append(pair[0])
        return _make(typename, names, [])


class NamedTuple(metaclass=_NamedTupleMeta):
    """``class P(NamedTuple): x: int; y: int = 0`` (or ``NamedTuple('P', [('x', int)])``)."""


class _TypedDictMeta(type):
    """Builds a TypedDict class (calling it makes a plain ``dict``; never script-held)."""

    def __new__(
        mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> Any:
        if not bases or bases == (dict,):
            return super().__new__(mcls, name, bases, namespace)
        annotations: dict[str, Any] = {}
        for base in bases:
            if not isinstance(base, _TypedDictMeta):
                raise TypeError(
                    "cannot inherit from both a TypedDict type and a non-TypedDict base class"
                )
            annotations.update(base.__dict__.get("__annotations__", {}))  # noqa: RUF063
        own = namespace.get("__annotations__", {})
        if type(own) is dict:
            annotations.update(own)
        body = {
            "__annotations__": annotations,
            "__total__": True,
            "__module__": namespace.get("__module__", "__script__"),
            "__qualname__": namespace.get("__qualname__", name),
        }
        if "__doc__" in namespace:
            body["__doc__"] = namespace["__doc__"]
        return super().__new__(mcls, name, (dict,), body)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is TypedDict:
            if len(args) != 2 or not isinstance(args[1], dict):
                raise TypeError("TypedDict('Movie', {'name': str}) takes a name and a dict")
            made = _TypedDictMeta(str(args[0]), (TypedDict,), {"__annotations__": dict(args[1])})
            setattr(made, HOLDABLE_MARK, True)  # the run's own class
            return made
        if len(args) > 1:
            raise TypeError(f"{cls.__name__}() takes at most 1 positional argument")
        return dict(*(fed(arg, "dict") for arg in args), **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        raise TypeError("TypedDict does not support instance and class checks")


class TypedDict(dict, metaclass=_TypedDictMeta):  # type: ignore[type-arg]
    """``class Movie(TypedDict): name: str`` — calling it makes a plain ``dict``."""


for _base in (NamedTuple, TypedDict):
    _base.__module__ = "typing"

HOLDABLE: tuple[type, ...] = (NamedTuple, TypedDict)
"""The stand-in bases a script may subclass (the classes it makes are its own)."""
SUBCLASSABLE: tuple[type, ...] = HOLDABLE
"""Both are only ever subclassed (their guards call no method of the script's class)."""
