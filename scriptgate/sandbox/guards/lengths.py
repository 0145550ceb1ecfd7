"""Sizes read through a builtin base type's own methods, never a script subclass's.

Part of ``guards/`` (the bottom, beside :mod:`.constants`): imports nothing from the
project, so every size guard can use it. A script may subclass ``list``, ``str``,
``dict``… and override ``__len__`` (or ``isascii``) to lie; C code that copies,
repeats, joins or hashes the value reads the real storage. Every size a guard measures
on a value that may be such a subclass goes through :func:`base_len` (issue 13 §2).
"""

from __future__ import annotations

import collections
from typing import Any

__all__ = ["SIZED_BASES", "base_len", "base_type", "is_wide_text"]

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

_EXACT = frozenset(SIZED_BASES)


def base_type(value: Any) -> type | None:
    """The builtin of :data:`SIZED_BASES` ``value`` is an instance of, or ``None``."""
    kind = type(value)
    if kind in _EXACT:
        return kind
    for base in SIZED_BASES:
        if isinstance(value, base):
            return base
    return None


def base_len(value: Any) -> int:
    """``len(value)`` read through its builtin base's ``__len__`` (a subclass's never runs).

    Values that are no builtin container (and no subclass of one) are measured with
    ``len()`` itself (which raises ``TypeError`` for unsized values, as ``len`` does).
    """
    kind = type(value)
    if kind in _EXACT:
        return len(value)
    for base in SIZED_BASES:
        if isinstance(value, base):
            length: int = base.__len__(value)  # type: ignore[attr-defined]
            return length
    return len(value)


def is_wide_text(value: Any) -> bool:
    """Whether ``value`` is a ``str`` (or subclass) that is not ASCII (4 bytes a character)."""
    return isinstance(value, str) and not str.isascii(value)
