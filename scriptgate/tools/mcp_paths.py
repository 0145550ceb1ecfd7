"""Path arguments of MCP tools: which ones are paths, and how they resolve under declared roots.

This module owns the rule that turns an MCP tool's input schema into a
:class:`~scriptgate.runtime.paths.PathArguments` declaration (it never talks to a
server and does not import the ``mcp`` SDK). :mod:`scriptgate.tools.mcp` builds
the tools; :func:`declare_mcp_paths` adds the declarations to them.

The rule
--------
An MCP server does not say where its files live, so paths are recognised only
for servers whose **roots** the host declares (for the reference filesystem
server: the directories it was started with). Then a top-level property is a
path argument when its schema says ``"format": "path"``, or — the filesystem
server's convention — when it is named ``path``, ``paths``, ``source`` or
``destination``; either way its type must be a string or an array of strings.
``format: "uri"`` is *not* a path: URIs are mostly URLs, which policies match
as plain text.

A value resolves like a file tool's: a relative path is taken under the first
root, symbolic links are followed (the server runs on this machine), and the
real path must be inside one of the roots, or the call is refused before the
policy sees it. The server receives the **absolute** real path; the policy
matches relative patterns against the path relative to the root it is in, and
absolute patterns against the real absolute path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.paths import PathArguments, ResolvedPath
from scriptgate.runtime.tool import AgentTool

__all__ = ["MCP_PATH_NAMES", "McpPathError", "declare_mcp_paths", "mcp_path_arguments"]

MCP_PATH_NAMES = frozenset({"path", "paths", "source", "destination"})
"""Property names the filesystem MCP server uses for paths."""


class McpPathError(Exception):
    """A path argument of an MCP call was refused; ``str()`` is the model-facing text."""


def _is_inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _string_typed(prop: Mapping[str, Any]) -> bool:
    kind = prop.get("type")
    if kind == "string":
        return True
    if kind == "array":
        items = prop.get("items")
        return isinstance(items, Mapping) and items.get("type") == "string"
    return False


def _path_names(schema: Mapping[str, Any]) -> tuple[str, ...]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return ()
    names: list[str] = []
    for name, prop in props.items():
        if not isinstance(prop, Mapping) or not _string_typed(prop):
            continue
        items = prop.get("items")
        fmt = prop.get("format") or (items.get("format") if isinstance(items, Mapping) else None)
        if fmt == "path" or name in MCP_PATH_NAMES:
            names.append(name)
    return tuple(names)


def _real_roots(roots: Iterable[str | os.PathLike[str]]) -> list[str]:
    out: list[str] = []
    for root in roots:
        real = os.path.realpath(os.fspath(root))
        if not os.path.isdir(real):
            raise ConfigurationError(f"MCP root {os.fspath(root)!r} is not a directory")
        out.append(real)
    if not out:
        raise ConfigurationError("MCP roots: give at least one directory")
    return out


def mcp_path_arguments(
    schema: Any, roots: Sequence[str | os.PathLike[str]]
) -> PathArguments | None:
    """The path declaration for an MCP input ``schema`` under ``roots``, or ``None`` (no paths)."""
    if not isinstance(schema, Mapping):
        return None
    names = _path_names(schema)
    if not names:
        return None
    real_roots = _real_roots(roots)

    def resolve(value: str) -> ResolvedPath:
        if "\x00" in value:
            raise McpPathError("Path must not contain NUL characters")
        expanded = os.path.expanduser(value) if value.startswith("~") else value
        candidate = expanded if os.path.isabs(expanded) else os.path.join(real_roots[0], expanded)
        real = os.path.realpath(os.path.normpath(candidate))
        for root in real_roots:
            if _is_inside(root, real):
                rel = os.path.relpath(real, root)
                return ResolvedPath("." if rel == "." else rel.replace(os.sep, "/"), real)
        raise McpPathError(
            f'Path "{value}" is outside the directories this server may use; only paths inside '
            f"{', '.join(real_roots)} are allowed"
        )

    return PathArguments(names, resolve, form="absolute")


def declare_mcp_paths(
    tools: Iterable[AgentTool], roots: Sequence[str | os.PathLike[str]]
) -> list[AgentTool]:
    """Declare the path arguments of MCP ``tools`` served from ``roots`` (in place; returned).

    Tools that already declare paths are left alone.
    """
    out = list(tools)
    for item in out:
        if item.paths is None:
            item.paths = mcp_path_arguments(item.parameters_schema, roots)
    return out
