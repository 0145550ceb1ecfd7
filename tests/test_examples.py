"""The README's main job: examples/triage.py under examples/policy.toml, end to end via the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriptgate.cli import EXIT_OK, main

REPO = Path(__file__).resolve().parent.parent
DENIED = "Denied by policy: read-only run: this example may look but not touch"


@pytest.fixture
def at_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(REPO)
    return REPO


def test_examples_triage_main_job_prints_result_and_audit_trail(
    at_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exactly the README's command line (after `uv run scriptgate`).
    argv = ["run", "examples/triage.py", "--root", ".", "--policy", "examples/policy.toml"]
    assert main([*argv, "--audit", "-"]) == EXIT_OK
    captured = capsys.readouterr()

    out = captured.out
    assert "Python files under scriptgate/" in out
    assert f"could not save the report: {DENIED}" in out
    assert '"report_written": false' in out
    assert "write(path='TRIAGE.md'" in out
    assert "── ok in" in out

    lines = [json.loads(line) for line in captured.err.splitlines()]  # only audit lines
    outcomes = {line["token"]: line for line in lines if line["event"] == "outcome"}
    audit = [
        {**line, **outcomes[line["token"]]} for line in lines if line["event"] == "intent"
    ]  # each call's intent, with its outcome
    assert [line["tool"] for line in audit] == ["find", "grep", "grep", "read", "write"]
    assert len({line["run_id"] for line in lines}) == 1
    for line in audit[:4]:
        assert (line["decision"], line["rule"], line["status"]) == ("allow", 1, "ok")
        assert line["reason"] == "reading the repository is allowed"
        assert line["result_digest"].startswith("sha256:")
        assert isinstance(line["duration_ms"], int)
    write = audit[4]
    assert write["arguments"]["path"] == "TRIAGE.md"
    assert (write["decision"], write["rule"], write["status"]) == ("deny", 2, "blocked")
    assert write["reason"] == "read-only run: this example may look but not touch"
    assert write["result_digest"] is None
    assert not (at_repo / "TRIAGE.md").exists()


def test_examples_triage_value_is_a_summary(
    at_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "examples/triage.py", "--policy", "examples/policy.toml", "--json"]
    assert main(argv) == EXIT_OK
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is True
    value = result["value"]
    assert set(value) == {
        "python_files",
        "functions",
        "busiest",
        "todo_markers",
        "summary",
        "report_written",
    }
    assert value["python_files"] >= 10
    assert value["functions"] > value["python_files"]
    assert len(value["busiest"]) == 3
    assert all(path.startswith("scriptgate/") for path in value["busiest"])
    assert value["summary"].startswith("scriptgate")
    assert value["report_written"] is False
    assert [c["status"] for c in result["calls"]] == ["ok", "ok", "ok", "ok", "blocked"]
    assert result["calls"][-1]["error"] == DENIED


def test_examples_triage_check_previews_the_denied_write(
    at_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", "examples/triage.py", "--policy", "examples/policy.toml"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert "tools called (4): find, grep, read, write" in out
    assert "write(path='TRIAGE.md', content=<expr>)  → deny (rules[2]" in out
