"""Host objects baked into compiled scripts as constants: ``LOAD_CONST`` instead of a global.

Owns the placeholders the policy writes where an inline fast path tests against a
process-wide builtin (``type``, ``int``, ``float``: the ``+`` test, ``type(a) is not int``),
and :func:`bake`, which swaps them for the objects in a compiled code object's constants,
nested code objects included. A constant costs the interpreter less than a global read
(no dict-version check), and the objects are the same for every run, so a baked code
object stays shareable through the compile cache. Nothing made per run (the ticker
``_tk_``, the guards) may be baked: those must stay globals the run can replace.

A placeholder is a string holding a random token drawn when this module is imported.
``compile()`` merges equal constants, so a script's own string equal to a placeholder
would be baked too; a script cannot write one: it cannot know the token (no code object,
constant or module of the host is visible to it), and :func:`bake` refuses to run over
code whose source constants already hold the token (:func:`mentions_token`). Imports only
the standard library; must not touch the guards or the policy's rules.
"""

from __future__ import annotations

import ast
import secrets
import types
from typing import Any

__all__ = ["TOKEN", "bake", "constant", "mentions_token"]

TOKEN = secrets.token_hex(16)
"""The random part of every placeholder (per process)."""

_OBJECTS: dict[str, object] = {"type": type, "int": int, "float": float}
_PLACEHOLDERS: dict[str, object] = {
    f"\x00scriptgate baked {name} {TOKEN}": value for name, value in _OBJECTS.items()
}
_BY_NAME: dict[str, str] = {name: f"\x00scriptgate baked {name} {TOKEN}" for name in _OBJECTS}


def constant(name: str) -> ast.Constant:
    """The placeholder constant for the builtin ``name`` (``type``, ``int`` or ``float``)."""
    return ast.Constant(_BY_NAME[name])


def mentions_token(tree: ast.AST) -> bool:
    """Whether a string or bytes constant of ``tree`` (the script as parsed) holds the token."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, str) and TOKEN in value:
                return True
            if isinstance(value, bytes) and TOKEN.encode() in value:
                return True
    return False


def bake(code: types.CodeType) -> types.CodeType:
    """``code`` with every placeholder constant replaced by its object, nested code too."""
    consts = code.co_consts
    new: list[Any] | None = None
    for index, const in enumerate(consts):
        if type(const) is str:
            replaced: Any = _PLACEHOLDERS.get(const, const)
        elif type(const) is types.CodeType:
            replaced = bake(const)
        else:
            continue
        if replaced is not const:
            if new is None:
                new = list(consts)
            new[index] = replaced
    if new is None:
        return code
    return code.replace(co_consts=tuple(new))
