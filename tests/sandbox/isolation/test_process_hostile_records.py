"""Process mode, hostile worker records: ScriptResult.calls is built from the parent's own records."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sandbox_support import WORKER_FRAMES

from scriptgate import Limits, Sandbox, tool
from scriptgate.sandbox.isolation.parent import ProcessRunner

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="posix worker harness")

HOSTILE = (
    WORKER_FRAMES
    + r"""
send({"op": "ready", "jail": None})
variant = sys.argv[1]
while True:
    job = recv()
    if job.get("op") != "run":
        continue
    # the script would call the tool once; we do it, and get the real reply
    send({"op": "call", "id": "c1", "tool": "transfer", "args": {"amount": 1000000}})
    reply = recv()
    calls = {
        "omit": [],
        "cancel": [["c1", "transfer", {}, "cancelled", None, None]],
        "dup": ["c1", "c1", "c1"],
        "forge": [["ghost", "delete_all_backups", {"really": True}, "blocked", 0,
                   "denied by policy rule 1"]],
        "big_value": ["c1"],
        "big_output": ["c1"],
    }[variant]
    value = ["V" * 100] * 100 if variant == "big_value" else "done"
    output = "O" * 5000 if variant == "big_output" else ""
    send({"op": "result", "result": {"ok": True, "value": value, "output": output,
          "error": None, "calls": calls, "wall_time": 0.0}, "cpu": 0.0, "retire": False})
"""
)


EXECUTED: list[int] = []


@tool
def transfer(amount: int) -> str:
    """Move money."""
    EXECUTED.append(amount)
    return "ok"


class _HostileRunner(ProcessRunner):
    def __init__(self, limits: Any, variant: str) -> None:
        super().__init__(limits, spawn="exec", jail=False)
        self.variant = variant

    def _popen(self, config: Any, stdin: Any, stdout: Any, cwd: Any) -> Any:
        return subprocess.Popen(
            [sys.executable, "-c", HOSTILE, self.variant],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=cwd,
            close_fds=True,
        )


def _run(variant: str, limits: Limits | None = None) -> Any:
    EXECUTED.clear()
    sandbox = Sandbox(tools=[transfer], isolation="process", limits=limits or Limits())
    sandbox._runner = _HostileRunner(sandbox.limits, variant)
    try:
        return sandbox.run_sync("transfer(amount=1000000)")
    finally:
        sandbox.close()


@pytest.mark.parametrize("variant", ["omit", "cancel"])
def test_hostile_worker_records_rebuilt_from_parent(variant: str) -> None:
    """A call the worker leaves out or recasts appears once, as the parent ran it."""
    result = _run(variant)
    assert EXECUTED == [1000000]
    assert [(c.id, c.tool, c.arguments, c.status) for c in result.calls] == [
        ("c1", "transfer", {"amount": 1000000}, "ok")
    ]


@pytest.mark.parametrize("variant", ["dup", "forge"])
def test_hostile_worker_records_duplicate_or_forged_refused(variant: str) -> None:
    """A duplicated record or one of a call the parent never saw is a sandbox error."""
    result = _run(variant)
    assert not result.ok
    assert result.error is not None
    assert result.error.kind == "sandbox"
    assert "misbehaved" in result.error.message
    assert [(c.id, c.status) for c in result.calls] == [("c1", "ok")]


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        ("big_value", "The script's value is 10301 bytes, more than the limit of 1000 bytes"),
        ("big_output", "Script output exceeded the limit of 1000 characters"),
    ],
)
def test_hostile_worker_oversize_result_held_to_the_limits(variant: str, message: str) -> None:
    """A worker's result over max_result_bytes / max_output_chars is the in-process limit error."""
    result = _run(variant, Limits(max_result_bytes=1000, max_output_chars=1000))
    assert not result.ok
    assert result.value is None
    assert len(result.output) <= 1000
    assert result.error is not None
    assert (result.error.kind, result.error.type, result.error.message) == (
        "limit",
        "LimitExceeded",
        message,
    )
    assert [(c.id, c.status) for c in result.calls] == [("c1", "ok")]
