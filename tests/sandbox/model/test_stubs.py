"""Stubs the model sees: ``schema_to_type``, ``render_stubs``, ``render_tool_sample``.

The pi §5.7 declaration vectors, translated to Python, plus the rule that every
rendering is valid Python whose ``TypedDict`` s are well-formed.
"""

from __future__ import annotations

import ast
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from scriptgate.runtime.tool import AgentTool, tool
from scriptgate.runtime.types import AgentToolResult
from scriptgate.sandbox.model.stubs import (
    MAX_REF_EXPANSIONS,
    render_stubs,
    render_tool_sample,
    schema_to_type,
)

PRELUDE = "from typing import Any, Literal, Never, NotRequired, TypedDict\n"


def _execute(_id: str, _params: Any, _signal: Any, _on_update: Any) -> AgentToolResult:
    return AgentToolResult.text("ok")


def make_tool(
    name: str,
    parameters: Any = None,
    *,
    description: str = "",
    output_schema: Any = None,
) -> AgentTool:
    return AgentTool(
        name=name,
        description=description,
        parameters=parameters,
        output_schema=output_schema,
        execute=_execute,
    )


def run_text(text: str) -> dict[str, Any]:
    """Parse and execute a rendering; return its namespace."""
    ast.parse(text)
    namespace: dict[str, Any] = {}
    # dont_inherit: this module's ``from __future__ import annotations`` must not
    # turn the annotations into strings, so that every one of them is evaluated.
    exec(compile(PRELUDE + text, "<stubs>", "exec", dont_inherit=True), namespace)
    return namespace


def type_value(text: str) -> Any:
    """Execute the definitions of a ``schema_to_type`` result and evaluate its last line."""
    namespace = run_text(text)
    last = text.rsplit("\n", 1)[-1]
    return eval(compile(last, "<type>", "eval", dont_inherit=True), namespace)


# ----------------------------------------------------------------------------- §5.7 vectors


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object"}, "dict[str, Any]"),
        ({"type": "array", "items": {"type": "string"}}, "list[str]"),
        ({"type": "array"}, "list[Any]"),
        (
            {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
            "tuple[str, float]",
        ),
        ({"type": ["string", "null"]}, "str | None"),
        ({"enum": ["a", 1, None]}, 'Literal["a", 1] | None'),
        ({"anyOf": [{"type": "string"}, {}]}, "Any"),
        ({"$ref": "#/$defs/missing"}, "Any"),
        (True, "Any"),
        (False, "Never"),
    ],
)
def test_schema_to_type_pi_vectors(schema: Any, expected: str) -> None:
    text = schema_to_type(schema)
    assert text == expected
    type_value(text)


def test_schema_to_type_recursive_ref_inner_occurrence_is_any() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}},
                "required": ["v"],
            }
        },
        "$ref": "#/$defs/Node",
    }
    text = schema_to_type(schema)
    assert text == "class Node(TypedDict):\n    next: NotRequired[Any]\n    v: int\n\nNode"
    node = type_value(text)
    assert typing.get_type_hints(node) == {"next": Any, "v": int}
    assert node.__required_keys__ == frozenset({"v"})


def test_schema_to_type_all_of_two_objects_merges_them() -> None:
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"b": {"type": "number"}}},
        ]
    }
    text = schema_to_type(schema)
    assert text == (
        "class Value(TypedDict):\n    a: NotRequired[str]\n    b: NotRequired[float]\n\nValue"
    )
    value = type_value(text)
    assert value.__optional_keys__ == frozenset({"a", "b"})


def test_schema_to_type_described_object_renders_comments_and_tags() -> None:
    schema = {
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {"type": "string", "description": "Path to read"},
            "max-lines": {"type": "integer", "minimum": 1, "default": 20},
        },
    }
    text = schema_to_type(schema, name="ReadArgs")
    assert text == (
        "ReadArgs = TypedDict(\n"
        '    "ReadArgs",\n'
        "    {\n"
        "        # @minimum 1 @default 20\n"
        '        "max-lines": NotRequired[int],\n'
        "        # Path to read\n"
        '        "path": str,\n'
        "    },\n"
        ")\n\n"
        "ReadArgs"
    )
    value = type_value(text)
    assert value.__required_keys__ == frozenset({"path"})
    assert value.__optional_keys__ == frozenset({"max-lines"})


# ----------------------------------------------------------------------------- primitives


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "str"),
        ({"type": "integer"}, "int"),
        ({"type": "number"}, "float"),
        ({"type": "boolean"}, "bool"),
        ({"type": "null"}, "None"),
        ({"type": ["integer", "number", "integer"]}, "int | float"),
        ({"type": "mystery"}, "Any"),
        ({}, "Any"),
        ({"description": "just words"}, "Any"),
        ({"const": "x"}, 'Literal["x"]'),
        ({"const": 3}, "Literal[3]"),
        ({"const": 3.0}, "Literal[3]"),
        ({"const": 2.5}, "float"),
        ({"const": True}, "Literal[True]"),
        ({"const": None}, "None"),
        ({"const": [1]}, "list[Any]"),
        ({"const": {"a": 1}}, "dict[str, Any]"),
        ({"enum": []}, "Never"),
        ({"enum": ["it's", 'say "hi"']}, """Literal["it's", 'say "hi"']"""),
        ({"anyOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]}, 'Literal["a", "b"] | None'),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "str | int"),
        ({"anyOf": []}, "Never"),
        ({"anyOf": [False, {"type": "string"}]}, "str"),
        ({"anyOf": [{"type": "string"}, {"type": "string"}]}, "str"),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, "str"),
        ({"allOf": [{}, True]}, "Any"),
        ({"allOf": [{"type": "integer"}, {"type": "object"}]}, "int"),
        ({"type": "array", "items": [{"type": "string"}, {"type": "boolean"}]}, "tuple[str, bool]"),
        ({"type": "array", "prefixItems": []}, "tuple[()]"),
        ({"type": "array", "items": {"type": ["string", "null"]}}, "list[str | None]"),
        ({"items": {"type": "integer"}}, "list[int]"),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "dict[str, int]"),
        ({"type": "object", "additionalProperties": True}, "dict[str, Any]"),
        ({"type": "object", "properties": {}}, "dict[str, Any]"),
    ],
)
def test_schema_to_type_renders_primitives_literals_and_unions(schema: Any, expected: str) -> None:
    text = schema_to_type(schema)
    assert text == expected
    type_value(text)


def test_schema_to_type_closed_empty_object_is_an_empty_typeddict() -> None:
    text = schema_to_type({"type": "object", "additionalProperties": False}, name="Empty")
    assert text == "class Empty(TypedDict):\n    pass\n\nEmpty"
    assert type_value(text).__required_keys__ == frozenset()


def test_schema_to_type_sorts_keys_and_marks_optional_ones() -> None:
    schema = {
        "type": "object",
        "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}},
        "required": ["zeta"],
    }
    text = schema_to_type(schema)
    assert text == "class Value(TypedDict):\n    alpha: NotRequired[int]\n    zeta: str\n\nValue"


def test_schema_to_type_names_nested_objects_after_their_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "owner": {"type": "object", "properties": {"name": {"type": "string"}}},
            "files": {
                "type": "array",
                "items": {"type": "object", "properties": {"size": {"type": "integer"}}},
            },
        },
    }
    text = schema_to_type(schema, name="repo")
    assert "class RepoFilesItem(TypedDict):" in text
    assert "class RepoOwner(TypedDict):" in text
    assert "    files: NotRequired[list[RepoFilesItem]]" in text
    assert "    owner: NotRequired[RepoOwner]" in text
    assert text.endswith("\n\nRepo")
    repo = type_value(text)
    assert set(typing.get_type_hints(repo)) == {"files", "owner"}


def test_schema_to_type_object_with_extra_keys_documents_them() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "integer"},
    }
    text = schema_to_type(schema)
    assert text == (
        "class Value(TypedDict):\n    a: NotRequired[str]\n    # Any other key: int\n\nValue"
    )
    type_value(text)


@pytest.mark.parametrize("key", ["max-lines", "class", "__dunder", "with space", "1st"])
def test_schema_to_type_non_identifier_keys_use_the_functional_form(key: str) -> None:
    text = schema_to_type({"type": "object", "properties": {key: {"type": "string"}}})
    assert text.startswith('Value = TypedDict(\n    "Value",\n')
    assert type_value(text).__optional_keys__ == frozenset({key})


def test_schema_to_type_keeps_soft_keywords_and_single_underscores_as_class_keys() -> None:
    schema = {"type": "object", "properties": {"match": {}, "_private": {}, "type": {}}}
    text = schema_to_type(schema)
    assert text.startswith("class Value(TypedDict):")
    assert type_value(text).__optional_keys__ == frozenset({"match", "_private", "type"})


def test_schema_to_type_reuses_a_class_for_identical_shapes_with_the_same_name() -> None:
    item = {"type": "object", "properties": {"x": {"type": "integer"}}}
    schema = {"$defs": {"Point": item}, "type": "array", "prefixItems": [
        {"$ref": "#/$defs/Point"},
        {"$ref": "#/$defs/Point"},
    ]}  # fmt: skip
    text = schema_to_type(schema)
    assert text.count("class Point(TypedDict)") == 1
    assert text.endswith("tuple[Point, Point]")


def test_schema_to_type_suffixes_a_name_taken_by_a_different_shape() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/a/$defs/Item"},
            "b": {"$ref": "#/$defs/b/$defs/Item"},
        },
        "$defs": {
            "a": {"$defs": {"Item": {"type": "object", "properties": {"x": {"type": "string"}}}}},
            "b": {"$defs": {"Item": {"type": "object", "properties": {"y": {"type": "string"}}}}},
        },
    }
    text = schema_to_type(schema)
    assert "class Item(TypedDict):" in text
    assert "class Item2(TypedDict):" in text
    type_value(text)


def test_schema_to_type_never_names_a_class_after_a_builtin_or_typing_name() -> None:
    schema = {
        "$defs": {"None": {"type": "object", "properties": {"a": {}}}},
        "$ref": "#/$defs/None",
    }
    text = schema_to_type(schema)
    assert text.endswith("\n\nNone2")
    type_value(text)
    text = schema_to_type({"type": "object", "properties": {"a": {}}}, name="Any")
    assert text.endswith("\n\nAny2")


# ----------------------------------------------------------------------------- tags


def _comment_of(schema: Any) -> str:
    text = schema_to_type({"type": "object", "properties": {"p": schema}})
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("#")]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "integer", "minimum": 1, "default": 20}, "# @minimum 1 @default 20"),
        ({"type": "number", "minimum": 0, "exclusiveMinimum": True}, "# @exclusiveMinimum 0"),
        ({"type": "number", "maximum": 9, "exclusiveMaximum": True}, "# @exclusiveMaximum 9"),
        (
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
            "# @exclusiveMinimum 0 @exclusiveMaximum 1.5",
        ),
        ({"type": "number", "multipleOf": 0.5, "maximum": 10.0}, "# @maximum 10 @multipleOf 0.5"),
        (
            {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^a+$", "format": "uri"},
            "# @minLength 1 @maxLength 8 @pattern ^a+$ @format uri",
        ),
        (
            {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True},
            "# @minItems 1 @maxItems 3 @uniqueItems",
        ),
        ({"default": {"a": [1, True, None]}}, '# @default {"a":[1,true,null]}'),
        ({"default": "x", "deprecated": True}, '# @default "x" @deprecated'),
        ({"type": "string", "pattern": "a" * 80, "minLength": 2}, "# @minLength 2"),
        ({"type": "string", "uniqueItems": False, "deprecated": False}, ""),
        (
            {"description": "First\nsecond", "minimum": 3},
            "# First\n# second\n# @minimum 3",
        ),
    ],
)
def test_schema_to_type_constraint_tags(schema: Any, expected: str) -> None:
    assert _comment_of(schema) == expected


def test_schema_to_type_reads_tags_from_the_non_null_branch_of_a_nullable_union() -> None:
    schema = {
        "anyOf": [{"type": "integer", "minimum": 1, "description": "Count"}, {"type": "null"}],
        "default": None,
    }
    # The property's own schema has no description: the branch supplies it and the tags.
    assert _comment_of(schema) == "# Count\n# @minimum 1"
    assert _comment_of({"oneOf": [{"type": "null"}, {"type": "string", "maxLength": 4}]}) == (
        "# @maxLength 4"
    )
    # Two non-null branches: no single branch to read from.
    assert _comment_of({"anyOf": [{"type": "string", "maxLength": 4}, {"type": "integer"}]}) == ""


def test_schema_to_type_reads_tags_through_a_ref() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N"}},
        "$defs": {"N": {"type": "integer", "minimum": 0, "description": "A count"}},
    }
    text = schema_to_type(schema)
    assert "    # A count\n    # @minimum 0\n    n: NotRequired[int]" in text


def test_schema_to_type_descriptions_cannot_break_out_of_comments() -> None:
    schema = {
        "type": "object",
        "properties": {
            "p": {"description": "line1\r\nline2\rline3\x00\x0bend\n\n", "type": "string"}
        },
    }
    text = schema_to_type(schema)
    assert "    # line1\n    # line2\n    # line3  end\n    p: NotRequired[str]" in text
    type_value(text)


# ----------------------------------------------------------------------------- $ref


def test_schema_to_type_expands_local_refs_and_names_classes_after_definitions() -> None:
    schema = {
        "type": "object",
        "properties": {"entry": {"$ref": "#/definitions/dir_entry"}},
        "definitions": {
            "dir_entry": {"type": "object", "properties": {"name": {"type": "string"}}}
        },
    }
    text = schema_to_type(schema)
    assert "class DirEntry(TypedDict):\n    name: NotRequired[str]" in text
    assert "    entry: NotRequired[DirEntry]" in text


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/schema.json#/defs/x",
        "other.json",
        "#/$defs/nope",
        "#/$defs/bad~2escape",
        "#no-pointer",
        "#/$defs/list/9",
    ],
)
def test_schema_to_type_unresolvable_refs_are_any(ref: str) -> None:
    schema = {
        "$defs": {"bad~escape": {"type": "string"}, "list": [{"type": "string"}]},
        "$ref": ref,
    }
    assert schema_to_type(schema) == "Any"


def test_schema_to_type_resolves_escaped_pointer_tokens() -> None:
    schema = {"$defs": {"a/b": {"type": "string"}, "c~d": {"type": "integer"}}, "anyOf": [
        {"$ref": "#/$defs/a~1b"},
        {"$ref": "#/$defs/c~0d"},
        {"$ref": "#/%24defs/a~1b"},
    ]}  # fmt: skip
    assert schema_to_type(schema) == "str | int"


def test_schema_to_type_stops_after_32_ref_expansions() -> None:
    count = MAX_REF_EXPANSIONS + 3
    schema = {
        "$defs": {"S": {"type": "string"}},
        "type": "array",
        "prefixItems": [{"$ref": "#/$defs/S"} for _ in range(count)],
    }
    text = schema_to_type(schema)
    parts = text.removeprefix("tuple[").removesuffix("]").split(", ")
    assert parts == ["str"] * MAX_REF_EXPANSIONS + ["Any"] * 3


# ----------------------------------------------------------------------------- budget


def _wide_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            f"field_{i:03d}": {"type": "integer", "minimum": i, "maximum": i + 1000}
            for i in range(n)
        },
    }


def test_schema_to_type_over_budget_drops_tags_first() -> None:
    schema = _wide_schema(20)
    full = schema_to_type(schema)
    assert "@minimum" in full
    bare = schema_to_type(schema, max_chars=len(full) - 1)
    assert "@minimum" not in bare
    assert bare.endswith("\n\nValue")
    assert len(bare) < len(full)


def test_schema_to_type_still_over_budget_becomes_any() -> None:
    schema = _wide_schema(20)
    assert schema_to_type(schema, max_chars=50) == "Any"


def test_schema_to_type_default_budget_is_16000_characters() -> None:
    assert schema_to_type(_wide_schema(600)) == "Any"


# ----------------------------------------------------------------------------- render_stubs


def test_render_stubs_read_with_two_line_description() -> None:
    read = make_tool(
        "read",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        description="Read a file.\nReturns its text.",
    )
    stubs = render_stubs([read])
    assert stubs == (
        'def read(*, path: str) -> str:\n    """Read a file.\n    Returns its text.\n    """'
    )
    namespace = run_text(stubs)
    assert namespace["read"].__doc__.splitlines()[0] == "Read a file."


def test_render_stubs_tool_without_schemas_takes_one_positional_argument() -> None:
    remote = make_tool("remote-api", True)
    assert render_stubs([remote]) == "def remote_api(args: Any, /) -> str:\n    ..."


def test_render_stubs_tool_with_empty_properties_takes_any_keywords() -> None:
    noargs = make_tool("noargs", {"type": "object", "properties": {}})
    assert render_stubs([noargs]) == "def noargs(**kwargs: Any) -> str:\n    ..."


def test_render_stubs_closed_empty_input_takes_nothing() -> None:
    ping = make_tool("ping", {"type": "object", "properties": {}, "additionalProperties": False})
    assert render_stubs([ping]) == "def ping() -> str:\n    ..."


def test_render_stubs_optional_parameters_default_to_none_in_schema_order() -> None:
    ls = make_tool(
        "ls",
        {
            "type": "object",
            "properties": {
                "dir": {"type": "string"},
                "limit": {"type": ["integer", "null"]},
                "extra": {},
            },
        },
    )
    assert render_stubs([ls]) == (
        "def ls(*, dir: str | None = None, limit: int | None = None, extra: Any = None) -> str:\n"
        "    ..."
    )


def test_render_stubs_described_parameters_put_the_signature_on_several_lines() -> None:
    read = make_tool(
        "read",
        {
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "Path to read"},
                "offset": {"type": "integer", "minimum": 1, "default": 1},
            },
        },
        description="Read a file.",
        output_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}, "lines": {"type": "integer"}},
            "required": ["text", "lines"],
        },
    )
    assert render_stubs([read]) == (
        "class ReadResult(TypedDict):\n"
        "    lines: int\n"
        "    text: str\n"
        "\n"
        "def read(\n"
        "    *,\n"
        "    # Path to read\n"
        "    path: str,\n"
        "    # @minimum 1 @default 1\n"
        "    offset: int = 1,\n"
        ") -> ReadResult:\n"
        '    """Read a file."""'
    )
    run_text(render_stubs([read]))


def test_render_stubs_async_style() -> None:
    ls = make_tool("ls", {"type": "object", "properties": {"dir": {"type": "string"}}})
    assert render_stubs([ls], style="async") == (
        "async def ls(*, dir: str | None = None) -> str:\n    ..."
    )
    ast.parse(render_stubs([ls], style="async"))


def test_render_stubs_rejects_an_unknown_style() -> None:
    with pytest.raises(ValueError, match="style must be"):
        render_stubs([], style="threaded")  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["max-lines", "_hidden", "lambda", "2fa"])
def test_render_stubs_non_keyword_argument_names_take_one_positional_dict(key: str) -> None:
    t = make_tool(
        "t", {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    )
    stubs = render_stubs([t])
    assert stubs.endswith("def t(args: TArgs, /) -> str:\n    ...")
    namespace = run_text(stubs)
    assert namespace["TArgs"].__required_keys__ == frozenset({key})


def test_render_stubs_open_object_with_typed_extra_keys_takes_kwargs() -> None:
    t = make_tool(
        "env",
        {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": {"type": "string"},
        },
    )
    assert render_stubs([t]) == "def env(*, name: str, **kwargs: str) -> str:\n    ..."


def test_render_stubs_non_object_input_takes_one_positional_argument() -> None:
    t = make_tool("echo", {"anyOf": [{"type": "string"}, {"type": "object"}]})
    assert render_stubs([t]) == "def echo(args: str | dict[str, Any], /) -> str:\n    ..."


def test_render_stubs_escapes_docstring_terminators_and_keeps_the_text() -> None:
    description = 'Says """hi""" and C:\\new\\x01 then a tab\tand "quoted"'
    t = make_tool("say", description=description)
    stubs = render_stubs([t])
    assert '"""hi"""' not in stubs
    namespace = run_text(stubs)
    assert namespace["say"].__doc__ == description


def test_render_stubs_multiline_docstring_round_trips() -> None:
    description = 'First line.\n\n  Indented "detail".\nLast \\ line"'
    t = make_tool("doc", description=description)
    stubs = render_stubs([t])
    tree = ast.parse(stubs)
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    assert ast.get_docstring(func) == 'First line.\n\n  Indented "detail".\nLast \\ line"'


def test_render_stubs_tool_names_become_identifiers_and_collisions_keep_both() -> None:
    a = make_tool("my-tool", description="first")
    b = make_tool("my_tool", description="second")
    c = make_tool("import", description="keyword")
    stubs = render_stubs([a, b, c])
    assert 'def my_tool_2(**kwargs: Any) -> str:\n    """first"""' in stubs
    assert 'def my_tool(**kwargs: Any) -> str:\n    """second"""' in stubs
    assert "def import_(**kwargs: Any) -> str:" in stubs
    run_text(stubs)


def test_render_stubs_classes_of_different_tools_do_not_collide() -> None:
    a = make_tool(
        "a", output_schema={"$defs": {"Item": {"type": "object", "properties": {"x": {}}}},
                            "$ref": "#/$defs/Item"},
    )  # fmt: skip
    b = make_tool(
        "b", output_schema={"$defs": {"Item": {"type": "object", "properties": {"y": {}}}},
                            "$ref": "#/$defs/Item"},
    )  # fmt: skip
    c = make_tool("Item2")
    stubs = render_stubs([a, b, c])
    assert "def a(**kwargs: Any) -> Item:" in stubs
    assert "def b(**kwargs: Any) -> Item3:" in stubs
    namespace = run_text(stubs)
    assert typing.get_type_hints(namespace["b"])["return"] is namespace["Item3"]


class Sum(TypedDict):
    """The return type of the ``add`` tool below."""

    total: int
    parts: list[int]


def test_render_stubs_from_decorated_python_functions() -> None:
    @tool
    def add(a: int, b: int = 2) -> Sum:
        """Add two numbers."""
        return {"total": a + b, "parts": [a, b]}

    @tool
    def stamp() -> str:
        """The time."""
        return "now"

    stubs = render_stubs([add, stamp])
    assert stubs == (
        "class AddResult(TypedDict):\n"
        "    parts: list[int]\n"
        "    total: int\n"
        "\n"
        "def add(\n"
        "    *,\n"
        "    a: int,\n"
        "    # @default 2\n"
        "    b: int = 2,\n"
        ") -> AddResult:\n"
        '    """Add two numbers."""\n'
        "\n"
        "def stamp() -> str:\n"
        '    """The time."""'
    )
    run_text(stubs)


def test_render_stubs_pydantic_parameters_with_nested_models() -> None:
    from pydantic import BaseModel, Field

    class Range(BaseModel):
        start: int = Field(ge=0, description="First line")
        end: int | None = None

    class Args(BaseModel):
        path: str = Field(description="Where")
        ranges: list[Range] = []

    t = AgentTool(name="cut", parameters=Args, execute=_execute)
    stubs = render_stubs([t])
    assert "class Range(TypedDict):" in stubs
    assert "    # First line\n    # @minimum 0\n    start: int" in stubs
    assert "    ranges: list[Range] | None = None," in stubs
    namespace = run_text(stubs)
    hints = typing.get_type_hints(namespace["cut"])
    assert hints["path"] is str


def test_render_stubs_huge_input_falls_back_to_any_keywords() -> None:
    t = make_tool("big", _wide_schema(600))
    assert render_stubs([t]) == "def big(**kwargs: Any) -> str:\n    ..."
    small = render_stubs([make_tool("big", _wide_schema(20))], max_chars=1000)
    assert "@minimum" not in small
    assert "field_000: int | None = None" in small


def test_render_stubs_huge_output_falls_back_to_any() -> None:
    t = make_tool("big", output_schema=_wide_schema(600))
    assert render_stubs([t]) == "def big(**kwargs: Any) -> Any:\n    ..."


def test_render_tool_sample_has_description_blank_line_and_fenced_declaration() -> None:
    t = make_tool(
        "grep",
        {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
        description="Search files.",
    )
    assert render_tool_sample(t) == (
        "Search files.\n\ncodemode tool declaration:\n```python\n"
        'def grep(*, pattern: str) -> str:\n    """Search files."""\n```'
    )
    assert render_tool_sample(make_tool("x")).startswith("codemode tool declaration:\n")


# ----------------------------------------------------------------------------- property


_leaf = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": "number", "default": 1.5},
        {"type": "boolean"},
        {"type": "null"},
        {"const": "x\"'\\"},
        {"enum": ["a", 1, None, 2.5, [1]]},
        {"$ref": "#/$defs/Leaf"},
        {"$ref": "#"},
        {"$ref": "#/$defs/missing"},
        {},
        True,
        False,
    ]
)
_keys = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=6
) | st.sampled_from(["class", "_x", "__y", "a-b", "ok", "None", "Any"])
_descriptions = st.none() | st.text(max_size=30)


def _with_description(schema: Any, description: str | None) -> Any:
    if description is None or not isinstance(schema, dict):
        return schema
    return {**schema, "description": description}


_schemas = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.builds(lambda s: {"type": "array", "items": s}, inner),
        st.builds(lambda xs: {"prefixItems": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, max_size=3)),
        st.builds(lambda xs: {"allOf": xs}, st.lists(inner, max_size=3)),
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": [k for k in props if req],
                **({} if extra is None else {"additionalProperties": extra}),
            },
            st.dictionaries(_keys, st.builds(_with_description, inner, _descriptions), max_size=4),
            st.booleans(),
            st.none() | st.booleans() | inner,
        ),
    ),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(schema=_schemas)
def test_schema_to_type_always_renders_valid_python(schema: Any) -> None:
    root = {"$defs": {"Leaf": {"type": "object", "properties": {"v": {"type": "string"}}}}}
    if isinstance(schema, dict):
        root.update(schema)
        schema = root
    text = schema_to_type(schema)
    type_value(text)


@settings(max_examples=60, deadline=None)
@given(params=_schemas, output=_schemas, description=st.text(max_size=40))
def test_render_stubs_always_renders_valid_python(
    params: Any, output: Any, description: str
) -> None:
    t = make_tool("t-1", params, output_schema=output, description=description)
    stubs = render_stubs([t, make_tool("other", params)], style="async")
    namespace = run_text(stubs)
    assert callable(namespace["t_1"])


def test_schema_to_type_all_of_with_a_single_ref_keeps_the_definition_name() -> None:
    schema = {
        "type": "object",
        "properties": {"owner": {"allOf": [{"$ref": "#/$defs/User"}], "description": "Who"}},
        "$defs": {"User": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    text = schema_to_type(schema)
    assert "class User(TypedDict):" in text
    assert "    # Who\n    owner: NotRequired[User]" in text


def test_schema_to_type_all_of_merges_referenced_objects() -> None:
    schema = {
        "allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"extra": {"type": "integer"}}}],
        "$defs": {
            "Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
        },
    }
    text = schema_to_type(schema, name="Thing")
    assert text == "class Thing(TypedDict):\n    extra: NotRequired[int]\n    id: str\n\nThing"


_json_keys = st.sampled_from(
    ["type", "properties", "required", "items", "prefixItems", "anyOf", "oneOf", "allOf",
     "enum", "const", "$ref", "additionalProperties", "description", "default", "minimum",
     "exclusiveMinimum", "pattern", "$defs"]
) | st.text(max_size=3)  # fmt: skip
_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(["object", "array", "string", "#", "#/$defs/a", "#/properties/x"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_json_keys, inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(params=_json_values, output=_json_values)
def test_render_stubs_malformed_schemas_never_raise(params: Any, output: Any) -> None:
    text = schema_to_type(params)
    type_value(text)
    t = make_tool(
        "t",
        params if isinstance(params, dict) else {"x": params},
        output_schema=output if isinstance(output, dict) else None,
    )
    run_text(render_stubs([t]))


def test_render_stubs_keep_parameter_order_and_literal_defaults() -> None:
    @tool
    def pick(zone: str, b: int = 1, a: bool = False, note: str | None = None) -> str:
        """Pick."""
        return zone

    stubs = render_stubs([pick])
    assert "zone: str,\n    # @default 1\n    b: int = 1,\n" in stubs
    assert "    a: bool = False,\n    note: str | None = None,\n" in stubs
    run_text(stubs)
