"""Tool names become Python identifiers a script can call, distinct and deterministic."""

from __future__ import annotations

import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox import Sandbox
from scriptgate.sandbox.model.stubs import render_stubs
from scriptgate.sandbox.naming import assign_identifiers, bind_identifiers, to_identifier


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("my-tool", "my_tool", id="dash"),
        pytest.param("1abc", "tool_1abc", id="leading-digit"),
        pytest.param("1st-tool", "tool_1st_tool", id="leading-digit-dash"),
        pytest.param("_private", "tool__private", id="leading-underscore"),
        pytest.param("-x", "tool__x", id="leading-dash"),
        pytest.param("", "tool_", id="empty"),
        pytest.param("read", "read", id="plain"),
        pytest.param("ns.tool/x", "ns_tool_x", id="dots-and-slashes"),
        pytest.param("café", "caf_", id="non-ascii"),
        pytest.param("import", "import_", id="keyword"),
        pytest.param("match", "match_", id="soft-keyword"),
        pytest.param("print", "print_", id="builtin"),
        pytest.param("tools", "tools_", id="tools-namespace"),
        pytest.param("gather", "gather_", id="gather"),
    ],
)
def test_naming_to_identifier(name: str, expected: str) -> None:
    ident = to_identifier(name)
    assert ident == expected
    assert ident.isidentifier()
    assert not ident.startswith("_")


def test_naming_exact_name_keeps_identifier_on_collision() -> None:
    assert assign_identifiers(["a-b", "a_b"]) == ["a_b_2", "a_b"]
    assert assign_identifiers(["a_b", "a-b"]) == ["a_b", "a_b_2"]


def test_naming_suffix_never_takes_another_tools_identifier() -> None:
    idents = assign_identifiers(["a-b", "a.b", "a_b", "a_b_2"])
    assert idents == ["a_b_3", "a_b_4", "a_b", "a_b_2"]
    assert len(set(idents)) == 4


def test_naming_assignment_does_not_depend_on_order() -> None:
    names = ["x-y", "x.y", "x/y", "x_y", "print", "print_"]
    forward = dict(zip(names, assign_identifiers(names), strict=True))
    backward = dict(zip(names[::-1], assign_identifiers(names[::-1]), strict=True))
    assert forward == backward
    assert len(set(forward.values())) == len(names)


def test_naming_bind_keeps_every_tool() -> None:
    bound = bind_identifiers([("my-tool", 1), ("my_tool", 2), ("other", 3)])
    assert bound == {"my_tool_2": 1, "my_tool": 2, "other": 3}


def _echo(name: str) -> AgentTool:
    async def execute(
        call_id: str, params: object, signal: object, on_update: object
    ) -> AgentToolResult:
        return AgentToolResult(content=(TextContent(name),))

    return AgentTool(
        name=name,
        label=name,
        description=f"tool {name}",
        parameters={"type": "object", "properties": {}},
        execute=execute,  # type: ignore[arg-type]
    )


@pytest.mark.anyio
async def test_naming_stubs_list_exactly_what_scripts_can_call() -> None:
    names = ["a-b", "a_b", "1st-tool", "print", "tools", "gather"]
    tools = [_echo(n) for n in names]
    stubs = render_stubs(tools)
    idents = assign_identifiers(names)
    for ident in idents:
        assert f"def {ident}(" in stubs
    script = "\n".join(f"print({ident}())" for ident in idents)
    result = await Sandbox(tools).run(script)
    assert result.error is None, result.error
    assert result.output.split() == names
