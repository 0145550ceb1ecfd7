"""The file toolset factory: :func:`file_tools` checks its options and assembles the tools.

Owns the public signature and docstring of :func:`file_tools`, the option checks (one
clear :class:`~scriptgate.errors.ConfigurationError` line each), and the order of the
tools (``read``, ``write``, ``edit``, ``ls``, ``find``, ``grep``; ``read_only`` leaves
out the two that change files).

Must not touch: any tool's behaviour or texts (their own modules) or path resolution
(:mod:`.root`). Imports the sibling tool modules and :mod:`scriptgate.runtime` only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.tool import AgentTool
from scriptgate.tools.files.read import DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_READ_LINES, read_tool
from scriptgate.tools.files.root import FileRoot, _identities, _real_root
from scriptgate.tools.files.search import find_tool, grep_tool, ls_tool
from scriptgate.tools.files.write import edit_tool, write_tool

__all__ = ["file_tools"]


def file_tools(
    root: str | os.PathLike[str],
    *,
    read_only: bool = False,
    max_read_lines: int = DEFAULT_MAX_READ_LINES,
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
    max_edit_bytes: int = 10 * 1024 * 1024,
    max_image_bytes: int = 5 * 1024 * 1024,
    ls_limit: int = 500,
    find_limit: int = 1000,
    grep_limit: int = 100,
    protected: Iterable[str | os.PathLike[str]] = (),
) -> list[AgentTool]:
    """The file-system tools for ``root``: ``read``, ``write``, ``edit``, ``ls``, ``find``, ``grep``.

    - ``read_only=True`` leaves out ``write`` and ``edit``.
    - ``read`` returns at most ``max_read_lines`` lines and ``max_read_bytes``
      bytes per call (pi: 2000 lines / 50KB) and says how to continue; image
      files up to ``max_image_bytes`` come back as image blocks.
    - ``edit`` refuses files over ``max_edit_bytes`` (it must load them whole).
    - ``ls``, ``find`` and ``grep`` return at most ``ls_limit``, ``find_limit``
      and ``grep_limit`` items unless the call passes a ``limit``.

    - ``protected`` files (the audit log) are refused by identity (device and
      inode, so every spelling, symbolic or hard link): no tool reads, writes or
      edits them, and ``find``/``grep`` never return them.

    Every tool declares an ``output_schema`` and returns ``structured_content``
    (root-relative paths), so scripts get data instead of text.
    """
    real_root = _real_root(root)
    given_root = os.path.abspath(os.fspath(root))
    for name, value in (
        ("max_read_lines", max_read_lines),
        ("max_read_bytes", max_read_bytes),
        ("max_edit_bytes", max_edit_bytes),
        ("max_image_bytes", max_image_bytes),
        ("ls_limit", ls_limit),
        ("find_limit", find_limit),
        ("grep_limit", grep_limit),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")

    files_root = FileRoot(real_root, given_root, _identities(protected))
    tools = [
        read_tool(
            files_root,
            max_read_lines=max_read_lines,
            max_read_bytes=max_read_bytes,
            max_image_bytes=max_image_bytes,
        )
    ]
    if not read_only:
        tools += [write_tool(files_root), edit_tool(files_root, max_edit_bytes=max_edit_bytes)]
    tools += [
        ls_tool(files_root, ls_limit=ls_limit),
        find_tool(files_root, find_limit=find_limit),
        grep_tool(files_root, grep_limit=grep_limit),
    ]
    return tools
