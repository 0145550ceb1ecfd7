"""Ctrl-C on a real ``scriptgate run`` process: the run stops, what it did so far is shown.

Each test starts the command, waits until the script's marker arrives on the pipe
(streamed as printed), then sends SIGINT.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scriptgate.cli import EXIT_INTERRUPTED

TOOLS = '''
import sys

import anyio

from scriptgate.runtime.tool import tool


@tool
async def wait_forever() -> str:
    """Wait until cancelled (telling the test on stderr first)."""
    sys.stderr.write("WAITING\\n")
    sys.stderr.flush()
    await anyio.sleep_forever()
    return "never"


@tool
def ping() -> str:
    """Answer at once."""
    return "pong"
'''

BUSY = 'print("READY")\ns = "x" * 1000\nwhile True:\n    s.count("y")\n'
WAITING = 'print(ping())\nprint("READY")\nwait_forever()\n'


def _start(tmp_path: Path, script: str, *extra: str) -> subprocess.Popen[str]:
    (tmp_path / "tools_mod.py").write_text(TOOLS)
    path = tmp_path / "script.py"
    path.write_text(script)
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "scriptgate", "run", str(path), "--no-files"),
            *("--timeout", "60", "--tools", str(tmp_path / "tools_mod.py"), *extra),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


def _interrupt(proc: subprocess.Popen[str], marker: str = "READY\n") -> tuple[str, str, float]:
    """Wait for ``marker`` on stdout (``READY``, printed by the script) or on stderr
    (``WAITING``, written by the tool), send SIGINT, return stdout, stderr and the delay."""
    stream = proc.stdout if marker == "READY\n" else proc.stderr
    assert stream is not None
    lines = []
    while True:  # the marker, and what came before it
        line = stream.readline()
        assert line, "the marker never arrived"
        lines.append(line)
        if line == marker:
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    if stream is proc.stdout:
        return "".join(lines) + out, err, took
    return out, "".join(lines) + err, took


@pytest.mark.parametrize("isolation", ["in_process", "process"])
def test_cli_interrupt_stops_a_busy_script_keeping_output(tmp_path: Path, isolation: str) -> None:
    proc = _start(tmp_path, BUSY, "--isolation", isolation)
    out, err, took = _interrupt(proc)
    assert proc.returncode == EXIT_INTERRUPTED, (out, err)
    assert took < 5  # a fraction of a second, leaving room for a loaded CI machine
    assert out.startswith("READY\n")
    assert "failed (aborted)" in out
    assert "Interrupted (Ctrl-C)" in out
    assert "timed out" not in out + err
    assert "interrupted" not in err  # the result says it, once


@pytest.mark.parametrize("isolation", ["in_process", "process"])
def test_cli_interrupt_cancels_a_waiting_call_keeping_the_trace(
    tmp_path: Path, isolation: str
) -> None:
    proc = _start(tmp_path, WAITING, "--isolation", isolation)
    out, err, took = _interrupt(proc, "WAITING\n")
    assert proc.returncode == EXIT_INTERRUPTED, (out, err)
    assert took < 5
    assert out.startswith("pong\nREADY\n")
    assert "── calls (2)" in out
    assert "ping()  ok" in out
    assert "wait_forever()  cancelled" in out
    assert "Interrupted (Ctrl-C)" in out


def test_cli_interrupt_json_is_one_document(tmp_path: Path) -> None:
    proc = _start(tmp_path, "ping()\nwait_forever()\n", "--json")
    assert proc.stderr is not None
    assert proc.stderr.readline() == "WAITING\n"  # written by the tool as it starts waiting
    proc.send_signal(signal.SIGINT)
    out, _err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT_INTERRUPTED
    result = json.loads(out)
    assert result["error"]["kind"] == "aborted"
    assert [c["status"] for c in result["calls"]] == ["ok", "cancelled"]
