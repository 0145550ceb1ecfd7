"""AgentTool and the @tool decorator (pi §1.2)."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from scriptgate.errors import ToolDefinitionError
from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.tool import AgentTool, tool
from scriptgate.runtime.types import AgentToolResult, TextContent


class Point(TypedDict):
    x: int
    y: int


class OldStyle(typing.TypedDict):  # pydantic needs typing_extensions.TypedDict before 3.12
    a: int


class Person(BaseModel):
    name: str
    age: int


@dataclass
class Box:
    width: float
    label: str


def _echo(tool_call_id: str, params: Any, signal: object, on_update: object) -> AgentToolResult:
    return AgentToolResult.text(str(params))


def test_tool_agent_tool_defaults() -> None:
    t = AgentTool(name="echo", execute=_echo)
    assert t.label == "echo"
    assert t.parameters_schema == {"type": "object", "properties": {}}
    assert t.output_schema is None
    assert t.execution_mode is None
    assert t.is_async is False


def test_tool_agent_tool_without_execute_is_a_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match="has no execute"):
        AgentTool(name="x")


def test_tool_agent_tool_rejects_bad_execution_mode() -> None:
    with pytest.raises(ToolDefinitionError, match="execution_mode"):
        AgentTool(name="x", execute=_echo, execution_mode="fast")  # type: ignore[arg-type]


def test_tool_agent_tool_rejects_empty_name() -> None:
    with pytest.raises(ToolDefinitionError, match="non-empty"):
        AgentTool(name="", execute=_echo)


def test_tool_subclass_overrides_execute() -> None:
    class Upper(AgentTool):
        async def execute(  # type: ignore[override]
            self, tool_call_id: str, params: Any, signal: object, on_update: object
        ) -> AgentToolResult:
            return AgentToolResult.text(params["s"].upper())

    t = Upper(name="upper", parameters={"type": "object"})
    assert t.is_async is True


def test_tool_pydantic_parameters_give_model_instances() -> None:
    t = AgentTool(name="p", parameters=Person, execute=_echo)
    assert t.params_model is Person
    schema = t.parameters_schema
    assert schema["required"] == ["name", "age"]
    assert "title" not in schema
    assert t.parameters_schema is schema  # one object per tool: validator caching holds
    params = t.build_params({"name": "Ada", "age": 36})
    assert isinstance(params, Person)
    assert params.age == 36


def test_tool_dict_parameters_pass_args_through() -> None:
    args = {"a": 1}
    assert AgentTool(name="d", execute=_echo).build_params(args) is args


def test_tool_decorator_bare_builds_schema_from_signature() -> None:
    @tool
    def search(
        query: Annotated[str, Field(description="What to look for")],
        limit: int = 10,
        exact: bool = False,
    ) -> list[str]:
        """Search the notes.

        Returns matching titles.
        """
        return [query] * limit

    assert isinstance(search, AgentTool)
    assert search.name == "search"
    assert search.description == "Search the notes.\n\nReturns matching titles."
    assert search.parameters_schema == {
        "additionalProperties": False,
        "properties": {
            "query": {"description": "What to look for", "type": "string"},
            "limit": {"default": 10, "type": "integer"},
            "exact": {"default": False, "type": "boolean"},
        },
        "required": ["query"],
        "type": "object",
    }
    assert search.output_schema == {"items": {"type": "string"}, "type": "array"}


def test_tool_decorator_with_options() -> None:
    @tool(name="read-file", description="Reads.", label="Read", execution_mode="sequential")
    def read_file(path: str) -> str:
        return path

    assert read_file.name == "read-file"
    assert read_file.description == "Reads."
    assert read_file.label == "Read"
    assert read_file.execution_mode == "sequential"
    assert read_file.output_schema is None


@pytest.mark.parametrize(
    ("factory", "expected_schema_keys", "structured"),
    [
        pytest.param(lambda: Point(x=1, y=2), {"x", "y"}, {"x": 1, "y": 2}, id="typeddict"),
        pytest.param(
            lambda: Person(name="Ada", age=36),
            {"name", "age"},
            {"name": "Ada", "age": 36},
            id="model",
        ),
        pytest.param(
            lambda: Box(width=2.5, label="b"),
            {"width", "label"},
            {"width": 2.5, "label": "b"},
            id="dataclass",
        ),
    ],
)
def test_tool_decorator_output_schema_from_return_annotation(
    factory: Any, expected_schema_keys: set[str], structured: dict[str, Any]
) -> None:
    value = factory()

    def make() -> Any:
        return value

    make.__annotations__["return"] = type(value) if not isinstance(value, dict) else Point
    built = tool(make)
    assert built.output_schema is not None
    assert set(built.output_schema["properties"]) == expected_schema_keys
    result = built.execute("c1", built.build_params({}), None, None)
    assert isinstance(result, AgentToolResult)
    assert result.structured_content == structured
    assert isinstance(result.content[0], TextContent)
    assert '"' in result.content[0].text  # a JSON rendering for the model


def test_tool_decorator_str_return_is_plain_text() -> None:
    @tool
    def greet(name: str) -> str:
        return f"hello {name}"

    result = greet.execute("c", greet.build_params({"name": "x"}), None, None)
    assert isinstance(result, AgentToolResult)
    assert result.content == (TextContent("hello x"),)
    assert result.structured_content is None


def test_tool_decorator_passes_agent_tool_result_through() -> None:
    @tool
    def raw() -> AgentToolResult:
        return AgentToolResult.text("as is", is_error=True)

    result = raw.execute("c", raw.build_params({}), None, None)
    assert result == AgentToolResult.text("as is", is_error=True)


def test_tool_decorator_injects_call_id_and_signal() -> None:
    seen: dict[str, Any] = {}

    @tool
    def probe(x: int, tool_call_id: str, signal: AbortSignal | None) -> int:
        seen["id"] = tool_call_id
        seen["signal"] = signal
        return x

    assert set(probe.parameters_schema["properties"]) == {"x"}
    controller = AbortController()
    probe.execute("call-7", probe.build_params({"x": 3}), controller.signal, None)
    assert seen == {"id": "call-7", "signal": controller.signal}


@pytest.mark.anyio
async def test_tool_decorator_async_function() -> None:
    @tool
    async def double(n: int) -> dict[str, int]:
        return {"n": n * 2}

    assert double.is_async is True
    result = await double.execute("c", double.build_params({"n": 4}), None, None)  # type: ignore[misc]
    assert result.structured_content == {"n": 8}


def test_tool_decorator_rejects_var_args() -> None:
    def bad(*args: int) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match=r"\*args"):
        tool(bad)


def test_tool_decorator_extra_arguments_are_forbidden_by_schema() -> None:
    @tool
    def one(a: int) -> None:
        return None

    assert one.parameters_schema["additionalProperties"] is False


def test_tool_decorator_unsupported_annotation_is_a_definition_error() -> None:
    def f() -> OldStyle:
        return OldStyle(a=1)

    with pytest.raises(ToolDefinitionError, match="pydantic cannot build a schema"):
        tool(f)
