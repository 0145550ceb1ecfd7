"""What the subcommands of ``scriptgate`` share: exit codes, the one-line error, loading
tools (``--root``, ``--tools``, ``--mcp``) and policies, the terminal approver for ``ask``
rules, and call previews.

:mod:`scriptgate.cli` (the parser and the dispatch) and the subcommand modules
(:mod:`scriptgate.cli_run`, :mod:`scriptgate.cli_check`, :mod:`scriptgate.agent_cli`,
:mod:`scriptgate.jailcmd`, :mod:`scriptgate.serve`) import from here; this module
imports none of them. It also reads a script argument (:func:`_read_script`) and names
the streams a subcommand gets (:class:`Streams`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TextIO

import anyio
import anyio.to_thread

from scriptgate._terminal import safe_repr
from scriptgate.errors import ToolDefinitionError
from scriptgate.runtime.policy import ApprovalRequest, Policy
from scriptgate.runtime.tool import AgentTool, tool

EXIT_OK = 0
"""Success."""


EXIT_SCRIPT_FAILED = 1
"""The script failed (``run``) or ``check`` found errors."""


EXIT_USAGE = 2
"""Usage error or bad input."""


EXIT_INTERNAL = 3
"""The sandbox or scriptgate itself failed."""


EXIT_INTERRUPTED = 130
"""Interrupted by Ctrl-C."""


class CliError(Exception):
    """A bad input: printed as one line, exit code 2."""


class Streams(Protocol):
    """What a subcommand reads and writes: the command's ``stdin``, ``stdout`` and ``stderr``."""

    stdin: TextIO
    stdout: TextIO
    stderr: TextIO


def _one_line(text: str) -> str:
    """``text`` folded onto one line (the form every error of the command takes)."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return " ".join(lines) if lines else ""


def _read_script(script: str, stdin: TextIO) -> tuple[str, str]:
    """``(source, label)`` of a script argument (``-`` reads ``stdin``); a bad file is a
    :class:`CliError`."""
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


def _import_target(module_part: str, spec: str) -> Any:
    looks_like_file = module_part.endswith(".py") or os.sep in module_part or "/" in module_part
    if looks_like_file:
        path = Path(module_part)
        if not path.is_file():
            raise CliError(f"--tools {spec}: no such file: {module_part}")
        name = "scriptgate_cli_tools_" + "".join(c if c.isalnum() else "_" for c in path.stem)
        file_spec = importlib.util.spec_from_file_location(name, path)
        if file_spec is None or file_spec.loader is None:
            raise CliError(f"--tools {spec}: cannot load {module_part}")
        module = importlib.util.module_from_spec(file_spec)
        sys.modules[name] = module
        try:
            file_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise CliError(
                f"--tools {spec}: importing {module_part} failed: {type(exc).__name__}: {exc}"
            ) from None
        return module
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        raise CliError(f"--tools {spec}: cannot import module {module_part!r}: {exc}") from None
    except Exception as exc:
        raise CliError(
            f"--tools {spec}: importing module {module_part!r} failed: {type(exc).__name__}: {exc}"
        ) from None


def _as_tools(value: Any, spec: str) -> list[AgentTool]:
    def one(item: Any) -> AgentTool:
        if isinstance(item, AgentTool):
            return item
        if callable(item) and not isinstance(item, type):
            try:
                return tool(item)
            except ToolDefinitionError as exc:
                raise CliError(f"--tools {spec}: {exc}") from None
        raise CliError(
            f"--tools {spec}: {type(item).__name__} is not an AgentTool, a list of them "
            "or a function"
        )

    if isinstance(value, list | tuple):
        if not value:
            raise CliError(f"--tools {spec}: the list is empty")
        return [one(item) for item in value]
    return [one(value)]


def load_tool_spec(spec: str) -> list[AgentTool]:
    """The tools named by a ``--tools`` spec (``module:attr``, ``file.py:attr`` or a module)."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep:
        module_part, attr = spec, ""
    if not module_part:
        raise CliError(f"--tools {spec}: expected module:attr or file.py:attr")
    module = _import_target(module_part, spec)
    if not attr:
        found = [value for value in vars(module).values() if isinstance(value, AgentTool)]
        if not found:
            raise CliError(f"--tools {spec}: the module defines no AgentTool")
        return found
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CliError(f"--tools {spec}: {module_part!r} has no attribute {attr!r}") from None
    return _as_tools(value, spec)


async def _load_tools(
    args: argparse.Namespace, stack: contextlib.AsyncExitStack, *, mcp: bool = True
) -> list[AgentTool]:
    from scriptgate.mcp_options import mcp_configs, wants_file_tools

    tools: list[AgentTool] = []
    if wants_file_tools(args):
        root = Path(args.root)
        if not await anyio.Path(root).is_dir():
            raise CliError(f"--root: not a directory: {args.root}")
        from scriptgate.tools.files import file_tools

        audit = getattr(args, "audit", None)
        protected = [audit] if audit not in (None, "-") else []
        tools.extend(file_tools(root, read_only=args.read_only, protected=protected))
    for spec in args.tools:
        tools.extend(load_tool_spec(spec))
    configs = mcp_configs(args) if mcp else []
    if configs:
        from scriptgate.tools.mcp_servers import connect_servers

        connections = await stack.enter_async_context(connect_servers(configs))
        if connections.failures:
            raise CliError("; ".join(connections.failures))
        first_mcp = len(tools)
        tools.extend(connections.tools)
        if args.mcp_root:
            from scriptgate.tools.mcp_paths import declare_mcp_paths

            declare_mcp_paths(tools[first_mcp:], args.mcp_root)
    seen: dict[str, str] = {}
    for item in tools:
        if item.name in seen:
            raise CliError(
                f"two tools are named {item.name!r}; use --mcp-prefix, --no-files or rename one"
            )
        seen[item.name] = item.name
    return tools


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _terminal_approver(stdin: TextIO, stderr: TextIO) -> Callable[[ApprovalRequest], Any]:
    lock = anyio.Lock()

    async def approve(request: ApprovalRequest) -> bool:
        text = approval_prompt(request, shutil.get_terminal_size((100, 24)).columns)
        async with lock:
            stderr.write(text)
            stderr.flush()
            answer = await anyio.to_thread.run_sync(stdin.readline)
        return answer.strip().lower() in ("y", "yes")

    return approve


def _fold(text: str, first: str, indent: str, width: int) -> list[str]:
    """``text`` cut into lines of at most ``width`` characters (never dropped, never cut short)."""
    lines: list[str] = []
    prefix = first
    while True:
        room = max(width - len(prefix), 16)
        lines.append(prefix + text[:room])
        text = text[room:]
        if not text:
            return lines
        prefix = indent


def _visible(text: str) -> str:
    """``text`` with every non-printable character (escapes, controls) shown escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def approval_prompt(request: ApprovalRequest, width: int = 100) -> str:
    """What the terminal approver shows: the tool, the reason, and every argument in full.

    Values are the arguments the tool will receive (path arguments resolved), as
    Python literals (control characters escaped), folded to ``width`` columns; the
    tool name and the reason have their control characters escaped too.
    """
    name = _visible(request.tool_name)
    lines = [f"scriptgate: {name} needs approval ({_visible(str(request.decision.reason))}):"]
    arguments = request.arguments if isinstance(request.arguments, Mapping) else {}
    for key, value in arguments.items():
        head = f"    {_visible(str(key))} = "
        lines += _fold(repr(value), head, " " * len(head), width)
    if not arguments:
        lines.append("    (no arguments)")
    lines.append(f"scriptgate: allow {name}? [y/N] ")
    return "\n".join(lines)


def _load_policy(
    path: str | None, approver: Callable[[ApprovalRequest], Any] | None
) -> Policy | None:
    if path is None:
        return None
    return Policy.from_toml(Path(path), ask=approver)


def _short(value: Any, width: int) -> str:
    text = safe_repr(value)
    if len(text) > width:
        text = text[: max(width - 3, 1)] + "..."
    return text


def _call_preview(name: str, arguments: Any, *, width: int = 60) -> str:
    if isinstance(arguments, dict):
        inner = ", ".join(f"{key}={_short(value, 40)}" for key, value in arguments.items())
    else:
        inner = _short(arguments, 40)
    if len(inner) > width:
        inner = inner[: width - 3] + "..."
    return f"{name}({inner})"


def dump_json(value: Any) -> str:
    """``value`` as strict JSON (indented): never a bare ``NaN``/``Infinity`` token.

    Plain data goes through :func:`json.dumps` with ``allow_nan=False`` (``default=str`` for
    the odd host object); what a strict dump refuses — a NaN or an infinity, an int too long
    for ``str()``, a cycle — falls back to :func:`scriptgate.runtime.strict_json.bounded`, the
    rendering the audit log uses (``{"type": "float", "value": "NaN"}``).
    """
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str, allow_nan=False)
    except ValueError:
        from scriptgate.runtime.strict_json import bounded

        data = bounded(value, max_chars=1 << 62)[0]
        return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
