"""examples/agent.py: a note without a model, a real turn against a local server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agent.py"
MODEL_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SCRIPTGATE_BASE_URL", "SCRIPTGATE_MODEL")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MODEL_VARS}
    env.update(extra)
    return env


def test_example_agent_without_a_model_prints_a_note_and_exits_0() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1
    assert "set OPENAI_API_KEY, ANTHROPIC_API_KEY or SCRIPTGATE_BASE_URL" in lines[0]


def chunk(delta: dict[str, Any], finish: str | None = None) -> Any:
    return (
        None,
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        },
    )


def test_example_agent_runs_a_real_turn_against_a_local_server(server: Any) -> None:
    code = "len(find(pattern='scriptgate/*.py')['files'])"
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "python", "arguments": json.dumps({"code": code})},
    }
    server.script(
        {"events": [chunk({"tool_calls": [call]}), chunk({}, "tool_calls")], "done_marker": True},
        {"events": [chunk({"content": "Counted them."}), chunk({}, "stop")], "done_marker": True},
    )
    env = clean_env(SCRIPTGATE_BASE_URL=f"{server.url}/v1", SCRIPTGATE_MODEL="openai:local")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "[python ran: find (ok)]" in proc.stdout
    assert proc.stdout.rstrip().endswith("Counted them.")
    assert server.requests[0].body["model"] == "local"
    result = server.requests[1].body["messages"][-1]["content"]
    assert result.startswith("Script completed")
