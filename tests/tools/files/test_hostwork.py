"""File tools: host work honours the run's deadline and abort; the audit file is out of reach."""

from __future__ import annotations

import io
import json
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import scriptgate
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.types import ToolCall
from scriptgate.tools.files import _hostwork, file_tools

CATASTROPHIC = "(a|aa)+$"  # exponential on the regex engine too
NESTED = "(a+)+$"  # exponential on `re`, linear on `regex`


def _text(outcome: Any) -> str:
    return "\n".join(block.text for block in outcome.result.content)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "root"
    base.mkdir()
    (base / "evil.txt").write_text("a" * 40 + "!")  # 41 bytes
    return base


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_grep_catastrophic_pattern_stops_at_deadline(root: Path, isolation: str) -> None:
    stream = io.StringIO()
    with AuditLog(stream) as audit:
        async with scriptgate.Sandbox(
            file_tools(root),
            isolation=isolation,  # type: ignore[arg-type]
            limits=scriptgate.Limits(timeout=1.0),
            **audit.hooks().as_kwargs(),
        ) as sandbox:
            result = await sandbox.run(f"grep(pattern={CATASTROPHIC!r}, path='evil.txt')")
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert not result.ok
    assert result.error is not None
    assert result.error.kind == "limit"
    assert [c.status for c in result.calls] == ["cancelled"]
    intent, outcome = lines
    assert (intent["event"], intent["tool"]) == ("intent", "grep")
    assert outcome["status"] == "cancelled"
    # the deadline (1 s) ended the call, not the pattern (which would run for LINE_SECONDS)
    assert 900 <= outcome["duration_ms"] < 4_000
    assert result.wall_time < 4.0  # 1 s deadline; the slack is for a loaded machine


@pytest.mark.anyio
async def test_grep_nested_quantifier_pattern_finishes_at_once(root: Path) -> None:
    started = time.monotonic()
    outcome = await run_tool_call(
        ToolCall("g", "grep", {"pattern": NESTED, "path": "evil.txt"}), tools=file_tools(root)
    )
    assert time.monotonic() - started < 1.0
    assert not outcome.is_error
    assert outcome.result.structured_content == {"matches": [], "truncated": False}


@pytest.mark.anyio
async def test_grep_catastrophic_pattern_without_deadline_fails_clearly(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_hostwork, "LINE_SECONDS", 0.3)
    outcome = await run_tool_call(
        ToolCall("g", "grep", {"pattern": CATASTROPHIC}), tools=file_tools(root)
    )
    assert outcome.is_error
    text = _text(outcome)
    assert text.startswith("grep stopped at evil.txt:1: the pattern")
    assert "backtracks catastrophically" in text


def test_grep_abort_stops_the_search() -> None:
    controller = AbortController()
    search = _hostwork.Search(CATASTROPHIC)
    entered = threading.Event()
    outcome: list[BaseException] = []

    def work() -> None:
        entered.set()
        try:
            search.search("a" * 40 + "!", controller.signal)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    assert entered.wait(10)
    controller.abort()
    thread.join(timeout=2.0)  # within a slice or two, not LINE_SECONDS
    assert not thread.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], _hostwork.StoppedError)


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_find_glob_with_many_stars_is_linear(root: Path, isolation: str) -> None:
    (root / ("a" * 200)).write_text("x")
    (root / ("ab" * 20)).write_text("x")
    pattern = "*a" * 30 + "b"
    async with scriptgate.Sandbox(
        file_tools(root),
        isolation=isolation,  # type: ignore[arg-type]
        limits=scriptgate.Limits(timeout=5.0),
    ) as sandbox:
        result = await sandbox.run(f"find(pattern={pattern!r})['files']")
    assert result.ok, result.error
    assert result.value == []  # "ab"*20 has 20 a's: 30 are needed
    assert result.calls[0].duration_ms is not None
    assert result.calls[0].duration_ms < 1_000
    found = await run_tool_call(
        ToolCall("f", "find", {"pattern": "*a" * 20 + "b"}), tools=file_tools(root)
    )
    assert found.result.structured_content == {"files": ["ab" * 20], "truncated": False}


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("src/**/*.{ts,tsx}", "src/a/b.tsx", True),
        ("src/**/*.{ts,tsx}", "src/a/b.js", False),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[!a]*", "bcd", True),
        ("[!a]*", "acd", False),
        ("x/**/y", "x/y", True),
        ("x/**/y", "x/a/b/y", True),
        ("{a,b}*{c,d}", "bzzd", True),
        ("[abc", "[abc", True),
        ("*a" * 40 + "b", "a" * 5000, False),
    ],
)
def test_find_glob_compiles_to_a_safe_matcher(pattern: str, text: str, expected: bool) -> None:
    assert _hostwork.compile_glob(pattern).match(text) is expected


def test_edit_diff_of_a_large_rewrite_is_bounded() -> None:
    old = "\n".join(f"line {i}" for i in range(300_000))
    new = "\n".join(f"LINE {i}" for i in range(300_000))
    started = time.monotonic()
    diff, first = _hostwork.bounded_diff(old, new)
    assert time.monotonic() - started < 2.0
    assert first == 1
    assert len(diff) <= _hostwork.DIFF_MAX_CHARS + 200
    assert diff.endswith(f"[diff cut at {_hostwork.DIFF_MAX_CHARS} characters]")
    assert diff.startswith("--- before\n+++ after\n@@ -1,300000 +1,300000 @@\n-line 0")


@pytest.mark.anyio
async def test_edit_large_file_diff_does_not_block_and_lands(root: Path) -> None:
    path = root / "big.txt"
    path.write_text("\n".join(f"row {i % 13} {i % 7}" for i in range(150_000)))
    body = path.read_text()
    edits = [{"oldText": body, "newText": body.replace("row", "ROW")}]
    started = time.monotonic()
    outcome = await run_tool_call(
        ToolCall("e", "edit", {"path": "big.txt", "edits": edits}), tools=file_tools(root)
    )
    assert time.monotonic() - started < 5.0
    assert not outcome.is_error, _text(outcome)
    assert path.read_text().startswith("ROW 0 0\nROW 1 1")
    assert outcome.result.details["firstChangedLine"] == 1


# --------------------------------------------------------------------------- the audit file


@pytest.mark.anyio
async def test_files_refuse_the_audit_file_by_identity(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    log = root / "audit.jsonl"
    with AuditLog(log) as audit:
        assert audit.path == log
        os.symlink(log, root / "innocent.txt")
        os.link(log, root / "hard.txt")
        (root / "sub").mkdir()
        (root / "other.txt").write_text("token\n")
        tools = file_tools(root, protected=[log])
        spellings = ["audit.jsonl", str(log), "sub/../audit.jsonl", "innocent.txt", "hard.txt"]
        for spelling in spellings:
            for name, args in (
                ("read", {"path": spelling}),
                ("write", {"path": spelling, "content": "forged"}),
                ("edit", {"path": spelling, "edits": [{"oldText": "a", "newText": "b"}]}),
                ("grep", {"pattern": "token", "path": spelling}),
            ):
                outcome = await run_tool_call(ToolCall("p", name, args), tools=tools)
                assert outcome.is_error, (name, spelling)
                assert "is a protected file" in _text(outcome), (name, spelling)
        found = await run_tool_call(ToolCall("f", "find", {"pattern": "*"}), tools=tools)
        assert found.result.structured_content is not None
        assert sorted(found.result.structured_content["files"]) == [
            "other.txt"
        ]  # the link leads to it too
        grep = await run_tool_call(ToolCall("g", "grep", {"pattern": "."}), tools=tools)
        assert grep.result.structured_content is not None
        assert {m["path"] for m in grep.result.structured_content["matches"]} == {"other.txt"}
    assert "forged" not in log.read_text()


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_edit_diff_cut_off_by_the_deadline_does_not_land(
    root: Path, isolation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lift the diff bound so that difflib itself outlasts the deadline (about 1 s for these
    # 10,000 lines of 21 words on a quiet machine; of 51 words they once took 0.35 s, inside
    # the deadline): the deadline must still end the call, off the event loop, and the edit
    # must not have been written (the diff is made before the write).
    monkeypatch.setattr(_hostwork, "DIFF_MAX_LINES", 10**9)
    rng = random.Random(0)
    words = [f"w{rng.randint(0, 20)}" for _ in range(10_000)]
    body = "\n".join(words)
    changed = "\n".join(w + "x" if rng.random() < 0.5 else w for w in words)
    (root / "big.txt").write_text(body)
    edits = [{"oldText": body, "newText": changed}]
    stream = io.StringIO()
    with AuditLog(stream) as audit:
        async with scriptgate.Sandbox(
            file_tools(root),
            isolation=isolation,  # type: ignore[arg-type]
            limits=scriptgate.Limits(timeout=0.5),
            **audit.hooks().as_kwargs(),
        ) as sandbox:
            result = await sandbox.run(f"edit(path='big.txt', edits={edits!r})")
        lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert not result.ok
    assert result.error is not None
    assert result.error.kind == "limit"
    assert [c.status for c in result.calls] == ["cancelled"]
    assert (root / "big.txt").read_text() == body  # not landed
    intent, outcome = lines
    assert (intent["tool"], outcome["status"]) == ("edit", "cancelled")
    assert outcome["duration_ms"] < 2_000
