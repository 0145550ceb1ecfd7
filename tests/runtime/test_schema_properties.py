"""Property tests of the coercing validator (hypothesis, hypothesis-jsonschema)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from scriptgate.runtime.schema import compile_schema
from scriptgate.runtime.schema._coerce import _fused, _passes

KEYS = ["a", "b", "c", "a/b", "t~"]
TYPES = ["string", "number", "integer", "boolean", "null", "object", "array"]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        ["", " ", "0", "1", "2.5", " 3 ", "true", "FALSE", "null", "0x1f", "12n", "abc"]
    ),
    st.text(max_size=5),
)

json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=12,
)

_leaf_schemas = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
    st.builds(
        lambda ts: {"type": ts},
        st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
    ),
    st.builds(lambda vs: {"enum": vs}, st.lists(_scalars, min_size=1, max_size=4)),
    st.builds(lambda v: {"const": v}, _scalars),
    st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(0, 3)),
    st.builds(lambda n: {"type": "integer", "minimum": n}, st.integers(-3, 3)),
    st.builds(lambda n: {"type": "number", "maximum": n}, st.integers(-3, 3)),
    st.just({}),
    st.just(True),
    st.just(False),
)


def _object_schema(draw_props: dict[str, Any], required: list[str], extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": draw_props}
    keys = [k for k in required if k in draw_props]
    if keys:
        schema["required"] = keys
    if extra is not None:
        schema["additionalProperties"] = extra
    return schema


schemas = st.recursive(
    _leaf_schemas,
    lambda inner: st.one_of(
        st.builds(
            _object_schema,
            st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
            st.lists(st.sampled_from(KEYS), max_size=3),
            st.one_of(st.none(), st.booleans(), inner),
        ),
        st.builds(lambda s: {"type": "array", "items": s}, inner),
        st.builds(lambda s: {"items": s}, inner),
        st.builds(lambda ss: {"prefixItems": ss}, st.lists(inner, max_size=2)),
        st.builds(lambda ss: {"anyOf": ss}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda ss: {"oneOf": ss}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda ss: {"allOf": ss}, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda s: {"not": s}, inner),
        st.builds(lambda s: {"$defs": {"d": s}, "properties": {"a": {"$ref": "#/$defs/d"}}}, inner),
    ),
    max_leaves=8,
)


def _canonical(value: Any) -> str:
    """JSON text that keeps bool vs number apart and 1 == 1.0."""

    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, (int, float)):
            return v
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return [norm(x) for x in v]

    return json.dumps(norm(value), sort_keys=False)


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float(v) for v in value)
    return False


@SETTINGS
@given(schemas, json_values)
def test_schema_properties_coercion_never_mutates_input(schema: Any, value: Any) -> None:
    snapshot = copy.deepcopy(value)
    schema_snapshot = copy.deepcopy(schema)
    compiled = compile_schema(schema)
    compiled.coerce(value)
    compiled.parse(value)
    assert _canonical(value) == _canonical(snapshot)
    assert schema == schema_snapshot


def _wraps_somewhere(schema: Any) -> bool:
    """Whether some node has ``items`` but no ``type``: pi wraps a valid scalar there."""
    if isinstance(schema, dict):
        if "items" in schema and "type" not in schema:
            return True
        return any(_wraps_somewhere(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_wraps_somewhere(v) for v in schema)
    return False


@SETTINGS
@given(schemas, json_values)
def test_schema_properties_valid_value_comes_back_unchanged(schema: Any, value: Any) -> None:
    compiled = compile_schema(schema)
    if not compiled.is_valid(value) or _wraps_somewhere(schema):
        return
    result = compiled.parse(value)
    assert result.ok
    assert _canonical(result.value) == _canonical(value)
    if not _has_float(value):
        assert result.value is value


@SETTINGS
@given(schemas, json_values)
def test_schema_properties_parsing_again_changes_nothing(schema: Any, value: Any) -> None:
    compiled = compile_schema(schema)
    first = compiled.parse(value)
    if not first.ok:
        return
    again = compiled.parse(first.value)
    assert again.ok
    assert _canonical(again.value) == _canonical(first.value)


def _resolve(value: Any, pointer: str) -> bool:
    if pointer == "":
        return True
    cur = value
    for raw in pointer[1:].split("/"):
        seg = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, dict) and seg in cur:
            cur = cur[seg]
        elif isinstance(cur, list) and seg.isdigit() and int(seg) < len(cur):
            cur = cur[int(seg)]
        else:
            return False
    return True


def _schema_names(schema: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(schema, dict):
        for key, sub in schema.items():
            if key in ("required",) and isinstance(sub, list):
                names.update(s for s in sub if isinstance(s, str))
            names |= _schema_names(sub)
    elif isinstance(schema, list):
        for sub in schema:
            names |= _schema_names(sub)
    return names


@SETTINGS
@given(schemas, json_values)
def test_schema_properties_every_error_path_exists_in_input_or_schema(
    schema: Any, value: Any
) -> None:
    result = compile_schema(schema).parse(value)
    if result.ok:
        return
    assert result.errors
    names = _schema_names(schema)
    for issue in result.errors:
        if _resolve(result.value, issue.path):
            continue
        parent, _, last = issue.path.rpartition("/")
        assert _resolve(result.value, parent), issue
        assert last.replace("~1", "/").replace("~0", "~") in names, issue


TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 50},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "recursive": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "options": {
                "type": "object",
                "properties": {"depth": {"type": "integer"}, "mode": {"enum": ["a", "b"]}},
                "additionalProperties": False,
            },
        },
        "required": ["path"],
    },
    {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"],
                },
            },
            "mode": {"anyOf": [{"type": "null"}, {"type": "string", "enum": ["x", "y"]}]},
        },
        "required": ["edits"],
    },
]


def _valid_values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid instances: hypothesis-jsonschema for non-object nodes, objects assembled here.

    (hypothesis-jsonschema's own object strategy fails with the installed hypothesis:
    ``AttributeError: 'many' object has no attribute 'more'``.)
    """
    if schema.get("type") != "object":
        if schema.get("type") == "array" and schema.get("items", {}).get("type") == "object":
            return st.lists(_valid_values(schema["items"]), max_size=3)
        return from_schema(schema)
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, sub in props.items():
            if key in required or draw(st.booleans()):
                out[key] = draw(_valid_values(sub))
        return out

    return build()


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_schema_properties_generated_valid_values_parse_unchanged(data: st.DataObject) -> None:
    schema = data.draw(st.sampled_from(TOOL_SCHEMAS))
    value = data.draw(_valid_values(schema))
    compiled = compile_schema(schema)
    assert compiled.is_valid(value)
    result = compiled.parse(value)
    assert result.ok
    assert _canonical(result.value) == _canonical(value)
    if not _has_float(value):
        assert result.value is value


@SETTINGS
@given(schemas, json_values)
def test_schema_properties_generated_fast_path_agrees_with_closures(
    schema: Any, value: Any
) -> None:
    compiled = compile_schema(schema)
    fast = compiled._fast(value)
    valid = compiled.is_valid(value)
    if fast:
        assert valid
        # what the fast path skips (the three passes, one after the other) changes nothing
        assert _canonical(_passes(compiled._root, value, None, True)) == _canonical(value)
    if valid and not _has_float(value) and not _wraps_somewhere(schema):
        assert fast


@SETTINGS
@given(schemas, json_values)
def test_schema_properties_fused_walk_equals_the_three_passes_in_order(
    schema: Any, value: Any
) -> None:
    root = compile_schema(schema)._root
    fused = _fused(root, value, None, True)
    passes = _passes(root, value, None, True)
    assert _canonical(fused) == _canonical(passes)
    assert (fused is value) == (passes is value)
