"""Lengths and copies of builtin containers read through their builtin base type.

Part of ``guards/`` (bottom layer): imports nothing of the sandbox. A script class
``class S(str)`` may define ``__len__`` (or ``__iter__``, ``__getitem__``) to answer
anything, so a bound that calls ``len(x)`` asks the script how much host work to allow,
and a host routine handed ``x`` runs the script's methods while it works. The helpers
here find the builtin base of a value in its type's MRO (read with the ``type``
descriptor, so a metaclass cannot answer) and use that base's own slot:

- :func:`builtin_base` — the builtin sized type ``x`` is an instance of, or ``None``;
- :func:`base_len` — ``len(x)`` as the base type measures it (the real size);
- :func:`sequence_len` — the real length of a str/bytes/list/tuple operand, else 0;
- :func:`exact_copy` — an exact builtin copy of ``x`` (``str``, ``list``…) made by the
  base type's own slicing, so the host works on data no script method is reachable from.
"""

from __future__ import annotations

import collections
from typing import Any

__all__ = [
    "SIZED_BASES",
    "base_len",
    "builtin_base",
    "exact_copy",
    "exact_items",
    "is_exact_sized",
    "sequence_len",
]

SIZED_BASES: tuple[type, ...] = (
    str,
    bytes,
    bytearray,
    list,
    tuple,
    dict,
    set,
    frozenset,
    collections.deque,
    memoryview,
    range,
)
"""The builtin sized types whose length :func:`base_len` reads."""
_SIZED = frozenset(SIZED_BASES)
_SLICEABLE = frozenset({str, bytes, bytearray, list, tuple})
_type_mro = type.__dict__["__mro__"].__get__


def builtin_base(value: Any) -> type | None:
    """The builtin sized type (of :data:`SIZED_BASES`) in ``type(value)``'s MRO, or ``None``."""
    kind = type(value)
    if kind in _SIZED:
        return kind
    for base in _type_mro(kind):
        if base in _SIZED:
            return base  # type: ignore[no-any-return]
    return None


def base_len(value: Any, default: int | None = None) -> int:
    """``len(value)`` through its builtin base type; a script ``__len__`` never runs.

    A value with no builtin sized base gives ``default``, or raises the ``TypeError``
    ``len()`` would (``object of type 'X' has no len()``).
    """
    kind = type(value)
    if kind in _SIZED:
        return len(value)
    base = builtin_base(value)
    if base is None:
        if default is not None:
            return default
        raise TypeError(f"object of type {kind.__name__!r} has no len()")
    length: int = base.__len__(value)  # type: ignore[attr-defined]
    return length


def exact_copy(value: Any) -> Any:
    """``value`` itself if its type is an exact builtin, else an exact builtin copy.

    A ``str``/``bytes``/``bytearray``/``list``/``tuple`` subclass is copied by its base's
    own slicing (``str.__getitem__(x, slice(None))``: the real contents, no script
    method); other values are returned unchanged.
    """
    kind = type(value)
    if kind in _SIZED:
        return value
    base: Any = builtin_base(value)
    if base in _SLICEABLE:
        return base.__getitem__(value, slice(None))
    return value


def exact_items(value: Any) -> Any:
    """:func:`exact_copy` of a sequence whose items are also made exact (a list of lines).

    Only list and tuple items are rewritten (into a new list); for any other value this
    is :func:`exact_copy`.
    """
    copy = exact_copy(value)
    if type(copy) is list or type(copy) is tuple:
        return [item if type(item) in _SIZED else exact_copy(item) for item in copy]
    return copy


_SEQUENCE_BASES = frozenset({str, bytes, bytearray, list, tuple})
_NUMBERS = frozenset({int, float, bool, complex})


def sequence_len(value: Any) -> int:
    """The real length of a str/bytes/bytearray/list/tuple (or subclass), else 0.

    The growth guards' measure of a ``+``/``+=`` operand: an exact type pays one lookup,
    a number two, and a subclass is measured by its base (``class L(list)`` with any
    ``__len__``).
    """
    kind = type(value)
    if kind in _SEQUENCE_BASES:
        return len(value)
    if kind in _NUMBERS:
        return 0
    base: Any = builtin_base(value)
    if base in _SEQUENCE_BASES:
        length: int = base.__len__(value)
        return length
    return 0


def is_exact_sized(value: Any) -> bool:
    """Whether ``type(value)`` is exactly one of :data:`SIZED_BASES` (its ``len()`` is true)."""
    return type(value) in _SIZED
