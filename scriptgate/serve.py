"""``scriptgate serve``: an MCP server that offers code mode over other MCP servers' tools.

Owns the ``serve`` subcommand (``cli`` only registers it). Built on the public
``scriptgate`` API (:func:`~scriptgate.codemode_tool`, :class:`~scriptgate.Policy`,
:class:`~scriptgate.AuditLog`, :func:`~scriptgate.compose_hooks`) and the official
``mcp`` SDK's ``MCPServer``. Tools exposed to the client:

``python(code)``
    Runs a script in the sandbox against every upstream tool (code mode). Its
    description is a constant, byte-stable however upstreams come and go; the
    model finds tools with the two below.
``search_tools(query)``
    Identifiers and one-line summaries of the tools matching the query words.
``describe_tool(name)``
    The Python stub (signature, types, docstring) of one tool.

Upstreams come from ``--mcp``/``--mcp-config`` (connected concurrently; a server
that fails is reported on stderr and the others are served) and ``--tools``.
Every nested call goes through ``--policy`` (bound to the upstream tools, so
annotation rules see their MCP annotations; a rule that matches no tool is a
start-up warning) and ``--audit``; ``--mcp-root`` declares the upstreams' path
arguments, as for ``run``. An audit line's
``run_id`` is ``<outer MCP request id>/<script run id>``. ``ask`` rules ask the
user through MCP elicitation when the client supports it (otherwise the call
is denied, saying the client cannot ask). ``--expose-direct`` also offers
every upstream tool under its own name, gated by the same hooks. A client that
disconnects mid-script cancels the script and its calls.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.hooks import compose_hooks
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.policy import ApprovalRequest, Policy
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import ToolCall
from scriptgate.sandbox import Limits, codemode_tool, render_stubs
from scriptgate.sandbox.naming import assign_identifiers

__all__ = ["PYTHON_DESCRIPTION", "ElicitationUnavailable", "Gateway", "register", "serve_command"]

PYTHON_DESCRIPTION = """\
Run a Python script that calls tools as functions, and get its printed output and \
the value of its last expression.

The tools are not listed here: call search_tools(query) to find them and \
describe_tool(name) to read a tool's signature before using it. In the script, each \
tool is a function taking keyword arguments, e.g. result = some_tool(path="a.txt"); \
it returns the tool's text, or its structured result when the tool declares one. A \
failed call raises ToolError (ToolDenied when a policy blocks it); catch it to carry \
on. Use `await gather(a(...), b(...))` inside an async script to run calls \
concurrently. The sandbox has no file, network or import access beyond the tools and \
a few safe modules (json, re, math, datetime, ...). Keep scripts short; print what \
you need to see."""
"""The ``python`` tool's description: constant, so clients can cache it."""

_CURRENT_REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("scriptgate_serve_request")


def _identifier_map(tools: Sequence[AgentTool]) -> dict[str, AgentTool]:
    return dict(zip(assign_identifiers([t.name for t in tools]), tools, strict=True))


def _summary(tool: AgentTool) -> str:
    lines = [line.strip() for line in (tool.description or "").splitlines() if line.strip()]
    return lines[0] if lines else ""


class _Renamed(AgentTool):
    """A stand-in for rendering one tool's stub under the identifier scripts call it by."""


class Gateway:
    """The state behind the served tools: the upstream tools, hooks, limits."""

    def __init__(
        self,
        tools: Callable[[], list[AgentTool]],
        *,
        policy: Policy | None = None,
        audit_stream: TextIO | None = None,
        limits: Limits | None = None,
        isolation: Any = "in_process",
    ) -> None:
        self.current_tools = tools
        self.policy = policy
        self.audit_stream = audit_stream
        self.limits = limits if limits is not None else Limits()
        self.isolation = isolation

    def _hooks(self, request_id: str) -> tuple[Any, AuditLog | None]:
        audit = (
            AuditLog(self.audit_stream, run_id=f"{request_id}/{uuid.uuid4().hex[:12]}")
            if self.audit_stream is not None
            else None
        )
        return compose_hooks(self.policy, audit), audit

    async def python(self, code: str, request_id: str, ctx: Any = None) -> tuple[str, bool]:
        """Run ``code``; return the model-facing text and whether it is an error."""
        hooks, audit = self._hooks(request_id)
        token = _CURRENT_REQUEST.set(ctx)
        tool = codemode_tool(
            self.current_tools(),
            before_tool_call=hooks.before_tool_call,
            after_tool_call=hooks.after_tool_call,
            limits=self.limits,
            isolation=self.isolation,
        )
        try:
            result = await tool.execute(f"request-{request_id}", {"code": code}, None, None)
        except ConfigurationError as exc:
            return str(exc), True
        except ValueError as exc:  # an invalid source (CodemodeSourceError)
            return str(exc), True
        finally:
            _CURRENT_REQUEST.reset(token)
            with anyio.CancelScope(shield=True):
                await tool.aclose()
            if audit is not None:
                audit.close()  # an intent still open then (a client that went away) is logged as aborted
        return result.text_content(), bool(result.is_error)

    async def direct(
        self, tool: AgentTool, arguments: dict[str, Any], request_id: str, ctx: Any = None
    ) -> tuple[str, bool]:
        """Call one upstream tool directly, through the same hooks."""
        hooks, audit = self._hooks(request_id)
        token = _CURRENT_REQUEST.set(ctx)
        try:
            outcome = await run_tool_call(
                ToolCall(f"request-{request_id}", tool.name, arguments),
                tools=[tool],
                before_tool_call=hooks.before_tool_call,
                after_tool_call=hooks.after_tool_call,
            )
        finally:
            _CURRENT_REQUEST.reset(token)
            if audit is not None:
                audit.close()
        return outcome.result.text_content(), bool(outcome.is_error)

    def search(self, query: str, limit: int = 20) -> str:
        """Identifiers and summaries of the tools whose name or description match ``query``."""
        words = [w for w in re.split(r"\W+", query.lower()) if w]
        scored: list[tuple[int, str, AgentTool]] = []
        for ident, tool in _identifier_map(self.current_tools()).items():
            haystack = f"{ident} {tool.name} {tool.description}".lower()
            score = sum(haystack.count(w) + 3 * (w in ident.lower()) for w in words)
            if score or not words:
                scored.append((-score, ident, tool))
        scored.sort(key=lambda item: (item[0], item[1]))
        if not scored:
            return f"No tool matches {query!r}."
        return "\n".join(f"{ident}: {_summary(tool)}" for _s, ident, tool in scored[:limit])

    def describe(self, name: str) -> str:
        """The stub of the tool called ``name`` (its identifier or its raw name)."""
        by_ident = _identifier_map(self.current_tools())
        found = by_ident.get(name)
        ident = name
        if found is None:
            for candidate_ident, candidate in by_ident.items():
                if candidate.name == name:
                    found, ident = candidate, candidate_ident
                    break
        if found is None:
            return f"No tool is named {name!r}; use search_tools to find one."
        stand_in = _Renamed(
            name=ident,
            description=found.description,
            parameters=found.parameters,
            output_schema=found.output_schema,
            execute=found.execute,
        )
        return render_stubs([stand_in])


class ElicitationUnavailable(Exception):
    """The MCP client cannot ask its user (it declared no elicitation support)."""


async def _elicit_approval(request: ApprovalRequest) -> bool:
    """An ``ask`` rule's approval through MCP elicitation, when the client supports it.

    Without it the call is denied saying so ("approval failed:
    ElicitationUnavailable: ..."), not as if the user had said no.
    """
    ctx = _CURRENT_REQUEST.get(None)
    caps = ctx.client_capabilities if ctx is not None else None
    if caps is None or getattr(caps, "elicitation", None) is None:
        raise ElicitationUnavailable("the MCP client cannot ask the user (no elicitation)")
    from pydantic import BaseModel

    class Approve(BaseModel):
        approve: bool

    import json

    args = json.dumps(dict(request.arguments), ensure_ascii=False, default=str)[:500]
    reason = f" ({request.decision.reason})" if request.decision.reason else ""
    answer = await ctx.elicit(
        message=f"Allow the tool call {request.tool_name}({args}){reason}?", schema=Approve
    )
    return bool(getattr(answer, "action", "") == "accept" and answer.data.approve)


def _build_server(gateway: Gateway, *, expose_direct: Sequence[AgentTool] = ()) -> Any:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    taken = {"python", "search_tools", "describe_tool"}
    direct: list[Any] = []
    for upstream in expose_direct:
        if upstream.name in taken:
            continue
        taken.add(upstream.name)
        direct.append(_direct_tool(upstream, _direct_call(gateway, upstream, ToolError)))
    server = MCPServer("scriptgate", tools=direct)

    async def python(code: str, ctx: Context) -> str:
        text, failed = await gateway.python(code, str(ctx.request_id), ctx)
        if failed:
            raise ToolError(text)
        return text

    # the SDK reads the signature; this module's annotations are strings
    python.__annotations__ = {"code": str, "ctx": Context, "return": str}
    server.add_tool(python, name="python", description=PYTHON_DESCRIPTION, structured_output=False)

    @server.tool(
        name="search_tools",
        description="Find the tools a python script can call: their identifiers and summaries.",
        structured_output=False,
    )
    def search_tools(query: str) -> str:
        return gateway.search(query)

    @server.tool(
        name="describe_tool",
        description="The Python signature and documentation of one tool (by identifier).",
        structured_output=False,
    )
    def describe_tool(name: str) -> str:
        return gateway.describe(name)

    return server


def _direct_call(gateway: Gateway, upstream: AgentTool, error: Any) -> Callable[..., Any]:
    async def call(arguments: dict[str, Any], ctx: Any) -> str:
        text, failed = await gateway.direct(upstream, arguments, str(ctx.request_id), ctx)
        if failed:
            raise error(text)
        return text

    return call


def _direct_tool(upstream: AgentTool, call: Callable[..., Any]) -> Any:
    """The SDK registration of one ``--expose-direct`` tool.

    It lists the upstream tool's own input schema (and MCP annotations) and
    hands ``call(arguments, ctx)`` the client's arguments untouched: scriptgate's
    validator checks them in the pipeline, as for a script's call. ``MCPServer``
    builds a registration from a function signature only, so this one is made
    from the SDK's public pieces by hand: ``MCPServer(tools=[Tool(...)])``, with a
    ``FuncMetadata`` whose argument model (an ``ArgModelBase``) keeps every
    argument. This is the one place that depends on their shape;
    ``tests/test_serve_direct.py`` fails loudly if the SDK changes it.
    """
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from mcp.types import ToolAnnotations
    from pydantic import ConfigDict

    class AnyArguments(ArgModelBase):
        """Every argument the client sent, as it sent it."""

        model_config = ConfigDict(extra="allow")

        def model_dump_one_level(self) -> dict[str, Any]:
            """All arguments, under the handler's one parameter ``arguments``."""
            return {"arguments": dict(self.model_extra or {})}

    raw_annotations = getattr(upstream, "annotations", None)
    annotations = None
    if isinstance(raw_annotations, Mapping) and raw_annotations:
        with contextlib.suppress(ValueError):
            annotations = ToolAnnotations.model_validate(dict(raw_annotations))
    return Tool(
        fn=call,
        name=upstream.name,
        title=upstream.label if upstream.label != upstream.name else None,
        description=upstream.description or "",
        parameters=dict(upstream.parameters_schema),
        fn_metadata=FuncMetadata(arg_model=AnyArguments),
        is_async=True,
        context_kwarg="ctx",
        annotations=annotations,
    )


# --------------------------------------------------------------------------- command


def register(
    sub: Any, *, add_tool_options: Callable[[argparse.ArgumentParser], None], epilog: str = ""
) -> None:
    """Add the ``serve`` subcommand to ``cli``'s subparsers."""
    serve = sub.add_parser(
        "serve",
        help="serve code mode over MCP tools, as an MCP server",
        description="An MCP server exposing `python` (code mode over every upstream tool), "
        "`search_tools` and `describe_tool`. Upstreams: --mcp, --mcp-config, --tools.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_tool_options(serve)
    serve.add_argument("--policy", metavar="FILE", help="permission policy (TOML)")
    serve.add_argument(
        "--audit", metavar="FILE|-", help="append one JSON line per nested call (- = stderr)"
    )
    serve.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="per-script limit (30)"
    )
    serve.add_argument(
        "--isolation", choices=("in_process", "process"), default="in_process", help="sandbox"
    )
    serve.add_argument(
        "--http", metavar="HOST:PORT", help="serve streamable HTTP (path /mcp) instead of stdio"
    )
    serve.add_argument(
        "--expose-direct",
        action="store_true",
        help="also offer every upstream tool directly, gated the same way",
    )


def _same_tools(a: Sequence[AgentTool], b: Sequence[AgentTool]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigurationError(f"--http {value!r}: expected HOST:PORT")
    return host.strip("[]"), int(port)


async def serve_command(args: argparse.Namespace, io: Any, load_tools: Callable[..., Any]) -> int:
    """Run ``scriptgate serve`` until the client goes away (stdio) or SIGINT (HTTP)."""
    from scriptgate.mcp_options import mcp_configs
    from scriptgate.tools.mcp_paths import declare_mcp_paths
    from scriptgate.tools.mcp_servers import connect_servers

    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        from scriptgate.tools.mcp import MCP_EXTRA_MESSAGE

        raise ConfigurationError(MCP_EXTRA_MESSAGE) from None
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigurationError("--timeout must be positive")
    http = _host_port(args.http) if args.http else None
    policy = Policy.from_toml(Path(args.policy), ask=_elicit_approval) if args.policy else None
    audit_stream: TextIO | None = None
    async with contextlib.AsyncExitStack() as stack:
        if args.audit == "-":
            audit_stream = io.stderr
        elif args.audit is not None:
            try:
                audit_stream = stack.enter_context(open(args.audit, "a", encoding="utf-8"))  # noqa: SIM115, ASYNC230 - once, at start-up
            except OSError as exc:
                raise ConfigurationError(f"--audit {args.audit}: {exc.strerror or exc}") from None
        local = await load_tools(args, stack, mcp=False)
        connections = await stack.enter_async_context(connect_servers(mcp_configs(args)))
        for failure in connections.failures:
            io.stderr.write(f"scriptgate: warning: {failure}\n")
        io.stderr.flush()

        roots = list(getattr(args, "mcp_root", None) or [])
        bound: list[AgentTool] = []

        def tools() -> list[AgentTool]:
            # Upstream tools change (tools/list_changed, a reconnect): each new list gets
            # its path arguments declared and the policy learns its annotations.
            upstream = connections.tools
            if roots:
                declare_mcp_paths(upstream, roots)
            current = [*local, *upstream]
            if policy is not None and not _same_tools(current, bound):
                policy.bind(current, strict=False)
                bound[:] = current
            return current

        names: set[str] = set()
        for item in tools():
            if item.name in names:  # as in `run`: a shadowed tool would be unreachable
                raise ConfigurationError(
                    f"two tools are named {item.name!r}; use --mcp-prefix or rename one"
                )
            names.add(item.name)
        if policy is not None:
            # an error (a rule that can never match as written) refuses to start, exit 2
            for problem in policy.bind(tools()):
                io.stderr.write(f"scriptgate: warning: policy {problem}\n")
            io.stderr.flush()

        gateway = Gateway(
            tools,
            policy=policy,
            audit_stream=audit_stream,
            limits=Limits(timeout=args.timeout),
            isolation=args.isolation,
        )
        server = _build_server(gateway, expose_direct=tools() if args.expose_direct else ())
        if http is None:
            await server.run_stdio_async()
        else:
            await server.run_streamable_http_async(host=http[0], port=http[1])
    return 0
