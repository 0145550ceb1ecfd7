"""from_spec picks an adapter; bad specs are one-line configuration errors."""

from __future__ import annotations

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.models import (
    AnthropicMessages,
    OpenAIChat,
    OpenAIResponses,
    from_spec,
)


@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [
        ("openai:gpt-4.1", OpenAIChat, "gpt-4.1"),
        ("openai-chat:llama3:8b", OpenAIChat, "llama3:8b"),
        ("openai-responses:gpt-5", OpenAIResponses, "gpt-5"),
        ("anthropic:claude-sonnet-4-5", AnthropicMessages, "claude-sonnet-4-5"),
    ],
)
def test_from_spec_picks_the_adapter(spec: str, cls: type, name: str) -> None:
    model = from_spec(spec, base_url="http://127.0.0.1:1/v1", api_key="k")
    assert isinstance(model, cls)
    assert model.model == name
    assert model.base_url == "http://127.0.0.1:1/v1"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4.1", "expected PROVIDER:MODEL"),
        ("openai:", "expected PROVIDER:MODEL"),
        ("gemini:pro", "unknown provider 'gemini'"),
    ],
)
def test_from_spec_rejects_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as info:
        from_spec(spec)
    assert "\n" not in str(info.value)
