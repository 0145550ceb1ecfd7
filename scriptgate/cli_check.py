"""``scriptgate check`` and ``scriptgate stubs``: look at a script, or at the tools, without running.

Owns :func:`check_script` (compile under the sandbox's rules, find the tool calls and
the names a script uses, preview the policy's verdict for literal arguments, report
rejected constructs, unknown tools and names, rules that match nothing) with its
records :class:`CheckReport` and :class:`CheckedCall`, the ``check`` report's text and
exit code, and ``stubs`` (the Python API the model sees).

Must not touch: the parser and the dispatch (:mod:`scriptgate.cli`), running scripts
(:mod:`scriptgate.cli_run`), what every subcommand shares (:mod:`scriptgate.cli_support`).
Nothing imports it but :mod:`scriptgate.cli` (which re-exports :func:`check_script`).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scriptgate.checking import name_uses
from scriptgate.cli_support import (
    EXIT_OK,
    EXIT_SCRIPT_FAILED,
    Streams,
    _load_policy,
    _load_tools,
    _one_line,
    _read_script,
    _short,
)
from scriptgate.runtime.paths import resolve_arguments
from scriptgate.runtime.policy import Decision, Policy
from scriptgate.runtime.tool import AgentTool
from scriptgate.sandbox.naming import bind_identifiers
from scriptgate.sandbox.result import Limits

__all__ = ["CheckReport", "CheckedCall", "check_script", "cmd_check", "cmd_stubs"]

# Names a script may call besides tools (the sandbox binds them); used by ``check``
# when scriptgate.sandbox.world.builtins is not importable.
_SCRIPT_GLOBALS = frozenset({"tools", "gather", "ToolError", "ToolDenied"})
_FALLBACK_BUILTINS = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "dict",
        "divmod", "enumerate", "filter", "float", "format", "frozenset", "hash", "hex", "int",
        "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "next", "oct",
        "ord", "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted",
        "str", "sum", "tuple", "zip", "Exception", "ValueError", "TypeError", "KeyError",
        "IndexError", "RuntimeError", "PermissionError", "ArithmeticError", "LookupError",
        "ZeroDivisionError", "AssertionError", "NotImplementedError", "StopIteration",
    }
)  # fmt: skip


async def cmd_stubs(args: argparse.Namespace, io: Streams) -> int:
    """The body of ``scriptgate stubs``: print the stubs of the selected tools."""
    async with contextlib.AsyncExitStack() as stack:
        tools = await _load_tools(args, stack)
    from scriptgate.sandbox.model.stubs import render_stubs

    text = render_stubs(tools, style=args.style)
    io.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


async def cmd_check(args: argparse.Namespace, io: Streams) -> int:
    """The body of ``scriptgate check``; exit 1 when the script has errors."""
    source, label = _read_script(args.script, io.stdin)
    policy = _load_policy(args.policy, None)
    async with contextlib.AsyncExitStack() as stack:
        tools = await _load_tools(args, stack)
    report = check_script(source, tools, policy)
    out = io.stdout
    if report.error is not None:
        # every rejected construct, one line each (RestrictedPython reports them all)
        for number, text in enumerate(report.error.splitlines()):
            line = report.error_line or 1
            found = re.search(r": Line (\d+): ", text)
            if found is not None and (number or report.error_line is None):
                line = int(found.group(1))
            out.write(f"{label}:{line}: {text}\n")
        return EXIT_SCRIPT_FAILED
    kind = "async (uses await)" if report.is_async else "sync"
    out.write(f"{label}: compiles ({kind} script)\n")
    out.write(f"tools available ({len(tools)}): {', '.join(t.name for t in tools) or '-'}\n")
    called = sorted({c.tool for c in report.calls})
    out.write(f"tools called ({len(called)}): {', '.join(called) or '-'}\n")
    if report.calls:
        out.write("calls:\n")
    for call in report.calls:
        out.write(f"  line {call.line}: {call.preview}  → {call.verdict}\n")
    for warning in report.warnings:
        out.write(f"warning: {warning}\n")
    for problem in report.problems:
        out.write(f"{label}:{problem}\n" if problem[:1].isdigit() else f"error: {problem}\n")
    if report.problems:
        return EXIT_SCRIPT_FAILED
    return EXIT_OK


# --------------------------------------------------------------------------- check


@dataclass(frozen=True, slots=True)
class CheckedCall:
    """One tool call found by ``check``: where, how it reads, and the policy verdict."""

    line: int
    tool: str
    preview: str
    verdict: str
    decision: Decision | None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What ``scriptgate check`` found in a script."""

    error: str | None
    error_line: int | None
    is_async: bool
    calls: tuple[CheckedCall, ...]
    problems: tuple[str, ...]
    warnings: tuple[str, ...]


_UNKNOWN = object()


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _defined_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def _builtin_names() -> frozenset[str]:
    try:
        sandbox_builtins = importlib.import_module("scriptgate.sandbox.world.builtins")
    except ImportError:
        return _FALLBACK_BUILTINS
    names = getattr(sandbox_builtins, "SAFE_BUILTIN_NAMES", None)
    return frozenset(names) if names else _FALLBACK_BUILTINS


def _module_names() -> dict[str, tuple[str, ...]] | None:
    try:
        modules = importlib.import_module("scriptgate.sandbox.world.modules")
    except ImportError:
        return None
    names = getattr(modules, "MODULE_NAMES", None)
    return dict(names) if isinstance(names, dict) else None


def _import_problems(tree: ast.AST) -> list[str]:
    allowed = _module_names()
    if allowed is None:
        return []
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in allowed:
                    problems.append(f"{node.lineno}: import of {alias.name!r} is not allowed")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or module not in allowed:
                problems.append(f"{node.lineno}: import from {module!r} is not allowed")
                continue
            for alias in node.names:
                if alias.name not in allowed[module]:
                    problems.append(
                        f"{node.lineno}: {module}.{alias.name} is not available in scripts"
                    )
    return problems


def _compile_check(source: str) -> tuple[str | None, int | None, bool | None]:
    """(error, line, is_async) from the sandbox's own compiler when available."""
    try:
        from scriptgate.sandbox.compile.cache import CompileFailure, compile_script
    except ImportError:
        return None, None, None
    compiled = compile_script(source, max_source_bytes=Limits().max_source_bytes)
    if isinstance(compiled, CompileFailure):
        what = "syntax error" if compiled.kind == "syntax" else "rejected"
        lines = compiled.message.splitlines() if compiled.message else [compiled.type]
        if compiled.kind == "syntax":
            lines = lines[:1]
        return (
            f"{what}: {lines[0]}" + "".join(f"\n{what}: {x}" for x in lines[1:]),
            compiled.line,
            None,
        )
    return None, None, bool(compiled.is_async)


def check_script(source: str, tools: Sequence[AgentTool], policy: Policy | None) -> CheckReport:
    """Statically check a script: compile it, find tool calls, preview the policy.

    Tool calls are calls of a tool's identifier (``read(...)``), of
    ``tools.<identifier>(...)``, awaited or not. For keyword arguments with
    literal values (or one literal dict) the policy decision is shown; arguments
    known only at run time make it "depends on arguments" when a rule looks at
    them. The validator's coercion is not applied to the literals.
    """
    error, error_line, is_async = _compile_check(source)
    try:
        tree = ast.parse(source, "<script>", "exec")
    except SyntaxError as exc:
        return CheckReport(
            error or f"syntax error: {exc.msg}", error_line or exc.lineno, False, (), (), ()
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return CheckReport(f"rejected: {exc}", None, False, (), (), ())
    if error is not None:
        return CheckReport(error, error_line, False, (), (), ())
    if is_async is None:
        is_async = any(
            isinstance(n, ast.Await | ast.AsyncFor | ast.AsyncWith) for n in ast.walk(tree)
        )
    bound = bind_identifiers((t.name, t) for t in tools)
    defined = _defined_names(tree)
    uses = name_uses(source, tree)
    # Whether a loaded name can reach a module-level binding (a tool): by scope, never by
    # "bound somewhere" (scriptgate.checking); without a symbol table every name may.
    reaches = {id(u.node): u.global_lookup for u in uses} if uses is not None else {}
    rebound = {u.node.id for u in uses if u.rebound} if uses is not None else defined
    known_names = rebound | _builtin_names() | _SCRIPT_GLOBALS | set(bound)
    rule_args = {name for rule in (policy.rules if policy else ()) for name in rule.arguments}

    calls: list[CheckedCall] = []
    problems: list[str] = []
    notes: list[tuple[int, str]] = []
    direct: set[int] = set()  # Name nodes that are the callee of a tool call
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            direct.add(id(func))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            direct.add(id(func.value))
        target: AgentTool | None = None
        callee = func if isinstance(func, ast.Name) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            callee = func.value
        if callee is None or not reaches.get(id(callee), True):
            continue  # not a name, or a function's own local: provably not a tool
        if isinstance(func, ast.Name):
            if func.id in bound:
                target = bound[func.id]
            elif func.id not in known_names:
                problems.append(f"{node.lineno}: unknown tool or name {func.id!r}")
                continue
        elif isinstance(func, ast.Attribute) and func.value.id == "tools":  # type: ignore[attr-defined]
            if func.attr not in bound:
                problems.append(f"{node.lineno}: unknown tool 'tools.{func.attr}'")
                continue
            target = bound[func.attr]
        if target is None:
            continue
        if callee.id in rebound:
            notes.append(
                (
                    node.lineno,
                    f"line {node.lineno}: {callee.id!r} is also bound by the script; the call is "
                    "listed because it may still reach the tool",
                )
            )
        calls.append(_check_call(node, target, policy, rule_args))
    problems.extend(_import_problems(tree))
    calls.sort(key=lambda c: c.line)
    problems.sort(key=lambda p: int(p.split(":", 1)[0]))

    dynamic = sorted(
        (node.lineno, node.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and reaches.get(id(node), True)
        and (node.id in bound or node.id == "tools")
        and id(node) not in direct
    )
    warnings = [
        f"line {line}: {name!r} is used other than by a direct call; "
        "calls made through it are not previewed"
        for line, name in dynamic
    ]
    warnings += [text for _line, text in sorted(notes)]
    if policy is not None:
        for problem in policy.bind(tools, strict=False):
            if problem.level == "error":
                problems.append(f"policy {problem}")
            else:
                warnings.append(f"policy {problem}")
    return CheckReport(None, None, is_async, tuple(calls), tuple(problems), tuple(warnings))


def _check_call(
    node: ast.Call, target: AgentTool, policy: Policy | None, rule_args: set[str]
) -> CheckedCall:
    known: dict[str, Any] = {}
    unknown: set[str] = set()
    shown: list[str] = []
    opaque = False
    if len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
        value = _literal(node.args[0])
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            known.update(value)
            shown.extend(f"{k}={_short(v, 40)}" for k, v in value.items())
        else:
            opaque = True
            shown.append("<expr>")
    elif node.args:
        opaque = True
        shown.append("<positional>")
    for keyword in node.keywords:
        if keyword.arg is None:
            opaque = True
            shown.append("**<expr>")
            continue
        value = _literal(keyword.value)
        if value is _UNKNOWN:
            unknown.add(keyword.arg)
            shown.append(f"{keyword.arg}=<expr>")
        else:
            known[keyword.arg] = value
            shown.append(f"{keyword.arg}={_short(value, 40)}")
    preview = f"{target.name}({', '.join(shown)})"
    if policy is None:
        return CheckedCall(node.lineno, target.name, preview, "allow (no policy)", None)
    if opaque:
        unknown |= rule_args - set(known)
    judged: Any = known
    if target.paths is not None:
        # Literal paths are judged as the run would judge them: resolved by the tool.
        try:
            judged = resolve_arguments(target.paths, known)
        except Exception as exc:
            reason = _one_line(str(exc)) or type(exc).__name__
            return CheckedCall(node.lineno, target.name, preview, f"error ({reason})", None)
        for name in unknown:
            judged.pop(name, None)
            judged.paths.pop(name, None)
    decision = policy.preview(target.name, judged, unknown)
    if decision is None:
        return CheckedCall(node.lineno, target.name, preview, "depends on arguments", None)
    if decision.rule is None and "default" in (decision.reason or ""):
        verdict = f"{decision.action} ({decision.reason})"  # "allow (allowed by default)"
    else:
        where = f"rules[{decision.rule}]" if decision.rule is not None else "default"
        verdict = f"{decision.action} ({where}: {decision.reason})"
    return CheckedCall(node.lineno, target.name, preview, verdict, decision)
