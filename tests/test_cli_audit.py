"""scriptgate run: the audit log out of the tools' reach, big values, escaped terminal output."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scriptgate.cli import EXIT_OK, EXIT_SCRIPT_FAILED, EXIT_USAGE, main


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "root"
    (base / "sub").mkdir(parents=True)
    (base / "notes.txt").write_text("hello\n", encoding="utf-8")
    monkeypatch.chdir(base)
    return base


def _script(tmp_path: Path, text: str) -> str:
    path = tmp_path / "script.py"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _strict_lines(path: Path) -> list[dict[str, Any]]:
    def refuse(token: str) -> Any:
        raise ValueError(token)

    return [json.loads(x, parse_constant=refuse) for x in path.read_text("utf-8").splitlines()]


@pytest.mark.parametrize(
    "spelling", ["audit.jsonl", "sub/../audit.jsonl", "{root}/sub/audit.jsonl", "{link}/a.jsonl"]
)
def test_cli_audit_log_under_root_refused(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], spelling: str
) -> None:
    os.symlink(root / "sub", tmp_path / "link")  # a directory outside that leads inside
    audit = spelling.format(root=root, link=tmp_path / "link")
    script = _script(tmp_path, "read(path='notes.txt')")
    assert main(["run", script, "--root", ".", "--audit", audit]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"scriptgate: error: --audit {audit} is inside --root .")
    assert not (root / "audit.jsonl").exists()
    assert not (root / "sub" / "audit.jsonl").exists()
    assert not (root / "sub" / "a.jsonl").exists()


def test_cli_audit_log_outside_root_is_kept_from_the_tools_by_identity(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("", encoding="utf-8")
    os.link(log, root / "alias.txt")  # the same file, inside the root
    script = _script(
        tmp_path,
        "out = []\n"
        "for call in (lambda: read(path='alias.txt'),\n"
        "             lambda: write(path='alias.txt', content='{}')):\n"
        "    try:\n"
        "        call()\n"
        "    except ToolError as e:\n"
        "        out.append(str(e))\n"
        "out\n",
    )
    assert main(["run", script, "--root", ".", "--audit", str(log), "--json"]) == EXIT_OK
    value = json.loads(capsys.readouterr().out)["value"]
    assert len(value) == 2
    assert all("is a protected file" in text for text in value)
    lines = _strict_lines(log)
    assert [x["event"] for x in lines] == ["intent", "outcome", "intent", "outcome"]
    # the protected file is refused while its path is resolved, before the gate and execute
    outcomes = [x for x in lines if x["event"] == "outcome"]
    assert [x["status"] for x in outcomes] == ["invalid", "invalid"]
    assert all("is a protected file" in x["error"] for x in outcomes)
    assert [x["decision"] for x in lines if x["event"] == "intent"] == [None, None]


@pytest.mark.parametrize("isolation", ["in_process", "process"])
def test_cli_audit_5000_digit_int_argument_does_not_crash(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], isolation: str
) -> None:
    log = tmp_path / "audit.jsonl"
    script = _script(tmp_path, "n = 10**5000\nr = ls(path='.', limit=n)\nlen(r['entries'])")
    argv = ["run", script, "--root", ".", "--audit", str(log), "--isolation", isolation]
    # Both modes refuse the value at the call, before the gate: a clean error in the
    # script, nothing ran (so no audit line is owed), no crash (exit 1, not 3).
    assert main(argv) == EXIT_SCRIPT_FAILED
    assert "is an int of more than 4,300 digits" in capsys.readouterr().out
    assert not log.exists() or _strict_lines(log) == []
    assert main([*argv, "--json"]) == EXIT_SCRIPT_FAILED
    assert json.loads(capsys.readouterr().out)["ok"] is False


HOSTILE = (
    "print('\\x1b[2J\\x1b[3J\\x1b[Hcleared\\ttab\\rCR\\u202e')\n"
    "try:\n"
    "    read(path='\\x1b[31mred')\n"
    "except ToolError:\n"
    "    pass\n"
    "'\\x1b]0;title\\x07value'\n"
)


def test_cli_output_escapes_control_characters(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", _script(tmp_path, HOSTILE), "--root", "."]) == EXIT_OK
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\r" not in out
    assert "\u202e" not in out
    assert "\\x1b[2J\\x1b[3J\\x1b[Hcleared\ttab\\x0dCR\\u202e\n" in out  # newline and tab kept
    assert "\\x1b]0;title\\x07value" in out  # the value
    assert "read(path='\\x1b[31mred')" in out  # the call trace


def test_cli_raw_passes_output_byte_for_byte_when_not_a_terminal(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", _script(tmp_path, HOSTILE), "--root", ".", "--raw"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "\x1b[2J\x1b[3J\x1b[Hcleared\ttab\rCR\u202e\n" in out
    assert "\x1b]0;title\x07value" in out


def test_cli_raw_on_a_terminal_still_escapes(root: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, HOSTILE)
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scriptgate", "run", script, "--root", ".", "--raw"],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=subprocess.PIPE,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == EXIT_OK, proc.stderr.read() if proc.stderr else ""
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    shown = b"".join(chunks).decode("utf-8")
    assert "\x1b" not in shown
    assert "\\x1b[2J\\x1b[3J\\x1b[Hcleared" in shown
