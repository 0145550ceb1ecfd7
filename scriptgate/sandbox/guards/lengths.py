"""Sizes and copies read through a builtin base type's own methods, never a script subclass's.

Part of ``guards/`` (the bottom, beside :mod:`.constants`): imports nothing from the
project, so every size guard and stand-in can use it. A script may subclass ``list``,
``str``, ``dict``… and override ``__len__`` (or ``__iter__``, ``__getitem__``, ``isascii``)
to lie; C code that copies, repeats, joins or hashes the value reads the real storage, and
a host routine handed such a value would run the script's methods while it works. So every
size a guard measures goes through :func:`base_len`, and host routines work on
:func:`exact_copy` (issue 13 §2). The base is found in the type's MRO, read with ``type``'s
own descriptor:

- :func:`builtin_base` — the builtin sized type ``x`` is an instance of, or ``None``;
- :func:`base_len` — ``len(x)`` as the base type measures it (the real size);
- :func:`sequence_len` — the real length of a str/bytes/list/tuple operand, else 0;
- :func:`exact_copy` / :func:`exact_items` — an exact builtin copy made by the base type's
  own slicing, so the host works on data no script method is reachable from.
"""

from __future__ import annotations

import collections
import operator
from typing import Any

__all__ = [
    "SIZED_BASES",
    "base_len",
    "builtin_base",
    "exact_copy",
    "exact_int",
    "exact_items",
    "is_exact_sized",
    "is_wide_text",
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
)
"""The builtin containers whose storage C reads directly, whatever a subclass overrides."""


_SIZED = frozenset({*SIZED_BASES, memoryview, range})
"""The builtin sized types :func:`base_len` reads (the containers, ``memoryview``, ``range``)."""
_SLICEABLE = frozenset({str, bytes, bytearray, list, tuple})
_SEQUENCE_BASES = _SLICEABLE | {collections.deque}
"""The types whose ``+`` concatenates in one C call (``deque + deque`` and ``d += d`` too:
findings14 A07 doubled a deque to 64 M items past every check)."""
_NUMBERS = frozenset({int, float, bool, complex})
_type_mro = type.__dict__["__mro__"].__get__


def builtin_base(value: Any) -> type | None:
    """The builtin sized type in ``type(value)``'s MRO (a container, ``memoryview``,
    ``range``), or ``None``."""
    kind = type(value)
    if kind in _SIZED:
        return kind
    for base in _type_mro(kind):
        if base in _SIZED:
            return base  # type: ignore[no-any-return]
    return None


def base_len(value: Any, default: int | None = None) -> int:
    """``len(value)`` read through its builtin base's ``__len__`` (a subclass's never runs).

    A value with no builtin sized base gives ``default`` when one is given, else is
    measured by ``len()`` itself (which raises ``TypeError`` for unsized values).
    """
    kind = type(value)
    if kind in _SIZED:
        return len(value)
    base = builtin_base(value)
    if base is None:
        return len(value) if default is None else default
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


def sequence_len(value: Any) -> int:
    """The real length of a str/bytes/bytearray/list/tuple/deque (or subclass), else 0.

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
    """Whether ``type(value)`` is exactly a builtin sized type (its ``len()`` is true)."""
    return type(value) in _SIZED


def is_wide_text(value: Any) -> bool:
    """Whether ``value`` is a ``str`` (or subclass) that is not ASCII (4 bytes a character)."""
    return isinstance(value, str) and not str.isascii(value)


def exact_int(value: Any) -> Any:
    """An ``int`` subclass's value as an exact ``int`` (as C reads it); anything else as is.

    Size checks written ``type(n) is int and n > LIMIT`` let ``class I(int)`` through to C,
    which reads its int value: ``bytearray(I(10**9))`` grew the host 1 GiB and
    ``random.sample(range(10**8), I(10**8))`` ran 200 s (findings19 N01/N02).
    ``operator.index`` reads the stored value (never a script ``__index__``/``__int__``).
    """
    if type(value) is not int and isinstance(value, int):
        return operator.index(value)
    return value
