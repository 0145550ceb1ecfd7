"""Every keyword and format of pi-reference §2.3, references (§2.4) and type semantics."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.errors import SchemaCompileError
from scriptgate.runtime.schema import compile_schema


def _issues(schema: Any, value: Any) -> list[tuple[str, str, str]]:
    return [(e.path, e.keyword, e.message) for e in compile_schema(schema).check(value)]


# (id, schema, valid value, invalid value, expected first issue of the invalid value)
KEYWORDS: list[tuple[str, Any, Any, Any, tuple[str, str, str]]] = [
    ("type-single", {"type": "string"}, "a", 1, ("", "type", "expected string, got integer")),
    (
        "type-array",
        {"type": ["string", "null"]},
        None,
        1.5,
        ("", "type", "expected string or null, got number"),
    ),
    ("const", {"const": {"a": [1]}}, {"a": [1.0]}, {"a": [2]}, ("", "const", 'expected {"a":[1]}')),
    ("enum", {"enum": ["a", 1]}, 1, True, ("", "enum", 'expected one of ["a",1]')),
    ("minLength", {"minLength": 2}, "ab", "a", ("", "minLength", "expected at least 2 characters")),
    ("maxLength", {"maxLength": 1}, "😀", "ab", ("", "maxLength", "expected at most 1 characters")),
    (
        "pattern",
        {"pattern": "^[a-z]+$"},
        "abc",
        "ab1",
        ("", "pattern", "expected to match ^[a-z]+$"),
    ),
    ("format", {"format": "ipv4"}, "1.2.3.4", "1.2.3.256", ("", "format", "expected format ipv4")),
    ("minimum", {"minimum": 1.5}, 1.5, 1, ("", "minimum", "expected >= 1.5")),
    ("maximum", {"maximum": 2}, 2, 2.5, ("", "maximum", "expected <= 2")),
    ("exclusiveMinimum", {"exclusiveMinimum": 1}, 1.1, 1, ("", "exclusiveMinimum", "expected > 1")),
    ("exclusiveMaximum", {"exclusiveMaximum": 1}, 0.9, 1, ("", "exclusiveMaximum", "expected < 1")),
    (
        "multipleOf",
        {"multipleOf": 0.5},
        1.5,
        1.25,
        ("", "multipleOf", "expected a multiple of 0.5"),
    ),
    (
        "items",
        {"items": {"type": "integer"}},
        [1, 2],
        [1, "x"],
        ("/1", "type", "expected integer, got string"),
    ),
    (
        "prefixItems",
        {"prefixItems": [{"type": "integer"}]},
        [1, "x"],
        ["x"],
        ("/0", "type", "expected integer, got string"),
    ),
    (
        "prefixItems-items-false",
        {"prefixItems": [{}], "items": False},
        [1],
        [1, 2],
        ("/1", "false", "no value is allowed here"),
    ),
    (
        "draft7-items-array-additionalItems",
        {"items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
        [1, "a"],
        [1, 2],
        ("/1", "type", "expected string, got integer"),
    ),
    (
        "contains",
        {"contains": {"type": "integer"}},
        ["a", 1],
        ["a"],
        ("", "contains", "expected at least 1 matching item"),
    ),
    (
        "minContains",
        {"contains": {"type": "integer"}, "minContains": 2},
        [1, 2],
        [1],
        ("", "contains", "expected at least 2 matching items"),
    ),
    (
        "maxContains",
        {"contains": {"type": "integer"}, "maxContains": 1},
        [1, "a"],
        [1, 2],
        ("", "contains", "expected at most 1 matching item"),
    ),
    (
        "min-and-maxContains",
        {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3},
        [1, 2],
        [1],
        ("", "contains", "expected between 2 and 3 matching items"),
    ),
    (
        "minContains-0",
        {"contains": {"type": "integer"}, "minContains": 0},
        [],
        ["a", 1, 2, 3],
        None,
    ),  # type: ignore[list-item]
    ("minItems", {"minItems": 2}, [1, 2], [1], ("", "minItems", "expected at least 2 items")),
    ("maxItems", {"maxItems": 1}, [1], [1, 2], ("", "maxItems", "expected at most 1 items")),
    (
        "uniqueItems",
        {"uniqueItems": True},
        [1, True, "1"],
        [{"a": 1}, {"a": 1.0}],
        ("", "uniqueItems", "expected unique items"),
    ),
    (
        "properties",
        {"properties": {"a": {"type": "integer"}}},
        {"a": 1},
        {"a": "x"},
        ("/a", "type", "expected integer, got string"),
    ),
    (
        "patternProperties",
        {"patternProperties": {"^n_": {"type": "integer"}}},
        {"n_a": 1, "b": "x"},
        {"n_a": "x"},
        ("/n_a", "type", "expected integer, got string"),
    ),
    (
        "additionalProperties-false",
        {"properties": {"a": {}}, "additionalProperties": False},
        {"a": 1},
        {"a": 1, "b": 2},
        ("/b", "additionalProperties", "unknown field"),
    ),
    (
        "additionalProperties-schema",
        {"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        {"a": 1, "b": "x"},
        {"b": 2},
        ("/b", "type", "expected string, got integer"),
    ),
    ("required", {"required": ["a"]}, {"a": None}, {}, ("/a", "required", "missing")),
    (
        "minProperties",
        {"minProperties": 1},
        {"a": 1},
        {},
        ("", "minProperties", "expected at least 1 properties"),
    ),
    (
        "maxProperties",
        {"maxProperties": 1},
        {"a": 1},
        {"a": 1, "b": 2},
        ("", "maxProperties", "expected at most 1 properties"),
    ),
    (
        "propertyNames",
        {"propertyNames": {"maxLength": 2}},
        {"ab": 1},
        {"abc": 1},
        ("/abc", "propertyNames", "invalid property name"),
    ),
    (
        "dependentRequired",
        {"dependentRequired": {"a": ["b"]}},
        {"a": 1, "b": 2},
        {"a": 1},
        ("/b", "dependentRequired", "required when a is present"),
    ),
    (
        "dependentSchemas",
        {"dependentSchemas": {"a": {"required": ["c"]}}},
        {"b": 1},
        {"a": 1},
        ("/c", "required", "missing"),
    ),
    (
        "draft7-dependencies-array",
        {"dependencies": {"a": ["b"]}},
        {"b": 1},
        {"a": 1},
        ("/b", "dependentRequired", "required when a is present"),
    ),
    (
        "draft7-dependencies-schema",
        {"dependencies": {"a": {"properties": {"b": {"type": "string"}}}}},
        {"a": 1, "b": "x"},
        {"a": 1, "b": 1},
        ("/b", "type", "expected string, got integer"),
    ),
    ("allOf", {"allOf": [{"minimum": 1}, {"maximum": 3}]}, 2, 4, ("", "maximum", "expected <= 3")),
    (
        "anyOf",
        {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        1,
        1.5,
        ("", "type", "expected string, got number"),
    ),
    (
        "oneOf",
        {"oneOf": [{"minimum": 1}, {"maximum": 0}]},
        2,
        0.5,
        ("", "minimum", "expected >= 1"),
    ),
    ("not", {"not": {"type": "string"}}, 1, "x", ("", "not", "must not match the schema in not")),
    (
        "if-then",
        {
            "if": {"properties": {"a": {"const": 1}}},
            "then": {"required": ["b"]},
            "else": {"required": ["c"]},
        },
        {"a": 1, "b": 2},
        {"a": 1},
        ("/b", "required", "missing"),
    ),
    (
        "if-else",
        {
            "if": {"properties": {"a": {"const": 1}}},
            "then": {"required": ["b"]},
            "else": {"required": ["c"]},
        },
        {"a": 2, "c": 2},
        {"a": 2},
        ("/c", "required", "missing"),
    ),
    (
        "unevaluatedProperties",
        {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
        {"a": 1},
        {"a": 1, "b": 2},
        ("/b", "unevaluatedProperties", "unknown field"),
    ),
    (
        "unevaluatedProperties-through-anyOf",
        {
            "anyOf": [
                {"properties": {"a": {}}, "required": ["a"]},
                {"properties": {"b": {}}, "required": ["b"]},
            ],
            "unevaluatedProperties": False,
        },
        {"a": 1, "b": 2},
        {"a": 1, "c": 3},
        ("/c", "unevaluatedProperties", "unknown field"),
    ),
    (
        "unevaluatedItems",
        {"prefixItems": [{}], "unevaluatedItems": False},
        [1],
        [1, 2],
        ("/1", "unevaluatedItems", "unexpected item"),
    ),
    (
        "unevaluatedItems-contains",
        {"contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
        ["a", 1],
        ["a", 1.5],
        ("/1", "type", "expected integer, got number"),
    ),
    (
        "false-property",
        {"properties": {"a": False}},
        {},
        {"a": 1},
        ("/a", "false", "no value is allowed here"),
    ),
    (
        "ref-local",
        {"$defs": {"i": {"type": "integer"}}, "$ref": "#/$defs/i"},
        1,
        "x",
        ("", "type", "expected integer, got string"),
    ),
    (
        "ref-definitions",
        {"definitions": {"i": {"type": "integer"}}, "$ref": "#/definitions/i"},
        1,
        "x",
        ("", "type", "expected integer, got string"),
    ),
    (
        "ref-anchor",
        {"$defs": {"i": {"$anchor": "I", "type": "integer"}}, "$ref": "#I"},
        1,
        "x",
        ("", "type", "expected integer, got string"),
    ),
    (
        "ref-relative-id",
        {
            "$id": "https://example.com/root.json",
            "$defs": {"i": {"$id": "int.json", "type": "integer"}},
            "properties": {"x": {"$ref": "int.json"}},
        },
        {"x": 1},
        {"x": "s"},
        ("/x", "type", "expected integer, got string"),
    ),
    (
        "ref-escaped-pointer",
        {
            "$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}},
            "properties": {"x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c~0d"}},
        },
        {"x": 1, "y": "s"},
        {"x": "s"},
        ("/x", "type", "expected integer, got string"),
    ),
    (
        "dynamicRef",
        {
            "$dynamicAnchor": "node",
            "type": "object",
            "properties": {"kid": {"$dynamicRef": "#node"}},
        },
        {"kid": {"kid": {}}},
        {"kid": 1},
        ("/kid", "$dynamicRef", "does not match the dynamically referenced schema"),
    ),
]


@pytest.mark.parametrize(
    ("schema", "good", "bad", "first"),
    [pytest.param(s, g, b, f, id=i) for i, s, g, b, f in KEYWORDS],
)
def test_schema_keywords_accept_and_reject(schema: Any, good: Any, bad: Any, first: Any) -> None:
    checker = compile_schema(schema)
    assert checker.is_valid(good)
    assert checker.check(good) == []
    if first is None:
        assert checker.is_valid(bad)
        return
    assert not checker.is_valid(bad)
    assert _issues(schema, bad)[0] == first


def test_schema_keywords_draft4_boolean_exclusive_minimum_is_ignored() -> None:
    checker = compile_schema({"minimum": 1, "exclusiveMinimum": True})
    assert checker.is_valid(1)
    assert not checker.is_valid(0)


def test_schema_keywords_keywords_ignore_other_types() -> None:
    checker = compile_schema({"minLength": 3, "minimum": 5, "required": ["a"], "minItems": 2})
    for value in ("abc", 7, {"a": 1}, [1, 2], None, True):
        assert checker.is_valid(value)


@pytest.mark.parametrize(
    ("type_name", "accepted", "rejected"),
    [
        pytest.param(
            "number", [1, 1.5, -0.0], [True, float("inf"), float("nan"), "1"], id="number"
        ),
        pytest.param("integer", [1, 1.0, -3], [True, 1.5, float("inf")], id="integer"),
        pytest.param("boolean", [True, False], [0, 1, None], id="boolean"),
        pytest.param("object", [{}], [[], None, "x"], id="object"),
        pytest.param("array", [[], [1]], [{}, "x"], id="array"),
        pytest.param("null", [None], [0, False, ""], id="null"),
        pytest.param("string", ["", "x"], [1, None], id="string"),
    ],
)
def test_schema_keywords_type_semantics(
    type_name: str, accepted: list[Any], rejected: list[Any]
) -> None:
    checker = compile_schema({"type": type_name})
    for value in accepted:
        assert checker.is_valid(value), value
    for value in rejected:
        assert not checker.is_valid(value), value


@pytest.mark.parametrize(
    ("value", "actual"),
    [
        pytest.param(None, "null", id="null"),
        pytest.param([1], "array", id="array"),
        pytest.param(3, "integer", id="integer"),
        pytest.param(3.0, "integer", id="integral-float"),
        pytest.param(3.5, "number", id="number"),
        pytest.param(float("inf"), "Infinity", id="inf"),
        pytest.param(float("-inf"), "-Infinity", id="neg-inf"),
        pytest.param(float("nan"), "NaN", id="nan"),
        pytest.param("s", "string", id="string"),
        pytest.param(False, "boolean", id="boolean"),
        pytest.param({}, "object", id="object"),
        pytest.param(b"x", "bytes", id="bytes"),
    ],
)
def test_schema_keywords_type_error_names_actual(value: Any, actual: str) -> None:
    assert _issues({"type": "string" if actual != "string" else "null"}, value)[0][2].endswith(
        f"got {actual}"
    )


# ---------------------------------------------------------------- formats

FORMATS: list[tuple[str, list[str], list[str]]] = [
    ("date", ["2024-02-29", "2023-12-31"], ["2023-02-29", "2023-13-01", "2023-1-01", "20230101"]),
    (
        "date-time",
        ["2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123+01:00"],
        ["2024-01-02T03:04:05", "2024-01-02"],
    ),
    ("time", ["03:04:05Z", "23:59:60+00:00"], ["24:00:00Z", "03:04:05", "3:04:05Z"]),
    ("duration", ["P1D", "PT1H30M", "P2W", "P1Y2M3DT4H5M6S"], ["P", "PT", "1D", "P1H"]),
    ("email", ["a.b@example.com", "x+y@sub.example.org"], ["no-at", "a@", "@b.com", "a b@c.com"]),
    ("idn-email", ["用户@例子.广告"], ["no-at-sign"]),
    ("hostname", ["example.com", "a-b.c"], ["-a.com", "a_b.com", "a" * 64 + ".com"]),
    ("idn-hostname", ["例子.测试", "example.com"], ["bad host", ""]),
    ("ipv4", ["192.168.0.1", "0.0.0.0"], ["256.1.1.1", "01.2.3.4", "1.2.3"]),
    ("ipv6", ["::1", "2001:db8::ff00:42:8329", "::ffff:1.2.3.4"], ["1:2:3", "::g", "fe80::1%eth0"]),
    (
        "uri",
        ["https://example.com/a?b#c", "urn:isbn:0451450523"],
        ["/relative", "no scheme", "http://a b"],
    ),
    ("uri-reference", ["/relative/path", "https://x.y", "#frag"], ["a b", "%zz"]),
    ("iri", ["https://例子.com/路径"], ["/relative", "http://a b"]),
    ("iri-reference", ["/路径", "#x"], ["a b"]),
    ("url", ["https://example.com/x", "http://[::1]:8080/"], ["example.com", "mailto:a@b.c"]),
    ("uri-template", ["/users/{id}", "{+path}/x{?q,r}"], ["{unclosed", "/a}"]),
    ("json-pointer", ["", "/a/b", "/a~0b~1c"], ["a", "/a~2"]),
    ("json-pointer-uri-fragment", ["#", "#/a/%20b"], ["/a", "#/a b"]),
    ("relative-json-pointer", ["0", "1/a", "2#"], ["/a", "-1", "01"]),
    ("regex", ["^a+$", "(?<n>x)\\k<n>"], ["(", "[a-"]),
    ("uuid", ["123e4567-e89b-12d3-a456-426614174000"], ["123e4567e89b12d3a456426614174000", "xyz"]),
]


@pytest.mark.parametrize(
    ("name", "good", "bad"), [pytest.param(n, g, b, id=n) for n, g, b in FORMATS]
)
def test_schema_keywords_format(name: str, good: list[str], bad: list[str]) -> None:
    checker = compile_schema({"format": name})
    for value in good:
        assert checker.is_valid(value), value
    for value in bad:
        assert _issues({"format": name}, value) == [("", "format", f"expected format {name}")], (
            value
        )


def test_schema_keywords_unknown_format_passes() -> None:
    assert compile_schema({"format": "no-such-format"}).is_valid("anything")


def test_schema_keywords_formats_can_be_disabled() -> None:
    assert compile_schema({"format": "email"}, formats=False).is_valid("not an email")


def test_schema_keywords_format_ignores_non_strings() -> None:
    assert compile_schema({"format": "email"}).is_valid(5)


# ---------------------------------------------------------------- ECMAScript patterns


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        pytest.param("^\\d+$", "123", True, id="digits"),
        pytest.param("^\\d+$", "١٢٣", False, id="digit-is-ascii-only"),
        pytest.param("^\\w+$", "é", False, id="word-is-ascii-only"),
        pytest.param("^a$", "a\n", False, id="dollar-is-end-only"),
        pytest.param("^a.b$", "a\nb", False, id="dot-excludes-newline"),
        pytest.param("^a.b$", "a\u2028b", False, id="dot-excludes-line-separator"),
        pytest.param("^\\s$", "\u00a0", True, id="space-includes-nbsp"),
        pytest.param("b", "abc", True, id="unanchored-search"),
        pytest.param("^(?<y>\\d{4})-\\k<y>$", "2020-2020", True, id="named-group"),
        pytest.param("^\\u{1F600}$", "😀", True, id="braced-unicode-escape"),
        pytest.param("^\\uD83D\\uDE00$", "😀", True, id="surrogate-pair-escape"),
        pytest.param("^.$", "😀", True, id="astral-is-one-char"),
        pytest.param("^[^]$", "\n", True, id="negated-empty-class-matches-anything"),
        pytest.param("[]", "a", False, id="empty-class-matches-nothing"),
        pytest.param("^\\/$", "/", True, id="escaped-slash"),
    ],
)
def test_schema_keywords_pattern_is_ecmascript(pattern: str, value: str, matches: bool) -> None:
    assert compile_schema({"pattern": pattern}).is_valid(value) is matches


def test_schema_keywords_inexpressible_pattern_matches_everything() -> None:
    # Documented fallback: a pattern neither engine can express (here a property name
    # ECMAScript does not define) matches every string, like an unknown format.
    assert compile_schema({"pattern": "^\\p{NoSuchProperty}$"}).is_valid("anything")


def test_schema_keywords_pattern_unicode_property_escape_is_ecmascript() -> None:
    checker = compile_schema({"type": "string", "pattern": "^\\p{Lu}"})
    assert not checker.is_valid("ab")
    assert not checker.is_valid("hasOwnProperty")
    assert checker.is_valid("Ab")
    result = checker.parse("ab")
    assert [(e.path, e.message) for e in result.errors] == [("", "expected to match ^\\p{Lu}")]


def test_schema_keywords_pattern_properties_unicode_property_escape() -> None:
    checker = compile_schema(
        {"patternProperties": {"^\\p{Lu}": {"type": "integer"}}, "additionalProperties": False}
    )
    assert checker.parse({"Ab": "1"}).value == {"Ab": 1}
    issues = checker.check({"hasOwnProperty": 1})
    assert [(e.path, e.keyword, e.message) for e in issues] == [
        ("/hasOwnProperty", "additionalProperties", "unknown field")
    ]


def test_schema_keywords_pattern_properties_use_ecmascript() -> None:
    checker = compile_schema(
        {"patternProperties": {"^\\d$": {"type": "integer"}}, "additionalProperties": False}
    )
    assert checker.is_valid({"1": 1})
    assert _issues(
        checker_schema := {"patternProperties": {"^\\d$": {}}, "additionalProperties": False},
        {"١": 1},
    ) == [("/١", "additionalProperties", "unknown field")]
    assert checker_schema


# ---------------------------------------------------------------- references (§2.4)


def test_schema_keywords_unresolved_ref_rejects_only_at_its_place() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Missing"}, "b": {"type": "integer"}},
    }
    checker = compile_schema(schema)
    assert checker.is_valid({})
    assert checker.parse({"b": "2"}).value == {"b": 2}
    assert _issues(schema, {"a": 1}) == [("/a", "$ref", "unresolved reference #/$defs/Missing")]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        pytest.param(
            {"$ref": "#/$defs/Missing"}, "Unresolved $ref #/$defs/Missing in ", id="pointer"
        ),
        pytest.param(
            {"$ref": "other.json"},
            "Unresolved $ref other.json (no schema registered for other.json)",
            id="document",
        ),
        pytest.param(
            {"$id": "https://x.test/s.json", "$ref": "#nope"},
            "Unresolved $ref #nope (no anchor nope in https://x.test/s.json)",
            id="anchor",
        ),
    ],
)
def test_schema_keywords_unresolved_ref_throws_without_reject(schema: Any, message: str) -> None:
    with pytest.raises(SchemaCompileError) as info:
        compile_schema(schema, unresolved_refs="throw")
    assert str(info.value) == message


def test_schema_keywords_remote_ref_via_schemas() -> None:
    checker = compile_schema(
        {"properties": {"x": {"$ref": "https://other.test/s.json#/$defs/n"}}},
        schemas={"https://other.test/s.json": {"$defs": {"n": {"type": "number"}}}},
    )
    assert checker.is_valid({"x": 1})
    assert checker.parse({"x": "2"}).value == {"x": 2}
    assert [(e.path, e.message) for e in checker.check({"x": "a"})] == [
        ("/x", "expected number, got string")
    ]


def test_schema_keywords_ref_with_sibling_keywords_applies_both() -> None:
    schema = {"$defs": {"i": {"type": "integer"}}, "$ref": "#/$defs/i", "minimum": 3}
    assert compile_schema(schema).is_valid(3)
    assert _issues(schema, 2) == [("", "minimum", "expected >= 3")]


def test_schema_keywords_dynamic_ref_uses_outermost_anchor() -> None:
    schema = {
        "$id": "https://x.test/strict.json",
        "$dynamicAnchor": "node",
        "$ref": "tree.json",
        "unevaluatedProperties": False,
        "$defs": {
            "tree": {
                "$id": "tree.json",
                "$dynamicAnchor": "node",
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
            }
        },
    }
    checker = compile_schema(schema)
    assert checker.is_valid({"kids": [{"kids": []}]})
    assert not checker.is_valid({"kids": [{"kids": [], "extra": 1}]})


def test_schema_keywords_invalid_schema_node_raises() -> None:
    with pytest.raises(SchemaCompileError) as info:
        compile_schema(5)
    assert str(info.value) == "A schema must be an object or a boolean, got 5"
    with pytest.raises(SchemaCompileError) as info:
        compile_schema({"properties": {"a": "string"}})
    assert str(info.value) == 'A schema must be an object or a boolean, got "string"'


def test_schema_keywords_boolean_schemas() -> None:
    assert compile_schema(True).is_valid(object())
    assert not compile_schema(False).is_valid(None)
    assert _issues(False, 1) == [("", "false", "no value is allowed here")]


def test_schema_keywords_schema_is_never_mutated_and_frozen_schemas_work() -> None:
    from types import MappingProxyType

    inner = MappingProxyType({"type": "integer"})
    schema = MappingProxyType({"type": "object", "properties": MappingProxyType({"a": inner})})
    checker = compile_schema(schema)
    assert checker.parse({"a": "1"}).value == {"a": 1}
    assert dict(inner) == {"type": "integer"}


def test_schema_keywords_default_is_never_inserted() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "default": 3}}}
    assert compile_schema(schema).parse({}).value == {}


def test_schema_keywords_unknown_keywords_are_ignored() -> None:
    assert compile_schema({"type": "string", "x-custom": [1, 2], "$comment": "hi"}).is_valid("a")
