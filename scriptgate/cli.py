"""The ``scriptgate`` command: run, check and describe model-written scripts.

Subcommands
-----------
``scriptgate run SCRIPT|-``
    Run a script (``-`` reads it from standard input) against the selected tools,
    optionally under a permission policy (``--policy FILE``, TOML) with every
    call written to an audit log (``--audit FILE``, or ``--audit -`` for standard
    error). Prints what the script printed, its value and a compact call trace —
    or, with ``--json``, the :class:`~scriptgate.sandbox.result.ScriptResult` as JSON.
``scriptgate check SCRIPT``
    Compile the script under the sandbox's rules without running it, list the
    tools it calls and, for calls whose arguments are literals, what the policy
    would decide; report syntax errors (with line), rejected constructs, calls to
    unknown tools, and policy rules that match no available tool.
``scriptgate stubs``
    Print the Python API the model sees for the selected tools.
``scriptgate agent "PROMPT" --model PROVIDER:NAME``
    Run a model turn in code mode over the selected tools; prints the streamed
    answer and the call trace (:mod:`scriptgate.agent_cli`).

Tool selection (every subcommand)
---------------------------------
The built-in file tools (``read``, ``write``, ``edit``, ``ls``, ``find``,
``grep``) rooted at ``--root`` (default: the current directory; ``--read-only``
leaves out ``write`` and ``edit``, ``--no-files`` leaves them all out), plus
``--tools SPEC`` (repeatable): ``module:attr`` or ``path/to/file.py:attr`` naming
an ``AgentTool``, a list of them, or a function (made a tool with ``@tool``); a
bare ``module`` or ``file.py`` takes every ``AgentTool`` defined at its top level.
The current directory is importable. ``--mcp "command args"`` (repeatable) starts
an MCP server on stdio and adds its tools; an ``http(s)://`` URL connects over
streamable HTTP instead; ``--mcp-env/--mcp-cwd/--mcp-header/--mcp-prefix/--mcp-timeout``
qualify the ``--mcp`` before them and ``--mcp-config FILE`` reads ``mcpServers`` JSON
(:mod:`scriptgate.mcp_options`). Servers connect concurrently. With MCP servers the
file tools are left out unless ``--files`` is given.

Exit codes
----------
- ``0``: success (``run``: the script completed; ``check``: no errors found);
- ``1``: the script failed (``run``: syntax, rejected, runtime, tool, limit or
  aborted error) or ``check`` found errors;
- ``2``: usage error or bad input (missing file, bad TOML policy, unknown tool
  module, unreachable MCP server, duplicate tool names, …) — one line on stderr;
- ``3``: the sandbox or scriptgate itself failed (a worker died, an internal
  error) — one line on stderr (set ``SCRIPTGATE_DEBUG=1`` for a traceback);
- ``130``: interrupted (Ctrl-C).

Approvals: a policy rule with ``action = "ask"`` prompts on the terminal when
standard input is interactive (and the script is not read from it); otherwise the
call is denied with a reason saying approval was unavailable.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

import anyio
import anyio.to_thread

from scriptgate import jailcmd
from scriptgate._terminal import EscapingWriter
from scriptgate.checking import name_uses
from scriptgate.cli_support import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SCRIPT_FAILED,
    EXIT_USAGE,
    CliError,
    _call_preview,
    _isatty,
    _load_policy,
    _load_tools,
    _short,
    _terminal_approver,
    approval_prompt,
    load_tool_spec,
)
from scriptgate.errors import ScriptgateError
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.hooks import compose_hooks
from scriptgate.runtime.paths import resolve_arguments
from scriptgate.runtime.policy import Decision, Policy
from scriptgate.runtime.tool import AgentTool
from scriptgate.sandbox.naming import bind_identifiers
from scriptgate.sandbox.result import Limits, ScriptResult

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_SCRIPT_FAILED",
    "EXIT_USAGE",
    "approval_prompt",
    "build_parser",
    "load_tool_spec",
    "main",
]


_EPILOG = """\
exit codes:
  0    success (run: the script completed; check: no errors found)
  1    the script failed (run) or check found errors
  2    usage error or bad input (missing file, bad policy, unknown tool module,
       unreachable MCP server, ...)
  3    the sandbox or scriptgate itself failed
  130  interrupted
"""

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


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so ``main`` returns the exit code."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise CliError(message)


# --------------------------------------------------------------------------- parser


def _add_tool_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("tools")
    group.add_argument(
        "--root",
        default=".",
        metavar="DIR",
        help="root directory of the built-in file tools (default: the current directory)",
    )
    group.add_argument(
        "--read-only", action="store_true", help="leave out the write and edit file tools"
    )
    group.add_argument("--no-files", action="store_true", help="leave out the built-in file tools")
    group.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="SPEC",
        help="add tools: module:attr or file.py:attr (an AgentTool, a list, or a function); "
        "a bare module takes all its AgentTools (repeatable)",
    )
    from scriptgate.mcp_options import add_mcp_options

    add_mcp_options(group)
    group.add_argument(
        "--mcp-root",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory the MCP servers serve files from: their path arguments are resolved "
        "inside it before the policy judges them (repeatable)",
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scriptgate")
    except PackageNotFoundError:  # a source tree that is not installed
        return "unknown"


def _parse_bytes(text: str) -> int:
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    word = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = word[-1:] if word[-1:] in units else ""
    try:
        value = float(word[: len(word) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 512M, 2G)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"the size must be positive: {text!r}")
    return int(value * units[unit])


def build_parser() -> argparse.ArgumentParser:
    """The ``scriptgate`` argument parser."""
    parser = _Parser(
        prog="scriptgate",
        description="Run model-written Python scripts against real tools, every call gated "
        "by the same validation, permission and audit hooks as a direct tool call.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"scriptgate {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run",
        help="run a script",
        description="Run a script against the selected tools.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("script", metavar="SCRIPT|-", help="the script file, or - for stdin")
    _add_tool_options(run)
    run.add_argument("--policy", metavar="FILE", help="permission policy (TOML)")
    run.add_argument(
        "--audit",
        metavar="FILE|-",
        help="append an intent and an outcome JSON line per tool call (- = stderr); "
        "the file must be outside --root",
    )
    run.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="wall-clock limit (30)"
    )
    run.add_argument(
        "--isolation",
        choices=("in_process", "process"),
        default="in_process",
        help="in_process (fast; trusted scripts) or process (worker processes; untrusted)",
    )
    run.add_argument(
        "--max-tool-calls", type=int, default=None, metavar="N", help="tool-call limit (1000)"
    )
    run.add_argument(
        "--memory",
        type=_parse_bytes,
        default=None,
        metavar="BYTES",
        help="memory limit, e.g. 512M or 2G (1G)",
    )
    run.add_argument(
        "--max-output",
        type=int,
        default=None,
        metavar="CHARS",
        help="limit of what the script may print (1000000 characters)",
    )
    run.add_argument("--json", action="store_true", help="print the ScriptResult as JSON")
    run.add_argument(
        "--raw",
        action="store_true",
        help="when standard output is not a terminal, pass the script's output byte for byte "
        "(by default control characters are shown escaped, e.g. ESC as \\x1b)",
    )

    check = sub.add_parser(
        "check",
        help="compile and preview a script without running it",
        description="Compile a script and preview its tool calls under the policy.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("script", metavar="SCRIPT|-", help="the script file, or - for stdin")
    _add_tool_options(check)
    check.add_argument("--policy", metavar="FILE", help="permission policy (TOML)")

    stubs = sub.add_parser(
        "stubs",
        help="print the API the model sees",
        description="Print the Python API of the selected tools, as the model sees it.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_tool_options(stubs)
    stubs.add_argument(
        "--style", choices=("sync", "async"), default="sync", help="def or async def signatures"
    )
    from scriptgate.agent_cli import add_agent_parser

    add_agent_parser(sub, _add_tool_options, _EPILOG)
    jailcmd.add_parser(sub)

    from scriptgate.serve import register

    register(sub, add_tool_options=_add_tool_options, epilog=_EPILOG)
    return parser


# --------------------------------------------------------------------------- tools


# --------------------------------------------------------------------------- helpers


def _read_script(script: str, stdin: TextIO) -> tuple[str, str]:
    if script == "-":
        return stdin.read(), "<stdin>"
    path = Path(script)
    try:
        return path.read_text(encoding="utf-8"), script
    except FileNotFoundError:
        raise CliError(f"{script}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{script}: is a directory") from None
    except UnicodeDecodeError:
        raise CliError(f"{script}: not UTF-8 text") from None
    except OSError as exc:
        raise CliError(f"{script}: {exc.strerror or exc}") from None


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except ValueError:  # an int too long for str(), NaN in a strict dump...
        from scriptgate.runtime.strict_json import bounded

        return json.dumps(bounded(value, max_chars=1 << 62)[0], ensure_ascii=False, indent=2)


def _print_result(result: ScriptResult, out: TextIO, *, streamed: bool = False) -> None:
    if streamed:  # already shown as it was printed
        if result.output and not result.output.endswith("\n"):
            out.write("\n")
    elif result.output:
        out.write(result.output if result.output.endswith("\n") else result.output + "\n")
    if result.ok and result.value is not None:
        out.write("── value\n")
        out.write((result.value if isinstance(result.value, str) else _dump(result.value)) + "\n")
    out.write(f"── calls ({len(result.calls)})\n")
    for record in result.calls:
        line = f"  {record.id}  {_call_preview(record.tool, record.arguments)}  {record.status}"
        if record.duration_ms is not None:
            line += f"  {record.duration_ms} ms"
        if record.error:
            first = record.error.splitlines()[0] if record.error.splitlines() else ""
            line += f"  {_short(first, 100)[1:-1]}"
        out.write(line + "\n")
    if result.ok:
        out.write(f"── ok in {result.wall_time:.2f} s\n")
    else:
        error = result.error
        if error is None:
            out.write(f"── failed in {result.wall_time:.2f} s\n")
        else:
            where = f" (line {error.line})" if error.line is not None else ""
            out.write(
                f"── failed ({error.kind}) in {result.wall_time:.2f} s: "
                f"{error.type}: {error.message}{where}\n"
            )


# --------------------------------------------------------------------------- commands


def _refuse_audit_under_root(args: argparse.Namespace) -> None:
    """The audit log must be out of the file tools' reach: refuse a path under ``--root``."""
    if args.audit == "-" or args.no_files:
        return
    try:
        root = os.path.realpath(args.root)
        target = Path(args.audit)
        real = os.path.join(os.path.realpath(target.parent), target.name)
        real = os.path.realpath(real)
    except (OSError, ValueError):
        return
    if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
        raise CliError(
            f"--audit {args.audit} is inside --root {args.root}: the file tools could read or "
            "replace the log; write it outside the root (or use --audit -)"
        )


async def _cmd_run(args: argparse.Namespace, io: _IO) -> int:
    if args.timeout is not None and args.timeout <= 0:
        raise CliError("--timeout must be positive")
    for flag, value in (
        ("--max-tool-calls", args.max_tool_calls),
        ("--max-output", args.max_output),
    ):
        if value is not None and value < 0:
            raise CliError(f"{flag} must not be negative")
    defaults = Limits()
    limits = Limits(
        timeout=args.timeout,
        max_tool_calls=defaults.max_tool_calls
        if args.max_tool_calls is None
        else args.max_tool_calls,
        max_output_chars=defaults.max_output_chars if args.max_output is None else args.max_output,
        memory_bytes=defaults.memory_bytes if args.memory is None else args.memory,
    )
    source, _label = _read_script(args.script, io.stdin)
    interactive = args.script != "-" and _isatty(io.stdin)
    approver = _terminal_approver(io.stdin, io.stderr) if interactive else None
    policy = _load_policy(args.policy, approver)
    audit: AuditLog | None = None
    if args.audit is not None:
        _refuse_audit_under_root(args)
        try:
            audit = AuditLog(io.stderr if args.audit == "-" else Path(args.audit))
        except OSError as exc:
            raise CliError(f"--audit {args.audit}: {exc.strerror or exc}") from None
    raw = args.raw and not _isatty(io.stdout)
    out: Any = io.stdout if raw else EscapingWriter(io.stdout)
    from scriptgate._live import LiveView, sigint_aborts

    live = None if args.json else LiveView(out, io.stderr, progress=_isatty(io.stderr))
    controller = AbortController()
    try:
        async with contextlib.AsyncExitStack() as stack:
            tools = await _load_tools(args, stack)
            if policy is not None:
                # Errors (a rule that can never match as written) refuse the run, exit 2.
                for problem in policy.bind(tools):
                    io.stderr.write(f"scriptgate: warning: policy {problem}\n")
            hooks = compose_hooks(policy, audit)
            from scriptgate.sandbox.sandbox import Sandbox

            sandbox = Sandbox(
                tools,
                before_tool_call=hooks.before_tool_call,
                after_tool_call=hooks.after_tool_call,
                limits=limits,
                isolation=args.isolation,
            )
            try:
                with sigint_aborts(controller) as interrupts:
                    result = await sandbox.run(source, signal=controller.signal, on_event=live)
            finally:
                await sandbox.aclose()
    finally:
        if audit is not None:
            audit.close()
    if args.json:
        out.write(_dump(result.to_json()) + "\n")
    else:
        _print_result(result, out, streamed=live is not None and live.streamed)
    if interrupts.count and result.error is not None and result.error.kind == "aborted":
        return EXIT_INTERRUPTED
    if result.ok:
        return EXIT_OK
    if result.error is not None and result.error.kind == "sandbox":
        return EXIT_INTERNAL
    return EXIT_SCRIPT_FAILED


async def _cmd_stubs(args: argparse.Namespace, io: _IO) -> int:
    async with contextlib.AsyncExitStack() as stack:
        tools = await _load_tools(args, stack)
    from scriptgate.sandbox.model.stubs import render_stubs

    text = render_stubs(tools, style=args.style)
    io.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


async def _cmd_check(args: argparse.Namespace, io: _IO) -> int:
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


# --------------------------------------------------------------------------- main


@dataclass(slots=True)
class _IO:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO


async def _cmd_agent(args: argparse.Namespace, io: _IO) -> int:
    from scriptgate.agent_cli import cmd_agent

    return await cmd_agent(args, io)


_COMMANDS: dict[str, Callable[[argparse.Namespace, _IO], Any]] = {
    "run": _cmd_run,
    "check": _cmd_check,
    "stubs": _cmd_stubs,
    "agent": _cmd_agent,
    "jail": jailcmd.command,
    "serve": lambda args, io: _cmd_serve(args, io),
}


async def _cmd_serve(args: argparse.Namespace, io: _IO) -> int:
    from scriptgate.serve import serve_command

    return await serve_command(args, io, _load_tools)


def _leaf_errors(exc: BaseException) -> Iterable[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaf_errors(inner)
    else:
        yield exc


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return " ".join(lines) if lines else ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``scriptgate`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    io = _IO(sys.stdin, sys.stdout, sys.stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except CliError as exc:
        io.stderr.write(f"scriptgate: error: {_one_line(str(exc))}\n")
        return EXIT_USAGE
    except SystemExit as exc:  # --help / --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    command = _COMMANDS[args.command]
    from scriptgate.interrupts import Interrupted, run_interruptible

    try:
        # `run` turns SIGINT into an abort of the script (its output and call trace are
        # kept: _live.sigint_aborts); the other commands are cancelled by it
        code: int = (
            anyio.run(command, args, io)
            if args.command == "run"
            else anyio.run(run_interruptible, command, args, io)
        )
        return code
    except (KeyboardInterrupt, Interrupted):
        io.stderr.write("scriptgate: interrupted\n")
        return EXIT_INTERRUPTED
    except BaseException as exc:
        if os.environ.get("SCRIPTGATE_DEBUG"):
            raise
        leaves = list(_leaf_errors(exc))
        if any(isinstance(leaf, BrokenPipeError) for leaf in leaves):
            return EXIT_OK  # the reader went away (`scriptgate stubs | head`)
        for leaf in leaves:
            if isinstance(leaf, CliError | ScriptgateError | OSError):
                io.stderr.write(
                    f"scriptgate: error: {_one_line(str(leaf)) or type(leaf).__name__}\n"
                )
                return EXIT_USAGE
        if any(isinstance(leaf, KeyboardInterrupt | Interrupted) for leaf in leaves):
            io.stderr.write("scriptgate: interrupted\n")
            return EXIT_INTERRUPTED
        if isinstance(exc, SystemExit):
            return exc.code if isinstance(exc.code, int) else EXIT_INTERNAL
        first = leaves[0] if leaves else exc
        io.stderr.write(
            f"scriptgate: internal error: {type(first).__name__}: {_one_line(str(first))}\n"
        )
        return EXIT_INTERNAL
