"""The validator agrees with pi 1.6.0 on the cases issue 18 lists (pi-reference §2).

Each case goes through ``validate_tool_arguments`` with pi's wrapper
(``{type: object, properties: {value: S}, required: [value]}``) where the model-facing
text matters, so the expectation is the exact line pi prints.
"""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.errors import SchemaCompileError, ToolArgumentsError
from scriptgate.runtime.schema import compile_schema
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, ToolCall
from scriptgate.runtime.validation import validate_tool_arguments

INT = {"type": "integer"}
STR = {"type": "string"}


def _execute(*_: Any) -> AgentToolResult:
    return AgentToolResult.text("ok")


def _wrapped(schema: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": schema}, "required": ["value"]}


def _run(schema: Any, value: Any) -> Any:
    """The coerced ``value`` under pi's wrapper, or the error lines (``path: message``)."""
    tool = AgentTool(name="t", parameters=_wrapped(schema), execute=_execute)
    try:
        return validate_tool_arguments(tool, ToolCall("c1", "t", {"value": value}))["value"]
    except ToolArgumentsError as exc:
        text = str(exc)
        head, _, _ = text.partition("\n\nReceived arguments:")
        return [line.removeprefix("  - ") for line in head.splitlines()[1:]]


def _branch(tag: str, field: str, field_schema: Any = INT, *, require_tag: bool = True) -> Any:
    return {
        "type": "object",
        "properties": {"kind": {"const": tag}, field: field_schema},
        "required": ["kind", field] if require_tag else [field],
    }


# -- discriminated unions ------------------------------------------------------------


@pytest.mark.parametrize("union", ["oneOf", "anyOf"])
def test_schema_discriminated_union_unknown_tag_is_reported_at_the_discriminator(
    union: str,
) -> None:
    schema = {union: [_branch("a", "x"), _branch("b", "y", STR)]}
    assert _run(schema, {"kind": "c", "x": 1}) == ['value.kind: expected one of ["a","b"]']


@pytest.mark.parametrize("union", ["oneOf", "anyOf"])
def test_schema_discriminated_union_absent_tag_is_reported_at_the_discriminator(
    union: str,
) -> None:
    # Not every alternative's missing fields: the discriminator decides.
    schema = {union: [_branch("a", "x"), _branch("b", "y", STR)]}
    assert _run(schema, {"y": "s"}) == ['value.kind: expected one of ["a","b"]']


def test_schema_discriminated_one_of_matching_several_is_reported_at_the_discriminator() -> None:
    # Neither branch requires the tag, so ``{x: 1, y: "s"}`` matches both.
    schema = {
        "oneOf": [
            _branch("a", "x", require_tag=False),
            _branch("b", "y", {}, require_tag=False),
        ]
    }
    assert _run(schema, {"x": 1, "y": "s"}) == ['value.kind: expected one of ["a","b"]']


def test_schema_discriminated_union_known_tag_blames_the_branch_it_selects() -> None:
    schema = {"oneOf": [_branch("a", "x"), _branch("b", "y", STR)]}
    assert _run(schema, {"kind": "b"}) == ["value.y: missing"]
    assert _run(schema, {"kind": "a", "x": "1"}) == {"kind": "a", "x": 1}


def test_schema_discriminated_union_by_single_value_enum() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"op": {"enum": ["add"]}}, "required": ["op"]},
            {"type": "object", "properties": {"op": {"enum": ["del"]}}, "required": ["op"]},
        ]
    }
    assert _run(schema, {"op": "mul"}) == ['value.op: expected one of ["add","del"]']


def test_schema_discriminated_union_tag_found_through_ref_and_all_of() -> None:
    schema = {
        "$defs": {
            "Cat": {"type": "object", "properties": {"pet": {"const": "cat", "type": "string"}}},
            "Dog": {
                "allOf": [
                    {"type": "object", "properties": {"pet": {"const": "dog"}}},
                    {"required": ["bark"]},
                ]
            },
        },
        "type": "object",
        "properties": {
            "value": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]},
        },
        "required": ["value"],
    }
    result = compile_schema(schema).parse({"value": {"pet": "cow"}})
    assert [(e.path, e.message) for e in result.errors] == [
        ("/value/pet", 'expected one of ["cat","dog"]')
    ]


def test_schema_union_with_a_shared_tag_value_is_not_discriminated() -> None:
    # Two branches pin the same value: no discriminator, the best-matching branch is blamed.
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}, "x": INT}, "required": ["x"]},
            {"type": "object", "properties": {"kind": {"const": "a"}, "y": INT}, "required": ["y"]},
        ]
    }
    assert _run(schema, {"kind": "a", "y": "q"}) == ["value.y: expected integer, got string"]


# -- argumentsError ------------------------------------------------------------------


def test_schema_empty_arguments_error_is_falsy_and_validation_proceeds() -> None:
    tool = AgentTool(name="t", parameters=_wrapped(INT), execute=_execute)
    call = ToolCall("c1", "t", {"value": "7"}, arguments_error="")
    assert validate_tool_arguments(tool, call) == {"value": 7}
    with pytest.raises(ToolArgumentsError, match=r'^Validation failed for tool "t":'):
        validate_tool_arguments(tool, ToolCall("c1", "t", {}, arguments_error=""))


# -- multipleOf ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 5, 0.5, -3])
def test_schema_multiple_of_zero_rejects_every_number(value: Any) -> None:
    assert _run({"multipleOf": 0}, value) == ["value: expected a multiple of 0"]


@pytest.mark.parametrize(
    ("multiple", "value", "ok"),
    [
        pytest.param(0.1, 0.30000000000000004, False, id="quotient-3.0000000000000004"),
        pytest.param(0.1, 0.3, False, id="quotient-2.9999999999999996"),
        pytest.param(0.1, 0.5, True, id="quotient-5"),
        pytest.param(3, 1e22, True, id="huge-double-is-integral"),
        pytest.param(-3, 6, True, id="negative-multiple"),
        pytest.param(2, 3, False, id="ints"),
    ],
)
def test_schema_multiple_of_follows_pis_float_arithmetic(
    multiple: float, value: float, ok: bool
) -> None:
    got = _run({"multipleOf": multiple}, value)
    assert got == (value if ok else [f"value: expected a multiple of {multiple:g}"])


# -- array-ness from ``items`` -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("5", [5], id="string"),
        pytest.param(True, [1], id="true"),
        pytest.param(None, [0], id="null"),
        pytest.param(["1", 2], [1, 2], id="array-converts-items"),
        pytest.param("a", ["value.0: expected integer, got string"], id="fails-at-the-item"),
    ],
)
def test_schema_untyped_items_node_wraps_and_converts_a_scalar(value: Any, expected: Any) -> None:
    assert _run({"items": INT}, value) == expected


def test_schema_untyped_tuple_does_not_wrap() -> None:
    assert _run({"prefixItems": [INT]}, "5") == "5"


# -- formats -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param("2024-01-02T03:04:05Z", True, id="T"),
        pytest.param("2024-01-02t03:04:05z", True, id="lowercase-t"),
        pytest.param("2024-01-02 03:04:05Z", False, id="space"),
    ],
)
def test_schema_date_time_with_a_space_is_rejected(value: str, ok: bool) -> None:
    got = _run({"type": "string", "format": "date-time"}, value)
    assert got == (value if ok else ["value: expected format date-time"])


# -- patterns ------------------------------------------------------------------------


def test_schema_pattern_unicode_property_escape_is_ecmascript() -> None:
    schema = {"type": "string", "pattern": "^\\p{Lu}"}
    assert _run(schema, "ab") == ["value: expected to match ^\\p{Lu}"]
    assert _run(schema, "Éa") == "Éa"


def test_schema_pattern_properties_unicode_property_escape_is_ecmascript() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^\\p{Lu}": INT},
        "additionalProperties": False,
    }
    assert _run(schema, {"hasOwnProperty": 1}) == ["value.hasOwnProperty: unknown field"]
    assert _run(schema, {"Ab": "2"}) == {"Ab": 2}


# -- recursive $ref --------------------------------------------------------------------

RECURSIVE = {
    "$defs": {
        "A": {"$ref": "#/$defs/B"},
        "B": {"anyOf": [{"$ref": "#/$defs/A"}, INT]},
    },
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/A"}},
}


def test_schema_recursive_ref_through_a_union_resolves() -> None:
    checker = compile_schema(RECURSIVE)
    assert checker.parse({"a": "1"}).value == {"a": 1}
    assert checker.is_valid({"a": 1})
    assert not checker.is_valid({"a": "x"})
    result = checker.parse({"a": "x"})
    assert [(e.path, e.message) for e in result.errors] == [("/a", "expected integer, got string")]


def test_schema_recursive_ref_through_a_union_in_a_tool_call() -> None:
    tool = AgentTool(name="t", parameters=RECURSIVE, execute=_execute)
    assert validate_tool_arguments(tool, ToolCall("c1", "t", {"a": "1"})) == {"a": 1}


# -- item errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "value", "line"),
    [
        pytest.param({"type": "array", "items": False}, [1], "value.0", id="items-false"),
        pytest.param(
            {"type": "array", "prefixItems": [INT], "items": False},
            [1, 2],
            "value.1",
            id="extra-tuple-item",
        ),
        pytest.param(
            {"type": "array", "items": [INT], "additionalItems": False},
            [1, 2],
            "value.1",
            id="draft7-additional-items",
        ),
    ],
)
def test_schema_forbidden_items_say_no_value_is_allowed_here(
    schema: Any, value: Any, line: str
) -> None:
    assert _run(schema, value) == [f"{line}: no value is allowed here"]


def test_schema_equal_min_and_max_contains_say_between() -> None:
    schema = {"type": "array", "contains": INT, "minContains": 1, "maxContains": 1}
    assert _run(schema, [1, 2]) == ["value: expected between 1 and 1 matching items"]
    assert _run(schema, ["a"]) == ["value: expected between 1 and 1 matching items"]


# -- tool definitions ------------------------------------------------------------------


def test_schema_pi_style_tool_with_an_empty_name_validates() -> None:
    tool = {"name": "", "parameters": _wrapped(INT)}
    assert validate_tool_arguments(tool, ToolCall("c1", "", {"value": "3"})) == {"value": 3}
    with pytest.raises(ToolArgumentsError, match=r'^Validation failed for tool "":\n  - value'):
        validate_tool_arguments(tool, ToolCall("c1", "", {}))


def test_schema_null_tool_schema_is_pis_schema_error() -> None:
    with pytest.raises(SchemaCompileError) as info:
        validate_tool_arguments({"name": "t", "parameters": None}, ToolCall("c1", "t", {}))
    assert str(info.value) == "A schema must be an object or a boolean, got null"
    with pytest.raises(SchemaCompileError, match=r"^A schema must be an object or a boolean"):
        compile_schema(None)


def test_schema_tool_without_parameters_is_undefined() -> None:
    with pytest.raises(SchemaCompileError) as info:
        validate_tool_arguments({"name": "t"}, ToolCall("c1", "t", {}))
    assert str(info.value) == "A schema must be an object or a boolean, got undefined"


# -- the two divergences kept on purpose ---------------------------------------------


def test_schema_divergence_integers_beyond_2_53_stay_exact() -> None:
    big = 2**60 + 1  # pi rounds it to 2**60
    assert _run(INT, big) == big
    assert _run({"type": "integer", "multipleOf": 2}, big) == ["value: expected a multiple of 2"]


def test_schema_divergence_object_keys_keep_their_order() -> None:
    # JavaScript would list the integer-like key "1" first.
    tool = AgentTool(name="t", parameters={"type": "object", "required": ["z"]}, execute=_execute)
    with pytest.raises(ToolArgumentsError) as info:
        validate_tool_arguments(tool, ToolCall("c1", "t", {"b": 1, "1": 2}))
    assert str(info.value).endswith('{\n  "b": 1,\n  "1": 2\n}')
    props = {"type": "object", "properties": {"b": INT, "1": INT}}
    assert list(compile_schema(props).parse({"b": "1", "1": "2"}).value) == ["b", "1"]
