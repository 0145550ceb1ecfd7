"""What a run's call records keep of each call's arguments, and how much they may weigh.

A :class:`CallRecord` lives as long as the run's :class:`ScriptResult`; a script that
passes megabytes to cheap tools must not make the host keep every copy. Once a call has
ended, its record keeps :func:`record_arguments`: the arguments with every value over
:data:`RECORD_MAX_CHARS` characters replaced by a description with its sha256 (the audit
log's capping, ``runtime.strict_json.bounded``). While calls run, :func:`arguments_size`
is charged against the run's memory budget by the engine.

Imports only ``runtime.strict_json``; it runs no calls and touches no engine state.
"""

from __future__ import annotations

from typing import Any

from scriptgate.runtime.strict_json import bounded

__all__ = ["RECORD_MAX_CHARS", "arguments_size", "record_arguments"]

RECORD_MAX_CHARS = 1_000
"""A record keeps values up to this many characters; longer ones become a description."""


def record_arguments(arguments: Any) -> Any:
    """``arguments`` as a finished call's record keeps them (long values described)."""
    capped, _ = bounded(arguments, max_chars=RECORD_MAX_CHARS)
    return capped


def arguments_size(arguments: Any) -> int:
    """Roughly the bytes a JSON copy of ``arguments`` holds: characters of text, 8 per scalar."""
    size = 0
    stack = [arguments]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            size += len(value) + 8
        elif isinstance(value, dict):
            size += 8 * len(value)
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            size += 8 * len(value)
            stack.extend(value)
        else:
            size += 8
    return size
