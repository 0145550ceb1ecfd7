"""What a policy pattern matches: tool names and identifiers, path and text globs, annotations.

Owns the vocabulary every other policy module shares (:data:`Action`, :data:`Pattern`,
:data:`ANNOTATION_DEFAULTS`), :func:`tool_identifier`, the two glob dialects
(:func:`match_path_glob` over resolved root-relative or absolute paths, :func:`match_text_glob`
over unnormalised text, where ``*`` stays inside a run of word characters) and MCP's
annotation defaults (:func:`effective_annotations`). The dialects are documented in
:mod:`scriptgate.runtime.policy`.

Must not touch: rules, decisions, the hook, loading or checking (the sibling modules);
it resolves no path and opens no file. Imports only :mod:`scriptgate.runtime.paths`.
"""

from __future__ import annotations

import functools
import keyword
import posixpath
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from scriptgate.runtime.paths import ResolvedPath

__all__ = [
    "ANNOTATION_DEFAULTS",
    "Action",
    "Pattern",
    "effective_annotations",
    "match_path_glob",
    "match_text_glob",
    "tool_identifier",
]

Action: TypeAlias = Literal["allow", "deny", "ask"]
"""What a rule (or the default) says about a call."""

_ACTIONS: tuple[Action, ...] = ("allow", "deny", "ask")

Pattern: TypeAlias = str | int | float | bool
"""One argument pattern: a glob (``str``; path or text, by the argument) or an exact value."""

ANNOTATION_DEFAULTS: Mapping[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
"""MCP's values for hints a tool does not declare (``destructiveHint`` is ``False`` for a
read-only tool)."""

_ANNOTATION_KEYS = frozenset({*ANNOTATION_DEFAULTS, "title"})


# --------------------------------------------------------------------------- names


_INVALID_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


@functools.lru_cache(maxsize=4096)
def tool_identifier(name: str) -> str:
    """The identifier a script calls tool ``name`` by, before collisions are resolved.

    The sandbox's binding rule (:func:`scriptgate.sandbox.naming.to_identifier`, which
    ``runtime`` may not import; ``test_policy_tool_identifier_matches_the_sandbox_binding``
    keeps the two in step): ``"a-b"`` → ``a_b``, ``"1st-tool"`` → ``tool_1st_tool``, a
    keyword gets a trailing ``_``. Names the sandbox reserves for its builtins
    (``print``, ``gather``…) and collision suffixes (``a_b_2``) are the sandbox's own:
    a rule names such a tool by its wire name.
    """
    ident = _INVALID_IDENTIFIER.sub("_", name)
    if not ident or ident[0].isdigit() or ident[0] == "_":
        ident = "tool_" + ident
    while keyword.iskeyword(ident) or keyword.issoftkeyword(ident):
        ident += "_"
    return ident


# --------------------------------------------------------------------------- globs


@functools.lru_cache(maxsize=1024)
def _compile_path_glob(pattern: str) -> re.Pattern[str]:
    """Translate a path glob (``*``, ``?``, ``[...]``, ``**``) into an anchored regex."""
    segments: list[str] = []
    for segment in pattern.split("/"):
        if segment == "**" and segments and segments[-1] == "**":
            continue  # ``**/**`` is ``**``
        segments.append(segment)
    out: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == last:
                # trailing ``/**``: the directory itself or anything below it
                if out:
                    out[-1] = out[-1].removesuffix("/")
                    out.append("(?:/.*)?")
                else:
                    out.append(".*")
            else:
                out.append("(?:[^/]*/)*")  # zero or more whole segments
            continue
        out.append(_translate_segment(segment, "[^/]", "/"))
        if index != last:
            out.append("/")
    return re.compile("".join(out), re.DOTALL)


def _set_end(segment: str, i: int) -> int:
    n = len(segment)
    j = i + 1
    if j < n and segment[j] in "!^":
        j += 1
    if j < n and segment[j] == "]":
        j += 1
    return segment.find("]", j)


def _translate_segment(segment: str, one: str, excluded: str) -> str:
    """Glob → regex for one segment: ``*`` is ``one*``, ``?`` is ``one``, sets stay in ``one``."""
    parts: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            parts.append(f"{one}*")
        elif char == "?":
            parts.append(one)
        elif char == "[":
            end = _set_end(segment, i)
            if end == -1:
                parts.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                if negate:
                    parts.append(f"(?![{body}]){one}")
                else:
                    parts.append(f"[{body}]")
                i = end
        else:
            parts.append(re.escape(char))
        i += 1
    return "".join(parts)


_WORD = r"[\w.\-+=%~]"
"""What ``*`` and ``?`` stand for in plain text (see the module docstring)."""


@functools.lru_cache(maxsize=1024)
def _compile_text_glob(pattern: str) -> re.Pattern[str]:
    """Translate a plain-text glob: ``**`` any text, ``*``/``?`` word characters only."""
    pieces = pattern.split("**")
    return re.compile(".*".join(_translate_segment(p, _WORD, "") for p in pieces), re.DOTALL)


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _normalise_pattern(pattern: str) -> str:
    if not pattern:
        return pattern
    return posixpath.normpath(pattern)


def match_path_glob(pattern: str, value: str) -> bool:
    """Whether the canonical path ``value`` matches the path glob ``pattern``.

    ``value`` is a resolved path (see the module docstring); both are normalised
    lexically (``./a`` → ``a``, ``a//b`` → ``a/b``), which changes nothing for a
    resolved value. ``*`` stays within a segment; ``**`` as a whole segment spans
    zero or more segments.
    """
    return (
        _compile_path_glob(_normalise_pattern(pattern)).fullmatch(_normalise_pattern(value))
        is not None
    )


def match_text_glob(pattern: str, value: str) -> bool:
    """Whether the plain text ``value`` matches ``pattern`` (no normalisation; see the
    module docstring): equality without glob characters, ``*`` word characters,
    ``**`` anything."""
    if not _has_glob(pattern):
        return pattern == value
    return _compile_text_glob(pattern).fullmatch(value) is not None


def _match_path(pattern: Pattern, path: ResolvedPath) -> bool:
    if not isinstance(pattern, str):
        return False
    if pattern.startswith("/"):
        return match_path_glob(pattern, path.absolute)
    return path.relative is not None and match_path_glob(pattern, path.relative)


def _match_value(pattern: Pattern, value: Any) -> bool:
    if isinstance(pattern, str):
        return isinstance(value, str) and match_text_glob(pattern, value)
    if isinstance(pattern, bool) or isinstance(value, bool):
        return isinstance(pattern, bool) and isinstance(value, bool) and pattern is value
    if isinstance(value, int | float):
        return bool(pattern == value)
    return False


def effective_annotations(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's annotations with MCP's defaults filled in (see :data:`ANNOTATION_DEFAULTS`)."""
    out: dict[str, Any] = dict(ANNOTATION_DEFAULTS)
    if annotations.get("readOnlyHint") is True:
        out["destructiveHint"] = False
    out.update({k: v for k, v in annotations.items() if v is not None})
    return out
