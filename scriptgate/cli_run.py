"""``scriptgate run``: run one script against the selected tools and print what happened.

Owns the run's limits from the flags, the audit log's placement rule (never under
``--root``), the live view and SIGINT-as-abort, the human-readable result (output,
value, call trace, outcome) or its JSON, and the run's exit code.

Must not touch: the parser and the dispatch (:mod:`scriptgate.cli`), what every
subcommand shares (loading tools and policies, the approver: :mod:`scriptgate.cli_support`),
``check`` (:mod:`scriptgate.cli_check`). Imports the sandbox and the runtime; nothing
imports it but :mod:`scriptgate.cli`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import Any, TextIO

from scriptgate._terminal import EscapingWriter
from scriptgate.cli_support import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SCRIPT_FAILED,
    CliError,
    Streams,
    _call_preview,
    _isatty,
    _load_policy,
    _load_tools,
    _read_script,
    _short,
    _terminal_approver,
    dump_json,
)
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.hooks import compose_hooks
from scriptgate.sandbox.result import Limits, ScriptResult

__all__ = ["cmd_run"]


def _dump(value: Any) -> str:
    return dump_json(value)


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


async def cmd_run(args: argparse.Namespace, io: Streams) -> int:
    """The body of ``scriptgate run``; returns the exit code."""
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
