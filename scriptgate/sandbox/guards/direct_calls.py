"""Which module-level functions of a script are only ever called directly (compile time).

Owns :func:`direct_functions` and :func:`call_sites`, the facts :class:`~.memory.NumericNames`
needs to carry "this is a number" across calls: ``fib(n - 1) + fib(n - 2)`` is a plain ``+``
when every call of ``fib`` passes numbers and every ``return`` of ``fib`` gives one.

A function qualifies when nothing but its own direct calls can reach it, so the calls the
compiler sees are all the calls there are:

- it is a plain ``def`` at the top level of the script (not async, not a generator, no
  decorator, no defaults, only positional-or-keyword parameters, annotations that run no
  code), and every top-level statement before it is such a ``def``, an import or a constant
  (no code has run when it is bound, so no call of its name reached a tool or a builtin of
  the same name first);
- its name is bound by that ``def`` alone, anywhere in the script, and every read of the name
  is the function of a call: it is never a value (``key=fib``, ``g = fib``, ``fib.__name__``),
  so no host code or dunder can call it.

Imports nothing of the sandbox (pure ``ast``): the compiler and the guards may both use it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

__all__ = ["MAX_FUNCTIONS", "MAX_NODES", "MAX_ROUNDS", "call_sites", "direct_functions"]

MAX_FUNCTIONS = 16
"""Most functions carried across calls."""
MAX_NODES = 5_000
"""Largest script (AST nodes, about 20 KB of source) whose facts are carried across calls."""
MAX_ROUNDS = 6
"""Rounds of the fixpoint (each solves every scope again, about 2 ms per thousand nodes):
one that has not settled by then proves nothing across calls. Real scripts settle in two
or three (the first drops what is not a number, the next what depended on it)."""

_ANNOTATION_NODES = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.BinOp,
    ast.BitOr,
    ast.Load,
)
"""What an annotation evaluated at ``def`` time may hold: reading names and subscripting
runs only host code (no script object exists yet), never a call of a script function."""

_SCOPE_CHANGERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _quiet_annotation(node: ast.expr | None) -> bool:
    return node is None or all(isinstance(sub, _ANNOTATION_NODES) for sub in ast.walk(node))


def _plain_def(node: ast.stmt) -> bool:
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return False
    args = node.args
    if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
        return False
    if not _quiet_annotation(node.returns):
        return False
    return all(_quiet_annotation(arg.annotation) for arg in args.args)


def _quiet_statement(node: ast.stmt) -> bool:
    """An import or a constant (a docstring): binds or evaluates without calling script code."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _is_generator(node: ast.FunctionDef) -> bool:
    stack: list[ast.AST] = list(node.body)
    while stack:
        sub = stack.pop()
        if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if isinstance(sub, _SCOPE_CHANGERS):
            continue  # a nested function's yield is its own
        stack.extend(ast.iter_child_nodes(sub))
    return False


def _bound_names(node: ast.AST) -> Iterator[str]:
    """The names ``node`` binds (or declares global/nonlocal), as strings."""
    if isinstance(node, ast.Name):
        if not isinstance(node.ctx, ast.Load):
            yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        if node.name:
            yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest


def direct_functions(
    tree: ast.Module, walk: Callable[[ast.AST], Iterable[ast.AST]] = ast.walk
) -> dict[str, ast.FunctionDef]:
    """The script's functions that only direct calls reach, by name (see the module text)."""
    candidates: dict[str, ast.FunctionDef] = {}
    for count, _ in enumerate(walk(tree)):
        if count >= MAX_NODES:
            return {}
    for stmt in tree.body:
        if _plain_def(stmt):
            assert isinstance(stmt, ast.FunctionDef)
            candidates[stmt.name] = stmt
        elif not _quiet_statement(stmt):
            break  # code runs from here on
    if not candidates:
        return {}
    bindings: dict[str, int] = {}
    called: set[int] = set()
    for node in walk(tree):
        for name in _bound_names(node):
            if name in candidates:
                bindings[name] = bindings.get(name, 0) + 1
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(id(node.func))
    escaped: set[str] = set()
    for node in walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id in candidates
            and isinstance(node.ctx, ast.Load)
            and id(node) not in called
        ):
            escaped.add(node.id)
    found = {
        name: node
        for name, node in candidates.items()
        if bindings.get(name) == 1 and name not in escaped and not _is_generator(node)
    }
    if len(found) > MAX_FUNCTIONS:
        return {}
    return found


def call_sites(
    tree: ast.Module, names: Iterable[str]
) -> Iterator[tuple[ast.Call, tuple[ast.AST, ...]]]:
    """Every call of one of ``names``, with the scopes it is evaluated in (outermost first).

    A function's or lambda's defaults, decorators and annotations, and a class's bases and
    keywords, are evaluated in the enclosing scope; a comprehension's first iterable too,
    but the comprehension's own facts already leave out what it could shadow there
    (:meth:`~.memory.NumericNames.comprehension`), so everything of a comprehension is given
    its scope. A class body is a scope of its own (the compiler proves nothing in it).
    """
    wanted = frozenset(names)
    stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(tree, (tree,))]
    while stack:
        node, scopes = stack.pop()
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in wanted
        ):
            yield node, scopes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts: list[ast.AST | None] = [*node.decorator_list, *node.args.defaults]
            parts += [*node.args.kw_defaults, node.returns]
            parts += [a.annotation for a in ast.walk(node.args) if isinstance(a, ast.arg)]
            stack.extend((part, scopes) for part in parts if part is not None)
            stack.extend((stmt, (*scopes, node)) for stmt in node.body)
            continue
        if isinstance(node, ast.Lambda):
            defaults = [*node.args.defaults, *node.args.kw_defaults]
            stack.extend((part, scopes) for part in defaults if part is not None)
            stack.append((node.body, (*scopes, node)))
            continue
        if isinstance(node, ast.ClassDef):
            outer = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
            stack.extend((part, scopes) for part in outer)
            stack.extend((stmt, (*scopes, node)) for stmt in node.body)
            continue
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend((child, (*scopes, node)) for child in ast.iter_child_nodes(node))
            continue
        stack.extend((child, scopes) for child in ast.iter_child_nodes(node))
