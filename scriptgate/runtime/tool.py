"""What a tool is: :class:`AgentTool` (pi §1.2) and the ``@tool`` decorator."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, cast, get_type_hints, overload

import pydantic
from pydantic import BaseModel

from scriptgate.errors import ToolDefinitionError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.content import AgentToolResult, TextContent
from scriptgate.runtime.paths import PathArguments

__all__ = [
    "AgentTool",
    "ExecuteFn",
    "ExecutionMode",
    "OnUpdate",
    "PrepareArguments",
    "tool",
]

OnUpdate: TypeAlias = Callable[[AgentToolResult], object]
"""Receives partial results while ``execute`` runs."""

ExecuteFn: TypeAlias = Callable[
    [str, Any, "AbortSignal | None", "OnUpdate | None"],
    "AgentToolResult | Awaitable[AgentToolResult]",
]
"""``execute(tool_call_id, params, signal, on_update)``: sync (run in a worker thread) or async."""

PrepareArguments: TypeAlias = Callable[[dict[str, Any]], Any]
"""The compatibility shim: sees the raw arguments before validation."""

ExecutionMode: TypeAlias = Literal["sequential", "parallel"]

_INJECTED = frozenset({"tool_call_id", "signal", "on_update"})


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` annotations (noise in stubs and prompts)."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                out[key] = {k: _strip_titles(v) for k, v in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


class AgentTool:
    """A tool the model (or a script) can call.

    Build one directly, subclass it and override :meth:`execute`, or use
    :func:`tool` on a typed function.

    ``parameters`` is a JSON Schema dict, or a pydantic model class: then the
    JSON Schema is the model's, validation still runs through scriptgate's
    coercing validator (pi semantics), and ``execute`` receives a model instance
    built from the validated arguments.

    ``paths`` declares which arguments are paths and how they resolve
    (:class:`~scriptgate.runtime.paths.PathArguments`): the pipeline resolves
    them after validation and before ``before_tool_call``, so the policy judges,
    and ``execute`` receives, what the tool will really touch.
    ``annotations`` are behaviour hints in MCP's vocabulary (``readOnlyHint``,
    ``destructiveHint``, ``idempotentHint``, ``openWorldHint``, ``title``) that
    policies may match (``{}`` when the tool declares none).
    """

    name: str
    label: str
    description: str
    parameters: Mapping[str, Any] | type[BaseModel]
    prepare_arguments: PrepareArguments | None
    output_schema: Mapping[str, Any] | None
    replay: Literal["never", "safe"] | None
    execution_mode: ExecutionMode | None
    paths: PathArguments | None = None
    annotations: Mapping[str, Any] = MappingProxyType({})
    blocking: bool

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        parameters: Mapping[str, Any] | type[BaseModel] | None = None,
        execute: ExecuteFn | None = None,
        label: str | None = None,
        prepare_arguments: PrepareArguments | None = None,
        output_schema: Mapping[str, Any] | None = None,
        replay: Literal["never", "safe"] | None = None,
        execution_mode: ExecutionMode | None = None,
        paths: PathArguments | None = None,
        annotations: Mapping[str, Any] | None = None,
        blocking: bool = True,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ToolDefinitionError("a tool needs a non-empty string name")
        if execution_mode not in (None, "sequential", "parallel"):
            raise ToolDefinitionError(
                f"execution_mode must be 'sequential' or 'parallel', got {execution_mode!r}"
            )
        self.name = name
        self.label = label if label is not None else name
        self.description = description
        self.parameters = (
            parameters if parameters is not None else {"type": "object", "properties": {}}
        )
        self.prepare_arguments = prepare_arguments
        self.output_schema = output_schema
        self.replay = replay
        self.execution_mode = execution_mode
        self.paths = paths
        self.annotations = dict(annotations) if annotations else {}
        self.blocking = bool(blocking)
        """A sync ``execute`` runs in a worker thread (abandoned, if it is still running,
        when its call is cancelled: a deadline holds whatever it does); ``False``
        declares it quick and non-blocking: it runs inline on the event loop, no
        thread hop (and nothing can stop it while it runs)."""
        if execute is not None:
            self.execute = execute  # type: ignore[method-assign,assignment]
        elif type(self).execute is AgentTool.execute:
            raise ToolDefinitionError(
                f"tool {name!r} has no execute: pass execute=... or override execute()"
            )

    def execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal | None,
        on_update: OnUpdate | None,
    ) -> AgentToolResult | Awaitable[AgentToolResult]:
        """Run the tool. Raise on failure, or return a result with ``is_error=True``."""
        raise NotImplementedError  # pragma: no cover - replaced in __init__ or by a subclass

    # -- derived, cached --------------------------------------------------------

    @cached_property
    def params_model(self) -> type[BaseModel] | None:
        """The pydantic model ``execute`` receives instances of, if ``parameters`` is one."""
        params = self.parameters
        if isinstance(params, type) and issubclass(params, BaseModel):
            return params
        return None

    @cached_property
    def parameters_schema(self) -> Mapping[str, Any]:
        """The JSON Schema of the arguments (one object per tool, so validator caching holds)."""
        model = self.params_model
        if model is not None:
            return cast(dict[str, Any], _strip_titles(model.model_json_schema()))
        return cast(Mapping[str, Any], self.parameters)

    @cached_property
    def is_async(self) -> bool:
        """Whether ``execute`` is a coroutine function (else it runs in a worker thread)."""
        fn = self.execute
        return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )

    def build_params(self, args: Any) -> Any:
        """What ``execute`` receives for validated ``args``: a model instance or ``args``."""
        model = self.params_model
        if model is None:
            return args
        return model.model_validate(args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


# ----------------------------------------------------------------------------- @tool


def _output_adapter(annotation: Any) -> pydantic.TypeAdapter[Any] | None:
    """A TypeAdapter for return values that carry structure, else ``None``."""
    if annotation in (inspect.Signature.empty, None, type(None), str, Any, AgentToolResult):
        return None
    return pydantic.TypeAdapter(annotation)


def _render_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    label: str | None,
    execution_mode: ExecutionMode | None,
    replay: Literal["never", "safe"] | None,
    output_schema: Mapping[str, Any] | None,
    blocking: bool = True,
) -> AgentTool:
    if not callable(fn):
        raise ToolDefinitionError(f"@tool needs a function, got {fn!r}")
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:  # unresolvable forward references
        raise ToolDefinitionError(
            f"@tool could not resolve the annotations of {fn!r}: {exc}"
        ) from exc
    sig = inspect.signature(fn)
    fields: dict[str, Any] = {}
    injected: list[str] = []
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"@tool function {fn.__name__!r} cannot take *args or **kwargs"
            )
        if pname in _INJECTED:
            injected.append(pname)
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"@tool function {fn.__name__!r}: parameter {pname!r} is positional-only"
            )
        annotation = hints.get(pname, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (annotation, default)
    tool_name = name or fn.__name__
    try:
        model = pydantic.create_model(
            f"{tool_name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid"),
            **fields,
        )
        schema = _strip_titles(model.model_json_schema())
        return_annotation = hints.get("return", inspect.Signature.empty)
        adapter = _output_adapter(return_annotation)
        if output_schema is None and adapter is not None:
            output_schema = _strip_titles(adapter.json_schema())
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError) as exc:
        first_line = str(exc).splitlines()[0]
        raise ToolDefinitionError(
            f"@tool {tool_name!r}: pydantic cannot build a schema from the annotations: {first_line}"
        ) from exc
    doc = description if description is not None else (inspect.getdoc(fn) or "")
    is_async = inspect.iscoroutinefunction(fn)

    def to_result(value: Any) -> AgentToolResult:
        if isinstance(value, AgentToolResult):
            return value
        if adapter is not None:
            data = adapter.dump_python(value, mode="json")
            return AgentToolResult(
                content=(TextContent(_render_text(data)),), details=None, structured_content=data
            )
        if value is None:
            return AgentToolResult(content=(TextContent(""),))
        if isinstance(value, str):
            return AgentToolResult(content=(TextContent(value),))
        data = pydantic.TypeAdapter(Any).dump_python(value, mode="json")
        return AgentToolResult(content=(TextContent(_render_text(data)),), structured_content=data)

    def call_kwargs(
        tool_call_id: str, params: BaseModel, signal: AbortSignal | None, on_update: Any
    ) -> dict[str, Any]:
        kwargs = {key: getattr(params, key) for key in fields}
        extra = {"tool_call_id": tool_call_id, "signal": signal, "on_update": on_update}
        for key in injected:
            kwargs[key] = extra[key]
        return kwargs

    execute: ExecuteFn
    if is_async:

        async def execute_async(
            tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any
        ) -> AgentToolResult:
            return to_result(await fn(**call_kwargs(tool_call_id, params, signal, on_update)))

        execute = execute_async
    else:

        def execute_sync(
            tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: Any
        ) -> AgentToolResult:
            return to_result(fn(**call_kwargs(tool_call_id, params, signal, on_update)))

        execute = execute_sync

    built = AgentTool(
        name=tool_name,
        description=doc,
        parameters=model,
        execute=execute,
        label=label,
        output_schema=output_schema,
        replay=replay,
        execution_mode=execution_mode,
        blocking=blocking,
    )
    # Expose the friendlier schema (no titles) and keep the wrapped function reachable.
    built.__dict__["parameters_schema"] = schema
    built.__dict__["fn"] = fn
    return built


@overload
def tool(fn: Callable[..., Any], /) -> AgentTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    execution_mode: ExecutionMode | None = None,
    replay: Literal["never", "safe"] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    blocking: bool = True,
) -> Callable[[Callable[..., Any]], AgentTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    label: str | None = None,
    execution_mode: ExecutionMode | None = None,
    replay: Literal["never", "safe"] | None = None,
    output_schema: Mapping[str, Any] | None = None,
    blocking: bool = True,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Build an :class:`AgentTool` from a typed function (sync or async).

    - parameters: from the signature (pydantic types, ``Annotated[..., Field(...)]``);
      parameters named ``tool_call_id``, ``signal`` or ``on_update`` are injected
      instead of being arguments;
    - description: the docstring (or ``description=``);
    - ``output_schema``: from the return annotation (a TypedDict, pydantic model
      or dataclass; any structured type works);
    - the returned value becomes ``structured_content`` (its JSON form) plus a
      text rendering in ``content``; a returned ``str`` is plain text, and a
      returned :class:`AgentToolResult` is passed through;
    - a sync function runs in a worker thread, abandoned if its call is cancelled
      (a deadline, an abort); ``blocking=False`` runs it inline on the event loop
      instead (no thread hop, ~10x cheaper: for quick, non-blocking functions).

    Use bare (``@tool``) or with options (``@tool(name="read_file")``).
    """
    options = {
        "name": name,
        "description": description,
        "label": label,
        "execution_mode": execution_mode,
        "replay": replay,
        "output_schema": output_schema,
        "blocking": blocking,
    }
    if fn is not None:
        return _make_tool(fn, **options)  # type: ignore[arg-type]

    def decorate(inner: Callable[..., Any]) -> AgentTool:
        return _make_tool(inner, **options)  # type: ignore[arg-type]

    return decorate
