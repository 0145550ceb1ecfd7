"""``validate_tool_arguments`` (pi-reference §2.1, §2.7, §8.2) and its caching."""

from __future__ import annotations

import copy
import gc
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from scriptgate.errors import SchemaCompileError, ToolArgumentsError
from scriptgate.runtime import validation
from scriptgate.runtime.schema import ValidationIssue
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, ToolCall
from scriptgate.runtime.validation import (
    compiled_for,
    format_validation_error,
    json_stringify_pretty,
    validate_tool_arguments,
)


def _execute(*_: Any) -> AgentToolResult:
    return AgentToolResult.text("ok")


def _tool(parameters: Any, name: str = "echo") -> AgentTool:
    return AgentTool(name=name, parameters=parameters, execute=_execute)


ECHO = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "number"}},
    "required": ["name"],
    "additionalProperties": False,
}


def test_validation_message_format_is_pis_byte_for_byte() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(_tool(ECHO), ToolCall("c1", "echo", {"count": "x", "extra": 1}))
    assert str(info.value) == (
        'Validation failed for tool "echo":\n'
        "  - name: missing\n"
        "  - count: expected number, got string\n"
        "  - extra: unknown field\n"
        "\n"
        "Received arguments:\n"
        "{\n"
        '  "count": "x",\n'
        '  "extra": 1\n'
        "}"
    )
    assert info.value.tool_name == "echo"
    assert [(e.path, e.message) for e in info.value.errors] == [  # type: ignore[attr-defined]
        ("/name", "missing"),
        ("/count", "expected number, got string"),
        ("/extra", "unknown field"),
    ]


def test_validation_arguments_error_skips_schema_check() -> None:
    call = ToolCall("c1", "echo", {}, arguments_error="Unexpected token\n\nReceived arguments:\n{x")
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(_tool({"type": "object", "properties": {"a": {"$ref": 5}}}), call)
    assert str(info.value) == (
        'Invalid arguments for tool "echo": Unexpected token\n\nReceived arguments:\n{x'
    )
    assert info.value.errors == ()


def test_validation_uses_call_name_in_messages() -> None:
    with pytest.raises(ToolArgumentsError, match=r'^Validation failed for tool "other":'):
        validate_tool_arguments(_tool(ECHO), ToolCall("c1", "other", {}))


def test_validation_coerces_and_returns_a_copy() -> None:
    args = {"name": 5, "count": "42"}
    call = ToolCall("c1", "echo", args)
    out = validate_tool_arguments(_tool(ECHO), call)
    assert out == {"name": "5", "count": 42}
    assert args == {"name": 5, "count": "42"}


def test_validation_returned_object_is_a_deep_copy_even_when_unchanged() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
    }
    args = {"tags": ["a"]}
    out = validate_tool_arguments(_tool(schema), ToolCall("c1", "t", args))
    assert out == args
    assert out is not args
    assert out["tags"] is not args["tags"]
    out["tags"].append("mutated")
    assert args == {"tags": ["a"]}


def test_validation_received_arguments_shows_the_original() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "s": {"type": "string", "minLength": 3}},
    }
    args = {"n": "7", "s": 1}
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(_tool(schema), ToolCall("c1", "t", args))
    assert str(info.value).endswith('Received arguments:\n{\n  "n": "7",\n  "s": 1\n}')
    assert "  - s: expected at least 3 characters" in str(info.value)
    assert args == {"n": "7", "s": 1}


def test_validation_still_coerces_count_42() -> None:
    """Upstream "still validates when Function constructor is unavailable"."""
    schema = {"type": "object", "properties": {"count": {"type": "number"}}}
    assert validate_tool_arguments(_tool(schema), ToolCall("c", "t", {"count": "42"})) == {
        "count": 42
    }


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        pytest.param(
            {"anyOf": [{"type": "number"}, {"type": "null"}]}, None, None, id="nullable-union-arm"
        ),
        pytest.param(
            {"oneOf": [{"type": "number"}, {"type": "null"}]}, None, None, id="oneOf-nullable-arm"
        ),
        pytest.param(
            {"anyOf": [{"type": "number"}, {"type": "null"}]}, "42", 42, id="nullable-union-coerces"
        ),
        pytest.param(
            {"type": ["array", "null"], "items": {"type": "string"}},
            None,
            None,
            id="nullable-array",
        ),
        pytest.param({"type": "boolean"}, "1", True, id="boolean-1-accepted-since-1.5"),
        pytest.param({"type": "boolean"}, "0", False, id="boolean-0-accepted-since-1.5"),
        pytest.param({"type": "null"}, "null", None, id="null-text-accepted-since-1.5"),
        pytest.param({"type": "integer"}, "42.1", 42, id="integer-42.1-truncated-since-1.5"),
    ],
)
def test_validation_upstream_named_cases(schema: Any, value: Any, expected: Any) -> None:
    wrapped = {"type": "object", "properties": {"v": schema}, "required": ["v"]}
    assert validate_tool_arguments(_tool(wrapped), ToolCall("c", "t", {"v": value})) == {
        "v": expected
    }


def test_validation_error_at_array_item_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}},
                    "required": ["oldText"],
                },
            }
        },
    }
    with pytest.raises(ToolArgumentsError, match=r"\n  - edits\.0\.oldText: missing\n"):
        validate_tool_arguments(_tool(schema), ToolCall("c", "edit", {"edits": [{}]}))


def test_validation_root_error_path_is_root() -> None:
    with pytest.raises(ToolArgumentsError, match=r"\n  - root: expected object, got array\n"):
        validate_tool_arguments(_tool({"type": "object"}), ToolCall("c", "t", []))  # type: ignore[arg-type]


def test_validation_unresolved_ref_rejects_only_at_its_place() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}
    tool = _tool(schema)
    assert validate_tool_arguments(tool, ToolCall("c", "t", {})) == {}
    with pytest.raises(ToolArgumentsError, match=r"  - a: unresolved reference #/\$defs/Missing"):
        validate_tool_arguments(tool, ToolCall("c", "t", {"a": 1}))


def test_validation_invalid_schema_raises_pis_message() -> None:
    with pytest.raises(SchemaCompileError) as info:
        validate_tool_arguments(_tool(5), ToolCall("c", "t", {}))
    assert str(info.value) == "A schema must be an object or a boolean, got 5"


def test_validation_pydantic_model_parameters() -> None:
    class Params(BaseModel):
        path: str
        limit: int = 10

    tool = _tool(Params)
    assert validate_tool_arguments(tool, ToolCall("c", "t", {"path": 3, "limit": "5"})) == {
        "path": "3",
        "limit": 5,
    }


# ---------------------------------------------------------------- caching


class _WeakSchema(Mapping[str, Any]):
    """A schema object that supports weak references."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_validation_cache_is_by_schema_identity() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    first = compiled_for(schema)
    assert compiled_for(schema) is first
    assert compiled_for(copy.deepcopy(schema)) is not first


def test_validation_tool_reuses_its_compiled_schema() -> None:
    tool = _tool({"type": "object", "properties": {"a": {"type": "integer"}}})
    validate_tool_arguments(tool, ToolCall("c", "t", {"a": "1"}))
    compiled = validation._tool_cache[tool][1]
    validate_tool_arguments(tool, ToolCall("c", "t", {"a": "2"}))
    assert validation._tool_cache[tool][1] is compiled


def test_validation_cache_released_with_the_tool() -> None:
    tool = _tool({"type": "object", "properties": {"a": {"type": "integer"}}})
    validate_tool_arguments(tool, ToolCall("c", "t", {"a": "1"}))
    compiled_ref = weakref.ref(validation._tool_cache[tool][1])
    tool_ref = weakref.ref(tool)
    del tool
    gc.collect()
    assert tool_ref() is None
    assert compiled_ref() is None


def test_validation_cache_released_with_a_weakrefable_schema() -> None:
    schema = _WeakSchema({"type": "object", "properties": {"a": {"type": "integer"}}})
    compiled = compiled_for(schema)
    assert compiled_for(schema) is compiled
    assert compiled.parse({"a": "3"}).value == {"a": 3}
    compiled_ref = weakref.ref(compiled)
    schema_ref = weakref.ref(schema)
    key = id(schema)
    del schema, compiled
    gc.collect()
    assert schema_ref() is None
    assert compiled_ref() is None
    assert key not in validation._weak_cache


def test_validation_tools_sharing_a_schema_object_share_the_compiled_validator() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    one, two = _tool(schema, "one"), _tool(schema, "two")
    validate_tool_arguments(one, ToolCall("c", "one", {}))
    validate_tool_arguments(two, ToolCall("c", "two", {}))
    assert validation._tool_cache[one][1] is validation._tool_cache[two][1]


def test_validation_plain_dict_entry_goes_with_its_last_holder() -> None:
    schema = {"type": "integer"}
    key = id(schema)
    compiled = compiled_for(schema)
    assert validation._by_id[key] is compiled
    del compiled
    gc.collect()
    assert key not in validation._by_id


def test_validation_tool_with_new_schema_object_recompiles() -> None:
    tool = _tool({"type": "object", "properties": {"a": {"type": "integer"}}})
    validate_tool_arguments(tool, ToolCall("c", "t", {}))
    old = validation._tool_cache[tool][1]
    tool.__dict__["parameters_schema"] = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert validate_tool_arguments(tool, ToolCall("c", "t", {"a": 1})) == {"a": "1"}
    assert validation._tool_cache[tool][1] is not old


# ---------------------------------------------------------------- formatting helpers


def test_validation_format_validation_error_without_issues() -> None:
    text = format_validation_error("t", [ValidationIssue("", "schema", "invalid")], {})
    assert text == 'Validation failed for tool "t":\n  - root: invalid\n\nReceived arguments:\n{}'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param({}, "{}", id="empty-object"),
        pytest.param([], "[]", id="empty-array"),
        pytest.param({"a": []}, '{\n  "a": []\n}', id="nested-empty"),
        pytest.param(1.0, "1", id="integral-float"),
        pytest.param(1e21, "1e+21", id="big-float"),
        pytest.param(-0.0, "0", id="negative-zero"),
        pytest.param(float("nan"), "null", id="nan"),
        pytest.param('é\n"', '"é\\n\\""', id="non-ascii-kept"),
        pytest.param(
            {"b": 1, "a": [1, {"c": None}]},
            '{\n  "b": 1,\n  "a": [\n    1,\n    {\n      "c": null\n    }\n  ]\n}',
            id="nested-order-kept",
        ),
        pytest.param(True, "true", id="true"),
    ],
)
def test_validation_json_stringify_pretty(value: Any, text: str) -> None:
    assert json_stringify_pretty(value) == text


def test_validation_python_values_from_scripts_never_raise_internally() -> None:
    import threading

    schema = {
        "type": "object",
        "patternProperties": {"^1": {"type": "string"}},
        "properties": {"lock": {"type": "string"}},
    }
    lock = threading.Lock()
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(_tool(schema), ToolCall("c", "t", {1: [2], "lock": lock}))  # type: ignore[dict-item]
    text = str(info.value)
    assert "  - 1: expected string, got array" in text
    assert "  - lock: expected string, got object" in text


class Options(BaseModel):
    """Nested options of the decorated tool below."""

    depth: int = 1


def test_validation_tool_decorator_schema_coerces_through_refs_and_unions() -> None:
    from scriptgate.runtime.tool import tool

    @tool
    def search(query: int, tags: list[str] | None = None, options: Options | None = None) -> str:
        """Search."""
        return ""

    args = {"query": "1", "tags": "x", "options": {"depth": "3"}}
    assert validate_tool_arguments(search, ToolCall("c", "search", args)) == {
        "query": 1,
        "tags": ["x"],
        "options": {"depth": 3},
    }
    assert validate_tool_arguments(search, ToolCall("c", "search", {"query": 2, "tags": None})) == {
        "query": 2,
        "tags": None,
    }


def test_validation_format_validation_error_is_bounded_whatever_the_arguments() -> None:
    """findings14 B03: megabytes of arguments made megabytes of error text (and seconds of
    pretty-printing on the event loop); the text is now bounded, small arguments unchanged."""
    issues = [ValidationIssue(f"/a/{i}", "type", "must be integer") for i in range(5000)]
    text = format_validation_error("t", issues, {"a": [[]] * 3_000_000})
    assert len(text) < 12_000
    assert "  ... and 4900 more" in text
    assert text.endswith("(not shown: more than 10000 characters of JSON)")
    small = format_validation_error("t", issues[:1], {"a": [1, "x"]})
    assert small.endswith('Received arguments:\n{\n  "a": [\n    1,\n    "x"\n  ]\n}')
