"""The ``read`` tool: a window of a text file, or an image block.

Owns pi's read window (at most :data:`DEFAULT_MAX_READ_LINES` lines and
:data:`DEFAULT_MAX_READ_BYTES` bytes per call, with the ``Use offset=… to continue``
notes), reading large files with bounded memory (seek to a line, count what follows up to
:data:`COUNT_MAX_BYTES`, lines cut at a byte cap), binary refusal and image sniffing. The
byte-line scanner (:func:`_iter_lines`, :func:`_strip_cr`, :func:`_decode_prefix`) is
shared with ``grep``.

Must not touch: path resolution and the protected files (:mod:`.root`), other tools'
texts, the toolset's assembly. Imports :mod:`scriptgate.runtime`, :mod:`.root` and
:mod:`._hostwork` only.
"""

from __future__ import annotations

import base64
import codecs
import os
import stat
from collections.abc import Iterator
from typing import IO, Any

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import AgentToolResult, ImageContent, TextContent
from scriptgate.tools.files._hostwork import StoppedError, in_stoppable_thread
from scriptgate.tools.files.root import (
    FileRoot,
    FileToolError,
    _check_abort,
    _format_size,
    _not_regular,
    _open_regular,
    _opt_int,
    _os_error,
    _req_str,
)

__all__ = ["COUNT_MAX_BYTES", "DEFAULT_MAX_READ_BYTES", "DEFAULT_MAX_READ_LINES", "read_tool"]

DEFAULT_MAX_READ_LINES = 2000
"""pi's read window: at most this many lines per call."""
DEFAULT_MAX_READ_BYTES = 50 * 1024
"""pi's read window: at most this many bytes per call (50KB)."""
_CHUNK = 1 << 20
_SNIFF = 8192

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


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


def read_tool(
    root: FileRoot, *, max_read_lines: int, max_read_bytes: int, max_image_bytes: int
) -> AgentTool:
    """The ``read`` tool of ``root`` with its window and image limits."""

    def read_sync(
        path: str, offset: int | None, limit: int | None, signal: AbortSignal | None
    ) -> AgentToolResult:
        real = root.resolve(path)
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
        root.judged(params, path)
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

    return AgentTool(
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
        paths=root.path_spec(walks=False),
        annotations={"readOnlyHint": True, "openWorldHint": False},
        replay="safe",
    )
