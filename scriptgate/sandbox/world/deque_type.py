"""The script's ``collections.deque``: a stand-in class whose calls read iterables with a checked growth.

Part of ``world/``: owns the ``deque`` stand-in (registered by ``world/modules/collections``);
uses ``guards/memory`` and must not import the engine, isolation or the model-facing text.

The real ``deque(iterable, maxlen)`` reads any iterator in one C call with no growth
feed (findings7 F02: ``deque(range(3*10**7))`` grew the host 1.15 GB under a 200 MB
budget; ``d.extend`` was already guarded). As for the script's ``list``/``tuple``
(``world/sequence_types``): calling the stand-in makes a real ``collections.deque``
(``type()`` and ``isinstance`` are the real type's), an exact builtin container is copied
in C at once (its copy charged when large), and any other iterable is read through
:func:`guards.memory.growth_checked`. A script's subclass is built by ``type.__call__``
and its ``__init__`` reads the argument the same way. With a ``maxlen`` the deque does
not grow with its input, so the growth checks never run: ``deque(range(10**8), maxlen=0)``
(the idiom that drains an iterator) read 10**8 items in C, 2.6 s past a 1 s deadline
(findings15 E01); its input is read in ticked pieces (:func:`guards.ticking.read_ticked`).
"""

from __future__ import annotations

import collections
from typing import Any

from scriptgate.sandbox.guards.lengths import SIZED_BASES
from scriptgate.sandbox.guards.memory import charge_copy, growth_checked
from scriptgate.sandbox.guards.ticking import read_ticked

__all__ = ["growing_deque"]

_WHOLE = frozenset({list, tuple, set, frozenset, dict, str, bytes, bytearray, collections.deque})
"""Exact containers C copies from their storage at once (the copy charged up front)."""
_NO_ITERABLE: Any = object()


def _checked(value: Any) -> Any:
    kind = type(value)
    if kind in _WHOLE:
        return charge_copy(value, "list")
    if isinstance(value, SIZED_BASES):
        return growth_checked(iter(charge_copy(value, "list")), "list")  # a subclass
    return growth_checked(value, "list")  # iterators, ranges, the script's iterables


def _read(value: Any, bounded: bool) -> Any:
    # a bounded deque keeps at most maxlen items: nothing grows while C reads the input,
    # so it is read in ticked pieces (findings15 E01); the run's charge is found on the stack
    return read_ticked(_checked(value)) if bounded else _checked(value)


def _arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    maxlen = args[1] if len(args) > 1 else kwargs.get("maxlen")
    bounded = maxlen is not None
    if args:
        return (_read(args[0], bounded), *args[1:]), kwargs
    if "iterable" in kwargs:
        return (), {**kwargs, "iterable": _read(kwargs["iterable"], bounded)}
    return args, kwargs


def growing_deque() -> type:
    """A ``collections.deque`` stand-in whose construction reads its iterable growth-checked."""
    real = collections.deque
    make_instance = type.__call__

    def __call__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is not stand_in:
            return make_instance(cls, *args, **kwargs)  # a script's subclass: see __init__
        args, kwargs = _arguments(args, kwargs)
        return real(*args, **kwargs)

    meta = type(
        "deque_type",
        (type,),
        {
            "__call__": __call__,
            "__instancecheck__": staticmethod(real.__instancecheck__),
            "__subclasscheck__": staticmethod(real.__subclasscheck__),
        },
    )
    real_init: Any = real.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        args, kwargs = _arguments(args, kwargs)
        real_init(self, *args, **kwargs)

    namespace: dict[str, Any] = {
        "__slots__": (),
        "__module__": "collections",
        "__qualname__": "deque",
        "__doc__": real.__doc__,
        "__init__": __init__,
    }
    stand_in: type = meta("deque", (real,), namespace)
    return stand_in
