"""A real code-mode agent turn: the model answers with Python over read-only file tools.

It needs a model. Set one of:

- ``OPENAI_API_KEY``            (uses ``openai:gpt-4.1-mini``);
- ``ANTHROPIC_API_KEY``         (uses ``anthropic:claude-sonnet-4-5``);
- ``SCRIPTGATE_BASE_URL``       an OpenAI-compatible server (Ollama, vLLM, LM Studio,
  llama.cpp), e.g. ``http://localhost:11434/v1`` (uses ``openai:llama3.2``).

``SCRIPTGATE_MODEL=provider:name`` picks another model. Without any of these it prints
a one-line note and exits 0. Run it from the repository root::

    uv run python examples/agent.py "Which module under scriptgate/ has the most functions?"
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from scriptgate import Agent, Policy, file_tools
from scriptgate.runtime.stream import AssistantMessageEvent

PROMPT = "How many Python files are under scriptgate/, and which one is the largest?"


def pick_model() -> tuple[str, str | None] | None:
    """The model spec and base URL from the environment, or None."""
    base_url = os.environ.get("SCRIPTGATE_BASE_URL")
    chosen = os.environ.get("SCRIPTGATE_MODEL")
    if base_url:
        return chosen or "openai:llama3.2", base_url
    if os.environ.get("OPENAI_API_KEY"):
        return chosen or "openai:gpt-4.1-mini", None
    if os.environ.get("ANTHROPIC_API_KEY"):
        return chosen or "anthropic:claude-sonnet-4-5", None
    return None


def main() -> int:
    picked = pick_model()
    if picked is None:
        print(
            "examples/agent.py: set OPENAI_API_KEY, ANTHROPIC_API_KEY or SCRIPTGATE_BASE_URL "
            "to run a real agent turn; nothing to do."
        )
        return 0
    spec, base_url = picked
    from scriptgate.models import from_spec

    key = None if os.environ.get("OPENAI_API_KEY") or not base_url else "unused"
    model = from_spec(spec, base_url=base_url, api_key=key)
    policy = Policy.from_dict(
        {
            "default": "allow",
            "rules": [{"tool": "*", "action": "deny", "arguments": {"path": ".git/**"}}],
        }
    )
    agent = Agent(
        model,
        tools=file_tools(Path.cwd(), read_only=True),
        code_mode="only",
        system_prompt="Answer with the python tool; keep intermediate data in the script.",
        policy=policy,
    )

    def show(event: object) -> None:
        delta = getattr(event, "assistant_message_event", None)
        if isinstance(delta, AssistantMessageEvent) and delta.type == "text_delta":
            print(delta.delta, end="", flush=True)
        elif getattr(event, "type", None) == "tool_execution_end":
            calls = (event.result.details or {}).get("calls", [])
            names = ", ".join(f"{c['name']} ({c['status']})" for c in calls)
            print(f"\n[python ran: {names or 'no tool calls'}]", flush=True)

    agent.subscribe(show)
    answer = agent.prompt_sync(" ".join(sys.argv[1:]) or PROMPT)
    agent.close()
    print()
    if answer is None or answer.stop_reason in ("error", "aborted"):
        print(f"failed: {answer.error_message if answer else 'no answer'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
