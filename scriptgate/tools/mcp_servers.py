"""Managed connections to several MCP servers: configuration, concurrency, reconnects.

Owns what sits between "a list of servers a user configured" and "the tools they
offer right now"; the mapping of one session's tools lives in
:mod:`scriptgate.tools.mcp`. Must not import ``sandbox``.

- :class:`McpServerConfig` describes one server: a command (stdio) or a URL
  (streamable HTTP), with env, cwd, headers, a name prefix, a connect timeout
  and ``enabled_tools`` / ``disabled_tools`` filters (exact names or globs).
- :func:`load_mcp_config` reads the ``mcpServers`` JSON that Claude Desktop,
  Claude Code and Cursor use (``command``, ``args``, ``env``, ``cwd``, ``url``,
  ``headers``; plus ``prefix``, ``timeout``, ``enabled_tools``,
  ``disabled_tools``); bad input is one :class:`ConfigurationError` line.
- :class:`McpServer` keeps one server connected: its :attr:`~McpServer.tools`
  follow ``notifications/tools/list_changed``, and after the server dies (a call
  fails with a closed connection) the next call reconnects, up to
  ``max_reconnects`` times in a row. The call that met the crash is not retried.
- :func:`connect_servers` connects many servers concurrently; one that fails is
  reported in :attr:`McpConnections.failures` and the others stay up.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import math
import shlex
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.tool import AgentTool
from scriptgate.tools.mcp import (
    DEFAULT_CONNECT_TIMEOUT,
    READ_RESOURCE,
    McpTool,
    mcp_tools,
    open_http_session,
    open_stdio_session,
    resource_tool,
)

__all__ = [
    "McpConnections",
    "McpServer",
    "McpServerConfig",
    "connect_servers",
    "load_mcp_config",
    "parse_mcp_config",
    "server_from_spec",
]


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: ``command``/``args`` on stdio, or ``url`` over streamable HTTP."""

    name: str
    """How messages and tools name the server (the ``mcpServers`` key)."""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    """Merged over the SDK's safe default environment."""
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None
    prefix: str = ""
    """Prepended to every tool name (the server is called with the original one)."""
    timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds for starting the server and listing its tools."""
    enabled_tools: tuple[str, ...] | None = None
    """When set, only tools whose server-side name matches one of these (globs allowed)."""
    disabled_tools: tuple[str, ...] = ()
    """Tools whose server-side name matches one of these are left out."""

    def describe(self) -> str:
        """``name (command args)`` or ``name (url)``, for messages."""
        target = self.url if self.url else " ".join([self.command or "", *self.args])
        return f"{self.name} ({target})" if self.name and self.name != target else target

    def keeps(self, remote_name: str) -> bool:
        """Whether the tool named ``remote_name`` on the server passes the filters."""
        if self.enabled_tools is not None and not any(
            fnmatch.fnmatchcase(remote_name, p) for p in self.enabled_tools
        ):
            return False
        return not any(fnmatch.fnmatchcase(remote_name, p) for p in self.disabled_tools)


def server_from_spec(spec: str, **options: Any) -> McpServerConfig:
    """A config from a ``--mcp`` value: ``"command args"`` or an ``http(s)://`` URL.

    ``options`` are other :class:`McpServerConfig` fields (``env``, ``cwd``, ...).
    """
    if spec.startswith(("http://", "https://")):
        return McpServerConfig(name=options.pop("name", spec), url=spec, **options)
    try:
        words = shlex.split(spec)
    except ValueError as exc:
        raise ConfigurationError(f"--mcp {spec!r}: {exc}") from None
    if not words:
        raise ConfigurationError("--mcp: empty command")
    return McpServerConfig(
        name=options.pop("name", spec), command=words[0], args=tuple(words[1:]), **options
    )


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{what} must be a list of strings")
    return tuple(value)


def _string_map(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigurationError(f"{what} must be an object of strings")
    return dict(value)


_KNOWN_KEYS = frozenset(
    {
        "command", "args", "env", "cwd", "url", "headers", "prefix", "timeout",
        "enabled_tools", "disabled_tools", "type", "transport", "disabled",
    }
)  # fmt: skip


def parse_mcp_config(data: Any, *, source: str = "config") -> list[McpServerConfig]:
    """The servers of an ``mcpServers`` JSON document (already parsed), in file order.

    A server with ``"disabled": true`` is skipped. Unknown keys are refused, so a
    typo is not silently ignored.
    """
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise ConfigurationError(f'{source}: expected an object with an "mcpServers" object')
    servers: list[McpServerConfig] = []
    for name, entry in data["mcpServers"].items():
        where = f"{source}: mcpServers.{name}"
        if not isinstance(entry, dict):
            raise ConfigurationError(f"{where} must be an object")
        unknown = sorted(set(entry) - _KNOWN_KEYS)
        if unknown:
            raise ConfigurationError(f"{where}: unknown key {unknown[0]!r}")
        if entry.get("disabled") is True:
            continue
        command, url = entry.get("command"), entry.get("url")
        if (command is None) == (url is None):
            raise ConfigurationError(f'{where} needs exactly one of "command" and "url"')
        if command is not None and (not isinstance(command, str) or not command):
            raise ConfigurationError(f"{where}.command must be a non-empty string")
        if url is not None and (
            not isinstance(url, str) or not url.startswith(("http://", "https://"))
        ):
            raise ConfigurationError(f"{where}.url must be an http(s) URL")
        timeout = entry.get("timeout", DEFAULT_CONNECT_TIMEOUT)
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise ConfigurationError(f"{where}.timeout must be a positive number of seconds")
        prefix = entry.get("prefix", "")
        if not isinstance(prefix, str):
            raise ConfigurationError(f"{where}.prefix must be a string")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigurationError(f"{where}.cwd must be a string")
        enabled = entry.get("enabled_tools")
        servers.append(
            McpServerConfig(
                name=str(name),
                command=command,
                args=_strings(entry.get("args", []), f"{where}.args"),
                env=_string_map(entry["env"], f"{where}.env") if "env" in entry else None,
                cwd=cwd,
                url=url,
                headers=_string_map(entry["headers"], f"{where}.headers")
                if "headers" in entry
                else None,
                prefix=prefix,
                timeout=float(timeout),
                enabled_tools=_strings(enabled, f"{where}.enabled_tools")
                if enabled is not None
                else None,
                disabled_tools=_strings(entry.get("disabled_tools", []), f"{where}.disabled_tools"),
            )
        )
    return servers


def load_mcp_config(path: str | Path) -> list[McpServerConfig]:
    """The servers of an ``mcpServers`` JSON file (see :func:`parse_mcp_config`)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    return parse_mcp_config(data, source=str(path))


def _is_connection_loss(exc: BaseException) -> bool:
    if isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream | OSError
    ):
        return True
    text = str(getattr(getattr(exc, "error", None), "message", "") or exc).lower()
    return "connection closed" in text or ("closed" in text and "connection" in text)


class McpServer:
    """One MCP server kept connected; run it with :meth:`run` in a task group.

    ``await task_group.start(server.run)`` returns once the server is connected
    (or raises :class:`ConfigurationError`); :meth:`close` stops it. Its
    :attr:`tools` call whichever session is current.
    """

    def __init__(
        self,
        config: McpServerConfig,
        *,
        errlog: Any = None,
        max_reconnects: int = 3,
        on_tools_changed: Callable[[McpServer], object] | None = None,
    ) -> None:
        self.config = config
        self.errlog = errlog
        self.max_reconnects = max_reconnects
        self.on_tools_changed = on_tools_changed
        self.tools: list[McpTool] = []
        """The server's current tools (after the config's filters)."""
        self.error: str | None = None
        """Why the server is down for good, once it is."""
        self.reconnects = 0
        """How many times the server was reconnected."""
        self._session: Any = None
        self._ready = anyio.Event()
        self._lost = anyio.Event()
        self._closing = False
        self._tg: anyio.abc.TaskGroup | None = None

    # -- the SessionLink protocol of scriptgate.tools.mcp ---------------------------

    async def session(self) -> Any:
        """The current session, waiting for a reconnect in progress."""
        with anyio.fail_after(self.config.timeout + 5):
            await self._ready.wait()
        if self._session is None:
            raise ConfigurationError(
                f"MCP server {self.config.describe()} is unavailable: {self.error or 'closed'}"
            )
        return self._session

    def lost(self, session: Any, exc: BaseException) -> None:
        """A call on ``session`` failed with ``exc``; reconnect if the connection is gone."""
        if session is self._session and _is_connection_loss(exc):
            self._session = None
            self._ready = anyio.Event()
            self._lost.set()

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        """Stop the server (the :meth:`run` task ends after closing the session)."""
        self._closing = True
        self._lost.set()

    def _stopped(self) -> bool:
        return self._closing

    def _open(self) -> contextlib.AbstractAsyncContextManager[tuple[Any, list[McpTool]]]:
        c = self.config
        if c.url is not None:
            return open_http_session(
                c.url,
                headers=c.headers,
                prefix=c.prefix,
                connect_timeout=c.timeout,
                message_handler=self._on_message,
                session_source=self,
                server=c.name,
            )
        return open_stdio_session(
            c.command or "",
            c.args,
            c.env,
            cwd=c.cwd,
            prefix=c.prefix,
            connect_timeout=c.timeout,
            errlog=self.errlog,
            message_handler=self._on_message,
            session_source=self,
            server=c.name,
        )

    def _filter(self, tools: Sequence[McpTool]) -> list[McpTool]:
        kept = [t for t in tools if self.config.keeps(t.remote_name)]
        capabilities = getattr(self._session, "server_capabilities", None)
        if (
            getattr(capabilities, "resources", None) is not None
            and self.config.keeps(READ_RESOURCE)
            and not any(t.remote_name == READ_RESOURCE for t in tools)
        ):
            kept.append(resource_tool(self, prefix=self.config.prefix, server=self.config.name))
        return kept

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Connect, serve calls, reconnect after a crash; return after :meth:`close`."""
        started = False
        failures = 0
        start_error: ConfigurationError | None = None
        async with anyio.create_task_group() as tg:
            self._tg = tg
            while not self._stopped():
                self._lost = anyio.Event()
                try:
                    async with self._open() as (session, tools):
                        self._session = session
                        self.tools = self._filter(tools)
                        self.error = None
                        failures = 0
                        self._ready.set()
                        if not started:
                            started = True
                            task_status.started()
                        elif self.on_tools_changed is not None:
                            self.on_tools_changed(self)
                        await self._lost.wait()
                        self._session = None
                except ConfigurationError as exc:
                    if not started:
                        start_error = exc
                        break
                    failures += 1
                    self.error = str(exc)
                except Exception as exc:  # the transport broke while closing a dead session
                    self.error = str(exc) or type(exc).__name__
                if self._stopped() or failures >= self.max_reconnects:
                    break
                self.reconnects += 1
            self._session = None
            self._ready.set()  # waiting calls see "unavailable" instead of hanging
            tg.cancel_scope.cancel()
        if start_error is not None:
            raise start_error

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed" and self._tg is not None:
            self._tg.start_soon(self._relist)
        await anyio.lowlevel.checkpoint()

    async def _relist(self) -> None:
        try:
            tools = await mcp_tools(self, prefix=self.config.prefix, server=self.config.name)
        except Exception:
            return  # a later call will meet (and report) the broken connection
        self.tools = self._filter(tools)
        if self.on_tools_changed is not None:
            self.on_tools_changed(self)


@dataclass
class McpConnections:
    """The servers :func:`connect_servers` connected, and the ones that failed."""

    servers: list[McpServer] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    """One line per server that could not be connected."""

    @property
    def tools(self) -> list[AgentTool]:
        """The current tools of every connected server, in configuration order."""
        return [t for server in self.servers for t in server.tools]


@contextlib.asynccontextmanager
async def connect_servers(
    configs: Sequence[McpServerConfig],
    *,
    errlog: Any = None,
    max_reconnects: int = 3,
    on_tools_changed: Callable[[McpServer], object] | None = None,
) -> AsyncIterator[McpConnections]:
    """Connect every server concurrently and yield the ones that came up.

    A server that fails to start is reported in ``failures`` (one line each) and
    does not stop the others. All servers are stopped when the block exits.
    """
    connections = McpConnections()
    slots: list[McpServer | None] = [None] * len(configs)
    failures: list[str | None] = [None] * len(configs)
    async with anyio.create_task_group() as tg:

        async def start(index: int, config: McpServerConfig) -> None:
            server = McpServer(
                config,
                errlog=errlog,
                max_reconnects=max_reconnects,
                on_tools_changed=on_tools_changed,
            )
            try:
                await tg.start(server.run)
            except ConfigurationError as exc:
                failures[index] = str(exc)
            else:
                slots[index] = server

        async with anyio.create_task_group() as starting:
            for index, config in enumerate(configs):
                starting.start_soon(start, index, config)
        connections.servers = [s for s in slots if s is not None]
        connections.failures = [f for f in failures if f is not None]
        try:
            yield connections
        finally:
            for server in connections.servers:
                server.close()
