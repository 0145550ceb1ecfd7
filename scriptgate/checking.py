"""Name resolution for ``scriptgate check``: which calls in a script can reach a tool.

This module owns the static scope analysis only (on :mod:`symtable`, the
compiler's own analysis, and :mod:`ast`); it runs nothing and decides nothing
about policies (``scriptgate.cli_check`` does that with the answers).

The rule it keeps: **never hide a reachable tool call**. A script's tools are
module-level names, so a call of a tool's name reaches the tool unless the name
is, by Python's scoping rules, a *local* of the function (lambda, comprehension)
the call sits in, or a free variable bound by an enclosing function — those
provably refer to something else. A name bound at module level (``for write in
[]:``, ``if False: read = str``) or in a class body may or may not be rebound
when the call runs, so the call is still a tool call (``rebound`` says the
script also binds the name, for the report).
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

__all__ = ["NameUse", "name_uses"]

Kids: TypeAlias = dict[tuple[str, int], list[symtable.SymbolTable]]

_SCOPE_NODES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_TABLE_NAMES = {
    ast.Lambda: "lambda",
    ast.ListComp: "listcomp",
    ast.SetComp: "setcomp",
    ast.DictComp: "dictcomp",
    ast.GeneratorExp: "genexpr",
}


@dataclass(frozen=True, slots=True)
class NameUse:
    """One load of a name: the node, whether it can reach a module-level (tool) binding,
    and whether the script binds the name at module level or in a class body too."""

    node: ast.Name
    global_lookup: bool
    rebound: bool


def _table_name(node: ast.AST) -> str:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    return _TABLE_NAMES[type(node)]


def _module_binds(table: symtable.SymbolTable) -> set[str]:
    bound: set[str] = set()
    for symbol in table.get_symbols():
        if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace():
            bound.add(symbol.get_name())
    return bound


def _class_binds(table: symtable.SymbolTable) -> Iterator[str]:
    for child in table.get_children():
        if child.get_type() == "class":
            for symbol in child.get_symbols():
                if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace():
                    yield symbol.get_name()
        yield from _class_binds(child)


def name_uses(source: str, tree: ast.Module) -> list[NameUse] | None:
    """Every ``Load`` of a name in ``tree`` with its scope answer, or ``None`` if the
    compiler's symbol table cannot be built (the caller then treats every name as global)."""
    try:
        top = symtable.symtable(source, "<script>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    rebound = _module_binds(top) | set(_class_binds(top))
    uses: list[NameUse] = []

    def children(table: symtable.SymbolTable) -> Kids:
        found: Kids = {}
        for child in table.get_children():
            found.setdefault((child.get_name(), child.get_lineno()), []).append(child)
        return found

    def outer_parts(node: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
        """(parts evaluated in the enclosing scope, parts evaluated in the new scope)."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            outer: list[ast.AST] = [*args.defaults, *(d for d in args.kw_defaults if d)]
            if not isinstance(node, ast.Lambda):
                outer += node.decorator_list
                if node.returns is not None:
                    outer.append(node.returns)
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                every += [a for a in (args.vararg, args.kwarg) if a is not None]
                outer += [a.annotation for a in every if a.annotation is not None]
                return outer, list(node.body)
            return outer, [node.body]
        if isinstance(node, ast.ClassDef):
            return [*node.decorator_list, *node.bases, *node.keywords], list(node.body)
        assert isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
        first, *rest = node.generators
        inner: list[ast.AST] = [first.target, *first.ifs, *rest]
        if isinstance(node, ast.DictComp):
            inner += [node.key, node.value]
        else:
            inner.append(node.elt)
        return [first.iter], inner

    def visit(node: ast.AST, table: symtable.SymbolTable | None, kids: Kids) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            uses.append(NameUse(node, _reaches_global(table, node.id), node.id in rebound))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPE_NODES):
                key = (_table_name(child), child.lineno)
                candidates = kids.get(key)
                inner_table = candidates.pop(0) if candidates else None
                outer, inner = outer_parts(child)
                for part in outer:
                    visit(part, table, kids)
                inner_kids = children(inner_table) if inner_table is not None else {}
                for part in inner:
                    visit(part, inner_table, inner_kids)
                continue
            visit(child, table, kids)

    visit(tree, top, children(top))
    return uses


def _reaches_global(table: symtable.SymbolTable | None, name: str) -> bool:
    if table is None or table.get_type() in ("module", "class"):
        return True
    try:
        symbol = table.lookup(name)
    except KeyError:
        return True
    if symbol.is_declared_global() or symbol.is_global():
        return True
    return not (symbol.is_local() or symbol.is_free())
