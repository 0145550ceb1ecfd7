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

Layout
------
This module is the parser, the registration of the subcommands and the dispatch
(:func:`main`: exit codes, one-line errors, interrupts). The bodies live in their own
modules: ``run`` in :mod:`scriptgate.cli_run`, ``check`` and ``stubs`` in
:mod:`scriptgate.cli_check`, ``agent`` in :mod:`scriptgate.agent_cli`, ``jail`` in
:mod:`scriptgate.jailcmd`, ``serve`` in :mod:`scriptgate.serve`; what they share in
:mod:`scriptgate.cli_support`. ``check_script`` and the helpers in ``__all__`` stay
importable from here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TextIO

import anyio
import anyio.to_thread

from scriptgate import jailcmd
from scriptgate.cli_check import CheckedCall as CheckedCall
from scriptgate.cli_check import CheckReport as CheckReport
from scriptgate.cli_check import check_script as check_script
from scriptgate.cli_check import cmd_check, cmd_stubs
from scriptgate.cli_run import cmd_run
from scriptgate.cli_support import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SCRIPT_FAILED,
    EXIT_USAGE,
    CliError,
    _load_tools,
    _one_line,
    approval_prompt,
    load_tool_spec,
)
from scriptgate.errors import ScriptgateError

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
    "run": cmd_run,
    "check": cmd_check,
    "stubs": cmd_stubs,
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
    from scriptgate.interrupts import Interrupted, run_interruptible, run_quiet_on_interrupt

    try:
        # `run` turns SIGINT into an abort of the script (its output and call trace are
        # kept: _live.sigint_aborts); the other commands are cancelled by it
        code: int = (
            anyio.run(run_quiet_on_interrupt, command, args, io)
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
