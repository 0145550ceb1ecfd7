"""What ``scriptgate run`` shows while a script runs: streamed output, progress on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from scriptgate._live import LiveView
from scriptgate.sandbox.events import RunEvent


def test_live_view_streams_output_and_reports_calls_after_the_delay() -> None:
    out, err = io.StringIO(), io.StringIO()
    view = LiveView(out, err, progress=True, after=0.0)
    view(RunEvent("output", "hello\n"))
    view(RunEvent("call_start", call_id="script/1", tool="read"))
    view(RunEvent("call_end", call_id="script/1", tool="read", status="ok", duration_ms=3))
    assert out.getvalue() == "hello\n"
    lines = err.getvalue().splitlines()
    assert lines[0].endswith("call 1: read started")
    assert lines[1].endswith("script/1 read: ok in 3 ms")
    assert view.streamed


def test_live_view_is_quiet_without_a_terminal_or_before_the_delay() -> None:
    err = io.StringIO()
    LiveView(io.StringIO(), err, progress=False, after=0.0)(RunEvent("call_start", tool="t"))
    LiveView(io.StringIO(), err, progress=True, after=3600.0)(RunEvent("call_start", tool="t"))
    assert err.getvalue() == ""


def test_cli_run_streams_output_before_the_script_ends(tmp_path: Path) -> None:
    tools = tmp_path / "gate.py"
    tools.write_text(
        "import sys\nfrom scriptgate import tool\n\n@tool\ndef gate() -> str:\n"
        '    """Wait for the test to say go on standard input."""\n'
        "    return sys.stdin.readline().strip()\n"
    )
    script = tmp_path / "s.py"
    script.write_text('print("first")\nprint(gate())\n')
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "scriptgate", "run"),
            str(script),
            "--no-files",
            "--tools",
            str(tools),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    assert proc.stdout.readline() == "first\n"  # while the script waits in gate()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    out, _err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out.startswith("go\n── calls (1)")
