"""A file-system toolset rooted at one directory: ``read``, ``write``, ``edit``, ``ls``, ``find``, ``grep``.

Every path the model passes is resolved by :func:`resolve_inside`: ``..``
escapes, absolute paths outside the root and symbolic links whose real path
leaves the root (for the target, for its parent directories, and for write
targets that do not exist yet) are refused with a clear message the model can
act on. Every tool declares its ``path`` argument
(:class:`~scriptgate.runtime.paths.PathArguments`), so the pipeline resolves it
*before* the permission policy decides: the policy judges, and ``execute``
receives, the root-relative real path (``"."`` for the root, which a missing or
empty ``path`` means). ``execute`` re-resolves it and refuses a path whose real
location changed in between. ``ls``, ``find`` and ``grep`` walk: they ask the
arguments object (:func:`~scriptgate.runtime.paths.path_admitted`) before they
enter a directory or list an entry — a symbolic link is judged by its own path
and by its target — so a subtree the policy denies is neither walked nor
listed. The tools carry MCP-style annotations (``readOnlyHint`` for ``read``,
``ls``, ``find``, ``grep``; ``destructiveHint`` for ``write`` and ``edit``).
Writes and edits run their whole read-modify-write inside
:func:`scriptgate.runtime.file_queue.with_file_mutation_queue` (pi §7), so two
parallel edits of one file see each other's result, and they check the abort
signal after each await inside the critical section.

Large files are read in windows with bounded memory; binary files give a clear
error (``read`` returns common image formats as image blocks). The model-facing
texts follow pi's coding-agent tools (``[Showing lines 1-2000 of 5000. Use
offset=2001 to continue.]``, ``Successfully replaced 2 block(s) in a.py.``, …).

A tool failure raises :class:`FileToolError`; the pipeline turns it into an
error result whose text is the exception's message.

The package (one concern a module; this ``__init__`` only re-exports):

- :mod:`.root`: the root, path resolution, protected files, opening only regular files;
- :mod:`.read`: ``read`` (the window, images);
- :mod:`.write`: ``write`` and ``edit``;
- :mod:`.search`: ``ls``, ``find``, ``grep`` (walks, globs, line search);
- :mod:`.toolset`: :func:`file_tools`, the options and the tools' order;
- :mod:`._hostwork`: stoppable host threads, the bounded regex search, the linear
  glob matcher and the bounded diff.

Nothing here imports :mod:`scriptgate.sandbox` or the CLI.
"""

from __future__ import annotations

from scriptgate.tools.files.read import COUNT_MAX_BYTES as COUNT_MAX_BYTES
from scriptgate.tools.files.read import DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_READ_LINES
from scriptgate.tools.files.root import FileToolError, resolve_inside
from scriptgate.tools.files.toolset import file_tools

__all__ = [
    "DEFAULT_MAX_READ_BYTES",
    "DEFAULT_MAX_READ_LINES",
    "FileToolError",
    "file_tools",
    "resolve_inside",
]
