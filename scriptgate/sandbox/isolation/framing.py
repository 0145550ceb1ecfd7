"""The parent's side of the wire: frames it sends and the checks on what the worker sends back.

Owns the length-prefixed frames (:func:`_frame`, :func:`_reply_frame`, :func:`_packet`), the
JSON forms of limits and tool specs, and the strict parsing of the worker's result
(:func:`_result_from_json`; the parent never trusts the worker). No processes, sockets or
event loop here; it must not import :mod:`.parent` or :mod:`.worker`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, NoReturn

from scriptgate.errors import ConfigurationError
from scriptgate.sandbox.bridge import (
    JSON_STRING,
    ToolReply,
    ToolSpec,
    json_size,
    slot_setters,
    value_node_caps,
)
from scriptgate.sandbox.records import record_arguments
from scriptgate.sandbox.result import (
    CallRecord,
    ErrorKind,
    Limits,
    ScriptError,
    ScriptResult,
)

_HEADER = 4
MAX_MESSAGE = 10_000
"""Characters of an error message the parent keeps (``engine.MAX_MESSAGE``; not imported:
this side never imports the engine). Longer ones are cut to it and end with ``…``."""
MAX_TYPE = 200
"""Characters of an error's type name the parent keeps (an exception class's name)."""
_ERROR_KINDS: frozenset[str] = frozenset(
    ("syntax", "rejected", "runtime", "tool", "limit", "aborted", "sandbox")
)
_CALL_STATUSES: frozenset[str] = frozenset(("ok", "error", "blocked", "cancelled"))
# Made once: ``json.dumps`` with options builds a new encoder for every message.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# For text UTF-8 cannot carry (a lone surrogate, which a tool's str may hold):
# escaped, it decodes on the other side to the same str.
_ENCODE_ASCII = json.JSONEncoder(separators=(",", ":")).encode


class _ProtocolError(Exception):
    """The worker sent something that is not a well-formed message."""


# --- hostile worker (findings14 B03): what one frame may cost the parent -------------------
# A frame is refused before it is parsed when its JSON text is longer, or holds more
# containers (the objects a decode makes: an empty list is two characters and a 56-byte
# object), than an honest worker's frame of that kind can: a call's arguments are bounded
# by what the engine lets a script pass (``MAX_RENDER`` characters of repr), a result by the run's
# ``max_result_bytes`` and ``max_output_chars``, an output event by ``max_output_chars``.
# An escape takes up to 6 characters of JSON for one of the text (12 for a character
# outside the BMP when a lone surrogate makes the worker escape the whole frame).
_OP_PREFIX = re.compile(r'\{\s*"op"\s*:\s*"([a-z]{1,16})"')
_STRING = JSON_STRING
_ARGUMENTS_CHARS = 10_000_000  # guards.sizes.MAX_RENDER: what the engine passes (not imported)
_ARGUMENT_CONTAINERS = 200_000  # guards.sizes.ARGUMENT_CONTAINERS (findings18 L10)
_ARGUMENT_ITEMS = 2_000_000  # guards.sizes.ARGUMENT_ITEMS
_SMALL_FRAME = 1 << 20  # ready, cancel, anything else: a little JSON
_RECORD_CHARS = 4096  # a call record in a result, besides what record_arguments caps
_RECORD_CONTAINERS = 64


@dataclass(frozen=True, slots=True)
class FrameCaps:
    """Characters of JSON text and containers one frame of each kind may hold."""

    chars: dict[str, int]
    containers: dict[str, int]
    output: int | None = None  # the run's max_output_chars
    items: dict[str, int] = field(default_factory=dict)
    """Values (commas outside strings) one frame of a kind may hold (kinds absent: any)."""

    @classmethod
    def of(cls, limits: Limits, max_frame: int) -> FrameCaps:
        """The caps of a run with ``limits`` (``max_frame``: the byte cap of any frame)."""
        out = limits.max_output_chars
        value = limits.max_result_bytes
        calls = limits.max_tool_calls if limits.max_tool_calls is not None else 10_000
        out_chars = max_frame if out is None else 12 * out + 4096
        value_chars = max_frame if value is None else 3 * value
        records = calls * _RECORD_CHARS
        result_chars = value_chars + out_chars + 12 * (MAX_MESSAGE + MAX_TYPE) + records + 65536
        # what the worker's engine lets a value hold (bridge.value_node_caps), plus the
        # records: a frame over it is refused before the parent decodes it (findings15 E09)
        nodes = value_node_caps(value)
        value_containers, value_items = (max_frame, max_frame) if nodes is None else nodes
        return cls(
            # (a call's text is not capped below max_frame: the engine measures arguments
            # as characters of repr, and escapes make JSON text up to 12 times longer)
            chars={"call": max_frame, "event": out_chars, "result": result_chars},
            containers={
                # what the engine lets one call's arguments hold (guards.sizes.check_arguments):
                # a frame of more is refused before the parent decodes it (findings18 L10:
                # [{}] * 2_400_000 grew the parent 500 MiB)
                "call": _ARGUMENT_CONTAINERS + 64,
                "result": value_containers + calls * _RECORD_CONTAINERS + 1024,
                "event": 8,
            },
            output=out,
            items={
                "result": value_items + calls * _RECORD_CHARS + 1024,
                "call": _ARGUMENT_ITEMS + 64,
            },
        )

    def check(self, text: str) -> tuple[str, bool]:
        """Refuse ``text`` (one frame) over its kind's caps; its op, and whether it may nest
        more than :data:`MAX_VALUE_DEPTH` + 2 levels (a result's value sits 2 levels in).
        """
        end = text.find('"', 7, 24) if text.startswith('{"op":"') else -1
        if end > 0:  # the worker's own frames: compact JSON
            op = text[7:end]
        else:
            match = _OP_PREFIX.match(text)
            op = match.group(1) if match is not None else ""
        chars = self.chars.get(op, _SMALL_FRAME)
        if len(text) > chars:
            if op == "event" and self.output is not None:  # (the cumulative check's words)
                raise _ProtocolError(f"more output than the limit of {self.output} characters")
            raise _ProtocolError(
                f"a {op or 'malformed'} message of {len(text)} characters exceeds "
                f"the {chars}-character cap"
            )
        brackets = text.count("[") + text.count("{")
        cap = self.containers.get(op, _SMALL_FRAME // 2)
        bare: str | None = None
        if brackets > cap:
            bare = _STRING.sub("", text)
            brackets = bare.count("[") + bare.count("{")
            if brackets > cap:
                raise _ProtocolError(
                    f"a {op or 'malformed'} message holds {brackets} JSON containers, "
                    f"more than the {cap} this run's limits allow"
                )
        items_cap = self.items.get(op)
        if items_cap is not None and text.count(",") > items_cap:
            if bare is None:
                bare = _STRING.sub("", text)
            items = bare.count(",")
            if items > items_cap:
                raise _ProtocolError(
                    f"a {op} message holds {items} JSON values, "
                    f"more than the {items_cap} this run's limits allow"
                )
        if brackets <= MAX_VALUE_DEPTH:
            return op, False
        if bare is None:
            bare = _STRING.sub("", text)
        return op, _nests_deeper(bare, MAX_VALUE_DEPTH + 2)


_NOT_BRACKETS = bytes(b for b in range(128) if b not in b"[]{}")
_EMPTY_CONTAINER = re.compile(rb"\[\]|\{\}")


def _nests_deeper(bare: str, limit: int) -> bool:
    """Whether JSON text without its strings (``bare``) nests more than ``limit`` levels.

    C-speed passes: each removes every empty container (``[]``, ``{}``), so after ``k``
    passes only containers holding more than ``k`` levels are left.
    """
    try:
        structure = bare.encode("ascii").translate(None, _NOT_BRACKETS)
    except UnicodeEncodeError:  # not JSON outside strings: the decoder refuses it
        return True
    for _ in range(limit):
        if not structure:
            return False
        shorter = _EMPTY_CONTAINER.sub(b"", structure)  # (one pass: one level each)
        if len(shorter) == len(structure):
            return True  # unbalanced: the decoder refuses it
        structure = shorter
    return bool(structure)


def _frame(message: dict[str, Any]) -> bytes:
    try:
        data = _ENCODE(message).encode()
    except UnicodeEncodeError:  # a lone surrogate: \u escapes
        data = _ENCODE_ASCII(message).encode()
    return len(data).to_bytes(_HEADER, "big") + data


def _reply_frame(call_id: str, status: str, reply: ToolReply) -> bytes:
    """The frame of ``{"op": "reply", "id", "reply": reply.to_json()}`` with ``status``.

    The same bytes :func:`_frame` makes, built as text (the encoder sets itself up
    again for every dict, which costs more than this whole message); the value is
    encoded on its own. ``status`` is one of ``_CALL_STATUSES``. Raises what the
    encoder raises for a value that is not JSON data.
    """
    value, error, duration = reply.value, reply.error, reply.duration_ms
    value_text = "null" if value is None else _ENCODE(value)
    error_text = "null" if error is None else _ENCODE(error)
    duration_text = (
        int.__repr__(duration)
        if type(duration) is int
        else "null"
        if duration is None
        else _ENCODE(duration)
    )
    text = (
        f'{{"op":"reply","id":{_ENCODE(call_id)},"reply":{{"status":"{status}",'
        f'"value":{value_text},"error":{error_text},"duration_ms":{duration_text}}}}}'
    )
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the encoder escapes it
        return _frame(
            {"op": "reply", "id": call_id, "reply": {**reply.to_json(), "status": status}}
        )
    return len(data).to_bytes(_HEADER, "big") + data


def _packet(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _seconds(timeout: float | None) -> str:
    return "(none)" if timeout is None else f"{timeout:g} s"


def _limits_json(limits: Limits) -> dict[str, Any]:
    data = asdict(limits)
    json.dumps(data)  # a host mistake (non-JSON limits) should fail loudly here
    return data


def _spec_json(spec: ToolSpec) -> dict[str, Any]:
    if not isinstance(spec, ToolSpec):
        raise ConfigurationError(f"not a ToolSpec: {spec!r}")
    return spec.to_json()


def _failure(
    kind: ErrorKind, type_: str, message: str, calls: list[CallRecord], started: float
) -> ScriptResult:
    return ScriptResult(
        ok=False,
        error=ScriptError(kind, type_, message),
        calls=tuple(calls),
        wall_time=time.perf_counter() - started,
    )


def _with_note(result: ScriptResult, note: str) -> ScriptResult:
    error = result.error
    if error is None:
        return result
    return ScriptResult(
        ok=result.ok,
        value=result.value,
        output=result.output,
        error=ScriptError(error.kind, error.type, error.message + note, error.line),
        calls=result.calls,
        wall_time=result.wall_time,
    )


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise _ProtocolError(f"a malformed result ({what})")


def _optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _optional_int(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _check_call(item: object) -> NoReturn:
    """Raise :class:`_ProtocolError` saying what is wrong with a call record of a result."""
    _expect(isinstance(item, list) and len(item) == _RECORD_FIELDS, "call")
    assert isinstance(item, list)
    call_id, tool, _arguments, status, duration, call_error = item
    _expect(isinstance(call_id, str) and isinstance(tool, str), "call id/tool")
    _expect(isinstance(status, str) and status in _CALL_STATUSES, "call status")
    _expect(_optional_int(duration) and _optional_str(call_error), "call duration/error")
    raise _ProtocolError("a malformed result (call)")


_new = object.__new__

_RECORD_SETTERS = slot_setters(CallRecord)

_RECORD_FIELDS = len(_RECORD_SETTERS)  # a record in a result: an array of the fields, in order


def _as_text(error: object) -> str | None:
    """A reply's ``error`` as the worker decodes it from the reply frame: a str subclass
    as its plain text, anything else as ``None``."""
    return str.__str__(error) if isinstance(error, str) else None


MAX_VALUE_DEPTH = 200
"""Nesting of a script's value (``bridge.MAX_JSON_DEPTH``: the engine's JSON copy refuses
deeper values with the runtime error :func:`_too_deep` repeats)."""

UNSENT_CANCELLED = "cancelled"
UNSENT_ERROR = "the call was refused in the worker process (it was never sent to the host)"
"""The error texts of records of calls the worker never sent (a worker's own text is not kept)."""


def _bounded_text(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap] + "…"


def _result_from_json(
    data: dict[str, Any],
    answered: dict[str, Any] | None = None,
    *,
    tools: frozenset[str] | None = None,
    limits: Limits | None = None,
    lines: int | None = None,
    wall_time: float | None = None,
) -> ScriptResult:
    """Rebuild a :class:`ScriptResult` from the worker's JSON, checking every field.

    The worker's ``ScriptResult.to_json()``, except that each call record is an
    array of its fields in order, or the id alone of a call this side answered
    (``answered``: the run's calls by id), whose record is then built from what
    this side received and replied (``worker_jobs._result_json``). An id this side did
    not answer is a protocol error.

    The parent's own knowledge of the run, when given: ``tools`` (the run's tool names:
    a record of another tool is refused), ``limits`` (``max_tool_calls`` and the per-tool
    quotas hold for every record, the parent's and the worker's together), ``lines``
    (the script's line count: an error ``line`` outside it is dropped) and ``wall_time``
    (the parent's own clock, which replaces the worker's number).
    """
    ok, output, wall = data.get("ok"), data.get("output", ""), data.get("wall_time", 0.0)
    _expect(isinstance(ok, bool), "ok")
    _expect(isinstance(output, str), "output")
    _expect(isinstance(wall, int | float) and not isinstance(wall, bool), "wall_time")
    # --- hostile worker (B09): the error's fields are bounded as the engine bounds them,
    # the run's duration is the parent's own measure ---
    if wall_time is not None:
        wall = wall_time
    elif not (isinstance(wall, int | float) and 0.0 <= wall < 1e9):
        wall = 0.0
    error: ScriptError | None = None
    raw_error = data.get("error")
    if raw_error is not None:
        _expect(isinstance(raw_error, dict), "error")
        kind, type_, message = (
            raw_error.get("kind"),
            raw_error.get("type"),
            raw_error.get("message"),
        )
        line = raw_error.get("line")
        _expect(type(kind) is str and kind in _ERROR_KINDS, "error.kind")
        _expect(isinstance(type_, str) and isinstance(message, str), "error.type/message")
        _expect(_optional_int(line), "error.line")
        if line is not None and not (1 <= line <= (lines if lines is not None else 10**9)):
            line = None
        error = ScriptError(
            kind, _bounded_text(type_, MAX_TYPE), _bounded_text(message, MAX_MESSAGE), line
        )
    _expect(ok is (error is None), "ok and error disagree")
    raw_calls = data.get("calls", [])
    _expect(isinstance(raw_calls, list), "calls")
    calls: list[CallRecord] = []
    append = calls.append
    record: CallRecord
    set_id, set_tool, set_arguments, set_status, set_duration, set_error = _RECORD_SETTERS
    # --- hostile worker: the records are the parent's. Each call this side answered
    # appears exactly once, as this side saw it (one the worker leaves out is added
    # back); a duplicate, a renamed call or a record of a call this side never saw
    # (but the worker's own "error" or "cancelled" for a call it never sent: arguments
    # it could not send, a call the script's end cut off) is refused. ---
    seen: set[str] = set()
    unsent = 0

    def ours(known: Any) -> CallRecord:
        mine = _new(CallRecord)
        set_id(mine, known.id)
        set_tool(mine, known.tool)
        # (an answered call's arguments are capped already; a call cut off before its
        # reply still holds what the worker sent)
        set_arguments(
            mine, known.arguments if known.status is not None else record_arguments(known.arguments)
        )
        set_status(mine, known.status or "cancelled")
        set_duration(mine, known.duration_ms)
        set_error(mine, known.error)
        return mine

    for item in raw_calls:
        if type(item) is str:
            known = answered.get(item) if answered is not None else None
            if known is None or known.status is None:
                raise _ProtocolError("a malformed result (a call record names an unanswered call)")
            if item in seen:
                raise _ProtocolError(f"a malformed result (call {item!r} is listed twice)")
            seen.add(item)
            append(ours(known))
            continue
        # [id, tool, arguments, status, duration_ms, error] (decoded JSON: exact types;
        # one pass of checks per record, _check_call says what is wrong)
        if type(item) is not list or len(item) != _RECORD_FIELDS:
            _check_call(item)
        call_id, tool, arguments, status, duration, call_error = item
        if not (
            type(call_id) is str
            and type(tool) is str
            and type(status) is str
            and status in _CALL_STATUSES
            and (duration is None or type(duration) is int)
            and (call_error is None or type(call_error) is str)
        ):
            _check_call(item)
        if call_id in seen:
            raise _ProtocolError(f"a malformed result (call {call_id!r} is listed twice)")
        seen.add(call_id)
        known = answered.get(call_id) if answered is not None else None
        if known is not None:
            if tool != known.tool:
                raise _ProtocolError(f"a malformed result (a record renames call {call_id!r})")
            append(ours(known))
            continue
        if status == "ok" or (answered is not None and status not in ("error", "cancelled")):
            raise _ProtocolError(
                f"a malformed result (a record claims call {call_id!r} the parent never ran)"
            )
        # --- hostile worker (B04): a call the worker never sent (one the script's end cut
        # off before it left, arguments it could not encode) ran nowhere: its record says
        # so in the parent's words (the worker's error text is not kept), its tool must be
        # one of the run's, its arguments are capped, and it counts against the run's
        # tool-call limits like any call ---
        if tools is not None and tool not in tools:
            raise _ProtocolError(
                f"a malformed result (a record of call {call_id!r} names no tool of the run)"
            )
        if type(arguments) is not dict:
            raise _ProtocolError(f"a malformed result (call {call_id!r}: arguments)")
        unsent += 1
        record = _new(CallRecord)
        set_id(record, call_id)
        set_tool(record, tool)
        set_arguments(record, record_arguments(arguments))
        set_status(record, status)
        set_duration(record, duration if duration is None or 0 <= duration < 10**9 else None)
        set_error(record, UNSENT_CANCELLED if status == "cancelled" else UNSENT_ERROR)
        append(record)
    if answered is not None:
        for call_id, known in answered.items():
            if call_id not in seen:
                append(ours(known))
    if unsent and limits is not None:
        _check_call_limits(calls, limits)
    # --- end hostile worker ---
    return ScriptResult(
        ok=bool(ok),
        value=data.get("value"),
        output=output,
        error=error,
        calls=tuple(calls),
        wall_time=float(wall),
    )


def _check_call_limits(calls: list[CallRecord], limits: Limits) -> None:
    """Refuse records past ``max_tool_calls`` or a per-tool quota (the engine never makes them)."""
    max_calls = limits.max_tool_calls
    if max_calls is not None and len(calls) > max_calls:
        raise _ProtocolError(
            f"a malformed result ({len(calls)} call records, more than the limit of {max_calls})"
        )
    quotas = limits.max_tool_calls_per_tool
    if quotas:
        counts: dict[str, int] = {}
        for record in calls:
            counts[record.tool] = counts.get(record.tool, 0) + 1
        for name, count in counts.items():
            quota = quotas.get(name)
            if quota is not None and count > quota:
                raise _ProtocolError(
                    f"a malformed result ({count} records of calls to {name[:100]!r}, "
                    f"more than its limit of {quota})"
                )


def _too_deep(value: Any, limit: int = MAX_VALUE_DEPTH) -> str | None:
    """The engine's error text for a value nested more than ``limit`` levels, else ``None``.

    Iterative (no recursion, whatever the depth): the path of the first container found
    past the limit, as the engine's JSON copy names it (``the script's value[0]['k']...``).
    """
    if type(value) not in (list, dict):
        return None
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    while stack:
        item, depth, path = stack.pop()
        if depth >= limit:
            where = "".join(f"[{key!r}]" for key in path)
            return f"the script's value{where} is nested more than {limit} levels deep"
        children = item.items() if type(item) is dict else enumerate(item)
        for key, child in children:
            if type(child) in (list, dict):
                stack.append((child, depth + 1, (*path, key)))
    return None


def _within_limits(result: ScriptResult, limits: Limits, *, deep: bool = True) -> ScriptResult:
    """``result`` held to ``max_output_chars`` and ``max_result_bytes``, as the in-process engine would.

    The worker enforces both itself; a worker whose interpreter is broken may not, so the
    parent checks again what came back: output beyond the cap is cut to it, a value over
    the cap is dropped; either is a ``limit`` error (the in-process texts).
    """
    output, value, error = result.output, result.value, result.error
    cap = limits.max_output_chars
    over = False
    # --- hostile worker (B02): a value deeper than the engine's JSON copy allows is the
    # engine's own runtime error (re-encoding it deeper in the host's stack raised
    # RecursionError out of Sandbox.run) ---
    deep_text = _too_deep(value) if deep and type(value) in (list, dict) else None
    if deep_text is not None:
        return ScriptResult(
            ok=False,
            value=None,
            output=output[:cap] if cap is not None else output,
            error=ScriptError("runtime", "TypeError", deep_text),
            calls=result.calls,
            wall_time=result.wall_time,
        )
    if cap is not None and len(output) > cap:
        output, over = output[:cap], True
        if error is None or error.kind != "limit":
            error = ScriptError(
                "limit", "LimitExceeded", f"Script output exceeded the limit of {cap} characters"
            )
        value = None
    byte_cap = limits.max_result_bytes
    if (
        byte_cap is not None
        and value is not None
        and type(value) not in (bool, int, float)
        and not (type(value) is str and len(value) * 4 <= byte_cap)
    ):
        try:
            size = json_size(value)
        except (ValueError, RecursionError):
            size = byte_cap + 1
        if size > byte_cap:
            over = True
            value = None
            if error is None:
                error = ScriptError(
                    "limit",
                    "LimitExceeded",
                    f"The script's value is {size} bytes, more than the limit of {byte_cap} bytes",
                )
    if not over:
        return result
    return ScriptResult(
        ok=error is None,
        value=value,
        output=output,
        error=error,
        calls=result.calls,
        wall_time=result.wall_time,
    )
