"""Error objects, their order and the message catalogue (pi-reference §2.5–2.7)."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.runtime.schema import (
    ValidationIssue,
    compile_schema,
    escape_pointer_segment,
    pointer_to_path,
)


def _issues(schema: Any, value: Any) -> list[tuple[str, str, str]]:
    return [(e.path, e.keyword, e.message) for e in compile_schema(schema).parse(value).errors]


def test_schema_messages_observed_order() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "number", "minimum": 5}, "c": {}},
        "required": ["a", "c"],
        "additionalProperties": False,
    }
    assert _issues(schema, {"b": "2", "d": 1}) == [
        ("/a", "required", "missing"),
        ("/c", "required", "missing"),
        ("/b", "minimum", "expected >= 5"),
        ("/d", "additionalProperties", "unknown field"),
    ]


def test_schema_messages_type_failure_stops_the_node() -> None:
    schema = {"type": "string", "minLength": 5, "enum": ["abcdef"]}
    assert _issues(schema, [1]) == [("", "type", "expected string, got array")]


def test_schema_messages_one_error_per_failing_keyword_in_walk_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 3, "pattern": "^x", "enum": ["xyz"]},
        },
        "patternProperties": {"^p": {"type": "integer"}},
        "propertyNames": {"maxLength": 2},
        "minProperties": 5,
        "dependentRequired": {"s": ["q"]},
    }
    assert _issues(schema, {"s": "ab", "pp": "x", "long": 1}) == [
        ("/s", "enum", 'expected one of ["xyz"]'),
        ("/s", "minLength", "expected at least 3 characters"),
        ("/s", "pattern", "expected to match ^x"),
        ("/pp", "type", "expected integer, got string"),
        ("/long", "propertyNames", "invalid property name"),
        ("", "minProperties", "expected at least 5 properties"),
        ("/q", "dependentRequired", "required when s is present"),
    ]


def test_schema_messages_array_then_applicators_order() -> None:
    schema = {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 3,
        "allOf": [{"maxItems": 1}],
        "not": {"contains": {"const": "x"}},
    }
    assert _issues(schema, ["x", "y"]) == [
        ("/0", "type", "expected integer, got string"),
        ("/1", "type", "expected integer, got string"),
        ("", "minItems", "expected at least 3 items"),
        ("", "maxItems", "expected at most 1 items"),
        ("", "not", "must not match the schema in not"),
    ]


CATALOGUE: list[tuple[str, Any, Any, tuple[str, str, str]]] = [
    ("type", {"type": "number"}, "x", ("", "type", "expected number, got string")),
    (
        "type-union",
        {"type": ["integer", "null"]},
        "x",
        ("", "type", "expected integer or null, got string"),
    ),
    ("type-object-array", {"type": "object"}, [], ("", "type", "expected object, got array")),
    ("required", {"required": ["k"]}, {}, ("/k", "required", "missing")),
    (
        "additionalProperties",
        {"additionalProperties": False},
        {"k": 1},
        ("/k", "additionalProperties", "unknown field"),
    ),
    (
        "unevaluatedProperties",
        {"unevaluatedProperties": False},
        {"k": 1},
        ("/k", "unevaluatedProperties", "unknown field"),
    ),
    (
        "unevaluatedItems",
        {"unevaluatedItems": False},
        [1],
        ("/0", "unevaluatedItems", "unexpected item"),
    ),
    ("enum", {"enum": ["a", None, 1.5]}, "b", ("", "enum", 'expected one of ["a",null,1.5]')),
    ("const", {"const": "x"}, "y", ("", "const", 'expected "x"')),
    ("const-null", {"const": None}, 1, ("", "const", "expected null")),
    ("minLength", {"minLength": 2}, "a", ("", "minLength", "expected at least 2 characters")),
    ("maxLength", {"maxLength": 0}, "a", ("", "maxLength", "expected at most 0 characters")),
    ("pattern", {"pattern": "^\\d+$"}, "a", ("", "pattern", "expected to match ^\\d+$")),
    ("format", {"format": "uuid"}, "a", ("", "format", "expected format uuid")),
    ("minimum", {"minimum": 0.5}, 0, ("", "minimum", "expected >= 0.5")),
    ("maximum-big", {"maximum": 1e21}, 2e21, ("", "maximum", "expected <= 1e+21")),
    ("maximum-integral-float", {"maximum": 3.0}, 4, ("", "maximum", "expected <= 3")),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, 0, ("", "exclusiveMinimum", "expected > 0")),
    (
        "exclusiveMaximum",
        {"exclusiveMaximum": 1e-7},
        1,
        ("", "exclusiveMaximum", "expected < 1e-7"),
    ),
    ("multipleOf", {"multipleOf": 2}, 3, ("", "multipleOf", "expected a multiple of 2")),
    ("minItems", {"minItems": 1}, [], ("", "minItems", "expected at least 1 items")),
    ("maxItems", {"maxItems": 0}, [1], ("", "maxItems", "expected at most 0 items")),
    ("uniqueItems", {"uniqueItems": True}, [1, 1.0], ("", "uniqueItems", "expected unique items")),
    (
        "contains-one",
        {"contains": {"const": 1}},
        [],
        ("", "contains", "expected at least 1 matching item"),
    ),
    (
        "contains-many",
        {"contains": {"const": 1}, "minContains": 3},
        [1],
        ("", "contains", "expected at least 3 matching items"),
    ),
    (
        "contains-max",
        {"contains": {"const": 1}, "maxContains": 2},
        [1, 1, 1],
        ("", "contains", "expected at most 2 matching items"),
    ),
    (
        "contains-between",
        {"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
        [1],
        ("", "contains", "expected between 2 and 3 matching items"),
    ),
    (
        "minProperties",
        {"minProperties": 1},
        {},
        ("", "minProperties", "expected at least 1 properties"),
    ),
    (
        "maxProperties",
        {"maxProperties": 0},
        {"a": 1},
        ("", "maxProperties", "expected at most 0 properties"),
    ),
    (
        "propertyNames",
        {"propertyNames": {"pattern": "^a"}},
        {"b": 1},
        ("/b", "propertyNames", "invalid property name"),
    ),
    (
        "dependentRequired",
        {"dependentRequired": {"a": ["b"]}},
        {"a": 1},
        ("/b", "dependentRequired", "required when a is present"),
    ),
    (
        "dependencies-array",
        {"dependencies": {"a": ["b"]}},
        {"a": 1},
        ("/b", "dependentRequired", "required when a is present"),
    ),
    ("not", {"not": {}}, 1, ("", "not", "must not match the schema in not")),
    ("false", {"properties": {"a": False}}, {"a": 1}, ("/a", "false", "no value is allowed here")),
    ("unresolved-ref", {"$ref": "#/nope"}, 1, ("", "$ref", "unresolved reference #/nope")),
    (
        "dynamicRef",
        {
            "$dynamicAnchor": "n",
            "properties": {"k": {"$dynamicRef": "#n", "type": "object"}},
            "type": "object",
        },
        {"k": {"k": 1}},
        ("/k", "$dynamicRef", "does not match the dynamically referenced schema"),
    ),
    (
        "oneOf-many",
        {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        5,
        ("", "oneOf", "matches more than one alternative"),
    ),
    ("anyOf-empty", {"anyOf": []}, 1, ("", "anyOf", "matches no alternative")),
]


@pytest.mark.parametrize(
    ("schema", "value", "issue"), [pytest.param(s, v, e, id=i) for i, s, v, e in CATALOGUE]
)
def test_schema_messages_catalogue(schema: Any, value: Any, issue: tuple[str, str, str]) -> None:
    checker = compile_schema(schema, coerce=False)
    assert [(e.path, e.keyword, e.message) for e in checker.check(value)] == [issue]


def test_schema_messages_enum_list_over_20_is_cut() -> None:
    values = [f"v{i}" for i in range(21)]
    message = _issues({"enum": values}, "x")[0][2]
    head = ",".join(f'"v{i}"' for i in range(20))
    assert message == f"expected one of [{head}, ... and 1 more]"


def test_schema_messages_enum_of_exactly_20_is_not_cut() -> None:
    message = _issues({"enum": list(range(20))}, "x")[0][2]
    assert message == "expected one of [" + ",".join(str(i) for i in range(20)) + "]"


def test_schema_messages_tagged_union_known_tag_reports_that_branch() -> None:
    schema = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}},
                "required": ["x"],
            },
            {
                "type": "object",
                "properties": {"kind": {"const": "b"}, "y": {"type": "string"}},
                "required": ["y"],
            },
        ]
    }
    assert _issues(schema, {"kind": "b"}) == [("/y", "required", "missing")]
    assert _issues(schema, {"kind": "z"}) == [("/kind", "oneOf", 'expected one of ["a","b"]')]


def test_schema_messages_union_tie_broken_by_deepest_first_error() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 3},
            {
                "type": "object",
                "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}},
            },
        ]
    }
    assert _issues(schema, {"a": {"b": "x"}}) == [("/a/b", "type", "expected integer, got string")]


def test_schema_messages_no_specific_error_is_invalid() -> None:
    result = compile_schema({"$ref": "#"}).parse(1)
    assert [(e.path, e.keyword, e.message) for e in result.errors] == [("", "schema", "invalid")]


def test_schema_messages_errors_are_data() -> None:
    issue = compile_schema({"type": "string"}).check(1)[0]
    assert issue == ValidationIssue(path="", keyword="type", message="expected string, got integer")


@pytest.mark.parametrize(
    ("pointer", "path"),
    [
        pytest.param("", "root", id="root"),
        pytest.param("/edits/0/oldText", "edits.0.oldText", id="nested"),
        pytest.param("/a~1b", "a/b", id="slash"),
        pytest.param("/c~0d", "c~d", id="tilde"),
        pytest.param("/~01", "~1", id="escape-order"),
        pytest.param("/a.b", "a.b", id="dots-ambiguous"),
        pytest.param("/", "", id="empty-key"),
    ],
)
def test_schema_messages_pointer_to_path(pointer: str, path: str) -> None:
    assert pointer_to_path(pointer) == path


def test_schema_messages_escaped_keys_become_readable_paths() -> None:
    schema = {
        "type": "object",
        "properties": {"a/b": {"type": "number"}, "c~d": {"type": "number"}},
    }
    errors = compile_schema(schema).parse({"a/b": "x", "c~d": "y"}).errors
    assert [e.path for e in errors] == ["/a~1b", "/c~0d"]
    assert [pointer_to_path(e.path) for e in errors] == ["a/b", "c~d"]


def test_schema_messages_escape_pointer_segment_round_trips() -> None:
    for key in ("plain", "a/b", "c~d", "~1", "/~"):
        assert pointer_to_path("/" + escape_pointer_segment(key)) == key
