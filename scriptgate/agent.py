"""The high-level :class:`Agent` (pi's ``Agent``): a transcript, turns, subscribers, code mode.

An agent keeps the conversation, runs each prompt through :mod:`scriptgate.runtime`'s
loop with a model (a ``stream_fn``, or a ``"provider:model"`` spec for
:func:`scriptgate.models.from_spec`), and sends every loop event to its subscribers
as it happens. In code mode it exposes the ``python`` tool (alone with
``code_mode="only"``, beside the direct tools with ``"on"``) whose scripts share one
session, so what a script defines survives to the next turn of the conversation.

The policy, the audit log and the user's ``before_tool_call``/``after_tool_call``
gate every tool call — direct ones in the loop and the calls scripts make — but not
the ``python`` call itself (its nested calls are the ones that act).

This module sits on top of ``runtime``, ``sandbox`` and ``models``; ``cli`` builds
the ``scriptgate agent`` command on it (:mod:`scriptgate.agent_cli`).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeAlias

import anyio

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.batch import ToolExecutionMode
from scriptgate.runtime.hooks import Hooks, compose_hooks
from scriptgate.runtime.loop import (
    AgentLoopConfig,
    StreamFn,
    run_agent_loop,
    run_agent_loop_continue,
)
from scriptgate.runtime.policy import Policy
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallHook,
    AgentContext,
    AgentEvent,
    AgentMessage,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallHook,
    ImageContent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from scriptgate.sandbox import CodemodeTool, Limits, codemode_tool

__all__ = ["Agent", "CodeMode", "Listener", "assistant_text_of"]

Isolation: TypeAlias = Literal["in_process", "process"]
"""Where the scripts run (see :func:`scriptgate.codemode_tool`)."""

CodeMode: TypeAlias = Literal["only", "on", "off"]
"""``"only"``: the model gets just ``python``; ``"on"``: ``python`` beside the
direct tools; ``"off"``: the direct tools only."""

Listener: TypeAlias = Callable[[AgentEvent], "Awaitable[None] | None"]
"""A subscriber: called with every event (sync or async)."""

PromptInput: TypeAlias = "str | AgentMessage | Sequence[AgentMessage]"


_MESSAGE_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)


def assistant_text_of(message: AssistantMessage | None) -> str:
    """The text blocks of an assistant message, joined (``""`` for ``None``)."""
    if message is None:
        return ""
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


def _skip_tool(hook: Any, name: str) -> Any:
    """``hook`` for every call except those of the tool ``name``."""
    if hook is None:
        return None

    async def gated(ctx: BeforeToolCallContext | AfterToolCallContext, signal: Any = None) -> Any:
        if ctx.tool_call.name == name:
            return None
        value = hook(ctx, signal)
        if inspect.isawaitable(value):
            value = await value
        return value

    return gated


class Agent:
    """A conversation with a model that calls tools (pi's ``Agent``).

    - ``model``: a ``stream_fn`` (e.g. :func:`scriptgate.models.openai_chat`) or a
      spec like ``"openai:gpt-4.1"`` / ``"anthropic:claude-sonnet-4-5"``;
    - ``tools``: the :class:`AgentTool` catalogue;
    - ``code_mode``: ``"only"`` (default), ``"on"`` or ``"off"`` (:data:`CodeMode`);
    - ``system_prompt``; ``policy`` (:class:`Policy`), ``audit`` (:class:`AuditLog`),
      ``before_tool_call``/``after_tool_call``: gate every tool call, nested ones
      included;
    - ``limits``/``isolation``: for the scripts of the ``python`` tool;
      ``session=False`` makes every script start fresh;
    - ``tool_execution``, ``thinking``: passed to the loop; ``messages``: a
      transcript to resume.

    ``await agent.prompt("...")`` (or :meth:`prompt_sync`) runs one prompt to the
    end and returns the last assistant message; :attr:`messages` is the
    transcript. One prompt at a time: a second concurrent call raises.
    """

    def __init__(
        self,
        model: StreamFn | str,
        *,
        tools: Sequence[AgentTool] = (),
        code_mode: CodeMode = "only",
        system_prompt: str | None = None,
        policy: Policy | None = None,
        audit: AuditLog | None = None,
        limits: Limits | None = None,
        isolation: Isolation = "in_process",
        before_tool_call: BeforeToolCallHook | None = None,
        after_tool_call: AfterToolCallHook | None = None,
        session: bool = True,
        tool_execution: ToolExecutionMode = "parallel",
        thinking: str | None = None,
        messages: Sequence[AgentMessage] = (),
        python_name: str = "python",
    ) -> None:
        if code_mode not in ("only", "on", "off"):
            raise ConfigurationError(f"code_mode must be 'only', 'on' or 'off', got {code_mode!r}")
        if isinstance(model, str):
            from scriptgate.models import from_spec

            model = from_spec(model)
        if not callable(model):
            raise ConfigurationError(f"model must be a stream function or a spec, got {model!r}")
        tool_list = list(tools)
        for item in tool_list:
            if not isinstance(item, AgentTool):
                raise ConfigurationError(f"tools must be AgentTool objects, got {item!r}")
        names = [t.name for t in tool_list]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigurationError(f"two tools are named {duplicates[0]!r}")
        if code_mode != "off" and python_name in names:
            raise ConfigurationError(
                f"a tool is already named {python_name!r}; pass python_name= to rename code mode"
            )
        self.model: StreamFn = model
        self.code_mode: CodeMode = code_mode
        self.system_prompt = system_prompt
        self.policy = policy
        self.audit = audit
        self.tool_execution: ToolExecutionMode = tool_execution
        self.thinking = thinking
        #: The catalogue the agent was given (what scripts and direct calls reach).
        self.catalogue: tuple[AgentTool, ...] = tuple(tool_list)
        self.hooks: Hooks = compose_hooks(policy, (before_tool_call, after_tool_call), audit)
        #: The code-mode tool (``None`` with ``code_mode="off"``).
        self.codemode: CodemodeTool | None = None
        exposed: list[AgentTool] = []
        if code_mode != "off":
            self.codemode = codemode_tool(
                tool_list,
                name=python_name,
                before_tool_call=self.hooks.before_tool_call,
                after_tool_call=self.hooks.after_tool_call,
                limits=limits,
                isolation=isolation,
                session=session,
            )
            exposed.append(self.codemode)
        if code_mode != "only":
            exposed.extend(tool_list)
        #: The tools the model is offered.
        self.tools: tuple[AgentTool, ...] = tuple(exposed)
        self._messages: list[AgentMessage] = list(messages)
        self._listeners: list[Listener] = []
        self._controller: AbortController | None = None
        #: The message being streamed (``None`` between messages).
        self.stream_message: AgentMessage | None = None

    # ------------------------------------------------------------------ state

    @property
    def messages(self) -> list[AgentMessage]:
        """A copy of the transcript."""
        return list(self._messages)

    @property
    def is_running(self) -> bool:
        """Whether a prompt is being processed."""
        return self._controller is not None

    @property
    def last_assistant(self) -> AssistantMessage | None:
        """The last assistant message of the transcript."""
        for message in reversed(self._messages):
            if isinstance(message, AssistantMessage):
                return message
        return None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on; returns the unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def reset(self) -> None:
        """Forget the transcript and the code-mode session's variables."""
        if self.is_running:
            raise ConfigurationError("cannot reset while a prompt is running")
        self._messages.clear()
        if self.codemode is not None:
            self.codemode.reset_session()

    def abort(self, reason: object = None) -> None:
        """Abort the running prompt (the HTTP request is cancelled; tools see the signal)."""
        if self._controller is not None:
            self._controller.abort(reason)

    # ------------------------------------------------------------------ turns

    def _config(self) -> AgentLoopConfig:
        name = self.codemode.name if self.codemode is not None else ""
        return AgentLoopConfig(
            stream_fn=self.model,
            tool_execution=self.tool_execution,
            before_tool_call=_skip_tool(self.hooks.before_tool_call, name),
            after_tool_call=_skip_tool(self.hooks.after_tool_call, name),
            thinking=self.thinking,
        )

    def _context(self) -> AgentContext:
        return AgentContext(
            messages=list(self._messages),
            tools=list(self.tools),
            system_prompt=self.system_prompt,
        )

    async def _emit(self, event: AgentEvent) -> None:
        if isinstance(event, MessageStartEvent | MessageUpdateEvent):
            self.stream_message = event.message
        elif isinstance(event, MessageEndEvent):
            self.stream_message = None
            self._messages.append(event.message)
        for listener in list(self._listeners):
            value = listener(event)
            if inspect.isawaitable(value):
                await value

    async def _run(self, prompts: list[AgentMessage] | None) -> AssistantMessage | None:
        if self._controller is not None:
            raise ConfigurationError(
                "the agent is already processing a prompt; wait for it or call abort()"
            )
        controller = AbortController()
        self._controller = controller
        try:
            if prompts is None:
                await run_agent_loop_continue(
                    self._context(), self._config(), self._emit, controller.signal
                )
            else:
                await run_agent_loop(
                    prompts, self._context(), self._config(), self._emit, controller.signal
                )
        finally:
            self._controller = None
            self.stream_message = None
        return self.last_assistant

    @staticmethod
    def _prompts(message: PromptInput, images: Sequence[ImageContent] | None) -> list[AgentMessage]:
        if isinstance(message, str):
            if images:
                return [UserMessage((TextContent(message), *images))]
            return [UserMessage(message)]
        if images:
            raise ConfigurationError("images= goes with a text prompt")
        if isinstance(message, _MESSAGE_TYPES):
            return [message]
        return list(message)

    async def prompt(
        self, message: PromptInput, *, images: Sequence[ImageContent] | None = None
    ) -> AssistantMessage | None:
        """Send ``message`` (text, a message, or messages) and run until the model is done.

        Returns the last assistant message (its ``stop_reason`` is ``"error"`` with
        an ``error_message`` when the provider failed, ``"aborted"`` after
        :meth:`abort`).
        """
        return await self._run(self._prompts(message, images))

    async def continue_(self) -> AssistantMessage | None:
        """Continue from the transcript (its last message must not be the assistant's)."""
        return await self._run(None)

    def prompt_sync(
        self, message: PromptInput, *, images: Sequence[ImageContent] | None = None
    ) -> AssistantMessage | None:
        """:meth:`prompt` from synchronous code (inside a running event loop, e.g. a
        notebook, it runs on a helper thread)."""

        async def main() -> AssistantMessage | None:
            return await self.prompt(message, images=images)

        result: AssistantMessage | None = _run_blocking(main)
        return result

    async def aclose(self) -> None:
        """Release the code-mode sandbox (process-isolation workers)."""
        if self.codemode is not None:
            await self.codemode.aclose()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        _run_blocking(self.aclose)

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self.tools)
        return f"Agent(model={self.model!r}, code_mode={self.code_mode!r}, tools=[{names}])"


def _run_blocking(fn: Callable[[], Awaitable[Any]]) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(fn)
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = anyio.run(fn)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=worker, name="scriptgate-agent")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
