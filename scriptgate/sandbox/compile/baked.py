"""Host objects baked into compiled scripts as constants: ``LOAD_CONST`` instead of a global.

Owns the placeholders the policy writes where an inline fast path tests against a
process-wide builtin (``type``, ``int``, ``float``: the ``+`` test ``type(a) is not int``),
and :func:`bake`, which swaps them for the objects in a compiled code object's constants,
nested code objects included. A constant costs the interpreter less than a global read
(no dict-version check), and the objects are the same for every run, so a baked code
object stays shareable through the compile cache. Nothing made per run (the ticker
``_tk_``, the guards) may be baked: those must stay globals the run can replace.

A placeholder is a NaN float object of this module's own, found again by identity. No
script constant can become one: ``compile()`` merges equal constants, but a NaN equals
nothing and hashes by identity (Python 3.10+), so a script's NaN (``1e999 - 1e999`` folds
to one) stays its own constant, and a script can never hold these objects (no code
object or constant of the host is visible to it). Imports only the standard library;
must not touch the guards or the policy's rules.
"""

from __future__ import annotations

import ast
import types
from typing import Any

__all__ = ["bake", "constant"]

_OBJECTS: dict[str, object] = {"type": type, "int": int, "float": float}
_BY_NAME: dict[str, float] = {name: float("nan") for name in _OBJECTS}
"""One distinct NaN object per baked builtin."""
_PLACEHOLDERS: dict[int, tuple[float, object]] = {
    id(nan): (nan, _OBJECTS[name]) for name, nan in _BY_NAME.items()
}
assert len(_PLACEHOLDERS) == len(_OBJECTS)


def constant(name: str) -> ast.Constant:
    """The placeholder constant for the builtin ``name`` (``type``, ``int`` or ``float``)."""
    return ast.Constant(_BY_NAME[name])


def bake(code: types.CodeType) -> types.CodeType:
    """``code`` with every placeholder constant replaced by its object, nested code too."""
    consts = code.co_consts
    new: list[Any] | None = None
    for index, const in enumerate(consts):
        if type(const) is float:
            found = _PLACEHOLDERS.get(id(const))
            if found is None or found[0] is not const:
                continue
            replaced: Any = found[1]
        elif type(const) is types.CodeType:
            replaced = bake(const)
            if replaced is const:
                continue
        else:
            continue
        if new is None:
            new = list(consts)
        new[index] = replaced
    if new is None:
        return code
    return code.replace(co_consts=tuple(new))
