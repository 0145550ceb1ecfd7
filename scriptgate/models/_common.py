"""What every provider adapter shares: the model class's settings and streamed call
(:class:`ProviderModel`), the streaming message builder, the transcript clean-up before
conversion, request tool declarations, abort handling and one-line error texts. Knows no
SDK; imports only :mod:`scriptgate.runtime`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.declarations import resolve_transcript_tools, to_tool_declaration
from scriptgate.runtime.loop import ModelContext, OnAssistantEvent, StreamOptions
from scriptgate.runtime.stream import AssistantMessageEvent, parse_tool_arguments
from scriptgate.runtime.types import (
    AssistantMessage,
    ImageContent,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "ABORTED_TEXT",
    "MessageBuilder",
    "ProviderModel",
    "describe_error",
    "one_line",
    "prepare_transcript",
    "request_tools",
    "run_cancellable",
    "system_text",
    "text_of",
]

ABORTED_TEXT = "Request was aborted"
"""The ``error_message`` of an aborted response."""

NO_RESULT_TEXT = "No result provided"
"""The text of the synthetic result of a tool call the transcript never answered."""


def one_line(text: str) -> str:
    """``text`` with its lines joined by single spaces (error messages are one line)."""
    return " ".join(line.strip() for line in str(text).splitlines() if line.strip())


def describe_error(provider: str, exc: BaseException) -> str:
    """A readable one-line text for an SDK or transport exception."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail: str | None = None
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            detail = inner["message"]
        elif isinstance(inner, str):
            detail = inner
    if detail is None:
        detail = str(exc) or type(exc).__name__
        cause = exc.__cause__
        if cause is not None and str(cause) and str(cause) not in detail:
            detail = f"{detail} ({type(cause).__name__}: {cause})"
    if isinstance(status, int):
        return one_line(f"{provider} error {status}: {detail}")
    return one_line(f"{provider} error: {detail}")


def text_of(content: str | Sequence[Any]) -> str:
    """The text blocks of ``content`` joined with newlines (a string stays as is)."""
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


def system_text(context: ModelContext) -> str | None:
    """The system prompt plus the text of the transcript's system messages (blank-line joined)."""
    parts = [context.system_prompt] if context.system_prompt else []
    parts.extend(
        m.content for m in context.messages if isinstance(m, SystemMessage) and m.content.strip()
    )
    return "\n\n".join(parts) if parts else None


def request_tools(
    context: ModelContext, support: Literal["none", "additions", "changes"] = "none"
) -> list[dict[str, Any]]:
    """The tool declarations of this request: the transcript's (pi §6), or, when the
    transcript declares none, the context's executable tools."""
    messages = list(context.messages)
    declared = resolve_transcript_tools(messages, support).request_tools
    if declared or any(isinstance(m, SystemMessage) for m in messages):
        return [dict(d) for d in declared]
    return [dict(to_tool_declaration(t)) for t in context.tools]


def prepare_transcript(messages: Sequence[Any]) -> list[Any]:
    """The transcript as a provider may receive it (pi-ai's message transform).

    ``error``/``aborted`` assistant messages are dropped; a tool call left without
    a result gets a synthetic error result ``No result provided`` right after its
    message's results, so every call is answered.
    """
    out: list[Any] = []
    pending: list[ToolCall] = []

    def close_pending() -> None:
        for call in pending:
            out.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=(TextContent(NO_RESULT_TEXT),),
                    is_error=True,
                    timestamp=0,
                )
            )
        pending.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            pending[:] = [c for c in pending if c.id != message.tool_call_id]
            out.append(message)
            continue
        close_pending()
        if isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted"):
                continue
            pending.extend(b for b in message.content if isinstance(b, ToolCall))
            out.append(message)
        elif isinstance(message, UserMessage | SystemMessage):
            out.append(message)
    close_pending()
    return out


def image_data_url(image: ImageContent) -> str:
    """An image block as a ``data:`` URL."""
    return f"data:{image.mime_type};base64,{image.data}"


async def run_cancellable(signal: AbortSignal | None, body: Callable[[], Awaitable[None]]) -> bool:
    """Run ``body`` until it returns or ``signal`` aborts; True when it was aborted
    (the cancellation closes the HTTP response the body was reading)."""
    if signal is None:
        await body()
        return False
    if signal.aborted:
        return True
    async with signal.cancel_scope() as scope:
        await body()
    return bool(scope.cancel_called) or signal.aborted


@dataclass
class _Block:
    kind: Literal["text", "thinking", "toolCall"]
    text: str = ""
    signature: str | None = None
    id: str = ""
    name: str = ""
    open: bool = True


@dataclass
class MessageBuilder:
    """Builds an assistant message from provider deltas and reports each step.

    Blocks are addressed by a provider key (an index, an item id); a new key
    opens a new content block in arrival order.
    """

    api: str
    provider: str
    model: str
    on_event: OnAssistantEvent | None
    blocks: list[_Block] = field(default_factory=list)
    keys: dict[Any, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    response_model: str | None = None
    started: bool = False

    def _tool_arguments(self, block: _Block, final: bool) -> tuple[dict[str, Any], str | None]:
        if final:
            return parse_tool_arguments(block.text)
        try:
            value = json.loads(block.text) if block.text.strip() else {}
        except ValueError:
            return {}, None
        return (value, None) if isinstance(value, dict) else ({}, None)

    def message(
        self,
        stop_reason: StopReason = "stop",
        error_message: str | None = None,
        *,
        final: bool = False,
    ) -> AssistantMessage:
        """The message so far (``final``: tool arguments parsed strictly, pi §1.1)."""
        content: list[Any] = []
        for block in self.blocks:
            if block.kind == "text":
                content.append(TextContent(block.text, text_signature=block.signature))
            elif block.kind == "thinking":
                content.append(ThinkingContent(block.text, thinking_signature=block.signature))
            else:
                arguments, error = self._tool_arguments(block, final)
                content.append(
                    ToolCall(
                        id=block.id, name=block.name, arguments=arguments, arguments_error=error
                    )
                )
        return AssistantMessage(
            content=tuple(content),
            api=self.api,
            provider=self.provider,
            model=self.response_model or self.model,
            usage=self.usage,
            stop_reason=stop_reason,
            error_message=error_message,
        )

    async def _emit(self, kind: Any, index: int | None = None, delta: str | None = None) -> None:
        if self.on_event is not None:
            await self.on_event(AssistantMessageEvent(kind, self.message(), index, delta))

    async def start(self) -> None:
        """Report ``start`` (once)."""
        if not self.started:
            self.started = True
            await self._emit("start")

    async def _open(self, key: Any, block: _Block) -> int:
        await self.start()
        index = len(self.blocks)
        self.blocks.append(block)
        self.keys[key] = index
        await self._emit(f"{block.kind.lower()}_start", index)
        return index

    def has(self, key: Any) -> bool:
        """Whether ``key`` opened a block."""
        return key in self.keys

    async def text(self, key: Any, delta: str) -> None:
        """Append text to block ``key`` (opened on first use)."""
        await self._delta(key, "text", delta)

    async def thinking(self, key: Any, delta: str) -> None:
        """Append reasoning text to block ``key`` (opened on first use)."""
        await self._delta(key, "thinking", delta)

    async def _delta(self, key: Any, kind: Literal["text", "thinking"], delta: str) -> None:
        index = self.keys.get(key)
        if index is None or not self.blocks[index].open:
            index = await self._open(key, _Block(kind))
        block = self.blocks[index]
        block.text += delta
        if delta:
            await self._emit(f"{kind}_delta", index, delta)

    async def tool_call(self, key: Any, *, id: str = "", name: str = "") -> None:
        """Open tool-call block ``key`` (or fill in its id and name)."""
        index = self.keys.get(key)
        if index is None:
            await self._open(key, _Block("toolCall", id=id, name=name))
            return
        block = self.blocks[index]
        block.id = block.id or id
        block.name = block.name or name

    async def tool_arguments(self, key: Any, delta: str) -> None:
        """Append raw arguments JSON to tool-call block ``key``."""
        if key not in self.keys:
            await self.tool_call(key)
        index = self.keys[key]
        self.blocks[index].text += delta
        if delta:
            await self._emit("toolcall_delta", index, delta)

    def set_signature(self, key: Any, signature: str) -> None:
        """Attach a provider signature to block ``key``."""
        index = self.keys.get(key)
        if index is not None:
            self.blocks[index].signature = (self.blocks[index].signature or "") + signature

    async def end(self, key: Any) -> None:
        """Close block ``key`` (reports ``*_end``)."""
        index = self.keys.get(key)
        if index is None or not self.blocks[index].open:
            return
        block = self.blocks[index]
        block.open = False
        await self._emit(f"{block.kind.lower()}_end", index)

    async def end_all(self) -> None:
        """Close every open block."""
        for key in list(self.keys):
            await self.end(key)

    @property
    def has_tool_calls(self) -> bool:
        """Whether the message calls a tool."""
        return any(b.kind == "toolCall" for b in self.blocks)

    def finish(self, stop_reason: StopReason, error_message: str | None = None) -> AssistantMessage:
        """The final message; ``stop`` becomes ``toolUse`` when it calls tools."""
        if stop_reason == "stop" and self.has_tool_calls:
            stop_reason = "toolUse"
        return self.message(stop_reason, error_message, final=True)


class ProviderModel:
    """A provider's model, called as ``stream_fn(model, context, options)``: what the three adapters share.

    Holds the settings every adapter takes, and runs one streamed request under the
    abort signal: a failure becomes ``stop_reason="error"`` with a one-line text, an
    abort ``"aborted"``. A subclass names its :attr:`api`, its factory and its SDK, and
    writes :meth:`_client`, :meth:`_request`, :meth:`_create` (send it), :meth:`_event`
    (feed the builder) and :meth:`_finish` (the stop reason the stream reported in
    ``outcome``).
    """

    api: ClassVar[str]
    factory: ClassVar[str]
    """The public function that builds this class (its ``repr`` reads as a call of it)."""
    default_provider: ClassVar[str]
    default_max_tokens: ClassVar[int | None] = None
    transcript_tools = "none"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        request_options: Mapping[str, Any] | None = None,
        **client_options: Any,
    ) -> None:
        self._require_sdk()
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.provider = provider or self.default_provider
        self.max_tokens = max_tokens if max_tokens is not None else self.default_max_tokens
        self.temperature = temperature
        self.request_options = dict(request_options or {})
        self.client_options = client_options

    def __repr__(self) -> str:
        return f"{self.factory}({self.model!r}, base_url={self.base_url!r})"

    @staticmethod
    def _require_sdk() -> Any:
        """The provider's SDK module, or a :class:`ConfigurationError` naming its extra."""
        raise NotImplementedError

    async def __call__(
        self, model: Any, context: ModelContext, options: StreamOptions | None = None
    ) -> AssistantMessage:
        """Stream one response; failures come back as ``stop_reason="error"``."""
        options = options or StreamOptions()
        name = model if isinstance(model, str) and model else self.model
        builder = MessageBuilder(self.api, self.provider, name, options.on_event)
        outcome: dict[str, Any] = {"stop": None, "error": None, "usage": {}}
        settings = options

        async def body() -> None:
            request = self._request(name, context, settings)
            async with self._client() as client:
                stream = await self._create(client, request)
                async with stream:
                    async for event in stream:
                        await self._event(builder, event, outcome)

        try:
            aborted = await run_cancellable(options.signal, body)
        except Exception as exc:
            await builder.end_all()
            return builder.finish("error", describe_error(self.provider, exc))
        await builder.end_all()
        if aborted:
            return builder.finish("aborted", ABORTED_TEXT)
        if outcome["error"] is not None:
            return builder.finish("error", outcome["error"])
        return self._finish(builder, outcome)

    def _client(self) -> Any:
        """A new SDK client for one request (an async context manager)."""
        raise NotImplementedError

    def _request(self, name: str, context: ModelContext, options: StreamOptions) -> dict[str, Any]:
        """The request body for model ``name``."""
        raise NotImplementedError

    async def _create(self, client: Any, request: dict[str, Any]) -> Any:
        """Send ``request``; the SDK's event stream (an async context manager and iterator)."""
        raise NotImplementedError

    async def _event(self, builder: MessageBuilder, event: Any, outcome: dict[str, Any]) -> None:
        """Feed one streamed event to ``builder``; record the provider's stop reason in
        ``outcome["stop"]`` and a stream error in ``outcome["error"]``."""
        raise NotImplementedError

    def _finish(self, builder: MessageBuilder, outcome: dict[str, Any]) -> AssistantMessage:
        """The finished message once the stream ended without error or abort."""
        raise NotImplementedError
