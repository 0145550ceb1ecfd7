"""Transcript tool declarations (pi §6, checklist §8.3)."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.errors import ToolDefinitionError
from scriptgate.runtime.declarations import (
    TranscriptTools,
    declarations_equal,
    declare_tool_changes,
    get_current_tools,
    get_declared_tools,
    get_tool_state_changes,
    has_non_additive_tool_changes,
    has_tool_redefinitions,
    resolve_transcript_tools,
    to_tool_declaration,
)
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AgentToolResult,
    SystemMessage,
    ToolRemoval,
    UserMessage,
)
from scriptgate.runtime.wire import to_wire


def decl(name: str, description: str = "", **params: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": description or f"{name} tool",
        "parameters": {"type": "object", "properties": params},
    }


def system(*added: dict[str, Any], removed: tuple[str, ...] = ()) -> SystemMessage:
    return SystemMessage(
        content="",
        tools_added=list(added) or None,
        tools_removed=[ToolRemoval(n) for n in removed] or None,
        timestamp=0,
    )


def names(tools: Any) -> list[str]:
    return [t["name"] for t in tools]


def make_tool(name: str = "echo", description: str = "Echo", **kwargs: Any) -> AgentTool:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult.text("x")

    return AgentTool(
        name=name,
        description=description,
        parameters={"type": "object", "properties": {"value": {"type": "string"}}},
        execute=execute,
        label="Echo label",
        execution_mode="sequential",
        **kwargs,
    )


# ----------------------------------------------------------------------------- getCurrentTools


def test_declarations_current_tools_removal_then_addition_ordering() -> None:
    messages = [system(decl("a"), decl("b")), system(decl("c"), removed=("a",))]
    assert names(get_current_tools(messages)) == ["b", "c"]


def test_declarations_current_tools_same_message_remove_and_add_moves_to_end() -> None:
    messages = [system(decl("a"), decl("b")), system(decl("a", "new a"), removed=("a",))]
    current = get_current_tools(messages)
    assert names(current) == ["b", "a"]
    assert current[1]["description"] == "new a"


def test_declarations_current_tools_redeclaration_keeps_position() -> None:
    messages = [system(decl("a"), decl("b")), system(decl("a", "a prime"))]
    current = get_current_tools(messages)
    assert names(current) == ["a", "b"]
    assert current[0]["description"] == "a prime"


def test_declarations_current_tools_ignore_non_system_messages() -> None:
    fake_user = {"role": "user", "content": "hi", "toolsAdded": [decl("x")]}
    messages: list[Any] = [system(decl("a")), UserMessage("hi"), fake_user]
    assert names(get_current_tools(messages)) == ["a"]


def test_declarations_current_tools_read_wire_form_messages() -> None:
    messages = [to_wire(system(decl("a"), decl("b"))), to_wire(system(removed=("a",)))]
    assert names(get_current_tools(messages)) == ["b"]


# ----------------------------------------------------------------------------- toToolDeclaration


def test_declarations_to_tool_declaration_strips_executable_and_display_fields() -> None:
    tool = make_tool()
    declaration = to_tool_declaration(tool)
    assert declaration == {
        "name": "echo",
        "description": "Echo",
        "parameters": {"type": "object", "properties": {"value": {"type": "string"}}},
    }
    assert list(declaration) == ["name", "description", "parameters"]


def test_declarations_to_tool_declaration_deep_copies_parameters() -> None:
    tool = make_tool()
    declaration = to_tool_declaration(tool)
    declaration["parameters"]["properties"]["value"]["type"] = "number"
    assert tool.parameters_schema["properties"]["value"]["type"] == "string"


def test_declarations_to_tool_declaration_drops_non_string_keys() -> None:
    tool = decl("a")
    tool["parameters"] = {"type": "object", 1: "symbol-like", ("k",): "x"}
    assert to_tool_declaration(tool)["parameters"] == {"type": "object"}


def test_declarations_to_tool_declaration_keeps_constrained_sampling_false() -> None:
    tool = make_tool()
    tool.constrained_sampling = False  # type: ignore[attr-defined]
    declaration = to_tool_declaration(tool)
    assert declaration["constrainedSampling"] is False
    assert list(declaration)[-1] == "constrainedSampling"
    assert (
        to_tool_declaration({**decl("a"), "constrainedSampling": False})["constrainedSampling"]
        is False
    )


def test_declarations_to_tool_declaration_omits_unset_constrained_sampling() -> None:
    assert "constrainedSampling" not in to_tool_declaration(make_tool())
    assert "constrainedSampling" not in to_tool_declaration(
        {**decl("a"), "constrainedSampling": None}
    )


def test_declarations_to_tool_declaration_cyclic_schema_raises() -> None:
    schema: dict[str, Any] = {"type": "object"}
    schema["properties"] = {"self": schema}
    with pytest.raises(ToolDefinitionError, match="cyclic"):
        to_tool_declaration({"name": "c", "description": "", "parameters": schema})


def test_declarations_to_tool_declaration_shared_subschema_is_not_a_cycle() -> None:
    shared = {"type": "string"}
    schema = {"type": "object", "properties": {"a": shared, "b": shared}}
    out = to_tool_declaration({"name": "s", "description": "", "parameters": schema})
    assert out["parameters"]["properties"] == {"a": {"type": "string"}, "b": {"type": "string"}}


def test_declarations_to_tool_declaration_non_json_value_raises() -> None:
    with pytest.raises(ToolDefinitionError, match="not JSON: set"):
        to_tool_declaration({"name": "x", "description": "", "parameters": {"enum": {1, 2}}})


def test_declarations_to_tool_declaration_uses_pydantic_json_schema() -> None:
    from pydantic import BaseModel

    class Params(BaseModel):
        n: int

    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult.text("x")

    tool = AgentTool(name="p", parameters=Params, execute=execute)
    assert to_tool_declaration(tool)["parameters"]["properties"]["n"]["type"] == "integer"


def test_declarations_equal_is_key_order_sensitive() -> None:
    a = {"name": "t", "description": "d", "parameters": {"a": 1, "b": 2}}
    b = {"name": "t", "description": "d", "parameters": {"b": 2, "a": 1}}
    assert declarations_equal(a, dict(a)) is True
    assert declarations_equal(a, b) is False


def test_declarations_equal_compares_tools_and_declarations() -> None:
    tool = make_tool()
    assert declarations_equal(tool, to_tool_declaration(tool)) is True


# ----------------------------------------------------------------------------- getToolStateChanges


def test_declarations_state_changes_identical_is_no_change() -> None:
    changes = get_tool_state_changes([decl("a"), decl("b")], [decl("a"), decl("b")])
    assert changes.tools_added == ()
    assert changes.tools_removed == ()
    assert not changes


def test_declarations_state_changes_changed_definition_is_removal_plus_addition() -> None:
    changes = get_tool_state_changes([decl("a")], [decl("a", "different")])
    assert changes.tools_removed == (ToolRemoval("a"),)
    assert changes.tools_added == (decl("a", "different"),)


def test_declarations_state_changes_names_are_case_sensitive() -> None:
    changes = get_tool_state_changes([decl("read")], [decl("Read")])
    assert names(changes.tools_added) == ["Read"]
    assert changes.tools_removed == (ToolRemoval("read"),)


def test_declarations_state_changes_added_order_follows_current() -> None:
    changes = get_tool_state_changes([decl("m")], [decl("z"), decl("m"), decl("a")])
    assert names(changes.tools_added) == ["z", "a"]
    assert changes.tools_removed == ()


def test_declarations_state_changes_accept_executable_tools() -> None:
    tool = make_tool()
    changes = get_tool_state_changes([], [tool])
    assert changes.tools_added == (to_tool_declaration(tool),)


# ----------------------------------------------------------------------------- resolveTranscriptTools

A = decl("A")
B = decl("B")
C = decl("C")
D = decl("D")
A2 = decl("A", "A prime")

CASES: dict[str, list[Any]] = {
    "additive": [system(A), UserMessage("u", timestamp=0), system(B)],
    "removal": [system(A), UserMessage("u", timestamp=0), system(removed=("A",)), system(C)],
    "redeclare": [system(A), UserMessage("u", timestamp=0), system(A2), system(D)],
    "no-leading-system": [UserMessage("u", timestamp=0), system(B)],
    "empty": [],
}

MATRIX = [
    ("additive", "none", ["A", "B"], 2),
    ("additive", "additions", ["A"], 1),
    ("additive", "changes", [], 0),
    ("removal", "none", ["C"], 3),
    ("removal", "additions", [], 2),
    ("removal", "changes", [], 0),
    ("redeclare", "none", ["A", "D"], 3),
    ("redeclare", "additions", ["A"], 2),
    ("redeclare", "changes", [], 0),
    ("no-leading-system", "none", ["B"], 1),
    ("no-leading-system", "additions", [], 0),
    ("no-leading-system", "changes", [], 0),
    ("empty", "none", [], 0),
    ("empty", "additions", [], 0),
    ("empty", "changes", [], 0),
]


@pytest.mark.parametrize(("case", "support", "tools", "folded"), MATRIX)
def test_declarations_resolve_transcript_tools_matrix(
    case: str, support: Any, tools: list[str], folded: int
) -> None:
    resolved = resolve_transcript_tools(CASES[case], support)
    assert names(resolved.request_tools) == tools
    assert resolved.folded_system_messages == folded


def test_declarations_resolve_redeclare_uses_new_definition() -> None:
    resolved = resolve_transcript_tools(CASES["redeclare"], "additions")
    assert resolved.request_tools[0]["description"] == "A prime"


def test_declarations_resolve_additions_identical_redeclaration_after_removal_folds() -> None:
    messages = [system(A), system(B), system(removed=("A",)), system(A), system(C)]
    assert resolve_transcript_tools(messages, "additions") == TranscriptTools(tuple([B, A]), 4)


def test_declarations_resolve_rejects_unknown_support() -> None:
    with pytest.raises(ValueError, match="support must be"):
        resolve_transcript_tools([], "all")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- helpers


def test_declarations_non_additive_for_same_definition_redeclaration() -> None:
    assert has_non_additive_tool_changes([system(A), system(A)]) is True
    assert has_non_additive_tool_changes([system(A), system(B)]) is False


def test_declarations_non_additive_for_remove_then_readd() -> None:
    assert has_non_additive_tool_changes([system(A), system(removed=("A",))]) is True
    assert has_non_additive_tool_changes([system(A), system(A, removed=("A",))]) is True


def test_declarations_tool_redefinitions_only_for_different_definition() -> None:
    assert has_tool_redefinitions([system(A), system(A)]) is False
    assert has_tool_redefinitions([system(A), system(A2)]) is True


def test_declarations_declared_tools_latest_definition_first_declaration_order() -> None:
    messages = [system(A, B), system(removed=("A",)), system(C), system(A2)]
    declared = get_declared_tools(messages)
    assert names(declared) == ["A", "B", "C"]
    assert declared[0]["description"] == "A prime"


# ----------------------------------------------------------------------------- declare_tool_changes


def test_declarations_declare_inserts_system_message_before_first_non_system_pending() -> None:
    tool = make_tool()
    prompt = UserMessage("hi")
    pending = declare_tool_changes([], [prompt], [tool])
    assert len(pending) == 2
    declared = pending[0]
    assert isinstance(declared, SystemMessage)
    assert declared.content == ""
    assert declared.tools_added == (to_tool_declaration(tool),)
    assert declared.tools_removed is None
    assert pending[1] is prompt


def test_declarations_declare_nothing_when_transcript_already_declares_tools() -> None:
    tool = make_tool()
    committed = [system(to_tool_declaration(tool))]
    prompt = UserMessage("hi")
    assert declare_tool_changes(committed, [prompt], [tool]) == [prompt]


def test_declarations_declare_removal_when_tool_is_gone() -> None:
    committed = [system(A)]
    pending = declare_tool_changes(committed, [], [])
    assert len(pending) == 1
    message = pending[0]
    assert isinstance(message, SystemMessage)
    assert message.tools_added is None
    assert message.tools_removed == (ToolRemoval("A"),)


def test_declarations_declare_replaces_pending_system_intent_with_real_delta() -> None:
    tool = make_tool()
    committed = [system(A)]
    intent = SystemMessage(content="be brief", tools_added=[decl("bogus")], timestamp=5)
    prompt = UserMessage("hi")
    pending = declare_tool_changes(committed, [intent, prompt], [tool])
    assert pending[1] is prompt
    replaced = pending[0]
    assert isinstance(replaced, SystemMessage)
    assert replaced.content == "be brief"
    assert replaced.timestamp == 5
    assert replaced.tools_added == (to_tool_declaration(tool),)
    assert replaced.tools_removed == (ToolRemoval("A"),)


def test_declarations_declare_keeps_callers_system_message_when_nothing_changes() -> None:
    committed = [system(A)]
    intent = SystemMessage(content="note", timestamp=1)
    pending = declare_tool_changes(committed, [intent], [A])
    assert pending[0] is intent


def test_declarations_declare_does_not_mutate_inputs() -> None:
    pending_in = [UserMessage("hi")]
    declare_tool_changes([], pending_in, [make_tool()])
    assert len(pending_in) == 1
