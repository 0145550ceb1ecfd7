"""Compiling a script: wrapping its body, running the policy, and the compile cache.

Owns :func:`compile_script` (parse, depth check, :class:`~.policy.ScriptPolicy`, wrap into
``def __script__():``, ``compile``) and its bounded LRU cache keyed by source text. It must
not touch the guards' behaviour; it only uses their shared names.
"""

from __future__ import annotations
import __future__

import ast
import re
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock
from typing import Any

from scriptgate.sandbox.compile import baked
from scriptgate.sandbox.compile.deadline import (
    CompileClock,
    CompileStopped,
    TickingTransformer,
    TickingVisitor,
    running,
    tick,
    walk,
)
from scriptgate.sandbox.compile.linear import copy_locations, fix_locations
from scriptgate.sandbox.compile.policy import (
    MAX_AST_DEPTH,
    TEMP_PREFIX,
    ScriptPolicy,
    _FastSites,
    _ListTargets,
)
from scriptgate.sandbox.guards.constants import ENTRY, FILENAME
from scriptgate.sandbox.guards.memory import NumericNames

__all__ = [
    "STAR_MEMBERS",
    "CompileFailure",
    "CompiledScript",
    "compile_script",
    "is_cached",
    "register_star_members",
]

STAR_MEMBERS: dict[str, tuple[str, ...]] = {}
"""What ``from X import *`` binds, per importable module (filled by ``world.modules``,
which owns the names: :func:`register_star_members`)."""


def register_star_members(table: dict[str, tuple[str, ...]]) -> None:
    """Let ``from X import *`` bind ``table[X]``'s public names (the stand-ins' members)."""
    for module, names in table.items():
        STAR_MEMBERS[module] = tuple(n for n in names if not n.startswith("_"))


@dataclass(frozen=True, slots=True)
class CompiledScript:
    """A compiled script: ``code`` defines ``__script__`` when executed in the globals."""

    code: Any
    is_async: bool
    names: frozenset[str] = frozenset()
    """Every name the script reads (a script naming no tool cannot call one)."""


@dataclass(frozen=True, slots=True)
class CompileFailure:
    """Why a script did not compile: ``kind`` is ``syntax`` or ``rejected``."""

    kind: str
    type: str
    message: str
    line: int | None


def _depth(tree: ast.AST) -> int:
    deepest = 0
    todo: list[tuple[ast.AST, int]] = [(tree, 1)]
    while todo:
        node, level = todo.pop()
        tick()
        if level > deepest:
            deepest = level
            if deepest > MAX_AST_DEPTH:
                return deepest
        todo.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _uses_await(tree: ast.AST) -> bool:
    for node in walk(tree):
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            return True
        if isinstance(node, ast.comprehension) and node.is_async:
            return True
    return False


class _AsyncioRun(TickingTransformer):
    """In the module's own scope: ``asyncio.run(main())`` → ``await main()``.

    The idiom models end async code with; a script may await at its top level, so the
    call becomes that await and the script an async one. Only the module's own
    statements are rewritten (not function or class bodies), and only where ``asyncio``
    (or ``run``) was imported from the ``asyncio`` stand-in; elsewhere ``asyncio.run``
    raises an error that says to ``await`` instead.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.modules: set[str] = set()
        self.functions: set[str] = set()
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.name == "asyncio":
                        self.modules.add(alias.asname or "asyncio")
            elif isinstance(stmt, ast.ImportFrom) and stmt.module == "asyncio":
                for alias in stmt.names:
                    if alias.name == "run":
                        self.functions.add(alias.asname or "run")

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        named = (
            isinstance(func, ast.Attribute)
            and func.attr == "run"
            and isinstance(func.value, ast.Name)
            and func.value.id in self.modules
        ) or (isinstance(func, ast.Name) and func.id in self.functions)
        if not named or len(node.args) != 1 or any(k.arg != "debug" for k in node.keywords):
            return node
        new = ast.Await(value=node.args[0])
        copy_locations(new, node)
        return new


class _TopLevel(TickingVisitor):
    """Names bound by the module's own scope, and misplaced ``yield``."""

    def __init__(self) -> None:
        self.names: dict[str, None] = {}
        self.yield_line: int | None = None
        self._in_comprehension = 0

    def bind(self, name: str | None) -> None:
        if name is not None and not self._in_comprehension and not name.startswith(TEMP_PREFIX):
            self.names.setdefault(name, None)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.bind(node.id)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if isinstance(node.target, ast.Name) and not node.target.id.startswith(TEMP_PREFIX):
            # binds outside comprehensions too; the fast paths' temporaries stay local
            self.names.setdefault(node.target.id, None)
        self.visit(node.value)

    def _comprehension(self, node: ast.AST) -> None:
        self._in_comprehension += 1
        self.generic_visit(node)
        self._in_comprehension -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.bind(node.name)
        for item in [*node.decorator_list, *node.args.defaults]:
            self.visit(item)
        for default in node.args.kw_defaults:
            if default is not None:
                self.visit(default)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bind(node.name)
        for item in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(item)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for item in node.args.defaults:
            self.visit(item)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.bind(alias.asname or alias.name.split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self.bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.bind(node.rest)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            self.bind(name)

    def visit_Yield(self, node: ast.Yield | ast.YieldFrom) -> None:
        if self.yield_line is None:
            self.yield_line = node.lineno

    visit_YieldFrom = visit_Yield


class _StarImports(TickingTransformer):
    """``from X import *`` at the script's top level → ``from X import a, b, …`` (findings18 M41).

    ``X``'s names are the stand-in's listed members (:data:`STAR_MEMBERS`), as ``__all__``
    would list them, so every analysis after this (the global declarations, the number
    facts, the direct functions) sees each name the import binds. Only the module's own
    scope is rewritten (Python refuses a ``*`` import anywhere else); a module that is
    not a stand-in stays as it is, for the policy to refuse with what to write instead.
    """

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        names = STAR_MEMBERS.get(node.module or "") if node.level == 0 else None
        if names is None or [a.name for a in node.names] != ["*"]:
            return node
        new = ast.ImportFrom(module=node.module, names=[ast.alias(name=n) for n in names], level=0)
        copy_locations(new, node)
        for alias in new.names:
            copy_locations(alias, node)
        return new


def _has_star_import(source: str) -> bool:
    return "*" in source and "import" in source


class _TopLevelStatements(TickingTransformer):
    """In the module's own scope: ``x: T = v`` → ``x = v``, ``x: T`` and ``from __future__`` → ``pass``.

    Inside ``__script__`` the module's names are declared ``global``, and an
    annotated global is a syntax error; future imports must come first in a file.
    """

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if not isinstance(node.target, ast.Name):
            new: ast.stmt = (
                ast.Assign(targets=[node.target], value=node.value)
                if node.value is not None
                else ast.Pass()
            )
        elif node.value is None:
            new = ast.Pass()
        else:
            new = ast.Assign(targets=[node.target], value=node.value)
        copy_locations(new, node)
        return new

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.module == "__future__":
            new = ast.Pass()
            copy_locations(new, node)
            return new
        return node


def _wrap(tree: ast.Module, is_async: bool) -> ast.Module:
    """Module body → ``[async] def __script__(): global …; <body>; return <last expr>``."""
    tree = _TopLevelStatements().visit(tree)
    scan = _TopLevel()
    for stmt in tree.body:
        scan.visit(stmt)
    body: list[ast.stmt] = [
        stmt if not isinstance(stmt, ast.Global) else ast.Pass() for stmt in tree.body
    ]
    for new, old in zip(body, tree.body, strict=True):
        if new is not old:
            copy_locations(new, old)
    if body and isinstance(body[-1], ast.Expr):
        last = body[-1]
        ret = ast.Return(last.value)
        copy_locations(ret, last)
        body[-1] = ret
    if scan.names:
        body.insert(0, ast.Global(names=list(scan.names)))
    if not body:
        body = [ast.Pass()]
    args = ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    func: ast.stmt
    if is_async:
        func = ast.AsyncFunctionDef(
            name=ENTRY, args=args, body=body, decorator_list=[], returns=None
        )
    else:
        func = ast.FunctionDef(name=ENTRY, args=args, body=body, decorator_list=[], returns=None)
    func.lineno = 1
    func.col_offset = 0
    module = ast.Module(body=[func], type_ignores=[])
    return fix_locations(module)


_EVAL_NAMES = frozenset({"eval", "exec"})


def _names_eval(tree: ast.AST) -> bool:
    """Whether the script names ``eval`` or ``exec`` anywhere (the only ways to reach them)."""
    return any(isinstance(node, ast.Name) and node.id in _EVAL_NAMES for node in walk(tree))


def _line_of(message: str) -> int | None:
    match = re.match(r"Line (\d+):", message)
    return int(match.group(1)) if match else None


def _parse_reason(exc: BaseException) -> str:
    """A reason the model can act on; the parser's own errors often carry no message."""
    text = str(exc).strip()
    if isinstance(exc, (RecursionError, MemoryError)) or not text:
        # The parser ran out of stack or memory: an expression nests or chains too deeply.
        return (
            "an expression is nested or chained too deeply "
            f"(keep nesting under {MAX_AST_DEPTH} levels; split long expressions into statements)"
        )
    return text


def _compile_uncached(
    source: str, session: bool = False, clock: CompileClock | None = None
) -> CompiledScript | CompileFailure:
    check = clock.check if clock is not None else _no_check
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, FILENAME, "exec")
    except SyntaxError as exc:
        return CompileFailure("syntax", type(exc).__name__, str(exc.msg), exc.lineno)
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        return CompileFailure(
            "rejected",
            type(exc).__name__,
            f"the script is too complex to parse: {_parse_reason(exc)}",
            None,
        )
    check()
    if _depth(tree) > MAX_AST_DEPTH:
        return CompileFailure(
            "rejected",
            "SyntaxError",
            f"the script is nested more than {MAX_AST_DEPTH} levels deep",
            None,
        )
    check()
    if STAR_MEMBERS and _has_star_import(source):
        tree = _StarImports().visit(tree)
    scan = _TopLevel()
    for stmt in tree.body:
        scan.visit(stmt)
    check()
    if scan.yield_line is not None:
        return CompileFailure("syntax", "SyntaxError", "'yield' outside function", scan.yield_line)
    runs = _AsyncioRun(tree)
    if runs.modules or runs.functions:
        tree = runs.visit(tree)
    is_async = _uses_await(tree)
    errors: list[str] = []
    warn: list[str] = []
    used: dict[str, bool] = {}
    tree = _ListTargets().visit(tree)
    check()
    policy = ScriptPolicy(errors, warn, used)
    # a script that names eval/exec may rebind any of its globals (and the builtins' names)
    # from a string the policy never saw here: its module-level facts prove nothing, as in a
    # session (fifth attack's F01/F02: `exec("def len(v): return v")`, then `len(a) * len(n)`)
    policy.numeric = NumericNames(tree, session=session or _names_eval(tree), walk=walk)
    check()
    policy.fast = _FastSites(tree)
    check()
    tree = policy.visit(tree)
    check()
    if errors:
        unique = list(dict.fromkeys(errors))
        return CompileFailure("rejected", "SyntaxError", "\n".join(unique), _line_of(unique[0]))
    future = any(
        isinstance(stmt, ast.ImportFrom)
        and stmt.module == "__future__"
        and any(alias.name == "annotations" for alias in stmt.names)
        for stmt in tree.body
    )
    module = _wrap(tree, is_async)
    check()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flags = __future__.annotations.compiler_flag if future else 0
            code = baked.bake(compile(module, FILENAME, "exec", flags=flags, dont_inherit=True))
    except SyntaxError as exc:
        return CompileFailure("syntax", type(exc).__name__, str(exc.msg), exc.lineno)
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        return CompileFailure(
            "rejected", type(exc).__name__, f"the script is too complex to compile: {exc}", None
        )
    check()  # a compile that ended past the deadline is not the run's to use
    return CompiledScript(code=code, is_async=is_async, names=frozenset(used))


def _no_check() -> None:
    pass


_CACHE: OrderedDict[tuple[str, bool], CompiledScript | CompileFailure] = OrderedDict()
_CACHE_SIZE = 256
_CACHE_LOCK = Lock()


def compile_script(
    source: str,
    *,
    max_source_bytes: int | None = None,
    session: bool = False,
    cache: bool = True,
    clock: CompileClock | None = None,
) -> CompiledScript | CompileFailure:
    """Compile a script under the policy (cached by source text); never raises.

    ``session``: the script runs in a session's globals, which may hold values of
    earlier runs (module-level names prove nothing to the ``+`` size guard).
    ``cache=False``: neither read nor fill the cache (``eval`` of long texts). A failure
    from a full stack or memory (``RecursionError``, ``MemoryError``: the caller's state,
    not the text's) is never cached. ``clock``: the run's deadline and abort signal; a
    compile stopped by it fails with the run's ordinary stop (``kind`` ``limit`` or
    ``aborted``) and is never cached (a cached result is always a whole compile's).
    """
    if max_source_bytes is not None:
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > max_source_bytes:
            return CompileFailure(
                "rejected",
                "SyntaxError",
                f"the script is {size} bytes long, more than the limit of {max_source_bytes} bytes",
                None,
            )
    key = (source, session)
    with _CACHE_LOCK:
        cached = _CACHE.get(key) if cache else None
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    if clock is not None:
        try:
            clock.check()
        except CompileStopped as stop:
            return CompileFailure(stop.kind, stop.type_name, stop.message, None)
    try:
        with running(clock):
            result = _compile_uncached(source, session, clock)
    except CompileStopped as stop:
        return CompileFailure(stop.kind, stop.type_name, stop.message, None)
    except Exception as exc:  # a policy bug must not escape to the host
        result = CompileFailure("sandbox", type(exc).__name__, f"the policy failed: {exc}", None)
    # (a KeyboardInterrupt or SystemExit is the caller's: it propagates, nothing is cached)
    if not cache or (
        isinstance(result, CompileFailure) and result.type in ("RecursionError", "MemoryError")
    ):
        return result
    with _CACHE_LOCK:
        _CACHE[key] = result
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


def is_cached(source: str, *, session: bool = False) -> bool:
    """Whether the compile cache holds a result for ``source`` (a stopped compile never does)."""
    with _CACHE_LOCK:
        return (source, session) in _CACHE
