"""The boundary between a script and the host's tools.

The engine knows tools only as :class:`ToolSpec` records and calls them through a
:class:`ToolBridge`; both are plain, JSON-serialisable data so that the same
engine runs in-process and inside a worker process (where the bridge is a pipe).

:class:`HostToolBridge` is the host side: each call becomes a
:class:`~scriptgate.runtime.types.ToolCall` run by
:func:`scriptgate.runtime.pipeline.run_tool_call` with the sandbox's hooks (so
validation, ``before_tool_call`` and ``after_tool_call`` apply exactly as to a
direct call, and no events are emitted), and the outcome is converted as pi §5.3
says. Only JSON copies cross in either direction (:func:`json_copy`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from scriptgate.runtime.abort import AbortController, AbortError, AbortSignal
from scriptgate.runtime.pipeline import ToolCallOutcome, run_tool_call
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallHook,
    AgentContext,
    AssistantMessage,
    BeforeToolCallHook,
    TextContent,
    ToolCall,
)
from scriptgate.sandbox.naming import assign_identifiers
from scriptgate.sandbox.result import CallStatus

__all__ = [
    "HostToolBridge",
    "LazyHostBridge",
    "NotJSONError",
    "ToolBridge",
    "ToolReply",
    "ToolSpec",
    "huge_int_path",
    "json_copy",
    "json_nodes",
    "json_text",
    "too_many_nodes",
    "too_many_nodes_message",
    "tool_specs",
    "value_node_caps",
]

MAX_JSON_DEPTH = 200
"""Deepest nesting :func:`json_copy` accepts (deeper data is refused, not copied)."""


class NotJSONError(TypeError):
    """A value that is not plain JSON data was about to cross the boundary."""


def json_copy(value: Any, *, what: str = "value") -> Any:
    """A deep copy of ``value`` made only of ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``.

    Scalars must be of the exact types (a ``str`` subclass is refused, so a script
    cannot smuggle an object with overridden methods). Containers may be
    subclasses — ``Counter``, ``OrderedDict``, ``defaultdict``, namedtuples, a
    script's own ``dict`` subclass — because they are read through the base
    type's own C methods (``dict.items(v)``, ``tuple.__iter__(v)``), never the
    value's, and copied into plain ``dict``/``list`` objects, as ``json.dumps``
    would render them. ``tuple`` becomes ``list``, dict keys must be ``str``.
    Raises :class:`NotJSONError` naming the offending path. Never calls a method
    of the value.
    """
    try:
        if type(value) is dict:  # tool arguments, records: _fast_copy's dict branch, inline
            out: dict[str, Any] = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise _NotPlain
                out[key] = item if type(item) in _SCALARS else _fast_copy(item, 1)
            return out
        return _fast_copy(value, 0)
    except _NotPlain:
        pass
    return _copy(value, what, 0)  # the slow path names the offending path


_SCALARS = frozenset({str, int, float, bool, type(None)})

MAX_JSON_INT = 10**4300
"""Ints at or beyond this magnitude have no JSON text (CPython renders at most 4,300 digits)."""


def huge_int_path(value: Any, path: str = "") -> str | None:
    """The path of the first int in the JSON copy ``value`` that has no JSON text, else None.

    A 5,000-digit int argument crashed the trace, the audit log and ``--json`` output;
    the engine refuses such an argument at the call (test_boundary_huge_int_*).
    """
    kind = type(value)
    if kind is int:
        return path if not -MAX_JSON_INT < value < MAX_JSON_INT else None
    if kind is dict:
        for key, item in value.items():
            if type(item) is not str:
                found = huge_int_path(item, f"{path}[{key!r}]")
                if found is not None:
                    return found
    elif kind is list:
        for index, item in enumerate(value):
            if type(item) is not str:
                found = huge_int_path(item, f"{path}[{index}]")
                if found is not None:
                    return found
    return None


class _NotPlain(Exception):
    """Raised by the fast copy at the first value that needs the slow path's error message."""


def _fast_copy(value: Any, depth: int) -> Any:
    # Same rules as _copy without building paths; scalars are handled inline.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if depth >= MAX_JSON_DEPTH:
        raise _NotPlain
    depth += 1
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            out[key] = item if type(item) in _SCALARS else _fast_copy(item, depth)
        return out
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else _fast_copy(item, depth) for item in value]
    base = _container_base(value)
    if base is dict:
        out = {}
        for key, item in dict.items(value):
            if type(key) is not str:
                raise _NotPlain
            out[key] = _fast_copy(item, depth)
        return out
    if base is not None:
        return [_fast_copy(item, depth) for item in base.__iter__(value)]
    raise _NotPlain


def _container_base(value: Any) -> type[Any] | None:
    """``dict``, ``list`` or ``tuple`` when ``value`` is an instance of a subclass of one."""
    for base in (dict, list, tuple):
        if isinstance(value, base):
            return base
    return None


def _copy(value: Any, path: str, depth: int) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value
    if depth >= MAX_JSON_DEPTH:
        raise NotJSONError(f"{path} is nested more than {MAX_JSON_DEPTH} levels deep")
    if kind is dict:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise NotJSONError(
                    f"{path} has a key of type {type(key).__name__}; JSON object keys are strings"
                )
            out[key] = _copy(item, f"{path}[{key!r}]", depth + 1)
        return out
    if kind is list or kind is tuple:
        return [_copy(item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
    base = _container_base(value)
    if base is dict:
        return _copy(dict(dict.items(value)), path, depth)
    if base is not None:
        return _copy(list(base.__iter__(value)), path, depth)
    raise NotJSONError(f"{path} is a {kind.__name__}, which is not JSON data")


_SMALL_KEYS = 16
_SMALL_TEXT = 1_000
SMALL_FLAT_BYTES = _SMALL_KEYS * (2 * (6 * _SMALL_TEXT + 2) + 2) + 2
"""Most UTF-8 bytes of the compact JSON text of a :func:`small_flat` dict.

Per entry: a key and a str value of at most 1,000 characters, each at most 6
bytes a character (``\\u00XX`` escapes) plus quotes, a colon and a comma (a
number is at most 24 characters).
"""


def small_flat(raw: dict[Any, Any]) -> bool:
    """Whether the dict ``raw`` is a few short scalars: a shallow copy is its JSON copy.

    At most 16 str keys of at most 1,000 characters, none starting with ``_``
    (argument names that are refused, with a message, by the slow path; a result
    with such a key just takes the slow path), values ``None``/bool/float, 64-bit
    ints or str of at most 1,000 characters (exact types). Its JSON text is then
    at most :data:`SMALL_FLAT_BYTES` bytes (under 40,000 characters), so the
    render-size walk (``sizeguard.check_arguments``) and the result-size
    measure (:func:`json_size`) can be skipped.
    """
    if len(raw) > _SMALL_KEYS:
        return False
    for key, value in raw.items():
        if type(key) is not str or len(key) > _SMALL_TEXT or key[:1] == "_":
            return False
        kind = type(value)
        if kind is str:
            if len(value) > _SMALL_TEXT:
                return False
        elif kind is int:
            if not -(1 << 63) < value < 1 << 63:
                return False
        elif value is not None and kind is not bool and kind is not float:
            return False
    return True


def slot_setters(cls: type[Any]) -> list[Callable[[Any, Any], None]]:
    """The ``__set__`` of each slot of the frozen slots dataclass ``cls``, in field order.

    A frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__`` (about 0.25 µs a field); the records built once per
    tool call (:class:`ToolReply`, ``ToolCall``, ``CallRecord``) are made on the
    hot path with ``object.__new__`` and these setters instead: the same object
    for a third of the cost. Only for classes without ``__post_init__``.
    """
    assert "__post_init__" not in cls.__dict__, cls
    return [cls.__dict__[f.name].__set__ for f in dataclasses.fields(cls)]


def json_size(value: Any) -> int:
    """Bytes of the compact UTF-8 JSON encoding of ``value`` (a :func:`json_copy` result)."""
    return len(json_text(value).encode("utf-8", "surrogatepass"))


def json_text(value: Any) -> str:
    """The compact JSON text of ``value`` (a :func:`json_copy` result), as the worker sends it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)


# --- how many objects a script's value may hold (findings15 E09) --------------------------
# ``max_result_bytes`` bounds a value's JSON text, not what decoding it makes: ``[{}] * 1.5M``
# is 4.5 MB of text and 1.5 million dicts (about 110 MB) in the process that decodes it (the
# parent, in process isolation) or copies it (the host, in-process). Each container of a
# value is therefore weighed as 50 bytes of the limit and each value as 5: 200,000
# containers and 2,000,000 values at the default 10 MB (a list of 600,000 small ints is
# ordinary data), so that what a decode makes stays within about ten times the limit. The same rule in both modes (the worker's engine applies it;
# the parent refuses a frame over it before decoding it).
CONTAINER_BYTES = 50
"""Bytes of ``max_result_bytes`` one container (list, dict) of the script's value weighs."""
ITEM_BYTES = 5
"""Bytes of ``max_result_bytes`` one value (an item of a list, an entry of a dict) weighs."""
JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
"""A JSON string token (stripped before brackets and commas are counted)."""


def value_node_caps(max_result_bytes: int | None) -> tuple[int, int] | None:
    """The most containers and values a script's value may hold (``None``: no limit)."""
    if max_result_bytes is None:
        return None
    return max_result_bytes // CONTAINER_BYTES, max_result_bytes // ITEM_BYTES


def json_nodes(text: str, caps: tuple[int, int] | None = None) -> tuple[int, int]:
    """``(containers, values)`` of compact JSON ``text``: its brackets and commas + 1.

    Counted at C speed; strings are left out (a comma in a string is no value) only when
    the raw counts pass ``caps``, so the count is exact where it decides.
    """
    containers = text.count("[") + text.count("{")
    items = text.count(",") + 1
    if caps is not None and (containers > caps[0] or items > caps[1]):
        bare = JSON_STRING.sub("", text)
        containers = bare.count("[") + bare.count("{")
        items = bare.count(",") + 1
    return containers, items


def too_many_nodes(text: str, max_result_bytes: int | None) -> str | None:
    """Why the script's value of JSON ``text`` is refused for its object count, or ``None``."""
    caps = value_node_caps(max_result_bytes)
    if caps is None or max_result_bytes is None:
        return None
    containers, items = json_nodes(text, caps)
    if containers > caps[0]:
        return too_many_nodes_message("containers", containers, max_result_bytes)
    if items > caps[1]:
        return too_many_nodes_message("values", items, max_result_bytes)
    return None


def too_many_nodes_message(what: str, count: int, max_result_bytes: int) -> str:
    """The refusal of a value holding ``count`` ``"containers"`` or ``"values"``."""
    caps = value_node_caps(max_result_bytes)
    assert caps is not None
    if what == "containers":
        return (
            f"The script's value holds {count:,} lists and dicts, more than the "
            f"{caps[0]:,} its limit of {max_result_bytes} bytes allows "
            f"({CONTAINER_BYTES} bytes each)"
        )
    return (
        f"The script's value holds {count:,} values, more than the "
        f"{caps[1]:,} its limit of {max_result_bytes} bytes allows "
        f"({ITEM_BYTES} bytes each)"
    )


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What the engine needs to know about a tool (JSON-serialisable)."""

    name: str
    """The raw tool name."""
    identifier: str
    """The Python identifier the tool is bound under (:func:`~scriptgate.sandbox.naming.assign_identifiers`)."""
    description: str
    has_output_schema: bool

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        return {
            "name": self.name,
            "identifier": self.identifier,
            "description": self.description,
            "has_output_schema": self.has_output_schema,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolSpec:
        """The inverse of :meth:`to_json`."""
        return cls(
            name=str(data["name"]),
            identifier=str(data["identifier"]),
            description=str(data.get("description", "")),
            has_output_schema=bool(data.get("has_output_schema", False)),
        )


@dataclass(frozen=True, slots=True)
class ToolReply:
    """The outcome of one tool call as the script sees it (JSON-serialisable).

    When ``error`` is ``None`` the script receives ``value``; otherwise it gets
    ``ToolError(error)`` (``ToolDenied`` when ``status == "blocked"``).
    """

    status: CallStatus
    value: Any = None
    error: str | None = None
    duration_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        return {
            "status": self.status,
            "value": self.value,
            "error": self.error,
            "duration_ms": self.duration_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolReply:
        """The inverse of :meth:`to_json`."""
        return cls(
            status=data["status"],
            value=data.get("value"),
            error=data.get("error"),
            duration_ms=data.get("duration_ms"),
        )


_new = object.__new__
_SET_REPLY_STATUS, _SET_REPLY_VALUE, _SET_REPLY_ERROR, _SET_REPLY_DURATION = slot_setters(ToolReply)
_SET_CALL_ID, _SET_CALL_NAME, _SET_CALL_ARGUMENTS, _SET_CALL_ARGUMENTS_ERROR, _SET_CALL_TYPE = (
    slot_setters(ToolCall)
)


def _reply(status: CallStatus, value: Any, error: str | None, duration_ms: int | None) -> ToolReply:
    """``ToolReply(status, value, error, duration_ms)``, built as :func:`slot_setters` says."""
    reply: ToolReply = _new(ToolReply)
    _SET_REPLY_STATUS(reply, status)
    _SET_REPLY_VALUE(reply, value)
    _SET_REPLY_ERROR(reply, error)
    _SET_REPLY_DURATION(reply, duration_ms)
    return reply


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    """``ToolCall(id=call_id, name=name, arguments=arguments)``, built as :func:`slot_setters` says."""
    call: ToolCall = _new(ToolCall)
    _SET_CALL_ID(call, call_id)
    _SET_CALL_NAME(call, name)
    _SET_CALL_ARGUMENTS(call, arguments)
    _SET_CALL_ARGUMENTS_ERROR(call, None)
    _SET_CALL_TYPE(call, "toolCall")
    return call


class ToolBridge(Protocol):
    """How the engine calls a tool: one awaitable call per tool call."""

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        """Run tool ``tool_name`` with ``arguments`` (a JSON copy); never raise for tool failures."""
        ...


def tool_specs(tools: Sequence[AgentTool]) -> list[ToolSpec]:
    """The :class:`ToolSpec` of each tool, in order."""
    idents = assign_identifiers([t.name for t in tools])
    return [
        ToolSpec(
            name=t.name,
            identifier=ident,
            description=t.description,
            has_output_schema=t.output_schema is not None,
        )
        for t, ident in zip(tools, idents, strict=True)
    ]


def _text_of(content: Sequence[Any]) -> str:
    if len(content) == 1 and type(content[0]) is TextContent:
        text = content[0].text
        if type(text) is str:
            return text  # the common single text block ("\n".join returns it too)
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


class HostToolBridge:
    """Runs a script's tool calls on the host through ``run_tool_call``.

    ``signal`` is the run's abort signal: every call gets its own
    :class:`AbortController`, aborted when the run's signal fires (or when the
    engine cancels the call because the script ended). ``max_result_bytes``
    caps the JSON size of the value handed to the script.
    """

    def __init__(
        self,
        tools: Sequence[AgentTool],
        *,
        before_tool_call: BeforeToolCallHook | None = None,
        after_tool_call: AfterToolCallHook | None = None,
        signal: AbortSignal | None = None,
        assistant_message: AssistantMessage | None = None,
        context: AgentContext | None = None,
        max_result_bytes: int | None = None,
    ) -> None:
        self.tools = list(tools)
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.signal = signal
        self.assistant_message = assistant_message
        self.context = context
        self.max_result_bytes = max_result_bytes
        self._by_name: dict[str, AgentTool] = {}
        for t in self.tools:  # first exact name wins, as in a sequence
            self._by_name.setdefault(t.name, t)
        # what run_tool_call resolves names in: a short list scans faster than
        # a Mapping is recognised; a name map for many tools
        self._lookup: list[AgentTool] | dict[str, AgentTool] = (
            self._by_name if len(self.tools) > 8 else self.tools
        )
        self._structured = frozenset(
            name for name, t in self._by_name.items() if t.output_schema is not None
        )
        """Tools whose structured content is the script's value (the others give text)."""

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        """Run one call through the pipeline and convert its outcome (pi §5.3)."""
        try:
            args = json_copy(arguments, what="arguments")
        except NotJSONError as exc:
            return ToolReply(
                status="error", error=f"Invalid arguments for tool {tool_name!r}: {exc}"
            )
        controller = AbortController()
        remove = self.signal.add_listener(controller.abort) if self.signal is not None else None
        try:
            outcome = await run_tool_call(
                _tool_call(call_id, tool_name, args),
                tools=self._lookup,
                before_tool_call=self.before_tool_call,
                after_tool_call=self.after_tool_call,
                signal=controller.signal,
                assistant_message=self.assistant_message,
                context=self.context,
            )
        except anyio.get_cancelled_exc_class():
            # the script ended or was stopped while the call ran: the tool's signal fires
            controller.abort(AbortError("The script ended before the tool call finished"))
            raise
        finally:
            if remove is not None:
                remove()
        return self.convert(tool_name, outcome, cancelled=controller.signal.aborted)

    def convert(self, tool_name: str, outcome: Any, *, cancelled: bool = False) -> ToolReply:
        """Turn a ``ToolCallOutcome`` into the :class:`ToolReply` the script sees."""
        result = outcome.result
        duration = outcome.duration_ms
        cap = self.max_result_bytes
        if (
            not cancelled
            and type(outcome) is ToolCallOutcome
            and outcome.is_error is False
            and not outcome.blocked
            and tool_name not in self._structured
        ):
            # the common case: the text of a call that succeeded
            content = result.content
            if len(content) == 1 and type(content[0]) is TextContent:
                text = content[0].text
                if type(text) is str and (cap is None or len(text) * 4 <= cap):
                    return _reply("ok", text, None, duration)
        is_error = bool(outcome.is_error)
        blocked = bool(getattr(outcome, "blocked", False))
        status: CallStatus = (
            "cancelled" if cancelled else "blocked" if blocked else "error" if is_error else "ok"
        )
        try:
            structured = tool_name in self._structured and result.structured_content is not None
            if is_error or cancelled:  # a failure is a ToolError even with structured content,
                data = json_copy(result.structured_content) if structured else None  # as err.data
                text = _text_of(result.content)
                return _reply(status, data, text or f'Tool "{tool_name}" failed', duration)
            if structured:
                value = json_copy(result.structured_content, what="structured_content")
            else:
                value = _text_of(result.content)
        except NotJSONError as exc:
            return _reply(
                "error", None, f'Tool "{tool_name}" returned data that is not JSON: {exc}', duration
            )
        if (
            cap is not None
            and not (type(value) is str and len(value) * 4 <= cap)
            and not (cap >= SMALL_FLAT_BYTES and type(value) is dict and small_flat(value))
        ):
            size = json_size(value)
            if size > cap:
                return _reply(
                    "error",
                    None,
                    f'Tool "{tool_name}" returned {size} bytes, more than the limit of '
                    f"{cap} bytes for a script",
                    duration,
                )
        return _reply(status, value, None, duration)


class LazyHostBridge:
    """A :class:`HostToolBridge` made at a run's first tool call (most runs make none).

    Takes the same arguments, held as given when the run starts (the tools as a
    snapshot), so a run sees the tools and hooks it started with; a run that calls
    no tool never builds the bridge's name index.
    """

    __slots__ = ("_args", "_real", "_tools")

    def __init__(self, tools: Sequence[AgentTool], **options: Any) -> None:
        self._tools = tuple(tools)
        self._args = options
        self._real: HostToolBridge | None = None

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        """The bridge's :meth:`HostToolBridge.call` (the bridge is made at the first one)."""
        real = self._real
        if real is None:
            real = self._real = HostToolBridge(self._tools, **self._args)
        return await real.call(call_id, tool_name, arguments)
