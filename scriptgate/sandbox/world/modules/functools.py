"""The ``functools`` stand-in: ``reduce`` ticking per item and caches that check hashing.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``lru_cache``/``cache`` check the arguments'
hashing (:func:`guards.hash_bounded`) before the cached call; ``cmp_to_key``
compares with the script's own function. ``update_wrapper``/``wraps`` and
``total_ordering`` write only to the script's own functions, classes and instances
(issue 13, F01); ``cached_property`` is the sandbox's own descriptor, which caches into the
``__dict__`` of the script's own instances only, under a public name or (on the script's
own classes) a private one. ``singledispatch`` is the sandbox's own dispatching function
(:mod:`.singledispatch`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.attributes import (
    guarded_metadata_write,
    guarded_private_write,
    guarded_read,
    guarded_write,
    hash_bounded,
    script_function,
)
from scriptgate.sandbox.guards.comparisons import SCALARS
from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK, is_private_name
from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.modules.singledispatch import singledispatch

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "functools"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "reduce", "lru_cache", "cache", "cmp_to_key", "partial", "wraps", "update_wrapper",
    "total_ordering", "cached_property", "singledispatch",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (
    type(functools.cmp_to_key(lambda a, b: 0)),
    functools._lru_cache_wrapper,  # fib.cache_info(), fib.cache_clear()
    type(functools.lru_cache(maxsize=None)(len).cache_info()),
)
"""Value types this stand-in hands to scripts (its wrappers are plain functions)."""


def _lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
    """``functools.lru_cache`` whose cached function checks its arguments' hashing first.

    The cache hashes the tuple of arguments (and compares it with a stored key
    whose hash matches): a tuple argument built from shared references would
    never finish, so the arguments are checked together (dagguard) before the call.
    """
    if callable(maxsize) and isinstance(typed, bool):
        return _checked_cache(functools.lru_cache(maxsize, typed))  # @lru_cache without ()
    decorate = functools.lru_cache(maxsize, typed)  # its own TypeError for a bad maxsize

    def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
        return _checked_cache(decorate(function))

    return decorator


def _cache(function: Callable[..., Any]) -> Callable[..., Any]:
    """``functools.cache``: an unbounded :func:`_lru_cache`."""
    return _checked_cache(functools.lru_cache(maxsize=None)(function))


def _checked_cache(cached: Any) -> Callable[..., Any]:
    """A function calling ``cached`` (an lru_cache wrapper) once its key hashes in bounded time.

    A plain function (so it binds as a method, like the real wrapper) with the
    wrapper's ``cache_info``, ``cache_clear`` and ``cache_parameters``.
    """

    def cached_call(*args: Any, **kwargs: Any) -> Any:
        if not SCALARS.issuperset(map(type, args)) or (
            kwargs and not SCALARS.issuperset(map(type, kwargs.values()))
        ):
            hash_bounded((*args, *kwargs.values()))
        return cached(*args, **kwargs)

    cached_call.cache_info = cached.cache_info  # type: ignore[attr-defined]
    cached_call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    cached_call.cache_parameters = cached.cache_parameters  # type: ignore[attr-defined]
    cached_call.__name__ = getattr(cached, "__name__", "cached_call")
    cached_call.__qualname__ = cached_call.__name__
    return cached_call


def _partial(func: Any, /, *args: Any, **keywords: Any) -> Callable[..., Any]:
    """``functools.partial`` as a plain function (the real partial's state is writable).

    It has the real one's ``func``, ``args`` and ``keywords`` to read.
    """
    if not callable(func):
        raise TypeError("the first argument must be callable")

    def partial(*more: Any, **extra: Any) -> Any:
        return func(*args, *more, **{**keywords, **extra})

    partial.func = func  # type: ignore[attr-defined]
    partial.args = args  # type: ignore[attr-defined]
    partial.keywords = keywords  # type: ignore[attr-defined]
    partial.__name__ = getattr(func, "__name__", "partial")
    return partial


_COPIED = ("__name__", "__qualname__", "__doc__")
"""What ``update_wrapper`` copies from any held value (read through the read guard).
``__module__`` stays the wrapper's own; ``__annotations__`` and the ``__dict__`` entries
are copied from the script's own objects only (a host object's may hold host values)."""


def _copy_metadata(wrapper: Any, wrapped: Any) -> Any:
    """``functools.update_wrapper(wrapper, wrapped)`` writing only to the script's own objects.

    The write target goes through :func:`guards.guarded_metadata_write` (the script's own
    functions, classes and instances), the reads of ``wrapped`` through the read guard.
    """
    target = guarded_metadata_write(wrapper)
    for name in _COPIED:
        value = guarded_read(wrapped, name, None)
        if value is not None or name == "__doc__":
            setattr(target, name, value)
    if script_function(wrapped) or _script_owned(wrapped):
        annotations = getattr(wrapped, "__annotations__", None)
        if type(annotations) is dict and script_function(target):
            target.__annotations__ = dict(annotations)
        own = getattr(wrapped, "__dict__", None)
        if type(own) is dict:
            for key, value in list(own.items()):
                if type(key) is str and not key.startswith("_"):
                    setattr(target, key, value)
    target.__wrapped__ = wrapped
    return wrapper


def _script_owned(obj: Any) -> bool:
    try:
        guarded_write(obj)
    except TypeError:
        return False
    return not isinstance(obj, (dict, list))


def _update_wrapper(wrapper: Any, wrapped: Any, *args: Any, **kwargs: Any) -> Any:
    """``functools.update_wrapper`` with the standard attribute lists, onto script objects only."""
    if args or kwargs:
        raise TypeError("update_wrapper takes (wrapper, wrapped) in the sandbox")
    return _copy_metadata(wrapper, wrapped)


def _wraps(wrapped: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """``functools.wraps``: a plain decorator (the real one returns a partial)."""
    if args or kwargs:
        raise TypeError("wraps takes one argument in the sandbox")

    def decorator(wrapper: Any) -> Any:
        return _copy_metadata(wrapper, wrapped)

    return decorator


def _total_ordering(cls: Any) -> Any:
    """``functools.total_ordering`` on the script's own classes only (it sets methods on ``cls``)."""
    if not isinstance(cls, type):
        raise TypeError("total_ordering decorates a class")
    return functools.total_ordering(guarded_write(cls))


_UNSET: Any = object()


class cached_property:
    """``@cached_property``: computed on the first read, then stored in the instance's
    ``__dict__`` (``del obj.name`` computes it again)."""

    __slots__ = ("attrname", "func")

    def __init__(self, func: Any) -> None:
        if not callable(func):
            raise TypeError("cached_property decorates a method")
        self.func = func
        self.attrname: str | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        if type(name) is not str or not (
            (name.isidentifier() and name[0] != "_") or is_private_name(name)
        ):
            raise TypeError(f"a cached_property cannot be named {name!r} in the sandbox")
        if self.attrname is None:
            self.attrname = name
        elif name != self.attrname:
            raise TypeError(
                "Cannot assign the same cached_property to two different names "
                f"({self.attrname!r} and {name!r})."
            )

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        name = self.attrname
        if name is None:
            raise TypeError(
                "Cannot use cached_property instance without calling __set_name__ on it."
            )
        if not getattr(type(instance), SCRIPT_CLASS_MARK, False):
            raise TypeError("cached_property works on instances of your own classes")
        if name[0] == "_":
            guarded_private_write(instance)  # the private-name rule: the script's own classes
        try:
            cache = instance.__dict__
        except AttributeError:
            raise TypeError(
                f"No '__dict__' attribute on {type(instance).__name__!r} instance to cache "
                f"{name!r} property."
            ) from None
        if type(cache) is not dict:
            raise TypeError("cached_property needs an instance __dict__")
        value = cache.get(name, _UNSET)
        if value is _UNSET:
            value = self.func(instance)
            cache[name] = value
        return value

    def __repr__(self) -> str:
        return f"<cached_property {self.attrname!r}>"


cached_property.__module__ = "functools"
HOLDABLE = (*HOLDABLE, cached_property)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    charge, ticking = run.charge, run.ticking

    def reduce(function: Any, iterable: Any, *initial: Any) -> Any:
        # every item ticks (not one charge up front): a builtin function does C work per
        # item that can grow with the accumulated value (test_modules_reduce_ticks_per_item)
        return functools.reduce(function, ticking(iter(charge(iterable))), *initial)

    return {
        "reduce": reduce,
        "lru_cache": _lru_cache,
        "cache": _cache,
        "cmp_to_key": functools.cmp_to_key,
        "partial": _partial,
        "wraps": _wraps,
        "update_wrapper": _update_wrapper,
        "total_ordering": _total_ordering,
        "cached_property": cached_property,
        "singledispatch": singledispatch,
    }
