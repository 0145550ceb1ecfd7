"""Process mode, hostile worker output (issue 13, F05): the parent keeps no more than the limits.

A raw Python worker speaks the framing protocol and floods the parent with ``event`` frames
(what arbitrary code in a compromised worker can do with its own socket); the parent must
kill it at the run's ``max_output_chars`` and report a ``sandbox`` error, keeping at most
that much output, whatever the deadline.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from sandbox_support import WORKER_FRAMES

from scriptgate import Limits, Sandbox
from scriptgate.sandbox.isolation.parent import ProcessRunner

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="posix worker harness")

FLOODER = (
    WORKER_FRAMES
    + r"""
send({"op": "ready", "jail": None})
variant = sys.argv[1]
while True:
    job = recv()
    if job.get("op") != "run":
        continue
    if variant == "exact":  # an honest worker's most: the cap, then the result
        send({"op": "event", "text": "A" * 1000})
        send({"op": "result", "result": {"ok": True, "value": 1, "output": "A" * 1000,
              "error": None, "calls": [], "wall_time": 0.0}, "cpu": 0.0, "retire": False})
        continue
    try:
        for _ in range(200 if variant == "chars" else 10_000_000):
            send({"op": "event", "text": "A" * 100_000 if variant == "chars" else ""})
    except OSError:
        sys.exit(0)  # killed / the parent hung up
    time.sleep(3600)
"""
)


class _Flooder(ProcessRunner):
    def __init__(self, limits: Any, variant: str) -> None:
        super().__init__(limits, spawn="exec", jail=False)
        self.variant = variant

    def _popen(self, config: Any, stdin: Any, stdout: Any, cwd: Any) -> Any:
        return subprocess.Popen(
            [sys.executable, "-c", FLOODER, self.variant],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            close_fds=True,
        )


def _run(variant: str) -> Any:
    limits = Limits(timeout=20.0, max_output_chars=1000)
    sandbox = Sandbox(tools=[], isolation="process", limits=limits)
    sandbox._runner = _Flooder(sandbox.limits, variant)
    try:
        return sandbox.run_sync("print('hi')")
    finally:
        sandbox.close()


@pytest.mark.parametrize(
    ("variant", "words"),
    [("chars", "more output than the limit of 1000 characters"), ("empty", "empty output")],
)
def test_hostile_worker_output_flood_is_killed_at_the_output_limit(
    variant: str, words: str
) -> None:
    """A flood of event frames ends the run at the output cap, long before its deadline."""
    result = _run(variant)
    assert not result.ok
    assert result.error is not None
    assert (result.error.kind, result.error.type) == ("sandbox", "ProtocolError")
    assert words in result.error.message
    assert "misbehaved" in result.error.message
    assert len(result.output) <= 1000
    assert result.wall_time < 15  # killed at the cap, not at the 20 s deadline


def test_hostile_worker_output_up_to_the_limit_is_kept() -> None:
    """Output events that stay within max_output_chars are an honest run's (no false kill)."""
    result = _run("exact")
    assert result.ok, result.error
    assert result.output == "A" * 1000
