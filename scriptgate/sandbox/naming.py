"""How tool names become Python identifiers in a script (pi ``toCodemodeIdentifier``)."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable
from typing import TypeVar

__all__ = ["bind_identifiers", "to_identifier"]

_INVALID = re.compile(r"[^A-Za-z0-9_]")

T = TypeVar("T")


def to_identifier(name: str) -> str:
    """The Python identifier a tool is bound under.

    pi's rules: every character outside ``[A-Za-z0-9_]`` becomes ``_`` and a leading
    digit becomes ``_`` (``"my-tool"`` → ``my_tool``, ``"1abc"`` → ``_abc``,
    ``""`` → ``_``). Python addition: a keyword or soft keyword gets a trailing
    ``_`` (``"import"`` → ``import_``), since it cannot be called as a name.
    """
    ident = _INVALID.sub("_", name)
    if not ident:
        return "_"
    if ident[0].isdigit():
        ident = "_" + ident[1:]
    if keyword.iskeyword(ident) or keyword.issoftkeyword(ident):
        ident += "_"
    return ident


def bind_identifiers(names: Iterable[tuple[str, T]]) -> dict[str, T]:
    """Map identifiers to items in order; when two names collide, the first wins (as in pi)."""
    bound: dict[str, T] = {}
    for name, item in names:
        bound.setdefault(to_identifier(name), item)
    return bound
