"""Ready-made tools built on :mod:`scriptgate.runtime` only.

- :func:`file_tools`: ``read``, ``write``, ``edit``, ``ls``, ``find``, ``grep``
  confined to a root directory;
- :mod:`scriptgate.tools.mcp`: the tools of an MCP server (needs the ``mcp`` extra;
  imported on first use, so the core install works without it);
- :mod:`scriptgate.tools.mcp_servers`: several servers from a config, connected
  concurrently, kept connected (same extra).
"""

from __future__ import annotations

from scriptgate.tools.files import FileToolError, file_tools, resolve_inside

__all__ = ["FileToolError", "file_tools", "resolve_inside"]
