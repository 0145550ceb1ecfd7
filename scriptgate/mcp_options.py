"""The MCP command-line options shared by ``scriptgate run/check/stubs`` and ``scriptgate serve``.

Owns the parsing of ``--mcp`` and the options that qualify it (``--mcp-env``,
``--mcp-cwd``, ``--mcp-header``, ``--mcp-prefix``, ``--mcp-timeout``), of
``--mcp-config FILE`` (``mcpServers`` JSON), and turning them into
:class:`~scriptgate.tools.mcp_servers.McpServerConfig` objects. It sits on top
of ``tools`` (like ``cli``) and must not import ``sandbox``.

A qualifying option applies to the ``--mcp`` before it::

    scriptgate run s.py --mcp "uvx mcp-server-git" --mcp-env GIT_DIR=/repo --mcp-prefix git_
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from scriptgate.errors import ConfigurationError

__all__ = ["add_mcp_options", "mcp_configs"]

_DEST = "mcp_servers"


class _McpAction(argparse.Action):
    """``--mcp SPEC``: starts a new server entry."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        entries = list(getattr(ns, _DEST, None) or [])
        entries.append({"spec": str(value)})
        setattr(ns, _DEST, entries)
        mcp = list(getattr(ns, "mcp", None) or [])
        mcp.append(str(value))
        ns.mcp = mcp


class _QualifierAction(argparse.Action):
    """An option that qualifies the last ``--mcp``."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        entries = getattr(ns, _DEST, None) or []
        if not entries:
            parser.error(f"{opt} must follow the --mcp it applies to")
        entry = entries[-1]
        text = str(value)
        if self.dest == "mcp_env":
            key, sep, val = text.partition("=")
            if not sep or not key:
                parser.error(f"{opt} {text!r}: expected KEY=VALUE")
            entry.setdefault("env", {})[key] = val
        elif self.dest == "mcp_header":
            key, sep, val = text.partition(":")
            if not sep or not key.strip():
                parser.error(f"{opt} {text!r}: expected 'Name: value'")
            entry.setdefault("headers", {})[key.strip()] = val.strip()
        elif self.dest == "mcp_timeout":
            try:
                seconds = float(text)
            except ValueError:
                seconds = math.nan
            if not math.isfinite(seconds) or seconds <= 0:
                parser.error(f"{opt} {text!r}: expected a positive number of seconds")
            entry["timeout"] = seconds
        else:
            entry[self.dest.removeprefix("mcp_")] = text


def add_mcp_options(group: Any) -> None:
    """Add ``--mcp`` and its qualifiers, ``--mcp-config`` and ``--files`` to an argparse group."""
    group.add_argument(
        "--mcp",
        action=_McpAction,
        default=[],
        metavar='"CMD ARGS"|URL',
        help="add the tools of an MCP server: a command started on stdio, or an http(s) URL "
        "(repeatable; the --mcp-* options after it apply to it)",
    )
    group.add_argument(
        "--mcp-env", action=_QualifierAction, metavar="KEY=VALUE", help="environment variable"
    )
    group.add_argument(
        "--mcp-cwd", action=_QualifierAction, metavar="DIR", help="working directory"
    )
    group.add_argument(
        "--mcp-header", action=_QualifierAction, metavar="'NAME: VALUE'", help="HTTP header"
    )
    group.add_argument(
        "--mcp-prefix", action=_QualifierAction, metavar="PREFIX", help="prefix of its tool names"
    )
    group.add_argument(
        "--mcp-timeout",
        action=_QualifierAction,
        metavar="SECONDS",
        help="connect timeout (default 30)",
    )
    group.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE",
        help='MCP servers from a JSON file in the "mcpServers" format of Claude Desktop, '
        "Claude Code and Cursor (repeatable)",
    )
    group.add_argument(
        "--files",
        action="store_true",
        help="add the built-in file tools even when MCP servers are given",
    )


def wants_file_tools(args: argparse.Namespace) -> bool:
    """Whether the built-in file tools are added: by default only when no MCP server is given."""
    if getattr(args, "no_files", False):
        return False
    if getattr(args, "files", False):
        return True
    return not (getattr(args, _DEST, None) or getattr(args, "mcp_config", None))


def mcp_configs(args: argparse.Namespace) -> list[Any]:
    """The :class:`~scriptgate.tools.mcp_servers.McpServerConfig` of every server, in order.

    Config files first, then ``--mcp`` options. Raises :class:`ConfigurationError`
    (one line) for bad input.
    """
    from scriptgate.tools.mcp_servers import load_mcp_config, server_from_spec

    configs: list[Any] = []
    for path in getattr(args, "mcp_config", None) or []:
        configs.extend(load_mcp_config(path))
    entries: Sequence[dict[str, Any]] = getattr(args, _DEST, None) or []
    for entry in entries:
        options = {k: v for k, v in entry.items() if k != "spec"}
        configs.append(server_from_spec(entry["spec"], **options))
    names = [c.name for c in configs]
    for name in names:
        if names.count(name) > 1:
            raise ConfigurationError(f"two MCP servers are named {name!r}")
    return configs
