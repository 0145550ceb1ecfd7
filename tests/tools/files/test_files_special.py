"""File tools and non-regular files (FIFOs, sockets, devices) and host work that hangs.

The content tools refuse every non-regular file before opening it, in both isolation
modes; and host work stuck in the kernel does not outlast the run's deadline.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import scriptgate
from scriptgate.tools.files import file_tools
from scriptgate.tools.files import read as read_module
from scriptgate.tools.files import write as write_module

MODES = ["in_process", "process"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    base.mkdir()
    (base / "a.txt").write_text("hello\n")
    os.mkfifo(base / "pipe")
    return base


async def _run(root: Path, isolation: str, code: str, deadline: float = 5.0) -> Any:
    async with scriptgate.Sandbox(
        tools=file_tools(root),
        isolation=isolation,  # type: ignore[arg-type]
        limits=scriptgate.Limits(timeout=deadline),
    ) as sandbox:
        return await sandbox.run(code)


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
@pytest.mark.parametrize(
    "code",
    [
        "write(path='pipe', content='x')",
        "edit(path='pipe', edits=[{'oldText': 'a', 'newText': 'b'}])",
        "read(path='pipe')",
        "grep(pattern='x', path='pipe')",
    ],
)
async def test_edit_write_fifo_run_never_returns_refused(
    root: Path, isolation: str, code: str
) -> None:
    result = await _run(root, isolation, code)
    assert result.wall_time < 2.0
    assert result.error is not None
    assert result.error.kind == "tool"
    assert result.error.message == (
        "Not a regular file: pipe is a FIFO (named pipe); the file tools open only regular files"
    )
    assert stat_is_fifo(root / "pipe")  # write did not replace it


def stat_is_fifo(path: Path) -> bool:
    """Whether ``path`` is (still) a FIFO."""
    return stat.S_ISFIFO(os.lstat(path).st_mode)


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
async def test_grep_fifo_hangs_host_walk_skips_it(root: Path, isolation: str) -> None:
    result = await _run(root, isolation, "grep(pattern='hello')")
    assert result.ok, result.error
    assert [m["path"] for m in result.value["matches"]] == ["a.txt"]
    names = await _run(root, isolation, "ls(path='.')")
    assert {"name": "pipe", "type": "other", "size": 0} in names.value["entries"]  # ls lists it


@pytest.mark.anyio
async def test_grep_fifo_hangs_host_socket_refused(tmp_path: Path) -> None:
    base = tmp_path / "r"
    base.mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(base / "sock"))
        result = await _run(base, "in_process", "read(path='sock')")
    assert result.error is not None
    assert "sock is a socket" in result.error.message


@pytest.mark.anyio
async def test_grep_fifo_hangs_host_device_refused(tmp_path: Path) -> None:
    base = tmp_path / "r"
    base.mkdir()
    (base / "null").symlink_to("/dev/null")
    # the link resolves outside the root; inside, a device node would be refused the same way
    result = await _run(base, "in_process", "write(path='null', content='x')")
    assert result.error is not None
    assert result.error.kind == "tool"


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
async def test_grep_fifo_hangs_host_stuck_open_is_abandoned_at_deadline(
    root: Path, isolation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An open the kernel never returns from (a hung network mount): the run still
    # ends at its deadline with the call cancelled, and the thread is a daemon.
    release = threading.Event()
    entered = threading.Event()

    def stuck(real: str, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
        entered.set()
        release.wait()
        raise OSError("released")

    # read and write open through the same helper, each from its own module
    monkeypatch.setattr(read_module, "_open_regular", stuck)
    monkeypatch.setattr(write_module, "_open_regular", stuck)
    try:
        for code in ("read(path='a.txt')", "write(path='a.txt', content='x')"):
            entered.clear()
            result = await _run(root, isolation, code, deadline=0.5)
            assert entered.is_set()
            assert result.wall_time < 2.0
            assert result.error is not None
            assert result.error.kind == "limit"
            assert [c.status for c in result.calls] == ["cancelled"]
            hung = [t for t in threading.enumerate() if t.name == "scriptgate host work"]
            assert hung
            assert all(t.daemon for t in hung)
    finally:
        release.set()


def test_grep_fifo_hangs_host_cli_exits_at_timeout(root: Path, tmp_path: Path) -> None:
    script = tmp_path / "g.py"
    script.write_text("grep(pattern='hello')\nread(path='pipe')\n")
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scriptgate",
            "run",
            str(script),
            "--root",
            str(root),
            "--timeout",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert time.monotonic() - started < 15
    assert "Not a regular file: pipe is a FIFO" in proc.stdout + proc.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
async def test_read_big_file_outlasts_deadline_reads_only_its_window(
    tmp_path: Path, isolation: str
) -> None:
    base = tmp_path / "r"
    base.mkdir()
    big = base / "data.csv"
    with big.open("wb") as f:
        f.write(b"a,b\n" * 4096)
        f.truncate(4 << 30)  # sparse: no disk used
    try:
        result = await _run(base, isolation, "read(path='data.csv', limit=1)", deadline=2.0)
    finally:
        big.unlink()
    assert result.ok, result.error
    assert result.wall_time < 2.0
    assert result.value["content"] == "a,b"
    assert result.value["total_lines"] is None  # too big to count: not counted
    assert result.value["next_offset"] == 2


@pytest.mark.anyio
async def test_read_big_file_outlasts_deadline_small_file_total_is_exact(tmp_path: Path) -> None:
    base = tmp_path / "r"
    base.mkdir()
    (base / "f.txt").write_text("1\n2\n3\n4\n5")
    result = await _run(base, "in_process", "read(path='f.txt', offset=2, limit=2)")
    assert result.value["total_lines"] == 5
    assert result.value["content"] == "2\n3"
    beyond = await _run(base, "in_process", "read(path='f.txt', offset=7)")
    assert beyond.error is not None
    assert beyond.error.message == "Offset 7 is beyond end of file (5 lines total)"
