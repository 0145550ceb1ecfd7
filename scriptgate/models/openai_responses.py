"""The OpenAI Responses API as a streaming ``stream_fn`` for the agent loop, on the
official ``openai`` SDK (extra ``openai``).

Owns the conversion of the transcript to Responses input items and of the streamed
response events back to pi's assistant message and events. Requests are sent with
``store=False`` (the transcript is the state). Transcript tool support is ``"none"``.
"""

from __future__ import annotations

import json
from typing import Any

from scriptgate.models._common import (
    MessageBuilder,
    ProviderModel,
    image_data_url,
    prepare_transcript,
    request_tools,
    text_of,
)
from scriptgate.models.openai_chat import _require_sdk
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

__all__ = ["OpenAIResponses", "openai_responses", "responses_input"]


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(
                {"type": "input_image", "image_url": image_data_url(block), "detail": "auto"}
            )
    return parts


def responses_input(context: ModelContext) -> list[dict[str, Any]]:
    """The transcript as Responses input items (the system prompt goes in ``instructions``)."""
    out: list[dict[str, Any]] = []
    for message in prepare_transcript(context.messages):
        if isinstance(message, SystemMessage):
            if message.content.strip():
                out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _parts(message.content)})
        elif isinstance(message, AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextContent))
            if text:
                out.append({"role": "assistant", "content": text})
            for block in message.content:
                if isinstance(block, ToolCall):
                    out.append(
                        {
                            "type": "function_call",
                            "call_id": block.id,
                            "name": block.name,
                            "arguments": json.dumps(block.arguments),
                        }
                    )
        elif isinstance(message, ToolResultMessage):
            text = text_of(message.content)
            pictures = [b for b in message.content if isinstance(b, ImageContent)]
            output: Any = text
            if pictures:
                output = _parts([TextContent(text), *pictures] if text else pictures)
            out.append(
                {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}
            )
    return out


def _usage(data: Any) -> Usage:
    prompt = getattr(data, "input_tokens", 0) or 0
    output = getattr(data, "output_tokens", 0) or 0
    details = getattr(data, "input_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input=prompt - cached, output=output, cache_read=cached, total_tokens=prompt + output
    )


class OpenAIResponses(ProviderModel):
    """A Responses API model; call it as ``stream_fn(model, context, options)``.

    Built by :func:`openai_responses`; same conventions as
    :class:`~scriptgate.models.openai_chat.OpenAIChat`.
    """

    api = "openai-responses"
    factory = "openai_responses"
    default_provider = "openai"
    _require_sdk = staticmethod(_require_sdk)

    def _request(self, name: str, context: ModelContext, options: StreamOptions) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": name,
            "input": responses_input(context),
            "stream": True,
            "store": False,
        }
        if context.system_prompt:
            body["instructions"] = context.system_prompt
        tools = request_tools(context, "none")
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t.get("parameters") or {"type": "object"},
                    "strict": False,
                }
                for t in tools
            ]
        if self.max_tokens is not None:
            body["max_output_tokens"] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if options.thinking:
            body["reasoning"] = {"effort": options.thinking}
        body.update(self.request_options)
        return body

    def _client(self) -> Any:
        return _require_sdk().AsyncOpenAI(
            api_key=self.api_key, base_url=self.base_url, **self.client_options
        )

    async def _create(self, client: Any, request: dict[str, Any]) -> Any:
        return await client.responses.create(**request)

    def _finish(self, builder: MessageBuilder, outcome: dict[str, Any]) -> AssistantMessage:
        stop: StopReason = outcome["stop"] or "stop"
        return builder.finish(stop)

    async def _event(self, builder: MessageBuilder, event: Any, outcome: dict[str, Any]) -> None:
        kind = getattr(event, "type", "")
        await builder.start()
        if kind == "response.output_item.added":
            item = event.item
            if getattr(item, "type", None) == "function_call":
                await builder.tool_call(item.id or item.call_id, id=item.call_id, name=item.name)
        elif kind == "response.output_text.delta":
            await builder.text((event.item_id, event.content_index), event.delta)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            await builder.thinking(event.item_id, event.delta)
        elif kind == "response.function_call_arguments.delta":
            await builder.tool_arguments(event.item_id, event.delta)
        elif kind == "response.function_call_arguments.done":
            key = event.item_id
            index = builder.keys.get(key)
            if index is not None and not builder.blocks[index].text and event.arguments:
                await builder.tool_arguments(key, event.arguments)
        elif kind == "response.output_item.done":
            item_id = getattr(event.item, "id", None)
            for key in list(builder.keys):
                if key == item_id or (isinstance(key, tuple) and key[0] == item_id):
                    await builder.end(key)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = event.response
            if getattr(response, "usage", None) is not None:
                builder.usage = _usage(response.usage)
            if kind == "response.incomplete":
                details = getattr(response, "incomplete_details", None)
                reason = getattr(details, "reason", None)
                if reason == "max_output_tokens":
                    outcome["stop"] = "length"
                else:
                    outcome["error"] = f"{self.provider}: the response is incomplete ({reason})"
            elif kind == "response.failed":
                error = getattr(response, "error", None)
                message = getattr(error, "message", None) or "the response failed"
                outcome["error"] = f"{self.provider} error: {message}"
        elif kind == "error":
            message = getattr(event, "message", None) or "stream error"
            outcome["error"] = f"{self.provider} error: {message}"


def openai_responses(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    **client_options: Any,
) -> OpenAIResponses:
    """A streaming Responses API model for the agent loop (see :func:`~scriptgate.models.openai_chat`
    for the keyword arguments)."""
    return OpenAIResponses(model, base_url=base_url, api_key=api_key, **client_options)
