"""``validate_tool_arguments`` (pi §2.1) and pi's model-facing error text (§2.7).

Caching (pi keys compiled validators by schema object identity in a weak map):

- per tool: a :class:`weakref.WeakKeyDictionary` maps the :class:`AgentTool` to
  ``(schema object, compiled)``; the entry is reused while ``tool.parameters_schema`` is
  the same object and disappears with the tool;
- per schema object (:func:`compiled_for`, shared by tools that share one schema
  object): a schema that supports weak references (e.g. a custom ``Mapping``) is cached
  weakly by identity and the entry goes when the schema is collected; a plain ``dict``
  cannot be weakly referenced, so the entry is a weak reference to the *compiled*
  validator keyed by ``id(schema)``, and the validator holds the dict (so its ``id``
  cannot be reused while the entry lives). The entry lives exactly as long as someone —
  normally the tool cache, i.e. the tool — holds the validator. Equal but distinct
  schema objects always compile separately.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterable, Mapping
from threading import Lock
from typing import TYPE_CHECKING, Any

from scriptgate.errors import SchemaCompileError, ToolArgumentsError
from scriptgate.runtime._jsnum import js_json_pretty
from scriptgate.runtime.schema import (
    CompiledSchema,
    ValidationIssue,
    compile_schema,
    pointer_to_path,
)

if TYPE_CHECKING:
    from scriptgate.runtime.tool import AgentTool
    from scriptgate.runtime.types import ToolCall

__all__ = [
    "compiled_for",
    "format_validation_error",
    "json_stringify_pretty",
    "validate_tool_arguments",
]

_lock = Lock()
_tool_cache: weakref.WeakKeyDictionary[Any, tuple[Any, CompiledSchema]] = (
    weakref.WeakKeyDictionary()
)
_weak_cache: dict[int, tuple[weakref.ref[Any], CompiledSchema]] = {}
_by_id: weakref.WeakValueDictionary[int, CompiledSchema] = weakref.WeakValueDictionary()


def json_stringify_pretty(value: Any) -> str:
    """JavaScript ``JSON.stringify(value, null, 2)``.

    Two-space indent, ``[]``/``{}`` for empty containers, integral floats written as
    integers (``1.0`` → ``1``), JS number text (``1e+21``), non-ASCII kept, key order kept.
    """
    return js_json_pretty(value)


def _drop_weak(key: int) -> None:
    with _lock:
        _weak_cache.pop(key, None)


def _dropper(key: int) -> Any:
    def drop(_ref: object) -> None:
        _drop_weak(key)

    return drop


def compiled_for(schema: Any) -> CompiledSchema:
    """The cached :func:`compile_schema` result (pi-ai's options) for this schema object."""
    key = id(schema)
    with _lock:
        hit = _weak_cache.get(key)
        if hit is not None and hit[0]() is schema:
            return hit[1]
        by_id = _by_id.get(key)
        if by_id is not None and by_id._source is schema:
            return by_id
    compiled = compile_schema(schema)
    with _lock:
        try:
            ref = weakref.ref(schema, _dropper(key))
        except TypeError:
            compiled._source = schema
            _by_id[key] = compiled
        else:
            _weak_cache[key] = (ref, compiled)
    return compiled


# The dict behind ``_tool_cache`` (weak references to the tools as keys): looked up
# directly, as ``WeakKeyDictionary.get`` would, without that Python-level method's frame.
_tool_entries: dict[Any, tuple[Any, CompiledSchema]] = vars(_tool_cache)["data"]
_ref = weakref.ref


class _Undefined:
    """JavaScript's ``undefined``: a pi-style tool without ``parameters``."""

    def __repr__(self) -> str:
        return "undefined"


_UNDEFINED = _Undefined()


def _pi_tool_schema(tool: Any) -> Any:
    """``tool.parameters`` of a pi-style tool: a mapping or any object with ``parameters``."""
    if isinstance(tool, Mapping):
        return tool.get("parameters", _UNDEFINED)
    return getattr(tool, "parameters", _UNDEFINED)


def _compiled_for_tool(tool: AgentTool | Mapping[str, Any]) -> CompiledSchema:
    try:
        schema = tool.parameters_schema  # type: ignore[union-attr]
    except AttributeError:
        if hasattr(type(tool), "parameters_schema"):
            raise  # an AgentTool whose schema property itself failed
        # a pi-style tool: ``{"name": ..., "parameters": ...}``
        schema = _pi_tool_schema(tool)
        if schema is _UNDEFINED:
            raise SchemaCompileError(
                "A schema must be an object or a boolean, got undefined"
            ) from None
        return compiled_for(schema)
    try:
        hit = _tool_entries.get(_ref(tool))
    except TypeError:  # an unhashable tool object
        return compiled_for(schema)
    if hit is not None and hit[0] is schema:
        return hit[1]
    compiled = compiled_for(schema)
    _tool_cache[tool] = (schema, compiled)
    return compiled


MAX_SHOWN_ISSUES = 100
"""Issues a validation error lists; more are counted (``... and N more``)."""

MAX_SHOWN_ARGUMENTS = 10_000
"""Characters of pretty JSON of the received arguments a validation error shows at most."""


def format_validation_error(tool_name: str, issues: Iterable[ValidationIssue], args: Any) -> str:
    """pi's ``Validation failed for tool "<name>":`` text (§2.7), byte for byte.

    sizeguard (findings14 B03): bounded whatever the arguments weigh. At most
    :data:`MAX_SHOWN_ISSUES` issues are listed, and arguments whose pretty JSON would
    pass :data:`MAX_SHOWN_ARGUMENTS` characters are described, not rendered (pi renders
    them whole: megabytes of arguments made megabytes of error text, and seconds of work
    on the host's event loop).
    """
    lines = [f'Validation failed for tool "{tool_name}":']
    more = 0
    for issue in issues:
        if len(lines) > MAX_SHOWN_ISSUES:
            more += 1
            continue
        lines.append(f"  - {pointer_to_path(issue.path)}: {issue.message}")
    if more:
        lines.append(f"  ... and {more} more")
    lines.append("")
    lines.append("Received arguments:")
    if _pretty_size_exceeds(args, MAX_SHOWN_ARGUMENTS):
        lines.append(f"(not shown: more than {MAX_SHOWN_ARGUMENTS} characters of JSON)")
    else:
        lines.append(json_stringify_pretty(args))
    return "\n".join(lines)


def _pretty_size_exceeds(value: Any, limit: int) -> bool:
    """Whether the pretty JSON of ``value`` may pass ``limit`` characters (stops early).

    An estimate that never counts short: each string its length plus quotes, each other
    scalar at least one character, each item a newline and its indentation.
    """
    size = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is str:
            size += len(item) + 2
        elif isinstance(item, Mapping):
            size += 2 + 2 * depth
            for key, child in item.items():
                size += (len(key) if type(key) is str else 8) + 5 + 2 * depth
                stack.append((child, depth + 1))
                if size > limit or len(stack) > limit:
                    return True
        elif isinstance(item, list | tuple):
            size += 2 + 2 * depth
            for child in item:
                size += 2 + 2 * depth
                stack.append((child, depth + 1))
                if size > limit or len(stack) > limit:
                    return True
        else:
            size += 1
        if size > limit:
            return True
    return False


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _clone(value: Any) -> Any:
    """``structuredClone`` for JSON data; scalars are shared, containers copied."""
    t = type(value)
    if t is dict:
        return {k: (v if type(v) in _SCALARS else _clone(v)) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _SCALARS else _clone(v) for v in value]
    if t in _SCALARS:
        return value
    if isinstance(value, Mapping):
        return {k: _clone(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clone(v) for v in value]
    try:
        return copy.deepcopy(value)
    except Exception:  # not copyable (a lock, a generator): shared as is
        return value


def validate_tool_arguments(tool: AgentTool | Mapping[str, Any], tool_call: ToolCall) -> Any:
    """Validate and coerce ``tool_call.arguments`` against ``tool.parameters_schema``.

    ``tool`` may also be a pi-style tool definition — a mapping (or any object) with
    ``parameters`` — as pi's ``validateToolArguments(tool, toolCall)`` takes one: its
    name is not looked at (an empty one is fine; messages name ``tool_call.name``), and
    a ``None`` schema fails as pi's ``null`` does
    (``A schema must be an object or a boolean, got null``).

    Returns the coerced arguments: a deep copy, so the tool may mutate it without
    touching the transcript's tool call (the same copy when nothing changed).

    Raises :class:`~scriptgate.errors.ToolArgumentsError` with pi's text —
    ``Invalid arguments for tool "<name>": <arguments_error>`` when the call carries an
    ``arguments_error`` (no schema check runs), else the ``Validation failed for tool``
    block — and :class:`~scriptgate.errors.SchemaCompileError` for a malformed schema.
    """
    name = tool_call.name
    if tool_call.arguments_error:  # pi tests it for truth: ``""`` means no error
        raise ToolArgumentsError(
            f'Invalid arguments for tool "{name}": {tool_call.arguments_error}',
            tool_name=name,
        )
    validator = _compiled_for_tool(tool)
    original = tool_call.arguments
    value = _clone(original)
    try:
        # What ``parse`` does, without its result objects on the way to a success.
        if validator._fast(value):
            return value
        coerced = validator._coerce_unchecked(value)
        if validator._fast(coerced) or validator._valid(coerced):
            return coerced
    except RecursionError:
        pass  # ``parse`` reports it as the generic ``invalid`` error
    result = validator.parse(value)
    if result.ok:  # pragma: no cover - parse agrees with the lines above
        return result.value
    raise ToolArgumentsError(
        format_validation_error(name, result.errors, original),
        tool_name=name,
        errors=result.errors,
    )
