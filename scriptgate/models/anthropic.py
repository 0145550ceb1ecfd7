"""Anthropic Messages as a streaming ``stream_fn`` for the agent loop, on the official
``anthropic`` SDK (extra ``anthropic``).

Owns the conversion of the transcript to Messages (the system prompt and the
transcript's system texts go in ``system``; tool results are ``tool_result`` blocks
of a user turn) and of the streamed events back to pi's assistant message and
events. Transcript tool support is ``"none"``.
"""

from __future__ import annotations

from typing import Any

from scriptgate.errors import ConfigurationError
from scriptgate.models._common import (
    MessageBuilder,
    ProviderModel,
    prepare_transcript,
    request_tools,
    system_text,
)
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.types import (
    AssistantMessage,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = ["AnthropicMessages", "anthropic_messages", "anthropic_messages_input"]

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` of a request when none is given (the API requires one)."""

_STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}

_THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}


def _require_sdk() -> Any:
    try:
        import anthropic
    except ImportError:
        raise ConfigurationError(
            "the Anthropic adapter needs the anthropic SDK: pip install 'scriptgate[anthropic]'"
        ) from None
    return anthropic


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent) and block.text:
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            out.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
                }
            )
    return out


def anthropic_messages_input(context: ModelContext) -> list[dict[str, Any]]:
    """The transcript as Messages turns (consecutive user-side content merged into one turn)."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    for message in prepare_transcript(context.messages):
        if isinstance(message, UserMessage):
            add("user", _blocks(message.content))
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            for block in message.content:
                if isinstance(block, TextContent) and block.text:
                    blocks.append({"type": "text", "text": block.text})
                elif isinstance(block, ThinkingContent) and block.thinking_signature:
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": block.thinking,
                            "signature": block.thinking_signature,
                        }
                    )
                elif isinstance(block, ToolCall):
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": block.id,
                            "name": block.name,
                            "input": block.arguments,
                        }
                    )
            add("assistant", blocks)
        elif isinstance(message, ToolResultMessage):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": _blocks(message.content) or [{"type": "text", "text": "(no output)"}],
            }
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
    return out


class AnthropicMessages(ProviderModel):
    """An Anthropic Messages model; call it as ``stream_fn(model, context, options)``.

    Built by :func:`anthropic_messages`; a new SDK client is made for each
    request and closed after it.
    """

    api = "anthropic-messages"
    factory = "anthropic_messages"
    default_provider = "anthropic"
    default_max_tokens = DEFAULT_MAX_TOKENS
    _require_sdk = staticmethod(_require_sdk)

    def _request(self, name: str, context: ModelContext, options: StreamOptions) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": name,
            "max_tokens": self.max_tokens,
            "messages": anthropic_messages_input(context),
            "stream": True,
        }
        system = system_text(context)
        if system:
            body["system"] = system
        tools = request_tools(context, "none")
        if tools:
            body["tools"] = [
                {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "input_schema": t.get("parameters") or {"type": "object"},
                }
                for t in tools
            ]
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if options.thinking and options.thinking != "off":
            budget = _THINKING_BUDGET.get(options.thinking, 8192)
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body.update(self.request_options)
        return body

    def _client(self) -> Any:
        return _require_sdk().AsyncAnthropic(
            api_key=self.api_key, base_url=self.base_url, **self.client_options
        )

    async def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return await client.messages.create(**request)

    def _finish(self, builder: MessageBuilder, outcome: dict[str, Any]) -> AssistantMessage:
        reason = outcome["stop"]
        if reason == "refusal":
            return builder.finish("error", f"{self.provider}: the model refused to answer")
        return builder.finish(_STOP.get(reason or "end_turn", "stop"))

    @staticmethod
    def _record_usage(builder: MessageBuilder, usage: Any, seen: dict[str, int]) -> None:
        for field in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, field, None)
            if isinstance(value, int):
                seen[field] = value
        inp = seen.get("input_tokens", 0)
        out = seen.get("output_tokens", 0)
        read = seen.get("cache_read_input_tokens", 0)
        write = seen.get("cache_creation_input_tokens", 0)
        builder.usage = Usage(
            input=inp,
            output=out,
            cache_read=read,
            cache_write=write,
            total_tokens=inp + out + read + write,
        )

    async def _event(self, builder: MessageBuilder, event: Any, outcome: dict[str, Any]) -> None:
        kind = getattr(event, "type", "")
        await builder.start()
        if kind == "message_start":
            usage = getattr(event.message, "usage", None)
            if usage is not None:
                self._record_usage(builder, usage, outcome["usage"])
        elif kind == "content_block_start":
            block = event.content_block
            block_type = getattr(block, "type", None)
            if block_type == "tool_use":
                await builder.tool_call(event.index, id=block.id, name=block.name)
            elif block_type == "text":
                await builder.text(event.index, getattr(block, "text", "") or "")
            elif block_type == "thinking":
                await builder.thinking(event.index, getattr(block, "thinking", "") or "")
        elif kind == "content_block_delta":
            delta = event.delta
            delta_type = getattr(delta, "type", None)
            if delta_type == "text_delta":
                await builder.text(event.index, delta.text)
            elif delta_type == "input_json_delta":
                await builder.tool_arguments(event.index, delta.partial_json)
            elif delta_type == "thinking_delta":
                await builder.thinking(event.index, delta.thinking)
            elif delta_type == "signature_delta":
                builder.set_signature(event.index, delta.signature)
        elif kind == "content_block_stop":
            await builder.end(event.index)
        elif kind == "message_delta":
            reason = getattr(event.delta, "stop_reason", None)
            if reason:
                outcome["stop"] = reason
            usage = getattr(event, "usage", None)
            if usage is not None:
                self._record_usage(builder, usage, outcome["usage"])
        elif kind == "error":
            error = getattr(event, "error", None)
            message = getattr(error, "message", None) or "stream error"
            outcome["error"] = f"{self.provider} error: {message}"


def anthropic_messages(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    **client_options: Any,
) -> AnthropicMessages:
    """A streaming Anthropic Messages model for the agent loop.

    ``api_key`` defaults to ``ANTHROPIC_API_KEY``; other keyword arguments:
    ``provider``, ``max_tokens`` (default 8192), ``temperature``,
    ``request_options`` and anything ``anthropic.AsyncAnthropic`` accepts.
    """
    return AnthropicMessages(model, base_url=base_url, api_key=api_key, **client_options)
