"""``scriptgate agent`` against a local Chat Completions server: streamed answer, call trace,
JSON output, policy and audit, and the exit codes of ``scriptgate run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptgate.cli import EXIT_OK, EXIT_SCRIPT_FAILED, EXIT_USAGE, main


def chunk(delta: dict[str, Any] | None, finish: str | None = None) -> Any:
    return (
        None,
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish}],
            **(
                {"usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}}
                if delta is None
                else {}
            ),
        },
    )


def python_call(code: str) -> dict[str, Any]:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "python", "arguments": json.dumps({"code": code})},
    }
    return {
        "events": [chunk({"tool_calls": [call]}), chunk({}, "tool_calls"), chunk(None)],
        "done_marker": True,
    }


def text(*parts: str) -> dict[str, Any]:
    return {
        "events": [*(chunk({"content": p}) for p in parts), chunk({}, "stop"), chunk(None)],
        "done_marker": True,
    }


SCRIPT = "content = read(path='a.txt')['content']\nprint('got', len(content))\ncontent.upper()"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    return tmp_path


def argv(server: Any, root: Path, *extra: str) -> list[str]:
    return [
        "agent", "Shout the note.", "--model", "openai:m", "--base-url", f"{server.url}/v1",
        "--root", str(root), "--isolation", "in_process", *extra,
    ]  # fmt: skip


def test_cli_agent_streams_the_answer_and_prints_the_call_trace(
    server: Any, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(python_call(SCRIPT), text("The note says ", "HELLO."))
    audit = root / "audit.jsonl"
    assert main(argv(server, root, "--audit", str(audit))) == EXIT_OK
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "The note says HELLO."
    assert lines[1] == "── calls (2)"
    assert lines[2].startswith("  call_1  python(3 lines)  ok")
    assert lines[3].startswith("    call_1/1  read(path='a.txt')  ok")
    assert lines[4] == "── ok: 2 model requests, 22 in / 8 out tokens"
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["event"], line["tool"]) for line in lines] == [
        ("intent", "read"),
        ("outcome", "read"),
    ]
    tools = server.requests[0].body["tools"]
    assert [t["function"]["name"] for t in tools] == ["python"]
    assert server.requests[0].headers["authorization"] == "Bearer unused"


def test_cli_agent_json_output_and_api_key_env(
    server: Any, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", "sk-local")
    server.script(python_call(SCRIPT), text("HELLO"))
    assert (
        main(argv(server, root, "--json", "--api-key-env", "MY_KEY", "--code-mode", "on"))
        == EXIT_OK
    )
    document = json.loads(capsys.readouterr().out)
    assert document["answer"] == "HELLO"
    assert document["stopReason"] == "stop"
    (call,) = document["calls"]
    assert call["name"] == "python"
    assert call["calls"][0]["name"] == "read"
    assert [m["role"] for m in document["messages"]] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert server.requests[0].headers["authorization"] == "Bearer sk-local"
    names = [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert names[0] == "python"
    assert "read" in names


def test_cli_agent_policy_denial_reaches_the_script(
    server: Any, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = root / "policy.toml"
    policy.write_text('default = "deny"\n', encoding="utf-8")
    server.script(python_call(SCRIPT), text("I may not read it."))
    assert main(argv(server, root, "--policy", str(policy), "--api-key-env", "PATH")) == EXIT_OK
    out = capsys.readouterr().out
    assert "    call_1/1  read(path='a.txt')  blocked  Denied by policy" in out
    tool_result = server.requests[1].body["messages"][-1]["content"]
    assert tool_result.startswith("Script failed")
    assert "Denied by policy" in tool_result


def test_cli_agent_provider_error_exits_1_with_one_line(
    server: Any, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script({"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}})
    assert main(argv(server, root, "--api-key-env", "PATH")) == EXIT_SCRIPT_FAILED
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == (
        "── failed (error): openai error 401: Incorrect API key provided "
        "(1 model request, 0 in / 0 out tokens)"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--model", "gemini:pro"], "unknown provider 'gemini'"),
        (
            ["--api-key-env", "SCRIPTGATE_TEST_UNSET_VAR"],
            "--api-key-env SCRIPTGATE_TEST_UNSET_VAR: the variable is not set",
        ),
        (["--policy", "/nonexistent/policy.toml"], "policy.toml"),
    ],
)
def test_cli_agent_bad_input_exits_2_with_one_line(
    server: Any, root: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(argv(server, root, *extra)) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert server.requests == []


def test_cli_agent_without_key_or_base_url_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["agent", "hi", "--model", "anthropic:claude-x", "--no-files"]) == EXIT_USAGE
    assert "set ANTHROPIC_API_KEY or pass --api-key-env VAR" in capsys.readouterr().err
