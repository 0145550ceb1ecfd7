"""Coercion acceptance vectors of pi-reference §2.8 (pi-schema 1.6.0 with pi-ai's options).

Every row runs with the schema wrapped as ``{type: object, properties: {value: S},
required: [value]}``, like the reference table.
"""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.runtime.schema import ParseResult, compile_schema

OK = "ok"
ERR = "err"


def _wrap(s: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": s}, "required": ["value"]}


N = {"type": "number"}
I = {"type": "integer"}  # noqa: E741
B = {"type": "boolean"}
S = {"type": "string"}
NULL = {"type": "null"}

# (id, schema, input, expected output | ERR, expected message or None)
VECTORS: list[tuple[str, Any, Any, Any, str | None]] = [
    # number
    ("number-str-42", N, "42", 42, None),
    ("number-empty", N, "", 0, None),
    ("number-spaces", N, "  ", 0, None),
    ("number-trimmed", N, " 12 ", 12, None),
    ("number-hex", N, "0x10", 16, None),
    ("number-binary", N, "0b101", 5, None),
    ("number-octal", N, "0o17", 15, None),
    ("number-exp", N, "1e3", 1000, None),
    ("number-fraction", N, "3.5", 3.5, None),
    ("number-true", N, True, 1, None),
    ("number-null", N, None, 0, None),
    ("number-TRUE", N, "TRUE", 1, None),
    ("number-false-word", N, "False", 0, None),
    ("number-bigint-like", N, "12n", 12, None),
    ("number-abc", N, "abc", ERR, "value: expected number, got string"),
    ("number-Infinity", N, "Infinity", ERR, "value: expected number, got string"),
    ("number-NaN", N, "NaN", ERR, "value: expected number, got string"),
    ("number-underscore", N, "1_000", ERR, "value: expected number, got string"),
    ("number-negative-hex", N, "-0x10", ERR, "value: expected number, got string"),
    ("number-dangling-exp", N, "1e", ERR, "value: expected number, got string"),
    ("number-inf-python", N, "inf", ERR, "value: expected number, got string"),
    ("number-array", N, [5], ERR, "value: expected number, got array"),
    # integer
    ("integer-str-42", I, "42", 42, None),
    ("integer-str-3.5", I, "3.5", 3, None),
    ("integer-3.5", I, 3.5, 3, None),
    ("integer-neg-2.7", I, "-2.7", -2, None),
    ("integer-leading-dot", I, ".5", 0, None),
    ("integer-tiny-exp", I, "1e-7", 0, None),
    ("integer-empty", I, "", 0, None),
    ("integer-true", I, True, 1, None),
    ("integer-null", I, None, 0, None),
    ("integer-42.0", I, "42.0", 42, None),
    ("integer-1e2", I, "1e2", 100, None),
    ("integer-abc", I, "abc", ERR, "value: expected integer, got string"),
    ("integer-1.0", I, 1.0, 1, None),
    # boolean
    ("boolean-true", B, "true", True, None),
    ("boolean-TRUE", B, "TRUE", True, None),
    ("boolean-str-1", B, "1", True, None),
    ("boolean-1", B, 1, True, None),
    ("boolean-false", B, "false", False, None),
    ("boolean-str-0", B, "0", False, None),
    ("boolean-0", B, 0, False, None),
    ("boolean-null", B, None, False, None),
    ("boolean-2", B, 2, ERR, "value: expected boolean, got integer"),
    ("boolean-yes", B, "yes", ERR, "value: expected boolean, got string"),
    ("boolean-empty", B, "", ERR, "value: expected boolean, got string"),
    ("boolean-padded", B, " true ", ERR, "value: expected boolean, got string"),
    # string
    ("string-42", S, 42, "42", None),
    ("string-3.5", S, 3.5, "3.5", None),
    ("string-true", S, True, "true", None),
    ("string-null", S, None, "null", None),
    ("string-1e21", S, 1e21, "1e+21", None),
    ("string-1e-7", S, 1e-7, "1e-7", None),
    ("string-0.1", S, 0.1, "0.1", None),
    ("string-neg-zero", S, -0.0, "0", None),
    ("string-array", S, ["a"], ERR, "value: expected string, got array"),
    ("string-object", S, {"a": 1}, ERR, "value: expected string, got object"),
    # null
    ("null-null", NULL, "null", None, None),
    ("null-NULL", NULL, "NULL", None, None),
    ("null-undefined", NULL, "undefined", None, None),
    ("null-empty", NULL, "", None, None),
    ("null-str-0", NULL, "0", None, None),
    ("null-0", NULL, 0, None, None),
    ("null-false", NULL, False, None, None),
    ("null-true", NULL, True, ERR, "value: expected null, got boolean"),
    ("null-x", NULL, "x", ERR, "value: expected null, got string"),
    # arrays
    ("array-string-wrap", {"type": "array", "items": S}, "a", ["a"], None),
    ("array-string-json-not-parsed", {"type": "array", "items": S}, '["a"]', ['["a"]'], None),
    ("array-integer-wrap", {"type": "array", "items": I}, "5", [5], None),
    ("array-integer-items", {"type": "array", "items": I}, ["1", "2.9"], [1, 2], None),
    (
        "array-array-number-nested",
        {"type": "array", "items": {"type": "array", "items": N}},
        [["1"]],
        [[1]],
        None,
    ),
    (
        "array-array-number-wrap-twice",
        {"type": "array", "items": {"type": "array", "items": N}},
        "1",
        [[1]],
        None,
    ),
    ("array-no-items", {"type": "array"}, "x", ["x"], None),
    (
        "array-object-wrap",
        {"type": "array", "items": {"type": "object"}},
        {"a": 1},
        [{"a": 1}],
        None,
    ),
    (
        "tuple-no-wrap",
        {"type": "array", "prefixItems": [N], "items": B},
        "x",
        ERR,
        "value: expected array, got string",
    ),
    (
        "tuple-by-position",
        {"type": "array", "prefixItems": [N], "items": B},
        ["1", "true"],
        [1, True],
        None,
    ),
    # objects
    ("object-member", {"type": "object", "properties": {"a": I}}, {"a": "7"}, {"a": 7}, None),
    (
        "object-json-string-not-parsed",
        {"type": "object", "properties": {"a": I}},
        '{"a":1}',
        ERR,
        "value: expected object, got string",
    ),
    (
        "additional-number",
        {"type": "object", "additionalProperties": N},
        {"x": "1", "y": "2"},
        {"x": 1, "y": 2},
        None,
    ),
    (
        "pattern-properties",
        {"type": "object", "patternProperties": {"^n_": N}},
        {"n_a": "1", "b": "2"},
        {"n_a": 1, "b": "2"},
        None,
    ),
    (
        "additional-false",
        {"type": "object", "properties": {"a": N}, "additionalProperties": False},
        {"a": 1, "b": 2},
        ERR,
        "value.b: unknown field",
    ),
    # type arrays (pass 3)
    ("int-or-null-str", {"type": ["integer", "null"]}, "5", 5, None),
    ("int-or-null-empty", {"type": ["integer", "null"]}, "", None, None),
    ("int-or-null-null", {"type": ["integer", "null"]}, None, None, None),
    (
        "int-or-null-abc",
        {"type": ["integer", "null"]},
        "abc",
        ERR,
        "value: expected integer or null, got string",
    ),
    ("number-or-string-keeps-string", {"type": ["number", "string"]}, "1", "1", None),
    ("boolean-or-number-1", {"type": ["boolean", "number"]}, "1", 1, None),
    ("number-or-boolean-true", {"type": ["number", "boolean"]}, "true", True, None),
    ("string-or-null-5", {"type": ["string", "null"]}, 5, "5", None),
    ("integer-or-string-3.5", {"type": ["integer", "string"]}, 3.5, "3.5", None),
    ("array-or-null-null", {"type": ["array", "null"], "items": S}, None, None, None),
    (
        "array-or-null-x",
        {"type": ["array", "null"], "items": S},
        "x",
        ERR,
        "value: expected array or null, got string",
    ),
    ("object-or-null-empty", {"type": ["object", "null"]}, "", None, None),
    # unions
    ("anyOf-number-null-str", {"anyOf": [N, NULL]}, "42", 42, None),
    ("anyOf-number-null-null", {"anyOf": [N, NULL]}, None, None, None),
    ("oneOf-number-null-null", {"oneOf": [N, NULL]}, None, None, None),
    ("anyOf-string-null-5", {"anyOf": [S, NULL]}, 5, "5", None),
    ("anyOf-array-null-x", {"anyOf": [{"type": "array", "items": S}, NULL]}, "x", ["x"], None),
    (
        "anyOf-object-string-keeps-json-text",
        {"anyOf": [{"type": "object", "properties": {"inline": S}}, S]},
        '{"inline":"x"}',
        '{"inline":"x"}',
        None,
    ),
    ("anyOf-boolean-string-true", {"anyOf": [B, S]}, "true", "true", None),
    ("anyOf-string-boolean-true", {"anyOf": [S, B]}, "true", "true", None),
    ("anyOf-integer-boolean-true", {"anyOf": [I, B]}, "true", 1, None),
    (
        "oneOf-integer-number-5",
        {"oneOf": [I, N]},
        5,
        ERR,
        "value: matches more than one alternative",
    ),
    ("oneOf-integer-boolean-x", {"oneOf": [I, B]}, "x", ERR, "value: expected integer, got string"),
    # enum / const
    ("enum-numbers", {"enum": [1, 2, 3]}, "2", 2, None),
    ("enum-strings", {"enum": ["a", "b"]}, "c", ERR, 'value: expected one of ["a","b"]'),
    ("enum-true", {"enum": [True]}, "true", True, None),
    ("enum-null-x", {"enum": [None, "x"]}, "null", ERR, 'value: expected one of [null,"x"]'),
    ("const-5", {"const": 5}, "5", 5, None),
    ("const-x", {"const": "x"}, "y", ERR, 'value: expected "x"'),
    ("const-null", {"const": None}, "null", ERR, "value: expected null"),
    ("string-enum-1", {"type": "string", "enum": ["1", "2"]}, 1, "1", None),
    # allOf
    ("allOf-integer-minimum", {"allOf": [I, {"minimum": 3}]}, "2", ERR, "value: expected >= 3"),
    (
        "allOf-object-required",
        {"allOf": [{"type": "object", "properties": {"a": I}}, {"required": ["a"]}]},
        {"a": "4"},
        {"a": 4},
        None,
    ),
    (
        "long-enum",
        {"enum": list(range(25))},
        "x",
        ERR,
        "value: expected one of [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19, ... and 5 more]",
    ),
    (
        "tagged-union-unknown-tag",
        {
            "anyOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}}},
                {"type": "object", "properties": {"kind": {"const": "b"}}},
            ]
        },
        {"kind": "c"},
        ERR,
        'value.kind: expected one of ["a","b"]',
    ),
    (
        "union-blames-declaring-branch",
        {
            "anyOf": [
                {"type": "object", "properties": {"a": {}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {}, "c": {}}, "required": ["b", "c"]},
            ]
        },
        {"b": 1},
        ERR,
        "value.c: missing",
    ),
    (
        "union-first-branch-on-tie",
        {"anyOf": [{"type": "string", "minLength": 5}, {"type": "number", "minimum": 10}]},
        "ab",
        ERR,
        "value: expected at least 5 characters",
    ),
    (
        "unique-after-coercion",
        {"type": "array", "items": I, "uniqueItems": True},
        ["1", 1],
        ERR,
        "value: expected unique items",
    ),
    (
        "code-point-length",
        {"type": "string", "minLength": 2},
        "😀",
        ERR,
        "value: expected at least 2 characters",
    ),
]


def _paths(errors: Any) -> list[str]:
    from scriptgate.runtime.schema import pointer_to_path

    return [f"{pointer_to_path(e.path)}: {e.message}" for e in errors]


@pytest.mark.parametrize(
    ("schema", "value", "expected", "message"),
    [pytest.param(s, v, e, m, id=i) for i, s, v, e, m in VECTORS],
)
def test_schema_coercion_acceptance_vector(
    schema: Any, value: Any, expected: Any, message: str | None
) -> None:
    result = compile_schema(_wrap(schema)).parse({"value": value})
    if expected is ERR:
        assert not result.ok
        assert message in _paths(result.errors)
        assert _paths(result.errors)[0] == message
    else:
        assert result.ok, _paths(result.errors)
        got = result.value["value"]
        assert got == expected
        assert type(got) is type(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("42", 42, id="str-int"),
        pytest.param("12n", 12, id="bigint-like"),
        pytest.param("3.0", 3, id="integral-float-text"),
        pytest.param(True, 1, id="bool"),
    ],
)
def test_schema_coercion_integral_results_are_python_int(value: Any, expected: int) -> None:
    got = compile_schema(N).parse(value).value
    assert got == expected
    assert type(got) is int


def test_schema_coercion_fraction_stays_float() -> None:
    got = compile_schema(N).parse("3.5").value
    assert got == 3.5
    assert type(got) is float


def test_schema_coercion_bool_is_never_a_number() -> None:
    checker = compile_schema(N)
    assert not checker.is_valid(True)
    assert not compile_schema(I).is_valid(False)
    assert not compile_schema({"enum": [1]}).is_valid(True)
    assert not compile_schema({"const": 0}).is_valid(False)


def test_schema_coercion_precision_beyond_2_53_is_lost_like_js() -> None:
    got = compile_schema(I).parse("9007199254740993").value
    assert got == 9007199254740992


# ---------------------------------------------------------------- optional nulls (pass 1)


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


NULL_VECTORS: list[tuple[str, Any, Any, Any]] = [
    ("optional-string-dropped", _obj({"a": S}), {"a": None}, {}),
    ("optional-integer-dropped", _obj({"a": I}), {"a": None}, {}),
    ("required-string-becomes-text", _obj({"a": S}, ("a",)), {"a": None}, {"a": "null"}),
    (
        "nullable-type-array-kept",
        _obj({"a": {"type": ["string", "null"]}}),
        {"a": None},
        {"a": None},
    ),
    ("nullable-anyOf-kept", _obj({"a": {"anyOf": [N, NULL]}}), {"a": None}, {"a": None}),
    ("non-null-anyOf-dropped", _obj({"a": {"anyOf": [S, N]}}), {"a": None}, {}),
    (
        "ref-property-never-dropped",
        {**_obj({"a": {"$ref": "#/$defs/S"}}), "$defs": {"S": S}},
        {"a": None},
        {"a": "null"},
    ),
    (
        "additional-key-never-dropped",
        {"type": "object", "additionalProperties": S},
        {"k": None},
        {"k": "null"},
    ),
    ("nested-object", _obj({"o": _obj({"x": N})}), {"o": {"x": None}}, {"o": {}}),
    ("array-items", {"type": "array", "items": _obj({"a": I})}, [{"a": None}], [{}]),
    ("false-schema-property-dropped", _obj({"a": False}), {"a": None}, {}),
    (
        "pattern-key-never-dropped",
        {"type": "object", "patternProperties": {"^k": S}},
        {"k": None},
        {"k": "null"},
    ),
]


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [pytest.param(s, v, e, id=i) for i, s, v, e in NULL_VECTORS],
)
def test_schema_coercion_optional_null_vector(schema: Any, value: Any, expected: Any) -> None:
    result = compile_schema(schema).parse(value)
    assert result.ok
    assert result.value == expected


DIVERGENCE: list[tuple[str, Any, Any]] = [
    (
        "anyOf-branch",
        _obj({"x": {"anyOf": [_obj({"a": S}), N]}}),
        {"x": {"a": None}},
    ),
    (
        "oneOf-branch",
        _obj({"x": {"oneOf": [_obj({"a": S}), N]}}),
        {"x": {"a": None}},
    ),
    (
        "ref-target",
        {**_obj({"x": {"$ref": "#/$defs/O"}}), "$defs": {"O": _obj({"a": I})}},
        {"x": {"a": None}},
    ),
    ("allOf-member", _obj({"x": {"allOf": [_obj({"a": I})]}}), {"x": {"a": None}}),
]


@pytest.mark.parametrize(("schema", "value"), [pytest.param(s, v, id=i) for i, s, v in DIVERGENCE])
def test_schema_coercion_divergence_optional_nulls_inside_subschemas_are_dropped_not_fabricated(
    schema: Any, value: Any
) -> None:
    """Deliberate divergence from upstream 1.6.0 (pi-reference §2.2 "Limitation").

    Upstream fabricates ``{x:{a:"null"}}`` / ``{x:{a:0}}`` here; scriptgate follows the
    fitchmultz/pi fix and drops the optional null like any other.
    """
    result = compile_schema(schema).parse(value)
    assert result.ok
    assert result.value == {"x": {}}


def test_schema_coercion_required_null_inside_union_branch_is_not_dropped() -> None:
    schema = _obj({"x": {"anyOf": [_obj({"a": S}, ("a",)), N]}})
    assert compile_schema(schema).parse({"x": {"a": None}}).value == {"x": {"a": "null"}}


def test_schema_coercion_valid_union_value_left_alone() -> None:
    schema = _obj({"x": {"anyOf": [_obj({"a": S}), _obj({"a": NULL})]}})
    value = {"x": {"a": None}}
    assert compile_schema(schema).parse(value).value is value


# ---------------------------------------------------------------- copy-on-write


def test_schema_coercion_never_mutates_input() -> None:
    schema = _obj({"a": I, "b": {"type": "array", "items": N}, "c": _obj({"d": B})})
    value = {"a": "1", "b": ["2", 3], "c": {"d": "true"}, "e": None}
    snapshot = {"a": "1", "b": ["2", 3], "c": {"d": "true"}, "e": None}
    out = compile_schema(schema).coerce(value)
    assert value == snapshot
    assert out == {"a": 1, "b": [2, 3], "c": {"d": True}, "e": None}


def test_schema_coercion_copies_only_changed_paths() -> None:
    schema = _obj({"a": I, "keep": {"type": "array", "items": S}, "deep": _obj({"x": S})})
    keep = ["x", "y"]
    deep = {"x": "z"}
    value = {"a": "1", "keep": keep, "deep": deep}
    out = compile_schema(schema).coerce(value)
    assert out is not value
    assert out["keep"] is keep
    assert out["deep"] is deep


def test_schema_coercion_valid_value_is_returned_as_is() -> None:
    schema = _obj({"a": I, "b": {"type": "array", "items": S}})
    value = {"a": 1, "b": ["x"]}
    checker = compile_schema(schema)
    assert checker.coerce(value) is value
    assert checker.parse(value).value is value


def test_schema_coercion_disabled_reports_instead() -> None:
    checker = compile_schema(_obj({"a": I}), coerce=False)
    result = checker.parse({"a": "1"})
    assert not result.ok
    assert result.errors[0].message == "expected integer, got string"


def test_schema_coercion_recursive_ref_terminates() -> None:
    schema = {
        "$defs": {"node": _obj({"v": I, "next": {"$ref": "#/$defs/node"}})},
        "$ref": "#/$defs/node",
    }
    value = {"v": "1", "next": {"v": "2", "next": {"v": "3"}}}
    assert compile_schema(schema).parse(value).value == {
        "v": 1,
        "next": {"v": 2, "next": {"v": 3}},
    }


def test_schema_coercion_left_recursive_schema_resolves_by_the_other_branch() -> None:
    # The branch that re-enters the root with the same value counts as not matching.
    schema = {"anyOf": [{"$ref": "#"}, {"type": "integer"}]}
    checker = compile_schema(schema)
    assert checker.parse("5") == ParseResult(True, 5)
    result = checker.parse("x")
    assert [(e.path, e.keyword, e.message) for e in result.errors] == [
        ("", "type", "expected integer, got string")
    ]
