"""``scriptgate agent "PROMPT" --model PROVIDER:NAME``: one agent run from the command line.

Builds an :class:`~scriptgate.agent.Agent` (code mode by default) over the tools the
other subcommands select (``--root``/``--tools``/``--mcp``, loaded by
:mod:`scriptgate.cli`'s helpers), under ``--policy`` and ``--audit``; streams the
model's answer to standard output as it arrives, then prints the call trace (every
tool call, and the calls each script made). ``--json`` prints one JSON document
instead. Exit codes are those of ``scriptgate run``: 0 the model answered, 1 the
run ended in a provider error or was aborted, 2 bad input (unknown provider,
missing API key, bad policy, ...), 3 internal failure, 130 interrupted.

``cli.py`` only registers this command; the body lives here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from scriptgate.agent import Agent, assistant_text_of
from scriptgate.errors import ConfigurationError
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.stream import AssistantMessageEvent
from scriptgate.runtime.types import (
    AgentEvent,
    AssistantMessage,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    Usage,
)
from scriptgate.runtime.wire import to_wire
from scriptgate.sandbox import Limits

__all__ = ["add_agent_parser", "cmd_agent"]

_KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "openai-chat": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}


def add_agent_parser(
    sub: Any, add_tool_options: Callable[[argparse.ArgumentParser], None], epilog: str
) -> None:
    """Register ``scriptgate agent`` on the subcommand set ``sub``."""
    agent = sub.add_parser(
        "agent",
        help="run a model turn with code mode over the selected tools",
        description="Send PROMPT to a model that answers with the python tool (code mode) "
        "over the selected tools; print the streamed answer and the call trace.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    agent.add_argument("prompt", metavar="PROMPT|-", help="the prompt, or - for stdin")
    agent.add_argument(
        "--model",
        required=True,
        metavar="PROVIDER:NAME",
        help="openai:NAME (Chat Completions, or any compatible server with --base-url), "
        "openai-responses:NAME, anthropic:NAME",
    )
    agent.add_argument("--base-url", metavar="URL", help="the provider's (or a local server's) URL")
    agent.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key "
        "(default: OPENAI_API_KEY / ANTHROPIC_API_KEY; optional with --base-url)",
    )
    agent.add_argument(
        "--code-mode",
        choices=("only", "on", "off"),
        default="only",
        help="only: just the python tool (default); on: python beside the tools; off: tools only",
    )
    agent.add_argument("--system", metavar="TEXT", help="the system prompt")
    add_tool_options(agent)
    agent.add_argument("--policy", metavar="FILE", help="permission policy (TOML)")
    agent.add_argument(
        "--audit", metavar="FILE|-", help="append one JSON line per tool call (- = stderr)"
    )
    agent.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="per-script limit (30)"
    )
    agent.add_argument(
        "--isolation",
        choices=("in_process", "process"),
        default="process",
        help="where scripts run: process (worker processes, default) or in_process",
    )
    agent.add_argument("--json", action="store_true", help="print the run as JSON")


def _api_key(args: argparse.Namespace, provider: str, error: type[Exception]) -> str | None:
    if args.api_key_env:
        value = os.environ.get(args.api_key_env)
        if not value:
            raise error(f"--api-key-env {args.api_key_env}: the variable is not set")
        return value
    variable = _KEY_VARIABLES.get(provider)
    if variable is None or os.environ.get(variable):
        return None  # the SDK reads it
    if args.base_url:
        return "unused"  # local servers usually need no key; the SDKs insist on one
    raise error(f"--model {args.model}: set {variable} or pass --api-key-env VAR")


class _Trace:
    """Collects the run's tool calls and streams the answer text."""

    def __init__(self, out: TextIO, stream: bool) -> None:
        self.out = out
        self.stream = stream
        self.calls: list[dict[str, Any]] = []
        self.args: dict[str, Any] = {}
        self.requests = 0
        self.usage = Usage()
        self._open_line = False

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, MessageUpdateEvent):
            delta = event.assistant_message_event
            if (
                self.stream
                and isinstance(delta, AssistantMessageEvent)
                and delta.type == "text_delta"
                and delta.delta
            ):
                self.out.write(delta.delta)
                self.out.flush()
                self._open_line = not delta.delta.endswith("\n")
        elif isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            self.requests += 1
            self.usage = self.usage + event.message.usage
            if self.stream and self._open_line:
                self.out.write("\n")
                self._open_line = False
        elif isinstance(event, ToolExecutionStartEvent):
            self.args[event.tool_call_id] = event.args
        elif isinstance(event, ToolExecutionEndEvent):
            details = event.result.details if isinstance(event.result.details, dict) else {}
            nested = details.get("calls") if isinstance(details.get("calls"), list) else []
            record: dict[str, Any] = {
                "id": event.tool_call_id,
                "name": event.tool_name,
                "arguments": self.args.get(event.tool_call_id),
                "status": "error" if event.is_error else "ok",
            }
            if event.duration_ms is not None:
                record["durationMs"] = event.duration_ms
            if nested:
                record["calls"] = nested
            self.calls.append(record)


def _print_trace(trace: _Trace, final: AssistantMessage | None, out: TextIO) -> None:
    from scriptgate.cli_support import _call_preview, _short

    total = sum(1 + len(c.get("calls", [])) for c in trace.calls)
    out.write(f"── calls ({total})\n")
    for call in trace.calls:
        arguments = call["arguments"]
        if call["name"] == "python" and isinstance(arguments, dict) and "code" in arguments:
            lines = str(arguments["code"]).strip().splitlines()
            preview = f"python({len(lines)} line{'s' if len(lines) != 1 else ''})"
        else:
            preview = _call_preview(call["name"], arguments)
        line = f"  {call['id']}  {preview}  {call['status']}"
        if "durationMs" in call:
            line += f"  {call['durationMs']} ms"
        out.write(line + "\n")
        for nested in call.get("calls", []):
            sub = f"    {nested.get('id')}  {_call_preview(str(nested.get('name')), nested.get('arguments', {}))}  {nested.get('status')}"
            if "durationMs" in nested:
                sub += f"  {nested['durationMs']} ms"
            if nested.get("error"):
                sub += f"  {_short(str(nested['error']).splitlines()[0], 100)[1:-1]}"
            out.write(sub + "\n")
    usage = trace.usage
    tokens = f"{usage.input + usage.cache_read} in / {usage.output} out tokens"
    requests = f"{trace.requests} model request{'s' if trace.requests != 1 else ''}"
    if final is None or final.stop_reason in ("error", "aborted"):
        reason = final.stop_reason if final is not None else "error"
        message = (final.error_message if final is not None else None) or "no answer"
        out.write(f"── failed ({reason}): {message} ({requests}, {tokens})\n")
    else:
        note = " (the answer hit the output token limit)" if final.stop_reason == "length" else ""
        out.write(f"── ok{note}: {requests}, {tokens}\n")


async def cmd_agent(args: argparse.Namespace, io: Any) -> int:
    """The body of ``scriptgate agent`` (``io`` has ``stdin``/``stdout``/``stderr``)."""
    from scriptgate import cli_support as cli
    from scriptgate.models import from_spec

    if args.timeout is not None and args.timeout <= 0:
        raise cli.CliError("--timeout must be positive")
    prompt = io.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise cli.CliError("the prompt is empty")
    provider = args.model.partition(":")[0]
    api_key = _api_key(args, provider, cli.CliError)
    try:
        model = from_spec(args.model, base_url=args.base_url, api_key=api_key)
    except ConfigurationError as exc:
        raise cli.CliError(str(exc)) from None
    interactive = args.prompt != "-" and cli._isatty(io.stdin)
    approver = cli._terminal_approver(io.stdin, io.stderr) if interactive else None
    policy = cli._load_policy(args.policy, approver)
    audit: AuditLog | None = None
    if args.audit is not None:
        try:
            audit = AuditLog(io.stderr if args.audit == "-" else Path(args.audit))
        except OSError as exc:
            raise cli.CliError(f"--audit {args.audit}: {exc.strerror or exc}") from None
    trace = _Trace(io.stdout, stream=not args.json)
    try:
        async with contextlib.AsyncExitStack() as stack:
            tools = await cli._load_tools(args, stack)
            agent = Agent(
                model,
                tools=tools,
                code_mode=args.code_mode,
                system_prompt=args.system,
                policy=policy,
                audit=audit,
                limits=Limits(timeout=args.timeout),
                isolation=args.isolation,
            )
            stack.push_async_callback(agent.aclose)
            agent.subscribe(trace)
            final = await agent.prompt(prompt)
            messages = agent.messages
    finally:
        if audit is not None:
            audit.close()
    failed = final is None or final.stop_reason in ("error", "aborted")
    if args.json:
        document = {
            "answer": assistant_text_of(final),
            "stopReason": final.stop_reason if final is not None else "error",
            "errorMessage": final.error_message if final is not None else "no answer",
            "calls": trace.calls,
            "usage": to_wire(trace.usage),
            "messages": to_wire(messages),
        }
        io.stdout.write(cli.dump_json(document) + "\n")
    else:
        _print_trace(trace, final, io.stdout)
    return cli.EXIT_SCRIPT_FAILED if failed else cli.EXIT_OK
