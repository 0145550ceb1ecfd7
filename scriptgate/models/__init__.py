"""Provider adapters on the official SDKs, each a streaming ``stream_fn`` for the agent loop.

- :func:`openai_chat`: OpenAI Chat Completions and OpenAI-compatible servers
  (``base_url``), extra ``openai``;
- :func:`openai_responses`: the OpenAI Responses API, extra ``openai``;
- :func:`anthropic_messages`: Anthropic Messages, extra ``anthropic``;
- :func:`from_spec`: one of them from ``"provider:model"``.

Each streams pi's ``message_start|update|end`` events, maps usage and stop reasons,
turns unparsable tool arguments into ``arguments_error``, cancels the request on
abort, sends the system prompt and the transcript's tool declarations, and returns
provider failures as ``stop_reason="error"`` messages. Imports only
:mod:`scriptgate.runtime` (and the SDKs, when a model is built).
"""

from __future__ import annotations

from typing import Any

from scriptgate.errors import ConfigurationError
from scriptgate.models.anthropic import AnthropicMessages, anthropic_messages
from scriptgate.models.openai_chat import OpenAIChat, openai_chat
from scriptgate.models.openai_responses import OpenAIResponses, openai_responses

__all__ = [
    "PROVIDERS",
    "AnthropicMessages",
    "OpenAIChat",
    "OpenAIResponses",
    "anthropic_messages",
    "from_spec",
    "openai_chat",
    "openai_responses",
]

PROVIDERS: dict[str, Any] = {
    "openai": openai_chat,
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic_messages,
}
"""The provider prefixes :func:`from_spec` understands."""


def from_spec(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    **options: Any,
) -> OpenAIChat | OpenAIResponses | AnthropicMessages:
    """The model named by ``"provider:model"``: ``openai:gpt-4.1`` (Chat Completions;
    with ``base_url`` any compatible server), ``openai-responses:...``,
    ``anthropic:claude-...``. Raises :class:`ConfigurationError` for anything else."""
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ConfigurationError(
            f"model spec {spec!r}: expected PROVIDER:MODEL, e.g. openai:gpt-4.1"
        )
    factory = PROVIDERS.get(provider)
    if factory is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigurationError(f"model spec {spec!r}: unknown provider {provider!r} ({known})")
    model: OpenAIChat | OpenAIResponses | AnthropicMessages = factory(
        name, base_url=base_url, api_key=api_key, **options
    )
    return model
