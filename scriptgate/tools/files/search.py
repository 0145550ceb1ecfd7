"""The walking tools: ``ls`` (one directory), ``find`` (files by glob), ``grep`` (contents).

Owns the walk (sorted, links not followed, ``.git`` skipped, every entry asked of the
policy's walk filter before it is listed or entered), glob matching (linear-time,
:func:`._hostwork.compile_glob`), ``grep``'s line search with context (stoppable,
:class:`._hostwork.Search`), and pi's listing texts and limit notes. Protected files
are never returned.

Must not touch: path resolution and the protected files' identities (:mod:`.root`), the
read window (it reuses ``read``'s byte-line scanner only), ``write``/``edit``, the
toolset's assembly. Imports :mod:`scriptgate.runtime`, :mod:`.root`, :mod:`.read` and
:mod:`._hostwork` only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import Any

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.tools.files._hostwork import (
    Glob,
    Search,
    SearchTimeout,
    StoppedError,
    compile_glob,
    in_stoppable_thread,
)
from scriptgate.tools.files.read import _SNIFF, _decode_prefix, _iter_lines, _strip_cr
from scriptgate.tools.files.root import (
    FileRoot,
    FileToolError,
    _check_abort,
    _in_thread,
    _open_regular,
    _opt_int,
    _os_error,
    _req_str,
)

__all__ = ["find_tool", "grep_tool", "ls_tool"]

_GREP_MAX_LINE = 500
_GREP_SCAN_LINE_CAP = 1 << 20
_SKIP_DIRS = frozenset({".git"})


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


def _clip(text: str) -> str:
    if len(text) <= _GREP_MAX_LINE:
        return text
    return text[:_GREP_MAX_LINE] + "... [truncated]"


def ls_tool(root: FileRoot, *, ls_limit: int) -> AgentTool:
    """The ``ls`` tool of ``root``: at most ``ls_limit`` entries unless the call says more."""

    def ls_sync(
        path: str, limit: int, admit: Callable[[str, bool], bool] | None
    ) -> AgentToolResult:
        real = root.resolve(path)
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
        root.judged(params, path)
        admit = root.admitter(params)
        _check_abort(signal)
        return await _in_thread(lambda: ls_sync(path, limit, admit))

    return AgentTool(
        name="ls",
        label="ls",
        description=(
            "List a directory under the root, sorted by name; directories end with '/'. "
            f"At most {ls_limit} entries unless limit is given."
        ),
        parameters=_LS_PARAMS,
        output_schema=_LS_OUTPUT,
        execute=ls_execute,
        paths=root.path_spec(walks=True),
        annotations={"readOnlyHint": True, "openWorldHint": False},
        replay="safe",
    )


def find_tool(root: FileRoot, *, find_limit: int) -> AgentTool:
    """The ``find`` tool of ``root``: at most ``find_limit`` paths unless the call says more."""

    def find_sync(
        pattern: str,
        path: str,
        limit: int,
        signal: AbortSignal | None,
        admit: Callable[[str, bool], bool] | None = None,
    ) -> AgentToolResult:
        start = root.search_start(path)
        if not os.path.isdir(start):
            raise FileToolError(f"Not a directory: {path}")
        regex = _glob_regex(pattern)
        files: list[str] = []
        truncated = False
        for real, rel, _is_link in _walk_files(root.real, start, signal, admit):
            if root.is_protected(real):
                continue
            if _glob_matches(regex, pattern, rel):
                if len(files) >= limit:
                    truncated = True
                    break
                files.append(root.display(real))
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
        root.judged(params, path)
        admit = root.admitter(params)
        _check_abort(signal)
        return await in_stoppable_thread(
            lambda stop: find_sync(pattern, path, limit, stop, admit), signal
        )

    return AgentTool(
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
        paths=root.path_spec(walks=True),
        annotations={"readOnlyHint": True, "openWorldHint": False},
        replay="safe",
    )


def grep_tool(root: FileRoot, *, grep_limit: int) -> AgentTool:
    """The ``grep`` tool of ``root``: at most ``grep_limit`` matches unless the call says more."""

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
        start = root.search_start(path)
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
                root.real, start, signal, admit
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
            if root.is_protected(real):
                continue
            _check_abort(signal)
            if grep_file(
                real,
                root.display(real),
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
        root.judged(params, path)
        admit = root.admitter(params)
        _check_abort(signal)
        return await in_stoppable_thread(
            lambda stop: grep_sync(
                pattern, path, glob or None, ignore_case, literal, context, limit, stop, admit
            ),
            signal,
        )

    return AgentTool(
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
        paths=root.path_spec(walks=True),
        annotations={"readOnlyHint": True, "openWorldHint": False},
        replay="safe",
    )
