"""How tool names become Python identifiers in a script (pi ``toCodemodeIdentifier``).

Owns the one identifier rule shared by the sandbox namespace, the stubs and
``scriptgate check``; it must not know about tools beyond their names.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from scriptgate.sandbox.world.builtins import SAFE_BUILTIN_NAMES

__all__ = ["RESERVED_NAMES", "assign_identifiers", "bind_identifiers", "to_identifier"]

_INVALID = re.compile(r"[^A-Za-z0-9_]")

RESERVED_NAMES: frozenset[str] = frozenset({*SAFE_BUILTIN_NAMES, "tools", "gather"})
"""Names a script already has (its builtins, ``tools``, ``gather``): no tool is bound under them."""

T = TypeVar("T")


def to_identifier(name: str) -> str:
    """The Python identifier a tool is bound under, before collisions are resolved.

    pi's rule: every character outside ``[A-Za-z0-9_]`` becomes ``_``
    (``"my-tool"`` → ``my_tool``, ``"ns.tool/x"`` → ``ns_tool_x``). Python
    additions, so that every result can be called from a script (which may not
    use names starting with ``_``): a name starting with a digit or ``_`` (after
    that replacement), or an empty one, gets the prefix ``tool_``
    (``"1st-tool"`` → ``tool_1st_tool``, ``"_x"`` → ``tool__x``, ``""`` →
    ``tool_``); a keyword, soft keyword or :data:`RESERVED_NAMES` entry gets a
    trailing ``_`` (``"import"`` → ``import_``, ``"print"`` → ``print_``).
    """
    ident = _INVALID.sub("_", name)
    if not ident or ident[0].isdigit() or ident[0] == "_":
        ident = "tool_" + ident
    while keyword.iskeyword(ident) or keyword.issoftkeyword(ident) or ident in RESERVED_NAMES:
        ident += "_"
    return ident


def assign_identifiers(names: Sequence[str]) -> list[str]:
    """One distinct identifier per name, in order; the same names always give the same result.

    Each name gets :func:`to_identifier`. When several names share one, a name
    that *is* that identifier keeps it (``a_b`` stays ``a_b``); the others, in
    sorted order of their names, get the first free ``<identifier>_2``,
    ``_3``, ... (``a-b`` → ``a_b_2``). A suffix never takes the identifier of
    another name. Duplicate names get the same identifier (the first tool of
    that name is the one called).
    """
    bases = [to_identifier(name) for name in names]
    taken: set[str] = set(bases)
    owner: dict[str, str] = {}  # identifier -> the raw name bound under it
    for name, base in zip(names, bases, strict=True):
        if name == base:
            owner.setdefault(base, name)
    rest = sorted(
        {name for name, base in zip(names, bases, strict=True) if owner.get(base) != name}
    )
    base_of = dict(zip(names, bases, strict=True))
    for name in rest:
        base = base_of[name]
        if base not in owner:
            owner[base] = name
            continue
        n = 2
        while f"{base}_{n}" in owner or f"{base}_{n}" in taken:
            n += 1
        owner[f"{base}_{n}"] = name
    by_name = {name: ident for ident, name in owner.items()}
    return [by_name[name] for name in names]


def bind_identifiers(names: Iterable[tuple[str, T]]) -> dict[str, T]:
    """Map identifiers (:func:`assign_identifiers`) to items, in order; the first item of a name wins."""
    pairs = list(names)
    bound: dict[str, T] = {}
    for ident, (_name, item) in zip(assign_identifiers([n for n, _ in pairs]), pairs, strict=True):
        bound.setdefault(ident, item)
    return bound
