"""The script's ``list`` and ``tuple``: stand-in classes whose calls read iterators with a checked growth.

Part of ``world/``: owns the two stand-ins (registered as builtins by ``world/builtins``);
uses ``guards/memory`` and must not import the engine, isolation or the model-facing text.

A compiled call ``list(x)`` charges and feeds its argument (``_copy_``), but the name
can be used as a value — ``f = list``, ``[list][0](x)``, ``map(list, rows)``,
``list[int](x)`` — and then C would copy an iterator in one call, growing the host past
the memory budget (issue 13). The names are these classes instead: calling one with an
exact builtin container copies it in C at once (its copy charged when it is large);
any other argument — an iterator, a range, the script's own iterable, a subclass with
its own ``__iter__`` — is read through :func:`guards.memory.growth_checked` (chunks of
256, resident memory read as the result grows). The value made is a real ``list`` or
``tuple``; ``isinstance``/``issubclass`` are the real type's checks, a script class may
subclass them (its construction is checked the same way), and unbound methods
(``list.append``) are the real ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.feeds import CheckedFeed
from scriptgate.sandbox.guards.lengths import SIZED_BASES
from scriptgate.sandbox.guards.memory import (
    REAL_OF_STAND_IN,
    GrowthFeed,
    charge_copy,
    growth_checked,
)

__all__ = ["growing_type"]

_WHOLE = frozenset({list, tuple, set, frozenset, dict, str, bytes, bytearray})
"""Exact containers C copies from their storage at once (the copy charged up front)."""
_FED = frozenset({GrowthFeed, CheckedFeed})
"""Feeds the compiled call made already (their growth is read as C pulls from them)."""


def growing_type(real: type) -> type:
    """``real`` (``list`` or ``tuple``) whose calls read their argument with a checked growth.

    ``stand_in(x)`` is one Python call (the metaclass's ``__call__``) that returns
    ``real(x)`` — at once for an exact container or a feed of the compiled call, else
    through :func:`growth_checked` — so ``type()`` of every value stays the real type.
    A script's subclass is built by ``type.__call__``: ``list``'s ``__init__`` and
    ``tuple``'s ``__new__`` read the argument the same way.
    """
    into = real.__name__
    make_instance = type.__call__

    def checked(value: Any) -> Any:
        kind = type(value)
        if kind in _FED:
            return value
        if kind in _WHOLE:
            return charge_copy(value, into)
        if isinstance(value, SIZED_BASES):
            # a subclass: charged at its base length, then read through its own __iter__
            # (as C reads it), without the length hint a lying __len__ would give
            return growth_checked(iter(charge_copy(value, into)), into)
        return growth_checked(value, into)  # iterators, ranges, the script's iterables

    def __call__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is not stand_in:
            return make_instance(cls, *args, **kwargs)  # a script's subclass: see below
        if len(args) == 1 and not kwargs:
            first = args[0]
            kind = type(first)
            if kind in _FED or kind is list or kind is tuple:
                return real(first)  # the common case: the compiled call's, or a copy in C
            return real(checked(first))
        return real(*args, **kwargs)  # list(), or the real error for wrong arguments

    meta = type(
        f"{into}_type",
        (type,),
        {
            "__call__": __call__,
            "__instancecheck__": staticmethod(real.__instancecheck__),
            "__subclasscheck__": staticmethod(real.__subclasscheck__),
        },
    )
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": "builtins",
        "__qualname__": into,
        "__doc__": real.__doc__,
    }
    if real is tuple:
        real_new: Callable[..., Any] = real.__new__

        def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
            if len(args) == 1 and not kwargs:
                return real_new(cls, checked(args[0]))
            return real_new(cls, *args, **kwargs)

        namespace["__new__"] = __new__
    else:
        real_init: Callable[..., None] = real.__init__  # type: ignore[misc]

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if len(args) == 1 and not kwargs:
                real_init(self, checked(args[0]))
            else:
                real_init(self, *args, **kwargs)

        namespace["__init__"] = __init__
    stand_in: type = meta(into, (real,), namespace)
    REAL_OF_STAND_IN[id(stand_in)] = real  # the compiled list(x) makes the real value at once
    return stand_in
