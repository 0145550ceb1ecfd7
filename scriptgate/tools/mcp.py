"""Tools of an MCP server as :class:`~scriptgate.runtime.tool.AgentTool` objects.

Built on the official ``mcp`` Python SDK, an optional extra
(``pip install 'scriptgate[mcp]'``); it is imported lazily, so the core
install works without it.

- :func:`mcp_tools` lists the tools of an initialised ``mcp.ClientSession``.
  Each tool's ``inputSchema`` becomes ``parameters`` untouched, so arguments go
  through scriptgate's coercing validator like any other tool's (a dangling
  ``$ref`` fails only a value present at that place, pi §2.4); its
  ``outputSchema`` becomes ``output_schema``; its ``annotations``
  (``readOnlyHint``, ``destructiveHint``, ...) become ``annotations``, which
  policies may match. Path arguments are declared separately, under the roots
  the host names (:func:`scriptgate.tools.mcp_paths.declare_mcp_paths`).
- A call maps the ``CallToolResult``: text blocks → :class:`TextContent`,
  images → :class:`ImageContent`, other blocks (audio, resources, resource
  links) → a text rendering; ``structuredContent`` → ``structured_content``;
  ``isError`` → ``is_error``. When a result mixes images with text, each image
  also leaves a ``[image: <type>, <n> bytes]`` placeholder in the text, so a
  script (which sees only text) knows it was there. A protocol error (unknown
  tool, lost connection) raises, and the pipeline turns it into an error result.
- Each tool is an :class:`McpTool`: its ``annotations`` mapping holds the MCP
  tool annotations (``readOnlyHint``, ``destructiveHint``, ...) for policies.
  Progress notifications of a call are forwarded to ``on_update``.
- A tool the SDK refuses to parse (no ``inputSchema``, say) is listed from the
  raw answer with an empty-object schema instead of failing the connection.
- A server that prints a banner on stdout costs one warning line on stderr,
  not the SDK's traceback.
- :func:`connect_stdio` / :func:`connect_http` start or reach a server and
  yield its tools for the duration of an ``async with`` block. A server that
  cannot be started or reached raises
  :class:`~scriptgate.errors.ConfigurationError` with a one-line message.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import tempfile
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import AgentToolResult, Content, ImageContent, TextContent

__all__ = [
    "MCP_EXTRA_MESSAGE",
    "McpTool",
    "McpToolError",
    "connect_http",
    "connect_stdio",
    "mcp_http_tools",
    "mcp_stdio_tools",
    "mcp_tools",
    "open_http_session",
    "open_stdio_session",
    "resource_tool",
    "result_from_mcp",
]

MCP_EXTRA_MESSAGE = "MCP support needs the optional extra: pip install 'scriptgate[mcp]'"
"""The :class:`ConfigurationError` text when the ``mcp`` package is missing."""

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds allowed for starting a server and completing ``initialize`` + ``tools/list``."""


HTTP_TIMEOUT = 30.0
"""Seconds for connecting to / writing to a streamable-HTTP server (the SDK's default)."""

HTTP_READ_TIMEOUT = 300.0
"""Seconds a streamable-HTTP response stream may stay silent (the SDK's default)."""


class McpToolError(Exception):
    """An MCP call failed at the protocol level; ``str()`` is the model-facing text."""


def _require_mcp() -> Any:
    try:
        import mcp
    except ImportError as exc:
        raise ConfigurationError(MCP_EXTRA_MESSAGE) from exc
    return mcp


def _wire(model: Any) -> dict[str, Any]:
    """The JSON (camelCase) form of an SDK model, whatever the SDK's field names."""
    if isinstance(model, Mapping):
        return dict(model)
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped if isinstance(dumped, dict) else {}


def _render_block(block: Mapping[str, Any]) -> Content:
    kind = block.get("type")
    if kind == "text":
        return TextContent(str(block.get("text", "")))
    if kind == "image":
        return ImageContent(str(block.get("data", "")), str(block.get("mimeType", "")))
    if kind == "audio":
        data = str(block.get("data", ""))
        size = len(base64.b64decode(data, validate=False)) if data else 0
        return TextContent(f"[audio: {block.get('mimeType', 'unknown type')}, {size} bytes]")
    if kind == "resource":
        resource = block.get("resource")
        resource = resource if isinstance(resource, Mapping) else {}
        uri = resource.get("uri", "")
        if isinstance(resource.get("text"), str):
            return TextContent(f"[resource: {uri}]\n{resource['text']}")
        mime = resource.get("mimeType", "application/octet-stream")
        blob = str(resource.get("blob", ""))
        size = len(base64.b64decode(blob, validate=False)) if blob else 0
        return TextContent(f"[resource: {uri} ({mime}, {size} bytes)]")
    if kind == "resource_link":
        name = block.get("name") or block.get("title") or ""
        label = f"{name} " if name else ""
        return TextContent(f"[resource link: {label}{block.get('uri', '')}]")
    return TextContent(json.dumps(dict(block), ensure_ascii=False, sort_keys=True))


def _image_placeholder(block: Mapping[str, Any]) -> TextContent:
    data = str(block.get("data", ""))
    try:
        size = len(base64.b64decode(data, validate=False)) if data else 0
    except ValueError:
        size = 0
    return TextContent(f"[image: {block.get('mimeType', 'unknown type')}, {size} bytes]")


def result_from_mcp(result: Any) -> AgentToolResult:
    """Map an MCP ``CallToolResult`` (an SDK model or its JSON dict) to an :class:`AgentToolResult`."""
    data = _wire(result)
    blocks = [block for block in (data.get("content") or []) if isinstance(block, Mapping)]
    mixed = any(block.get("type") != "image" for block in blocks)
    rendered: list[Content] = []
    for block in blocks:
        rendered.append(_render_block(block))
        if mixed and block.get("type") == "image":
            rendered.append(_image_placeholder(block))
    content = tuple(rendered)
    meta = data.get("_meta")
    return AgentToolResult(
        content=content,
        details={"_meta": meta} if meta is not None else None,
        structured_content=data.get("structuredContent"),
        is_error=bool(data.get("isError", False)),
    )


def _error_text(exc: BaseException) -> str:
    """A one-line description of an exception, unwrapping groups and SDK errors."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None)
    text = message if isinstance(message, str) and message else str(exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first


class McpTool(AgentTool):
    """An :class:`AgentTool` that calls a tool of an MCP server.

    ``remote_name`` is the tool's name on the server (``name`` may carry a
    prefix); ``annotations`` holds its MCP annotations in wire form
    (``{"readOnlyHint": True, ...}``, empty when the server gave none);
    ``server`` names the server it came from (``""`` when unnamed).
    """

    remote_name: str
    annotations: Mapping[str, Any]
    server: str


SessionSource = Any
"""An ``mcp.ClientSession``, or a link to the current one: an object with
``async session() -> ClientSession`` and ``lost(session, exc)`` (told when a call
on that session failed at the protocol level), as
:class:`~scriptgate.tools.mcp_servers.McpServer` is."""


async def _current(source: SessionSource) -> Any:
    return source if hasattr(source, "call_tool") else await source.session()


def _make_tool(
    session: SessionSource, spec: Mapping[str, Any], name: str, server: str = ""
) -> McpTool:
    remote_name = str(spec.get("name", name))
    input_schema = spec.get("inputSchema")
    if not isinstance(input_schema, Mapping):
        input_schema = {"type": "object"}
    output_schema = spec.get("outputSchema")
    annotations = spec.get("annotations")
    title = spec.get("title")
    if not title and isinstance(annotations, Mapping):
        title = annotations.get("title")

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        arguments = dict(params) if isinstance(params, Mapping) else {}
        result: Any = None
        progress: Any = None
        if on_update is not None:
            update = on_update

            async def progress(value: float, total: float | None, message: str | None) -> None:
                of = f"/{total:g}" if total is not None else ""
                text = f"progress {value:g}{of}" + (f": {message}" if message else "")
                update(AgentToolResult(content=(TextContent(text),)))

        with anyio.CancelScope() as scope:
            remove = signal.add_listener(lambda _r: scope.cancel()) if signal else None
            current: Any = None
            try:
                current = await _current(session)
                result = await _call_tool(current, remote_name, arguments, progress)
            except Exception as exc:
                lost = getattr(session, "lost", None)
                if current is not None and lost is not None:
                    lost(current, exc)
                raise McpToolError(f'MCP tool "{remote_name}" failed: {_error_text(exc)}') from exc
            finally:
                if remove is not None:
                    remove()
        if scope.cancelled_caught or result is None:
            raise McpToolError("Operation aborted")
        return result_from_mcp(result)

    made = McpTool(
        name=name,
        label=str(title) if title else name,
        description=str(spec.get("description") or ""),
        parameters=dict(input_schema),
        output_schema=dict(output_schema) if isinstance(output_schema, Mapping) else None,
        execute=execute,
        annotations=dict(annotations) if isinstance(annotations, Mapping) else None,
    )
    made.remote_name = remote_name
    made.annotations = dict(annotations) if isinstance(annotations, Mapping) else {}
    made.server = server
    return made


_RAW_CHANNELS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
"""The JSON-RPC dispatcher under each session this module built (see :func:`_client_session`)."""

_RAW_LISTED: weakref.WeakSet[Any] = weakref.WeakSet()
"""Sessions whose ``tools/list`` answer had to be read raw (see :func:`_call_tool`)."""


def _client_session(mcp: Any, streams: Sequence[Any], message_handler: Any) -> Any:
    """An ``mcp.ClientSession`` over a transport's streams, on a dispatcher we hold.

    ``ClientSession(dispatcher=...)`` and ``JSONRPCDispatcher.send_raw_request``
    are public SDK API; holding the dispatcher lets :func:`_list_page` re-read a
    ``tools/list`` answer the SDK's models refuse without touching the session's
    private attributes.
    """
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    dispatcher = JSONRPCDispatcher(streams[0], streams[1])
    session = mcp.ClientSession(message_handler=message_handler, dispatcher=dispatcher)
    _RAW_CHANNELS[session] = dispatcher
    return session


async def _list_page(
    session: Any, mcp: Any, cursor: str | None, dispatcher: Any = None
) -> dict[str, Any]:
    """One ``tools/list`` page as JSON; a page the SDK refuses to parse is read raw."""
    params = mcp.types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
    try:
        if params is None:
            return _wire(await session.list_tools())
        return _wire(await session.list_tools(params=params))
    except Exception as exc:
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        raw_channel = dispatcher if dispatcher is not None else _RAW_CHANNELS.get(session)
        if raw_channel is None:
            raise McpToolError(
                "the server's tools/list answer does not parse "
                f"({_error_text(exc)}); pass the session's dispatcher to mcp_tools() "
                "to read it as it is"
            ) from None
        raw = await raw_channel.send_raw_request(
            "tools/list", {"cursor": cursor} if cursor is not None else None, {}
        )
        # The SDK's call_tool re-lists a tool it has not seen listed before checking
        # its result, and would fail on this listing again: calls go round it.
        _RAW_LISTED.add(session)
        return dict(raw) if isinstance(raw, Mapping) else {}


async def _call_tool(session: Any, name: str, arguments: dict[str, Any], progress: Any) -> Any:
    """``tools/call`` on ``session``; the SDK's ``call_tool`` unless its listing was read raw.

    After a raw listing, the request goes through the public ``send_request``
    with ``CallToolResult`` as the result type: the same request, without the
    SDK's re-listing (which cannot parse that server's tools).
    """
    if session not in _RAW_LISTED:
        if progress is None:
            return await session.call_tool(name, arguments)
        return await session.call_tool(name, arguments, progress_callback=progress)
    import mcp.types as types

    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments=arguments)
    )
    return await session.send_request(request, types.CallToolResult, progress_callback=progress)


async def mcp_tools(
    session: SessionSource,
    *,
    prefix: str = "",
    server: str = "",
    link: SessionSource = None,
    dispatcher: Any = None,
) -> list[McpTool]:
    """The tools of an initialised ``mcp.ClientSession`` as :class:`AgentTool` objects.

    Follows ``tools/list`` pagination. ``prefix`` is prepended to each tool's
    name (``prefix="github_"`` → ``github_search``); the server is always called
    with the original name. Calls run on ``session``, which must stay open
    while the tools are used, or on ``link`` (see :data:`SessionSource`) when
    given; ``server`` is recorded on each tool.

    A listing the SDK's models refuse (a tool without ``inputSchema``, say) is
    read raw through the session's JSON-RPC dispatcher: the one under sessions
    that :func:`connect_stdio`/:func:`connect_http` open, or ``dispatcher`` (the
    ``JSONRPCDispatcher`` a caller built its ``ClientSession(dispatcher=...)`` on).
    """
    mcp = _require_mcp()
    specs: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    current = await _current(session)
    while True:
        data = await _list_page(current, mcp, cursor, dispatcher)
        specs.extend(
            t
            for t in data.get("tools", [])
            if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"]
        )
        cursor = data.get("nextCursor")
        if not cursor or cursor in seen:
            break
        seen.add(cursor)
    caller = session if link is None else link
    return [_make_tool(caller, spec, f"{prefix}{spec['name']}", server) for spec in specs]


READ_RESOURCE = "read_resource"
"""The name (after the prefix) of the tool that follows resource links of a server."""


def resource_tool(session: SessionSource, *, prefix: str = "", server: str = "") -> McpTool:
    """A tool ``<prefix>read_resource(uri)`` that reads a resource of the server.

    It lets a script follow the ``[resource link: ... <uri>]`` a tool returned:
    text contents come back as text, binary ones as a ``[resource: ...]`` line.
    """

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        uri = str(params.get("uri", "")) if isinstance(params, Mapping) else ""
        current: Any = None
        try:
            current = await _current(session)
            result = _wire(await current.read_resource(uri))
        except Exception as exc:
            lost = getattr(session, "lost", None)
            if current is not None and lost is not None:
                lost(current, exc)
            raise McpToolError(f"Reading resource {uri} failed: {_error_text(exc)}") from exc
        texts: list[str] = []
        for item in result.get("contents", []):
            if isinstance(item, Mapping) and isinstance(item.get("text"), str):
                texts.append(str(item["text"]))
            elif isinstance(item, Mapping):
                block = _render_block({"type": "resource", "resource": item})
                texts.append(block.text if isinstance(block, TextContent) else "")
        return AgentToolResult(content=tuple(TextContent(t) for t in texts))

    made = McpTool(
        name=f"{prefix}{READ_RESOURCE}",
        description="Read a resource of this MCP server by URI (follows resource links).",
        parameters={
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource URI."}},
            "required": ["uri"],
        },
        execute=execute,
    )
    made.remote_name = READ_RESOURCE
    made.annotations = {"readOnlyHint": True}
    made.server = server
    return made


class _OneLineParseErrors(logging.Filter):
    """Turns the SDK's traceback for a non-JSON stdout line (a banner) into one warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and "JSONRPC" in str(record.msg):
            exc = record.exc_info[1]
            errors = getattr(exc, "errors", None)
            line = ""
            if callable(errors):
                with contextlib.suppress(Exception):
                    line = str(errors()[0].get("input", ""))[:80]
            record.msg = "scriptgate: an MCP server wrote a line that is not JSON-RPC on stdout (ignored): %r"
            record.args = (line,)
            record.exc_info = None
            record.exc_text = None
        return True


_PARSE_FILTER = _OneLineParseErrors()


def _quiet_banner_tracebacks() -> None:
    logger = logging.getLogger("mcp.client.stdio")
    if _PARSE_FILTER not in logger.filters:
        logger.addFilter(_PARSE_FILTER)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _reraise_body_error(exc: BaseException, body_error: BaseException | None) -> None:
    """Unwrap the exception groups the SDK's task groups put around the caller's own error."""
    if body_error is not None and exc is not body_error and _leaves(exc) == [body_error]:
        raise body_error.with_traceback(body_error.__traceback__) from None


def _failure_reason(exc: BaseException, timeout: float) -> str:
    failures: list[BaseException] = [
        leaf for leaf in _leaves(exc) if isinstance(leaf, Exception)
    ] or [exc]
    first = failures[0]
    if isinstance(first, TimeoutError):
        return f"no answer within {timeout:g} s"
    return _error_text(first)


def _stderr_tail(errlog: Any) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1] if lines else ""


@contextlib.asynccontextmanager
async def open_stdio_session(
    command: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    prefix: str = "",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    errlog: Any = None,
    message_handler: Any = None,
    session_source: SessionSource = None,
    server: str = "",
) -> AsyncIterator[tuple[Any, list[McpTool]]]:
    """Like :func:`connect_stdio`, but yields ``(session, tools)``.

    ``message_handler`` receives the server's notifications (SDK
    ``message_handler``); the tools call ``session_source`` (default: this
    session), so a supervisor can swap the session under them.
    """
    mcp = _require_mcp()
    from mcp.client.stdio import StdioServerParameters, stdio_client

    _quiet_banner_tracebacks()
    params = StdioServerParameters(
        command=command,
        args=list(args),
        env=dict(env) if env is not None else None,
        cwd=os.fspath(cwd) if cwd is not None else None,
    )
    described = " ".join([command, *args])
    own_errlog = errlog is None
    # Closed in the ``finally`` below, after the server process is gone.
    log: Any = tempfile.TemporaryFile("w+", encoding="utf-8") if own_errlog else errlog  # noqa: SIM115
    connected = False
    body_error: BaseException | None = None
    try:
        async with contextlib.AsyncExitStack() as stack:
            # Context managers are entered outside the timeout scope: their task
            # groups must not be nested inside a scope that closes before them.
            streams = await stack.enter_async_context(stdio_client(params, errlog=log))
            session = await stack.enter_async_context(
                _client_session(mcp, streams, message_handler)
            )
            with anyio.fail_after(connect_timeout):
                await session.initialize()
                tools = await mcp_tools(session, prefix=prefix, server=server, link=session_source)
            connected = True
            try:
                yield session, tools
            except BaseException as exc:
                body_error = exc
                raise
    except BaseException as exc:
        if connected:
            _reraise_body_error(exc, body_error)
            raise
        if not isinstance(exc, Exception):
            raise
        reason = _failure_reason(exc, connect_timeout)
        tail = _stderr_tail(log) if own_errlog else ""
        suffix = f" (server said: {tail})" if tail and tail not in reason else ""
        raise ConfigurationError(
            f"Could not start MCP server `{described}`: {reason}{suffix}"
        ) from exc
    finally:
        if own_errlog:
            log.close()


@contextlib.asynccontextmanager
async def connect_stdio(
    command: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    prefix: str = "",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    errlog: Any = None,
) -> AsyncIterator[list[McpTool]]:
    """Start an MCP server as a subprocess (stdio transport) and yield its tools.

    ``async with connect_stdio("python", ["server.py"]) as tools: ...`` — the
    session stays open for the block and the server is stopped after it.
    ``env`` is merged over the SDK's safe default environment. The server's
    stderr goes to ``errlog`` (a file object with a descriptor) or, by default,
    to a temporary file whose last line is quoted if start-up fails.

    Raises :class:`~scriptgate.errors.ConfigurationError` (one line) if the
    command cannot be started, exits, or does not complete the handshake within
    ``connect_timeout`` seconds.
    """
    async with open_stdio_session(
        command,
        args,
        env,
        cwd=cwd,
        prefix=prefix,
        connect_timeout=connect_timeout,
        errlog=errlog,
    ) as (_session, tools):
        yield tools


@contextlib.asynccontextmanager
async def open_http_session(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    prefix: str = "",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    message_handler: Any = None,
    session_source: SessionSource = None,
    server: str = "",
) -> AsyncIterator[tuple[Any, list[McpTool]]]:
    """Like :func:`connect_http`, but yields ``(session, tools)`` (see :func:`open_stdio_session`)."""
    mcp = _require_mcp()
    import mcp.client.streamable_http as transport

    connected = False
    body_error: BaseException | None = None
    try:
        async with contextlib.AsyncExitStack() as stack:
            if hasattr(transport, "streamable_http_client"):
                http_client = None
                if headers:
                    # the transport's documented way to send headers: a client of our own
                    import httpx2

                    http_client = await stack.enter_async_context(
                        httpx2.AsyncClient(
                            headers=dict(headers),
                            timeout=httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT),
                        )
                    )
                streams = await stack.enter_async_context(
                    transport.streamable_http_client(url, http_client=http_client)
                )
            else:  # pragma: no cover - mcp 1.x
                legacy: Any = getattr(transport, "streamablehttp_client")  # noqa: B009 - typed for 2.x
                streams = await stack.enter_async_context(legacy(url, headers=dict(headers or {})))
            session = await stack.enter_async_context(
                _client_session(mcp, streams, message_handler)
            )
            with anyio.fail_after(connect_timeout):
                await session.initialize()
                tools = await mcp_tools(session, prefix=prefix, server=server, link=session_source)
            connected = True
            try:
                yield session, tools
            except BaseException as exc:
                body_error = exc
                raise
    except BaseException as exc:
        if connected:
            _reraise_body_error(exc, body_error)
            raise
        if not isinstance(exc, Exception):
            raise
        reason = _failure_reason(exc, connect_timeout)
        raise ConfigurationError(f"Could not connect to MCP server at {url}: {reason}") from exc


@contextlib.asynccontextmanager
async def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    prefix: str = "",
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> AsyncIterator[list[McpTool]]:
    """Connect to an MCP server over streamable HTTP and yield its tools.

    ``async with connect_http("http://127.0.0.1:8000/mcp") as tools: ...`` —
    the session stays open for the block. ``headers`` are sent with every
    request (e.g. ``Authorization``).

    Raises :class:`~scriptgate.errors.ConfigurationError` (one line) if the
    server cannot be reached or does not complete the handshake within
    ``connect_timeout`` seconds.
    """
    async with open_http_session(
        url, headers=headers, prefix=prefix, connect_timeout=connect_timeout
    ) as (_session, tools):
        yield tools


mcp_stdio_tools = connect_stdio
"""Alias of :func:`connect_stdio`."""

mcp_http_tools = connect_http
"""Alias of :func:`connect_http`."""
