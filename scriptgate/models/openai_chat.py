"""OpenAI Chat Completions (and every OpenAI-compatible server) as a streaming
``stream_fn`` for the agent loop, on the official ``openai`` SDK (extra ``openai``).

Owns the conversion of the transcript to Chat Completions messages and of the
streamed chunks back to pi's assistant message and events. Transcript tool support
is ``"none"``: every declared tool goes in the request's top-level ``tools`` list.
"""

from __future__ import annotations

import json
from typing import Any

from scriptgate.errors import ConfigurationError
from scriptgate.models._common import (
    MessageBuilder,
    ProviderModel,
    image_data_url,
    prepare_transcript,
    request_tools,
    text_of,
)
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.types import (
    AssistantMessage,
    ImageContent,
    StopReason,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = ["OpenAIChat", "chat_messages", "openai_chat"]

_FINISH: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def _require_sdk() -> Any:
    try:
        import openai
    except ImportError:
        raise ConfigurationError(
            "the OpenAI adapters need the openai SDK: pip install 'scriptgate[openai]'"
        ) from None
    return openai


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append({"type": "image_url", "image_url": {"url": image_data_url(block)}})
    return parts


def chat_messages(context: ModelContext) -> list[dict[str, Any]]:
    """The transcript as Chat Completions messages (system prompt first)."""
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        out.append({"role": "system", "content": context.system_prompt})
    images: list[ImageContent] = []

    def flush_images() -> None:
        if images:
            parts: list[dict[str, Any]] = [
                {"type": "text", "text": "Attached image(s) from tool result:"}
            ]
            parts.extend(_user_content(list(images)))
            out.append({"role": "user", "content": parts})
            images.clear()

    for message in prepare_transcript(context.messages):
        if not isinstance(message, ToolResultMessage):
            flush_images()
        if isinstance(message, SystemMessage):
            if message.content.strip():
                out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": json.dumps(b.arguments)},
                }
                for b in message.content
                if isinstance(b, ToolCall)
            ]
            if not text and not calls:
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif isinstance(message, ToolResultMessage):
            text = text_of(message.content)
            pictures = [b for b in message.content if isinstance(b, ImageContent)]
            images.extend(pictures)
            if not text and pictures:
                text = "(see attached image)"
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": text})
    flush_images()
    return out


def _usage(data: Any) -> Usage:
    prompt = getattr(data, "prompt_tokens", 0) or 0
    output = getattr(data, "completion_tokens", 0) or 0
    details = getattr(data, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input=prompt - cached,
        output=output,
        cache_read=cached,
        total_tokens=prompt + output,
    )


def _reasoning(delta: Any) -> str | None:
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if value is None and getattr(delta, "model_extra", None):
            value = delta.model_extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


class OpenAIChat(ProviderModel):
    """A Chat Completions model; call it as ``stream_fn(model, context, options)``.

    Built by :func:`openai_chat`. ``model`` given by the loop (a non-empty string)
    overrides :attr:`model`; a new SDK client is made for each request (so the
    function works across event loops and backends) and closed after it.
    """

    api = "openai-completions"
    factory = "openai_chat"
    default_provider = "openai"
    _require_sdk = staticmethod(_require_sdk)

    def _client(self) -> Any:
        openai = _require_sdk()
        return openai.AsyncOpenAI(
            api_key=self.api_key, base_url=self.base_url, **self.client_options
        )

    def _request(self, name: str, context: ModelContext, options: StreamOptions) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": name,
            "messages": chat_messages(context),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        tools = request_tools(context, "none")
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "parameters": t.get("parameters") or {"type": "object"},
                    },
                }
                for t in tools
            ]
        if self.max_tokens is not None:
            body["max_completion_tokens"] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if options.thinking:
            body["reasoning_effort"] = options.thinking
        body.update(self.request_options)
        return body

    async def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return await client.chat.completions.create(**request)

    def _finish(self, builder: MessageBuilder, outcome: dict[str, Any]) -> AssistantMessage:
        self._fill_ids(builder)
        reason = outcome["stop"]
        if reason == "content_filter":
            return builder.finish(
                "error", f"{self.provider}: the response was blocked by the content filter"
            )
        return builder.finish(_FINISH.get(reason or "stop", "stop"))

    @staticmethod
    def _fill_ids(builder: MessageBuilder) -> None:
        for index, block in enumerate(builder.blocks):
            if block.kind == "toolCall" and not block.id:
                block.id = f"call_{index}"

    async def _event(self, builder: MessageBuilder, chunk: Any, outcome: dict[str, Any]) -> None:
        await builder.start()
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            builder.usage = _usage(usage)
        for choice in getattr(chunk, "choices", None) or ():
            if getattr(choice, "index", 0) != 0:
                continue
            delta = choice.delta
            if delta is not None:
                reasoning = _reasoning(delta)
                if reasoning:
                    await builder.thinking("thinking", reasoning)
                if delta.content:
                    await builder.text("text", delta.content)
                for call in delta.tool_calls or ():
                    key = ("tool", call.index)
                    function = call.function
                    await builder.tool_call(
                        key, id=call.id or "", name=(function.name if function else None) or ""
                    )
                    if function is not None and function.arguments:
                        await builder.tool_arguments(key, function.arguments)
            if choice.finish_reason:
                outcome["stop"] = choice.finish_reason


def openai_chat(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    **client_options: Any,
) -> OpenAIChat:
    """A streaming Chat Completions model for the agent loop.

    ``base_url`` points it at any OpenAI-compatible server (vLLM, Ollama, LM
    Studio, llama.cpp); ``api_key`` defaults to ``OPENAI_API_KEY``. Other keyword
    arguments: ``provider`` (the name recorded on messages), ``max_tokens``,
    ``temperature``, ``request_options`` (extra request fields) and anything
    ``openai.AsyncOpenAI`` accepts (``timeout``, ``max_retries``, ``default_headers``...).
    """
    return OpenAIChat(model, base_url=base_url, api_key=api_key, **client_options)
