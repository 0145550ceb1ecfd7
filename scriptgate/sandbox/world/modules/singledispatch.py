"""``functools.singledispatch``: a function that picks an implementation by its first argument's type.

Part of ``world/modules/`` (used by the ``functools`` stand-in, not importable itself); uses
``guards/`` and must not import the engine, isolation or the model-facing text.

The real ``singledispatch`` keeps a host ``mappingproxy`` registry, a weak-reference cache
and ABC machinery behind its function attributes. This stand-in is the sandbox's own small
class: the registry is a private dict of at most :data:`MAX_REGISTERED` classes, and a call
picks, among the registered classes the argument is an instance of (``issubclass`` of its
type, so the script's ``str``/``list`` stand-in names dispatch as the builtins), the most
specific one (the fewest classes of the argument type's MRO are subclasses of it).
``register`` takes a class (``@f.register(int)``), a function whose first parameter is
annotated with a class or a union of classes (``@f.register`` over ``def _(x: int)``), or
both (``f.register(int, func)``).
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["HOLDABLE", "MAX_REGISTERED", "SingleDispatch", "singledispatch"]

MAX_REGISTERED = 1_000
"""Most classes one ``singledispatch`` function may register (each call scans them)."""


def _classes(annotation: Any) -> tuple[type, ...]:
    if isinstance(annotation, type):
        return (annotation,)
    if isinstance(annotation, types.UnionType):
        found = annotation.__args__
        if all(isinstance(kind, type) for kind in found):
            return tuple(found)
    if isinstance(annotation, str):
        raise TypeError(
            "the annotation is a string (from __future__ import annotations): "
            "write @f.register(int) with the class instead"
        )
    raise TypeError(
        f"Invalid annotation for the first argument: {annotation!r} is not a class "
        "(write @f.register(int) with the class)"
    )


def _first_annotation(func: Any) -> Any:
    annotations = getattr(func, "__annotations__", None)
    code = getattr(func, "__code__", None)
    if type(annotations) is not dict or code is None or not code.co_varnames:
        raise TypeError(
            f"Invalid first argument to `register()`: {func!r}. Use either "
            "`@register(some_class)` or plain `@register` on an annotated function."
        )
    first = code.co_varnames[0]
    if first not in annotations:
        raise TypeError(
            f"Invalid first argument to `register()`: {func!r}. Use either "
            "`@register(some_class)` or plain `@register` on an annotated function."
        )
    return annotations[first]


class SingleDispatch:
    """What ``@singledispatch`` makes of a function: call it, ``register`` more types."""

    __slots__ = ("_name", "_registry", "default")

    def __init__(self, func: Any) -> None:
        if not callable(func):
            raise TypeError(f"{func!r} is not callable or a descriptor")
        self.default = func
        self._registry: dict[type, Any] = {object: func}
        name = getattr(func, "__name__", None)
        self._name = name if type(name) is str else "function"

    def _add(self, kinds: tuple[type, ...], func: Any) -> Any:
        if not callable(func):
            raise TypeError(f"{func!r} is not callable")
        for kind in kinds:
            if kind not in self._registry and len(self._registry) >= MAX_REGISTERED:
                raise ValueError(
                    f"a singledispatch function registers at most {MAX_REGISTERED} classes"
                )
            self._registry[kind] = func
        return func

    def register(self, cls: Any, func: Any = None) -> Any:
        """``@f.register(int)``, ``@f.register`` on an annotated function, ``f.register(int, g)``."""
        if func is not None:
            return self._add(_classes(cls), func)
        if isinstance(cls, (type, types.UnionType)):
            kinds = _classes(cls)
            return lambda function: self._add(kinds, function)
        return self._add(_classes(_first_annotation(cls)), cls)

    def dispatch(self, cls: Any) -> Any:
        """The implementation for arguments of class ``cls``."""
        if not isinstance(cls, type):
            raise TypeError(f"dispatch() takes a class, not {cls!r}")
        mro = cls.__mro__
        best, best_rank = self.default, len(mro) + 1
        for kind, func in self._registry.items():
            if kind is object or not issubclass(cls, kind):
                continue
            rank = sum(1 for klass in mro if issubclass(klass, kind))
            if rank < best_rank:
                best, best_rank = func, rank
        return best

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not args:
            raise TypeError(f"{self._name} requires at least 1 positional argument")
        return self.dispatch(type(args[0]))(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<singledispatch function {self._name}>"


def singledispatch(func: Any) -> SingleDispatch:
    """``@singledispatch``: the function becomes the default of a type-dispatched function."""
    return SingleDispatch(func)


SingleDispatch.__module__ = "functools"
HOLDABLE: tuple[type, ...] = (SingleDispatch,)
"""The dispatching function is the sandbox's own object (its registry is private)."""
