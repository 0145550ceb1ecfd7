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
"""

from __future__ import annotations

import base64
import codecs
import itertools
import json
import os
import stat
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.file_queue import with_file_mutation_queue
from scriptgate.runtime.paths import PathArguments, ResolvedArguments, ResolvedPath, path_admitted
from scriptgate.runtime.spelling import stored_spelling
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import AgentToolResult, ImageContent, TextContent
from scriptgate.tools._hostwork import (
    Glob,
    Search,
    SearchTimeout,
    StoppedError,
    bounded_diff,
    compile_glob,
    in_abandonable_thread,
    in_stoppable_thread,
)

__all__ = [
    "DEFAULT_MAX_READ_BYTES",
    "DEFAULT_MAX_READ_LINES",
    "FileToolError",
    "file_tools",
    "resolve_inside",
]

T = TypeVar("T")

DEFAULT_MAX_READ_LINES = 2000
"""pi's read window: at most this many lines per call."""

DEFAULT_MAX_READ_BYTES = 50 * 1024
"""pi's read window: at most this many bytes per call (50KB)."""

_CHUNK = 1 << 20
_SNIFF = 8192
_GREP_MAX_LINE = 500
_GREP_SCAN_LINE_CAP = 1 << 20
_SKIP_DIRS = frozenset({".git"})

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class FileToolError(Exception):
    """A file tool failed in a way the model can act on; ``str()`` is the model-facing text."""


# ----------------------------------------------------------------------------- paths


def _real_root(root: str | os.PathLike[str]) -> str:
    try:
        real = os.path.realpath(os.fspath(root), strict=True)
    except (OSError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"file tools root {root!r} does not exist: {exc}") from exc
    if not os.path.isdir(real):
        raise ConfigurationError(f"file tools root {root!r} is not a directory")
    return real


def _is_inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_inside(root: str | os.PathLike[str], path: str) -> Path:
    """Resolve ``path`` (relative to ``root``, or absolute) to a real path inside ``root``.

    Symbolic links are followed wherever they exist — in the target, in its
    parent directories, and in a dangling link a write would go through — and
    the *real* path must stay inside the real root. Components that do not
    exist yet are kept as written. ``..`` is allowed only while it stays inside.

    An empty path is the root itself. A symlink loop is left unresolved (opening
    it then fails with ``ELOOP``, which cannot escape).

    Raises :class:`FileToolError` (with a message for the model) on an escape or
    a NUL-containing path; raises :class:`~scriptgate.errors.ConfigurationError`
    if ``root`` is not a directory.
    """
    real_root = _real_root(root)
    return Path(_resolve(real_root, path, os.path.abspath(os.fspath(root))))


def _resolve(real_root: str, path: str, given_root: str | None = None) -> str:
    """The real path of ``path`` inside ``real_root``; see :func:`resolve_inside`.

    An absolute ``path`` may also be spelled through ``given_root`` (the root as
    the host wrote it, before symlinks in it were resolved).
    """
    if not isinstance(path, str):
        raise FileToolError(f"Path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise FileToolError("Path must not contain NUL characters")
    candidate = path if os.path.isabs(path) else os.path.join(real_root, path or ".")
    lexical = os.path.normpath(candidate)
    inside = _is_inside(real_root, lexical) or (
        given_root is not None and os.path.isabs(path) and _is_inside(given_root, lexical)
    )
    if not inside:
        raise FileToolError(
            f'Path "{path}" is outside the root directory; only paths inside it are allowed'
        )
    try:
        real = os.path.realpath(lexical, strict=False)
    except (OSError, ValueError) as exc:  # pragma: no cover - realpath(strict=False) rarely raises
        raise FileToolError(f'Could not resolve path "{path}": {exc}') from exc
    if not _is_inside(real_root, real):
        raise FileToolError(
            f'Path "{path}" resolves through a symbolic link to a location outside the root '
            "directory; only paths inside it are allowed"
        )
    # judge (and open) the name as the file system stores it: on a case-insensitive
    # file system ".VENV/x" is ".venv/x", and the policy's rules compare text
    rel = os.path.relpath(real, real_root)
    return real if rel == "." else stored_spelling(real_root, rel)


def _display(real_root: str, real: str) -> str:
    """A root-relative POSIX path for listings and structured results."""
    rel = os.path.relpath(real, real_root)
    return "." if rel == "." else rel.replace(os.sep, "/")


def _format_size(size: int) -> str:
    """pi's ``formatSize``: ``512B``, ``50.0KB``, ``1.5MB``."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _os_error(exc: OSError, path: str, verb: str) -> FileToolError:
    if isinstance(exc, FileNotFoundError):
        return FileToolError(f"File not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return FileToolError(f"Path is a directory: {path}")
    if isinstance(exc, NotADirectoryError):
        return FileToolError(f"Not a directory: {path}")
    if isinstance(exc, PermissionError):
        return FileToolError(f"Permission denied: {path}")
    reason = exc.strerror or str(exc)
    return FileToolError(f"Could not {verb} {path}: {reason}")


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _check_abort(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise FileToolError("Operation aborted")


async def _in_thread(fn: Callable[[], T]) -> T:
    # abandoned at the run's deadline: a call stuck in the kernel does not hold the run
    return await in_abandonable_thread(fn)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _not_regular(path: str, mode: int) -> FileToolError:
    return FileToolError(
        f"Not a regular file: {path} is {_kind(mode)}; the file tools open only regular files"
    )


def _open_regular(real: str, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """Open ``real`` as a regular file and return the descriptor; refuse anything else.

    FIFOs, sockets and devices are refused *before* opening (``lstat``) and again on the
    descriptor (``fstat``): the open itself uses ``O_NONBLOCK`` (a FIFO without a peer
    does not block it) and ``O_NOFOLLOW`` (a link swapped in is not followed), then
    ``O_NONBLOCK`` is cleared for ordinary I/O. ``O_TRUNC`` is applied only once the
    descriptor is known to be a regular file. Raises ``OSError`` as ``os.open`` does.
    """
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if stat.S_ISDIR(st.st_mode):
            raise FileToolError(f"Path is a directory: {path}")
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
    truncate = bool(flags & os.O_TRUNC)
    open_flags = (flags & ~os.O_TRUNC) | _NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(real, open_flags, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        if truncate:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _stat_regular(real: str, path: str) -> os.stat_result:
    """``stat`` of a path the content tools may open: a directory or non-regular file is refused."""
    st = os.stat(real)
    if stat.S_ISDIR(st.st_mode):
        raise FileToolError(f"Path is a directory: {path}")
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    return st


def _read_text_error(path: str, size: int) -> FileToolError:
    return FileToolError(
        f"Cannot read {path}: it is a binary file ({_format_size(size)}), not UTF-8 text"
    )


# ----------------------------------------------------------------------------- windows


COUNT_MAX_BYTES = 64 << 20
"""``read`` counts the lines after its window in at most this many bytes; past it the
total is reported unknown (``total_lines`` null) instead of reading the whole file."""


def _seek_line(f: IO[bytes], index: int, signal: AbortSignal | None = None) -> int | None:
    """Position ``f`` at the start of the 0-based line ``index``.

    Returns None when that line exists, else the number of lines in the file (then
    ``f``'s position is undefined). Reads only up to the line, checking ``signal``.
    """
    f.seek(0)
    if index == 0:
        return None
    seen = 0
    pos = 0
    last = b""
    while chunk := f.read(_CHUNK):
        _check_abort(signal)
        found = chunk.count(b"\n")
        if seen + found >= index:
            at = -1
            for _ in range(index - seen):
                at = chunk.index(b"\n", at + 1)
            f.seek(pos + at + 1)
            if not f.read(1):
                return index  # the file ends right after that newline
            f.seek(pos + at + 1)
            return None
        seen += found
        pos += len(chunk)
        last = chunk[-1:]
    return seen + (1 if last and last != b"\n" else 0)


def _count_rest(f: IO[bytes], signal: AbortSignal | None, cap: int) -> int | None:
    """Lines from ``f``'s position to the end, or None past ``cap`` bytes; ``f`` is put back."""
    base = f.tell()
    count = 0
    read = 0
    last = b""
    while chunk := f.read(_CHUNK):
        _check_abort(signal)
        read += len(chunk)
        if read > cap:
            f.seek(base)
            return None
        count += chunk.count(b"\n")
        last = chunk[-1:]
    if last and last != b"\n":
        count += 1
    f.seek(base)
    return count


def _iter_lines(f: IO[bytes], cap: int) -> Iterator[tuple[bytes, int]]:
    """Yield ``(first cap bytes, full length)`` of each line from the current position.

    The newline is not included; memory stays bounded by ``cap`` and one chunk.
    """
    buf = bytearray()
    length = 0
    pending = False
    while chunk := f.read(65536):
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl == -1 else chunk[start:nl]
            if len(buf) < cap:
                buf += piece[: cap - len(buf)]
            length += len(piece)
            pending = True
            if nl == -1:
                break
            yield bytes(buf), length
            buf = bytearray()
            length = 0
            pending = False
            start = nl + 1
    if pending and length:
        yield bytes(buf), length


def _strip_cr(prefix: bytes, length: int) -> tuple[bytes, int]:
    if len(prefix) == length and prefix.endswith(b"\r"):
        return prefix[:-1], length - 1
    return prefix, length


def _decode_prefix(data: bytes) -> str:
    """Decode UTF-8 that may end in the middle of a character (the tail is dropped)."""
    return codecs.getincrementaldecoder("utf-8")().decode(data, final=False)


def _sniff_image(head: bytes) -> str | None:
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


# ----------------------------------------------------------------------------- glob


def _glob_regex(pattern: str) -> Glob:
    """Compile a glob (``*``, ``?``, ``[...]``, ``**``, ``{a,b}``) for linear-time full matching.

    (``scriptgate.tools._hostwork.Glob``: no backtracking, whatever the pattern.)
    """
    try:
        return compile_glob(pattern)
    except ValueError as exc:
        raise FileToolError(f"Invalid glob pattern {pattern!r}: {exc}") from exc


def _glob_matches(glob: Glob, pattern: str, rel: str) -> bool:
    """A pattern with ``/`` matches the relative path; without, the base name."""
    target = rel if "/" in pattern else rel.rsplit("/", 1)[-1]
    return glob.match(target)


def _walk_files(
    real_root: str,
    start: str,
    signal: AbortSignal | None,
    admit: Callable[[str, bool], bool] | None = None,
) -> Iterator[tuple[str, str, bool]]:
    """Yield ``(real path, path relative to start, is_symlink)`` of every file under ``start``.

    Directories are walked in sorted order without following symbolic links;
    ``.git`` is skipped, and so is every entry ``admit`` refuses (a refused
    directory is not entered).
    """
    stack = [start]
    while stack:
        _check_abort(signal)
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[str] = []
        for entry in entries:
            try:
                is_link = entry.is_symlink()
                if admit is not None and not admit(entry.path, is_link):
                    continue
                if not is_link and entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SKIP_DIRS:
                        subdirs.append(entry.path)
                    continue
            except OSError:
                continue
            rel = os.path.relpath(entry.path, start).replace(os.sep, "/")
            yield entry.path, rel, is_link
        stack.extend(reversed(subdirs))


# ----------------------------------------------------------------------------- schemas

_READ_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Path to the file to read (relative to the root)",
        },
        "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "Line number to start reading from (1-indexed)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of lines to read",
        },
    },
    "required": ["path"],
}

_READ_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "The path read, relative to the root (as resolved before the call)",
        },
        "content": {"type": "string", "description": "The lines read, joined with newlines"},
        "offset": {"type": "integer", "description": "Line number of the first line returned"},
        "lines": {"type": "integer", "description": "Number of lines returned"},
        "total_lines": {
            "type": ["integer", "null"],
            "description": "Number of lines in the file; null when the file is too big to count",
        },
        "truncated": {
            "type": "boolean",
            "description": "True when the read window (line or byte budget) cut the output",
        },
        "next_offset": {
            "type": ["integer", "null"],
            "description": "Offset to continue from, or null at the end of the file",
        },
        "mime_type": {"type": "string", "description": "Set for image files (content is empty)"},
    },
    "required": ["path", "content", "offset", "lines", "total_lines", "truncated", "next_offset"],
}

_WRITE_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Path to the file to write (relative to the root)",
        },
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}

_WRITE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "bytes": {"type": "integer", "description": "Number of bytes written"},
    },
    "required": ["path", "bytes"],
}

_EDIT_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Path to the file to edit (relative to the root)",
        },
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": (
                "One or more replacements. Each oldText is matched against the original file, "
                "must occur exactly once, and must not overlap another edit."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": "Exact text to find (including whitespace and newlines)",
                    },
                    "newText": {"type": "string", "description": "Text to replace it with"},
                },
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}

_EDIT_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "replacements": {"type": "integer"},
        "first_changed_line": {"type": ["integer", "null"]},
        "diff": {"type": "string"},
    },
    "required": ["path", "replacements", "first_changed_line", "diff"],
}

_LS_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Directory to list (relative to the root; default: the root)",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of entries"},
    },
}

_LS_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"enum": ["file", "dir", "symlink", "other"]},
                    "size": {"type": "integer"},
                },
                "required": ["name", "type", "size"],
            },
        },
        "truncated": {"type": "boolean"},
    },
    "required": ["path", "entries", "truncated"],
}

_FIND_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": (
                "Glob pattern, e.g. '*.py', '**/*.json' or 'src/**/*.{ts,tsx}'. Without a '/', "
                "it matches file names; with one, paths relative to the search directory."
            ),
        },
        "path": {
            "type": "string",
            "description": "Directory to search in (relative to the root; default: the root)",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of results"},
    },
    "required": ["pattern"],
}

_FIND_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Matching files, relative to the root",
        },
        "truncated": {"type": "boolean"},
    },
    "required": ["files", "truncated"],
}

_GREP_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Search pattern (Python regular expression, or literal text)",
        },
        "path": {
            "type": "string",
            "description": "Directory or file to search (relative to the root; default: the root)",
        },
        "glob": {
            "type": "string",
            "description": "Only search files whose name (or relative path) matches this glob",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search"},
        "literal": {
            "type": "boolean",
            "description": "Treat the pattern as literal text instead of a regex",
        },
        "context": {
            "type": "integer",
            "minimum": 0,
            "description": "Lines of context before and after each match",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of matches"},
    },
    "required": ["pattern"],
}

_GREP_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "matches": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Relative to the root"},
                    "line": {"type": "integer"},
                    "text": {"type": "string"},
                },
                "required": ["path", "line", "text"],
            },
        },
        "truncated": {"type": "boolean"},
    },
    "required": ["matches", "truncated"],
}


# ----------------------------------------------------------------------------- toolset


def _opt_int(params: Mapping[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FileToolError(f"{key} must be an integer")
    return value


def _req_str(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise FileToolError(f"{key} must be a string")
    return value


def _prepare_edit_arguments(args: Any) -> Any:
    """pi's shim: ``edits`` as a JSON string or a single object becomes a list, and legacy
    top-level ``oldText``/``newText`` strings are appended to ``edits`` (and removed).

    Returns ``args`` itself when nothing needed changing.
    """
    if not isinstance(args, dict):
        return args
    out = dict(args)
    changed = False
    edits = out.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list | dict):
            edits = parsed
            changed = True
    if isinstance(edits, dict):
        edits = [edits]
        changed = True
    old, new = out.get("oldText"), out.get("newText")
    if isinstance(old, str) and isinstance(new, str):
        edits = [*(edits if isinstance(edits, list) else []), {"oldText": old, "newText": new}]
        del out["oldText"], out["newText"]
        changed = True
    if not changed:
        return args
    out["edits"] = edits
    return out


@dataclass(frozen=True)
class _Edit:
    index: int
    start: int
    end: int
    new_text: str


_FUZZY_CHARS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000",
            " ",
        ),
    }
)


def _fuzzy(text: str) -> str:
    """pi's ``normalizeForFuzzyMatch``: NFKC, no trailing spaces, ASCII quotes/dashes/spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return text.translate(_FUZZY_CHARS)


def _find(content: str, old: str) -> tuple[int, int, bool]:
    """pi's ``fuzzyFindText``: ``(index, length, used_fuzzy)``; index -1 when absent."""
    at = content.find(old)
    if at != -1:
        return at, len(old), False
    fuzzy_old = _fuzzy(old)
    at = _fuzzy(content).find(fuzzy_old)
    return at, len(fuzzy_old), at != -1


def _apply_edits(content: str, edits: list[tuple[str, str]], path: str) -> tuple[str, str]:
    """pi's multi-edit semantics on LF-normalised text; returns ``(base, new)``.

    Every edit is matched against the same original text: exactly first, then
    after pi's fuzzy normalisation (NFKC, trailing whitespace, typographic quotes,
    dashes and spaces). If any edit needs the fuzzy match, the whole operation
    runs on the normalised text (``base``), as in pi. Occurrences are counted on
    normalised text. All edits apply at once or not at all.
    """
    total = len(edits)
    for i, (old, _new) in enumerate(edits):
        if old == "":
            raise FileToolError(
                f"oldText must not be empty in {path}."
                if total == 1
                else f"edits[{i}].oldText must not be empty in {path}."
            )
    if any(_find(content, old)[2] for old, _new in edits):
        content = _fuzzy(content)
    fuzzy_content = _fuzzy(content)
    matched: list[_Edit] = []
    for i, (old, new) in enumerate(edits):
        at, length, _used = _find(content, old)
        if at == -1:
            raise FileToolError(
                f"Could not find the exact text in {path}. The old text must match exactly "
                "including all whitespace and newlines."
                if total == 1
                else f"Could not find edits[{i}] in {path}. The oldText must match exactly "
                "including all whitespace and newlines."
            )
        occurrences = fuzzy_content.count(_fuzzy(old))
        if occurrences > 1:
            raise FileToolError(
                f"Found {occurrences} occurrences of the text in {path}. The text must be unique. "
                "Please provide more context to make it unique."
                if total == 1
                else f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must "
                "be unique. Please provide more context to make it unique."
            )
        matched.append(_Edit(i, at, at + length, new))
    matched.sort(key=lambda e: e.start)
    for prev, cur in itertools.pairwise(matched):
        if prev.end > cur.start:
            raise FileToolError(
                f"edits[{prev.index}] and edits[{cur.index}] overlap in {path}. Merge them into "
                "one edit or target disjoint regions."
            )
    parts: list[str] = []
    pos = 0
    for edit in matched:
        parts.append(content[pos : edit.start])
        parts.append(edit.new_text)
        pos = edit.end
    parts.append(content[pos:])
    result = "".join(parts)
    if result == content:
        raise FileToolError(
            f"No changes made to {path}. The replacement produced identical content. This might "
            "indicate an issue with special characters or the text not existing as expected."
            if total == 1
            else f"No changes made to {path}. The replacements produced identical content."
        )
    return content, result


def _normalize_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _diff(old: str, new: str, signal: AbortSignal | None = None) -> tuple[str, int | None]:
    """The edit's unified diff and first changed line, bounded (``_hostwork.bounded_diff``)."""
    return bounded_diff(old, new, signal)


def _listing_result(
    lines: list[str], empty: str, noun: str, limit: int, truncated: bool, structured: Any
) -> AgentToolResult:
    """A find/grep result: the lines (or ``empty``) and pi's limit note when cut."""
    if not lines:
        text = empty
    else:
        text = "\n".join(lines)
        if truncated:
            text += (
                f"\n\n[{limit} {noun} limit reached. Use limit={limit * 2} for more, "
                "or refine pattern]"
            )
    return AgentToolResult(content=(TextContent(text),), structured_content=structured)


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

    protected_ids = _identities(protected)

    def resolve(path: str) -> str:
        real = _resolve(real_root, path, given_root)
        if protected_ids and _identity(real) in protected_ids:
            raise FileToolError(_protected_text(path))
        return real

    def resolve_argument(path: str) -> ResolvedPath:
        real = resolve(path)
        return ResolvedPath(_display(real_root, real), real)

    def judged(params: Any, path: str) -> None:
        """Refuse a path whose real location changed since the policy judged it."""
        if isinstance(params, ResolvedArguments):
            seen = params.paths.get("path")
            if isinstance(seen, ResolvedPath) and resolve(path) != seen.absolute:
                raise FileToolError(
                    f"Path {path} changed (a symbolic link moved) after it was checked; try again"
                )

    def admitter(params: Any) -> Callable[[str, bool], bool] | None:
        """The walk filter of a walking call: the entry, and a link's target, must be admitted."""
        if not isinstance(params, ResolvedArguments):
            return None

        def admit(entry: str, is_link: bool) -> bool:
            if not path_admitted(params, ResolvedPath(_display(real_root, entry), entry)):
                return False
            if is_link:
                target = os.path.realpath(entry)
                if _is_inside(real_root, target):
                    return path_admitted(params, ResolvedPath(_display(real_root, target), target))
            return True

        return admit

    def path_spec(*, walks: bool) -> PathArguments:
        return PathArguments(("path",), resolve_argument, walks=walks, missing=".")

    # ------------------------------------------------------------------ read

    def read_sync(
        path: str, offset: int | None, limit: int | None, signal: AbortSignal | None
    ) -> AgentToolResult:
        real = resolve(path)
        try:
            st = os.stat(real)
        except OSError as exc:
            raise _os_error(exc, path, "read") from exc
        if stat.S_ISDIR(st.st_mode):
            raise FileToolError(f"Path is a directory: {path}. Use ls to list its entries.")
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        try:
            with os.fdopen(_open_regular(real, path), "rb") as f:
                st = os.fstat(f.fileno())
                head = f.read(_SNIFF)
                mime = _sniff_image(head)
                if mime is not None:
                    return read_image(f, path, mime, st.st_size)
                if b"\x00" in head:
                    raise _read_text_error(path, st.st_size)
                return read_window(f, path, offset, limit, st.st_size, signal)
        except OSError as exc:
            raise _os_error(exc, path, "read") from exc

    def read_image(f: IO[bytes], path: str, mime: str, size: int) -> AgentToolResult:
        if size > max_image_bytes:
            raise FileToolError(
                f"Cannot read image {path}: {_format_size(size)} exceeds the "
                f"{_format_size(max_image_bytes)} image limit"
            )
        f.seek(0)
        data = base64.b64encode(f.read(max_image_bytes + 1)).decode("ascii")
        structured = {
            "path": path,
            "content": "",
            "offset": 1,
            "lines": 0,
            "total_lines": 0,
            "truncated": False,
            "next_offset": None,
            "mime_type": mime,
        }
        return AgentToolResult(
            content=(TextContent(f"Read image file [{mime}]"), ImageContent(data, mime)),
            structured_content=structured,
        )

    def read_window(
        f: IO[bytes],
        path: str,
        offset: int | None,
        limit: int | None,
        size: int,
        signal: AbortSignal | None,
    ) -> AgentToolResult:
        start = offset if offset is not None else 1
        lines_in_file = _seek_line(f, start - 1, signal)
        if lines_in_file is not None and start > max(lines_in_file, 1):
            raise FileToolError(
                f"Offset {start} is beyond end of file ({lines_in_file} lines total)"
            )
        rest = 0 if lines_in_file is not None else _count_rest(f, signal, COUNT_MAX_BYTES)
        total = None if rest is None else start - 1 + rest
        max_lines = min(limit, max_read_lines) if limit is not None else max_read_lines
        lines: list[str] = []
        used = 0
        cut_by: str | None = None
        first_line_note: str | None = None
        if total is None or total:
            for prefix, length in _iter_lines(f, max_read_bytes + 1):
                _check_abort(signal)
                if len(lines) >= max_lines:
                    if limit is None or limit > max_read_lines:
                        cut_by = "lines"
                    break
                prefix, length = _strip_cr(prefix, length)
                extra = length + (1 if lines else 0)
                if used + extra > max_read_bytes:
                    if not lines:
                        # The first line alone is over budget: show its head.
                        lines.append(_decode_prefix(prefix[:max_read_bytes]))
                        first_line_note = (
                            f"[Line {start} is {_format_size(length)}, exceeds the "
                            f"{_format_size(max_read_bytes)} limit; only its beginning is shown.]"
                        )
                    cut_by = "bytes"
                    break
                try:
                    lines.append(prefix.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    raise _read_text_error(path, size) from exc
                used += extra
            else:
                total = start - 1 + len(lines)  # the window reached the end of the file
        end = start + len(lines) - 1
        more = total is None or end < total
        next_offset = end + 1 if more else None
        if first_line_note is not None:
            next_offset = start + 1 if total is None or start < total else None
        of = f" of {total}" if total is not None else ""
        text = "\n".join(lines)
        if first_line_note is not None:
            text = f"{text}\n\n{first_line_note}"
            if next_offset is not None:
                text = text[:-1] + f" Use offset={next_offset} to continue.]"
        elif cut_by == "lines" and next_offset is not None:
            text += f"\n\n[Showing lines {start}-{end}{of}. Use offset={next_offset} to continue.]"
        elif cut_by == "bytes" and next_offset is not None:
            text += (
                f"\n\n[Showing lines {start}-{end}{of} ({_format_size(max_read_bytes)} "
                f"limit). Use offset={next_offset} to continue.]"
            )
        elif next_offset is not None:
            count = f"{total - end} more" if total is not None else "More"
            text += f"\n\n[{count} lines in file. Use offset={next_offset} to continue.]"
        structured = {
            "path": path,
            "content": "\n".join(lines),
            "offset": start,
            "lines": len(lines),
            "total_lines": total,
            "truncated": cut_by is not None,
            "next_offset": next_offset,
        }
        return AgentToolResult(content=(TextContent(text),), structured_content=structured)

    async def read_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        path = _req_str(params, "path")
        judged(params, path)
        offset = _opt_int(params, "offset")
        limit = _opt_int(params, "limit")
        if offset is not None and offset < 1:
            raise FileToolError("offset must be at least 1")
        if limit is not None and limit < 1:
            raise FileToolError("limit must be at least 1")
        _check_abort(signal)
        try:
            return await in_stoppable_thread(
                lambda stop: read_sync(path, offset, limit, stop), signal
            )
        except StoppedError as exc:
            raise FileToolError("Operation aborted") from exc

    # ------------------------------------------------------------------ write

    def write_sync(real: str, path: str, data: bytes) -> None:
        try:
            if os.path.isdir(real):
                raise FileToolError(f"Path is a directory: {path}")
            parent = os.path.dirname(real)
            os.makedirs(parent, exist_ok=True)
            # The parent was created from a real path; re-check it in case a
            # link was swapped in meanwhile.
            if not _is_inside(real_root, os.path.realpath(parent)):
                raise FileToolError(
                    f'Path "{path}" resolves through a symbolic link to a location outside the '
                    "root directory; only paths inside it are allowed"
                )
            fd = _open_regular(real, path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except FileToolError:
            raise
        except OSError as exc:
            raise _os_error(exc, path, "write") from exc

    async def write_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        path = _req_str(params, "path")
        content = _req_str(params, "content")
        judged(params, path)
        real = resolve(path)
        data = content.encode("utf-8")
        _check_abort(signal)

        async def mutate() -> AgentToolResult:
            _check_abort(signal)
            await _in_thread(lambda: write_sync(real, path, data))
            _check_abort(signal)
            return AgentToolResult(
                content=(TextContent(f"Successfully wrote {len(data)} bytes to {path}"),),
                structured_content={"path": path, "bytes": len(data)},
            )

        return await with_file_mutation_queue(real, mutate)

    # ------------------------------------------------------------------ edit

    def load_for_edit(real: str, path: str) -> str:
        try:
            st = _stat_regular(real, path)
            if st.st_size > max_edit_bytes:
                raise FileToolError(
                    f"Cannot edit {path}: {_format_size(st.st_size)} exceeds the "
                    f"{_format_size(max_edit_bytes)} edit limit. Use write to replace it."
                )
            with os.fdopen(_open_regular(real, path), "rb") as f:
                raw = f.read(max_edit_bytes + 1)
        except FileToolError:
            raise
        except OSError as exc:
            raise _os_error(exc, path, "edit") from exc
        if b"\x00" in raw:
            raise FileToolError(f"Cannot edit {path}: it is a binary file")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileToolError(f"Cannot edit {path}: it is not UTF-8 text") from exc

    async def edit_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        path = _req_str(params, "path")
        raw_edits = params.get("edits")
        if not isinstance(raw_edits, list) or not raw_edits:
            raise FileToolError("edits must be a non-empty array of {oldText, newText}")
        edits: list[tuple[str, str]] = []
        for i, item in enumerate(raw_edits):
            if not isinstance(item, dict):
                raise FileToolError(f"edits[{i}] must be an object with oldText and newText")
            old, new = item.get("oldText"), item.get("newText")
            if not isinstance(old, str) or not isinstance(new, str):
                raise FileToolError(f"edits[{i}].oldText and edits[{i}].newText must be strings")
            edits.append((_normalize_lf(old), _normalize_lf(new)))
        judged(params, path)
        real = resolve(path)
        _check_abort(signal)

        async def mutate() -> AgentToolResult:
            _check_abort(signal)
            text = await _in_thread(lambda: load_for_edit(real, path))
            _check_abort(signal)
            bom = "\ufeff" if text.startswith("\ufeff") else ""
            body = text[len(bom) :]
            crlf = "\r\n" in body and body.find("\r\n") <= body.find("\n")
            base, new = _apply_edits(_normalize_lf(body), edits, path)
            final = bom + (new.replace("\n", "\r\n") if crlf else new)
            data = final.encode("utf-8")
            # the diff is computed before the write, off the loop and stoppable: an
            # edit cut off by the deadline has not landed
            try:
                diff, first = await in_stoppable_thread(lambda stop: _diff(base, new, stop), signal)
            except StoppedError as exc:
                raise FileToolError("Operation aborted") from exc
            _check_abort(signal)
            await _in_thread(lambda: write_sync(real, path, data))
            _check_abort(signal)
            return AgentToolResult(
                content=(TextContent(f"Successfully replaced {len(edits)} block(s) in {path}."),),
                details={"diff": diff, "firstChangedLine": first},
                structured_content={
                    "path": path,
                    "replacements": len(edits),
                    "first_changed_line": first,
                    "diff": diff,
                },
            )

        return await with_file_mutation_queue(real, mutate)

    # ------------------------------------------------------------------ ls

    def ls_sync(
        path: str, limit: int, admit: Callable[[str, bool], bool] | None
    ) -> AgentToolResult:
        real = resolve(path)
        try:
            if not os.path.isdir(real):
                if os.path.exists(real):
                    raise FileToolError(f"Not a directory: {path}")
                raise FileToolError(f"Path not found: {path}")
            with os.scandir(real) as it:
                scanned = sorted(
                    (e for e in it if admit is None or admit(e.path, e.is_symlink())),
                    key=lambda e: (e.name.lower(), e.name),
                )
        except FileToolError:
            raise
        except OSError as exc:
            raise _os_error(exc, path, "list") from exc
        entries: list[dict[str, Any]] = []
        lines: list[str] = []
        for entry in scanned[:limit]:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                kind = "symlink"
            elif stat.S_ISDIR(st.st_mode):
                kind = "dir"
            elif stat.S_ISREG(st.st_mode):
                kind = "file"
            else:
                kind = "other"
            entries.append({"name": entry.name, "type": kind, "size": st.st_size})
            lines.append(entry.name + ("/" if kind == "dir" else ""))
        truncated = len(scanned) > limit
        text = "\n".join(lines) if lines else "(empty directory)"
        if truncated:
            text += f"\n\n[{limit} entries limit reached. Use limit={limit * 2} for more]"
        return AgentToolResult(
            content=(TextContent(text),),
            structured_content={"path": path, "entries": entries, "truncated": truncated},
        )

    async def ls_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        path = params.get("path") or "."
        if not isinstance(path, str):
            raise FileToolError("path must be a string")
        limit = _opt_int(params, "limit") or ls_limit
        judged(params, path)
        admit = admitter(params)
        _check_abort(signal)
        return await _in_thread(lambda: ls_sync(path, limit, admit))

    # ------------------------------------------------------------------ find

    def search_start(path: str) -> str:
        real = resolve(path)
        if not os.path.exists(real):
            raise FileToolError(f"Path not found: {path}")
        return real

    def find_sync(
        pattern: str,
        path: str,
        limit: int,
        signal: AbortSignal | None,
        admit: Callable[[str, bool], bool] | None = None,
    ) -> AgentToolResult:
        start = search_start(path)
        if not os.path.isdir(start):
            raise FileToolError(f"Not a directory: {path}")
        regex = _glob_regex(pattern)
        files: list[str] = []
        truncated = False
        for real, rel, _is_link in _walk_files(real_root, start, signal, admit):
            if protected_ids and _identity(real) in protected_ids:
                continue
            if _glob_matches(regex, pattern, rel):
                if len(files) >= limit:
                    truncated = True
                    break
                files.append(_display(real_root, real))
        return _listing_result(
            files,
            "No files found matching pattern",
            "results",
            limit,
            truncated,
            {"files": files, "truncated": truncated},
        )

    async def find_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        pattern = _req_str(params, "pattern")
        path = params.get("path") or "."
        if not isinstance(path, str):
            raise FileToolError("path must be a string")
        limit = _opt_int(params, "limit") or find_limit
        judged(params, path)
        admit = admitter(params)
        _check_abort(signal)
        return await in_stoppable_thread(
            lambda stop: find_sync(pattern, path, limit, stop, admit), signal
        )

    # ------------------------------------------------------------------ grep

    def grep_file(
        real: str,
        display: str,
        search: Search,
        context: int,
        budget: int,
        out_lines: list[str],
        matches: list[dict[str, Any]],
        stop: AbortSignal | None = None,
        explicit: bool = False,
    ) -> bool:
        """Search one file; return True when the match budget ran out.

        A FIFO, socket or device is never opened: a walk skips it, a path given
        explicitly fails the call.
        """
        try:
            try:
                fd = _open_regular(real, display)
            except FileToolError:
                if explicit:
                    raise
                return False
            with os.fdopen(fd, "rb") as f:
                if b"\x00" in f.read(_SNIFF):
                    return False
                f.seek(0)
                before: list[tuple[int, str]] = []
                after_left = 0
                last_printed = 0
                for number, (raw, raw_length) in enumerate(
                    _iter_lines(f, _GREP_SCAN_LINE_CAP), start=1
                ):
                    prefix, length = _strip_cr(raw, raw_length)
                    line = _decode_prefix(prefix) if length > len(prefix) else None
                    if line is None:
                        try:
                            line = prefix.decode("utf-8")
                        except UnicodeDecodeError:
                            return False
                    try:
                        found = search.search(line, stop)
                    except StoppedError as exc:
                        raise FileToolError("Operation aborted") from exc
                    except SearchTimeout as exc:
                        raise FileToolError(f"grep stopped at {display}:{number}: {exc}") from exc
                    if found:
                        if len(matches) >= budget:
                            return True
                        for n, text in before:
                            if n > last_printed:
                                out_lines.append(f"{display}-{n}- {_clip(text)}")
                        out_lines.append(f"{display}:{number}: {_clip(line)}")
                        matches.append({"path": display, "line": number, "text": _clip(line)})
                        last_printed = number
                        after_left = context
                        before.clear()
                    else:
                        if after_left > 0:
                            out_lines.append(f"{display}-{number}- {_clip(line)}")
                            last_printed = number
                            after_left -= 1
                        elif context:
                            before.append((number, line))
                            if len(before) > context:
                                before.pop(0)
        except OSError:
            return False
        return False

    def grep_sync(
        pattern: str,
        path: str,
        glob: str | None,
        ignore_case: bool,
        literal: bool,
        context: int,
        limit: int,
        signal: AbortSignal | None,
        admit: Callable[[str, bool], bool] | None = None,
    ) -> AgentToolResult:
        start = search_start(path)
        try:
            search = Search(pattern, ignore_case=ignore_case, literal=literal)
        except ValueError as exc:
            raise FileToolError(f"Invalid regular expression {pattern!r}: {exc}") from exc
        glob_re = _glob_regex(glob) if glob else None
        out_lines: list[str] = []
        matches: list[dict[str, Any]] = []
        truncated = False
        explicit = not os.path.isdir(start)
        if not explicit:
            candidates: Iterator[tuple[str, str, bool]] = _walk_files(
                real_root, start, signal, admit
            )
        else:
            candidates = iter([(start, os.path.basename(start), False)])
        for real, rel, is_link in candidates:
            if glob_re is not None and glob is not None and not _glob_matches(glob_re, glob, rel):
                continue
            if is_link:
                # Like ripgrep, a walk does not follow links (nor read through one
                # that leaves the root); a path given explicitly was resolved above.
                continue
            if protected_ids and _identity(real) in protected_ids:
                continue
            _check_abort(signal)
            if grep_file(
                real,
                _display(real_root, real),
                search,
                context,
                limit,
                out_lines,
                matches,
                signal,
                explicit,
            ):
                truncated = True
                break
        return _listing_result(
            out_lines if matches else [],
            "No matches found",
            "matches",
            limit,
            truncated,
            {"matches": matches, "truncated": truncated},
        )

    async def grep_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        pattern = _req_str(params, "pattern")
        path = params.get("path") or "."
        if not isinstance(path, str):
            raise FileToolError("path must be a string")
        glob = params.get("glob")
        if glob is not None and not isinstance(glob, str):
            raise FileToolError("glob must be a string")
        context = _opt_int(params, "context") or 0
        if context < 0:
            raise FileToolError("context must not be negative")
        limit = _opt_int(params, "limit") or grep_limit
        ignore_case = bool(params.get("ignoreCase"))
        literal = bool(params.get("literal"))
        judged(params, path)
        admit = admitter(params)
        _check_abort(signal)
        return await in_stoppable_thread(
            lambda stop: grep_sync(
                pattern, path, glob or None, ignore_case, literal, context, limit, stop, admit
            ),
            signal,
        )

    # ------------------------------------------------------------------ assemble

    tools = [
        AgentTool(
            name="read",
            label="read",
            description=(
                "Read the contents of a file under the root directory. Text output is limited to "
                f"{max_read_lines} lines or {_format_size(max_read_bytes)} per call; use "
                "offset/limit to page through large files. Images (png, jpeg, gif, webp) are "
                "returned as images. Binary files are refused."
            ),
            parameters=_READ_PARAMS,
            output_schema=_READ_OUTPUT,
            execute=read_execute,
            paths=path_spec(walks=False),
            annotations={"readOnlyHint": True, "openWorldHint": False},
            replay="safe",
        ),
    ]
    if not read_only:
        tools += [
            AgentTool(
                name="write",
                label="write",
                description=(
                    "Write content to a file under the root directory. Creates the file if it "
                    "does not exist, overwrites it if it does, and creates parent directories."
                ),
                parameters=_WRITE_PARAMS,
                output_schema=_WRITE_OUTPUT,
                execute=write_execute,
                paths=path_spec(walks=False),
                annotations={
                    "readOnlyHint": False,
                    "destructiveHint": True,
                    "idempotentHint": True,
                    "openWorldHint": False,
                },
                replay="never",
            ),
            AgentTool(
                name="edit",
                label="edit",
                description=(
                    "Edit a file under the root directory by exact text replacement. Every "
                    "edits[].oldText must match a unique, non-overlapping region of the original "
                    "file exactly (including whitespace and newlines); all edits are applied at "
                    "once or not at all. Use read first to see the exact text."
                ),
                parameters=_EDIT_PARAMS,
                output_schema=_EDIT_OUTPUT,
                prepare_arguments=_prepare_edit_arguments,
                execute=edit_execute,
                paths=path_spec(walks=False),
                annotations={
                    "readOnlyHint": False,
                    "destructiveHint": True,
                    "openWorldHint": False,
                },
                replay="never",
            ),
        ]
    tools += [
        AgentTool(
            name="ls",
            label="ls",
            description=(
                "List a directory under the root, sorted by name; directories end with '/'. "
                f"At most {ls_limit} entries unless limit is given."
            ),
            parameters=_LS_PARAMS,
            output_schema=_LS_OUTPUT,
            execute=ls_execute,
            paths=path_spec(walks=True),
            annotations={"readOnlyHint": True, "openWorldHint": False},
            replay="safe",
        ),
        AgentTool(
            name="find",
            label="find",
            description=(
                "Find files by glob pattern under the root (or under path). Returns paths "
                f"relative to the root, at most {find_limit} unless limit is given. "
                "Symbolic links are not followed and .git is skipped."
            ),
            parameters=_FIND_PARAMS,
            output_schema=_FIND_OUTPUT,
            execute=find_execute,
            paths=path_spec(walks=True),
            annotations={"readOnlyHint": True, "openWorldHint": False},
            replay="safe",
        ),
        AgentTool(
            name="grep",
            label="grep",
            description=(
                "Search file contents for a regular expression (or literal text) under the root "
                "(or in path). Output lines are 'path:line: text' (context lines use '-'); "
                "symbolic links are not followed; "
                f"at most {grep_limit} matches unless limit is given; binary files are skipped."
            ),
            parameters=_GREP_PARAMS,
            output_schema=_GREP_OUTPUT,
            execute=grep_execute,
            paths=path_spec(walks=True),
            annotations={"readOnlyHint": True, "openWorldHint": False},
            replay="safe",
        ),
    ]
    return tools


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of what ``path`` names (links followed), or None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _identities(paths: Iterable[str | os.PathLike[str]]) -> frozenset[tuple[int, int]]:
    found = {_identity(p) for p in paths}
    return frozenset(i for i in found if i is not None)


def _protected_text(path: str) -> str:
    return (
        f"Access denied: {path} is a protected file (the audit log of this run); "
        "the tools may not read or change it"
    )


def _clip(text: str) -> str:
    if len(text) <= _GREP_MAX_LINE:
        return text
    return text[:_GREP_MAX_LINE] + "... [truncated]"
