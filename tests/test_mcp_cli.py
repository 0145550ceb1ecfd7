"""The CLI with real MCP servers in subprocesses: options, config file, banners, Ctrl-C."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

EDGE = str(Path(__file__).parent / "tools" / "mcp_edge_server.py")
PY = sys.executable


def scriptgate(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "scriptgate", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


def test_mcp_cli_banner_on_stdout_costs_one_stderr_line() -> None:
    done = scriptgate("stubs", "--mcp", f"{PY} {EDGE} --banner")
    assert done.returncode == 0, done.stderr
    assert "def whoami(" in done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "not JSON-RPC" in lines[0]
    assert "Edge MCP server v1.0 starting up" in lines[0]
    assert "Traceback" not in done.stderr


def test_mcp_cli_file_tools_only_when_asked(tmp_path: Path) -> None:
    plain = scriptgate("stubs", "--mcp", f"{PY} {EDGE}")
    assert plain.returncode == 0, plain.stderr
    assert "def whoami(" in plain.stdout
    assert "def write(" not in plain.stdout
    assert "def edit(" not in plain.stdout
    clash = scriptgate("stubs", "--mcp", f"{PY} {EDGE}", "--files", "--root", str(tmp_path))
    assert clash.returncode == 2
    assert "two tools are named 'find'" in clash.stderr
    asked = scriptgate(
        "stubs", "--mcp", f"{PY} {EDGE}", "--mcp-prefix", "e_", "--files", "--root", str(tmp_path)
    )
    assert asked.returncode == 0, asked.stderr
    assert "def write(" in asked.stdout
    assert "def e_find(" in asked.stdout


def test_mcp_cli_env_cwd_prefix_and_timeout_options(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("x_whoami()")
    done = scriptgate(
        "run", str(script), "--json",
        "--mcp", f"{PY} {EDGE} --name cli",
        "--mcp-env", "EDGE_VAR=hello",
        "--mcp-cwd", str(tmp_path),
        "--mcp-prefix", "x_",
        "--mcp-timeout", "60",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == f"cli {tmp_path} hello"


def test_mcp_cli_qualifier_without_mcp_is_a_usage_error() -> None:
    done = scriptgate("stubs", "--mcp-env", "A=1")
    assert done.returncode == 2
    assert "must follow the --mcp" in done.stderr


def test_mcp_cli_config_file(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "one": {"command": PY, "args": [EDGE, "--name", "one"], "prefix": "one_"},
                    "two": {
                        "command": PY,
                        "args": [EDGE, "--name", "two"],
                        "prefix": "two_",
                        "enabled_tools": ["whoami"],
                    },
                }
            }
        )
    )
    script = tmp_path / "s.py"
    script.write_text("[one_whoami().split()[0], two_whoami().split()[0]]")
    done = scriptgate("run", str(script), "--json", "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == ["one", "two"]
    stubs = scriptgate("stubs", "--mcp-config", str(config))
    assert "def two_a_b(" not in stubs.stdout
    assert "def one_a_b(" in stubs.stdout


def test_mcp_cli_failing_server_is_one_line(tmp_path: Path) -> None:
    done = scriptgate("stubs", "--mcp", f"{PY} {EDGE}", "--mcp", f"{PY} -c pass")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Could not start MCP server" in done.stderr


def _wait_for_exit(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (not our child) exits within ``timeout`` s, watched with a pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def test_mcp_cli_two_quick_sigints_stop_scriptgate_and_the_server(tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    started = tmp_path / "started"
    os.mkfifo(started)  # the server's `wait` tool writes to it: reading it waits for the call
    script = tmp_path / "s.py"
    script.write_text("wait()")
    process = subprocess.Popen(
        [
            PY, "-m", "scriptgate", "run", str(script), "--timeout", "300",
            "--mcp", f"{PY} {EDGE} --pidfile {pidfile} --marker {tmp_path}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert started.read_text() == "1"
        server_pid = int(pidfile.read_text())
        process.send_signal(signal.SIGINT)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    # said once: in the run's result (stdout) or, if the second SIGINT cut the run short, on stderr
    assert "interrupted" in (stdout + stderr).lower(), (stdout, stderr)
    assert "Traceback" not in stderr
    assert _wait_for_exit(server_pid, 30), "the MCP server outlived scriptgate"
