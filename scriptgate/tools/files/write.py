"""The ``write`` and ``edit`` tools: whole-file writes and pi's exact-text edits.

Owns creating/overwriting a file (parents created, re-checked against a link swapped in),
pi's edit semantics (every ``oldText`` unique and non-overlapping in the original, exact
match first, then pi's fuzzy normalisation; all edits or none; BOM and CRLF kept), the
argument shim for legacy edit shapes, and the bounded diff of an edit. Both run their
read-modify-write inside :func:`scriptgate.runtime.file_queue.with_file_mutation_queue`
and check the abort signal after each await in it.

Must not touch: path resolution and the protected files (:mod:`.root`), the read window,
the walks, the toolset's assembly. Imports :mod:`scriptgate.runtime`, :mod:`.root` and
:mod:`._hostwork` only.
"""

from __future__ import annotations

import itertools
import json
import os
import unicodedata
from dataclasses import dataclass
from typing import Any

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.file_queue import with_file_mutation_queue
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.tools.files._hostwork import StoppedError, bounded_diff, in_stoppable_thread
from scriptgate.tools.files.root import (
    FileRoot,
    FileToolError,
    _check_abort,
    _format_size,
    _in_thread,
    _is_inside,
    _open_regular,
    _os_error,
    _req_str,
    _stat_regular,
)

__all__ = ["edit_tool", "write_tool"]

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


def _write_sync(root: FileRoot, real: str, path: str, data: bytes) -> None:
    try:
        if os.path.isdir(real):
            raise FileToolError(f"Path is a directory: {path}")
        parent = os.path.dirname(real)
        os.makedirs(parent, exist_ok=True)
        # The parent was created from a real path; re-check it in case a
        # link was swapped in meanwhile.
        if not _is_inside(root.real, os.path.realpath(parent)):
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


def write_tool(root: FileRoot) -> AgentTool:
    """The ``write`` tool of ``root``."""

    async def write_execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        path = _req_str(params, "path")
        content = _req_str(params, "content")
        root.judged(params, path)
        real = root.resolve(path)
        data = content.encode("utf-8")
        _check_abort(signal)

        async def mutate() -> AgentToolResult:
            _check_abort(signal)
            await _in_thread(lambda: _write_sync(root, real, path, data))
            _check_abort(signal)
            return AgentToolResult(
                content=(TextContent(f"Successfully wrote {len(data)} bytes to {path}"),),
                structured_content={"path": path, "bytes": len(data)},
            )

        return await with_file_mutation_queue(real, mutate)

    return AgentTool(
        name="write",
        label="write",
        description=(
            "Write content to a file under the root directory. Creates the file if it "
            "does not exist, overwrites it if it does, and creates parent directories."
        ),
        parameters=_WRITE_PARAMS,
        output_schema=_WRITE_OUTPUT,
        execute=write_execute,
        paths=root.path_spec(walks=False),
        annotations={
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        replay="never",
    )


def edit_tool(root: FileRoot, *, max_edit_bytes: int) -> AgentTool:
    """The ``edit`` tool of ``root``; it refuses files over ``max_edit_bytes``."""

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
        root.judged(params, path)
        real = root.resolve(path)
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
            await _in_thread(lambda: _write_sync(root, real, path, data))
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

    return AgentTool(
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
        paths=root.path_spec(walks=False),
        annotations={
            "readOnlyHint": False,
            "destructiveHint": True,
            "openWorldHint": False,
        },
        replay="never",
    )
