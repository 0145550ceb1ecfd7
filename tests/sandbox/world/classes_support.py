"""Helpers of the class-making stand-in tests (dataclasses, enum, typing classes).

A module-scoped sandbox per isolation mode, and the comparison of a script's last value
with what plain Python gives for the same source (the last line is an expression).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

MODES = ["in_process", "process"]


def sandboxes(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """One sandbox for the mode ``request.param`` (closed after the module)."""
    sandbox = Sandbox(limits=Limits(timeout=20), isolation=request.param)
    yield sandbox
    sandbox.close()


def plain(source: str) -> Any:
    """What plain Python gives for ``source`` whose last line is an expression."""
    *body, last = source.rstrip().split("\n")
    scope: dict[str, Any] = {}
    # dont_inherit: this module's `from __future__ import annotations` must not apply
    exec(compile("\n".join(body), "<plain>", "exec", dont_inherit=True), scope)
    return eval(compile(last, "<plain>", "eval", dont_inherit=True), scope)


def jsonish(value: Any) -> Any:
    """``value`` as the sandbox reports it (tuples become lists)."""
    if isinstance(value, (list, tuple)):
        return [jsonish(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonish(v) for k, v in value.items()}
    return value


def same_as_python(sandbox: Sandbox, source: str) -> None:
    """The script runs and its last value is plain Python's."""
    result: ScriptResult = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == jsonish(plain(source))


def refused(sandbox: Sandbox, source: str, kind: str, words: str) -> None:
    """The script fails with ``error.kind == kind`` and ``words`` in the message."""
    result = sandbox.run_sync(source)
    assert result.error is not None, result.value
    assert result.error.kind == kind, result.error
    assert words in result.error.message, result.error.message
