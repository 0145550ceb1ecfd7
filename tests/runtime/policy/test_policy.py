"""Policy: rules, globs, TOML loading, ask/approval and the before_tool_call hook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.policy import (
    ApprovalRequest,
    Decision,
    Policy,
    PolicyVerdict,
    Rule,
    match_path_glob,
)
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AgentToolResult,
    BeforeToolCallContext,
    ToolCall,
)

EXAMPLE = """
default = "deny"          # allow | deny | ask, for calls no rule matches
[[rules]]
tool = "read"             # a tool name or a glob over names
action = "allow"
[rules.arguments]
path = "src/**"           # a glob (or exact value) per argument
[[rules]]
tool = "write"
action = "deny"
reason = "read-only run"  # shown to the model and in the audit log
"""


def _ctx(name: str, args: dict[str, Any], call_id: str = "c1") -> BeforeToolCallContext:
    return BeforeToolCallContext(None, ToolCall(call_id, name, dict(args)), args, None)


# --------------------------------------------------------------------------- globs


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),  # * stays within a segment
        ("src/**", "src", True),  # trailing /** includes the directory itself
        ("src/**", "src/a.py", True),
        ("src/**", "src/x/y/z.py", True),
        ("src/**", "srcx/a.py", False),
        ("**/*.py", "a.py", True),  # leading **/ spans zero segments
        ("**/*.py", "x/y/a.py", True),
        ("**/*.py", "x/y/a.txt", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/p/q/test_a.py", True),
        ("src/**/test_*.py", "src/p/q/a.py", False),
        ("**", "anything/at/all", True),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "c.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("README.md", "README.md", True),  # no glob characters: an exact value
        ("README.md", "README.mdx", False),
        ("src/**", "./src/a.py", True),  # values are normalised like paths
        ("src/**", "src//a.py", True),
        ("src/**", "src/../secret.txt", False),  # .. cannot climb out of the glob
        ("src/**", "../src/a.py", False),
        ("src/**", "/src/a.py", False),
        ("./src/**", "src/a.py", True),  # patterns are normalised too
        ("**/**", "a", True),
        ("file.(1)+", "file.(1)+", True),  # regex metacharacters are literal
    ],
)
def test_policy_path_glob_semantics(pattern: str, value: str, expected: bool) -> None:
    assert match_path_glob(pattern, value) is expected


# --------------------------------------------------------------------------- decide


def test_policy_first_match_wins_and_default_applies() -> None:
    policy = Policy(
        [
            Rule("write", "deny", reason="read-only run"),
            Rule("*", "allow"),
            Rule("write", "allow"),  # never reached: rule 0 matches first
        ],
        default="deny",
    )
    assert policy.decide("write", {"path": "a"}) == Decision("deny", "read-only run", 0)
    assert policy.decide("read", {}).action == "allow"
    assert policy.decide("read", {}).rule == 1
    assert Policy([], default="ask").decide("x", {}) == Decision(
        "ask", 'tool "x" needs approval', None
    )
    denied = Policy([]).decide("x", {})
    assert denied.action == "deny"
    assert denied.rule is None
    assert denied.reason == 'no rule allows tool "x" with these arguments'


def test_policy_tool_globs_and_lists_match_names() -> None:
    policy = Policy([Rule("mcp_*", "allow"), Rule(("ls", "find"), "ask")], default="deny")
    assert policy.decide("mcp_search", {}).action == "allow"
    assert policy.decide("find", {}).action == "ask"
    assert policy.decide("MCP_search", {}).action == "deny"  # case-sensitive


def test_policy_argument_patterns_all_must_match() -> None:
    policy = Policy(
        [Rule("grep", "allow", arguments={"path": "src/**", "pattern": "TODO"})], default="deny"
    )
    assert policy.decide("grep", {"path": "src/a.py", "pattern": "TODO"}).action == "allow"
    assert policy.decide("grep", {"path": "src/a.py", "pattern": "FIXME"}).action == "deny"
    assert policy.decide("grep", {"path": "docs/a.md", "pattern": "TODO"}).action == "deny"


def test_policy_missing_argument_does_not_match() -> None:
    policy = Policy([Rule("ls", "allow", arguments={"path": "**"})], default="deny")
    assert policy.decide("ls", {"path": "x"}).action == "allow"
    assert policy.decide("ls", {}).action == "deny"


def test_policy_non_string_arguments_match_exact_values() -> None:
    policy = Policy(
        [
            Rule("read", "allow", arguments={"limit": 10}),
            Rule("read", "ask", arguments={"raw": True}),
            Rule("read", "deny", arguments={"path": "*"}),
        ],
        default="allow",
    )
    assert policy.decide("read", {"limit": 10}).action == "allow"
    assert policy.decide("read", {"limit": 10.0}).action == "allow"
    assert policy.decide("read", {"limit": 11}).action == "allow"  # falls to default
    assert policy.decide("read", {"limit": 11}).rule is None
    assert policy.decide("read", {"limit": "10"}).rule is None  # a string is not the number 10
    assert policy.decide("read", {"raw": True}).rule == 1
    assert policy.decide("read", {"raw": 1}).rule is None  # booleans only equal booleans
    assert policy.decide("read", {"path": 5}).rule is None  # a glob needs a string argument


def test_policy_pattern_lists_match_any() -> None:
    policy = Policy(
        [Rule("*", "deny", arguments={"path": [".git/**", ".venv/**"]})], default="allow"
    )
    assert policy.decide("read", {"path": ".git/config"}).action == "deny"
    assert policy.decide("read", {"path": ".venv/bin/python"}).action == "deny"
    assert policy.decide("read", {"path": "src/a.py"}).action == "allow"


def test_policy_decide_accepts_pydantic_models_and_ignores_non_mappings() -> None:
    from pydantic import BaseModel

    class Args(BaseModel):
        path: str

    policy = Policy([Rule("read", "allow", arguments={"path": "src/**"})])
    assert policy.decide("read", Args(path="src/a")).action == "allow"
    assert policy.decide("read", ["src/a"]).action == "deny"


def test_policy_preview_handles_unknown_arguments() -> None:
    policy = Policy(
        [
            Rule("write", "deny", reason="read-only"),
            Rule("read", "deny", arguments={"path": ".git/**"}),
            Rule("read", "allow"),
        ]
    )
    assert policy.preview("write", {}, unknown=["path"]) == Decision("deny", "read-only", 0)
    assert policy.preview("read", {}, unknown=["path"]) is None  # depends on path
    assert policy.preview("read", {"path": "src/a"}).action == "allow"  # type: ignore[union-attr]
    assert policy.preview("read", {}).action == "allow"  # type: ignore[union-attr]
    assert policy.preview("other", {}, unknown=["x"]) == Decision(
        "deny", 'no rule allows tool "other" with these arguments', None
    )


def test_policy_decision_to_json() -> None:
    assert Decision("deny", "no", 3, asked=True).to_json() == {
        "action": "deny",
        "reason": "no",
        "rule": 3,
        "asked": True,
    }


def test_policy_rule_rejects_bad_action() -> None:
    with pytest.raises(ConfigurationError, match="allow, deny, ask"):
        Rule("x", "permit")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="default"):
        Policy([], default="maybe")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- TOML


def test_policy_from_toml_text_matches_the_documented_shape() -> None:
    policy = Policy.from_toml(EXAMPLE)
    assert policy.default == "deny"
    assert len(policy.rules) == 2
    assert policy.decide("read", {"path": "src/x/a.py"}).action == "allow"
    assert policy.decide("read", {"path": "docs/a.md"}).action == "deny"
    assert policy.decide("write", {"path": "src/a.py"}) == Decision("deny", "read-only run", 1)


def test_policy_from_toml_reads_files(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(EXAMPLE, encoding="utf-8")
    assert len(Policy.from_toml(path).rules) == 2
    assert len(Policy.from_toml(str(path)).rules) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("default = ", "invalid TOML"),
        ('default = "maybe"', "default must be one of allow, deny, ask"),
        ('defualt = "deny"', "unknown top-level key 'defualt'"),
        ("rules = 3", "'rules' must be an array of tables"),
        ('[[rules]]\naction = "allow"', r"rules\[0\]: missing 'tool'"),
        ('[[rules]]\ntool = "read"', r"rules\[0\]: missing 'action'"),
        (
            '[[rules]]\ntool = "a"\naction = "allow"\n[[rules]]\ntool = "b"\naction = "permit"',
            r"rules\[1\]: 'action' must be one of allow, deny, ask \(got 'permit'\)",
        ),
        ('[[rules]]\ntool = 3\naction = "allow"', r"rules\[0\]: 'tool' must be"),
        ('[[rules]]\ntool = "a"\naction = "deny"\nreason = 4', "'reason' must be a string"),
        ('[[rules]]\ntool = "a"\naction = "deny"\nargument = {}', "unknown key 'argument'"),
        ('[[rules]]\ntool = "a"\naction = "deny"\narguments = 3', "'arguments' must be a table"),
        (
            '[[rules]]\ntool = "a"\naction = "deny"\n[rules.arguments]\npath = {x = 1}',
            r"rules\[0\]: arguments.path must be a string glob",
        ),
        (
            '[[rules]]\ntool = "a"\naction = "deny"\n[rules.arguments]\npath = []',
            "must not be an empty list",
        ),
    ],
)
def test_policy_from_toml_reports_bad_input(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as info:
        Policy.from_toml(text)
    assert str(info.value).startswith("<policy text>: ")


def test_policy_from_toml_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[[rules]]\ntool = "read"\naction = "nope"\n', encoding="utf-8")
    with pytest.raises(ConfigurationError) as info:
        Policy.from_toml(path)
    assert str(info.value) == (
        f"{path}: rules[0]: 'action' must be one of allow, deny, ask (got 'nope')"
    )
    with pytest.raises(ConfigurationError, match="policy file not found"):
        Policy.from_toml(tmp_path / "missing.toml")
    with pytest.raises(ConfigurationError, match="policy file not found"):
        Policy.from_toml("missing.toml")


# --------------------------------------------------------------------------- the hook


@pytest.mark.anyio
async def test_policy_hook_blocks_denials_with_a_readable_reason() -> None:
    policy = Policy.from_toml(EXAMPLE)
    denied = await policy.before_tool_call(_ctx("write", {"path": "a"}), None)
    assert denied.block is True
    assert denied.reason == "Denied by policy: read-only run"
    assert denied.decision == Decision("deny", "read-only run", 1)
    allowed = await policy.before_tool_call(_ctx("read", {"path": "src/a"}), None)
    assert isinstance(allowed, PolicyVerdict)
    assert allowed.block is False
    assert allowed.decision is not None
    assert allowed.decision.action == "allow"


@pytest.mark.anyio
async def test_policy_ask_without_approver_denies() -> None:
    policy = Policy([Rule("write", "ask")])
    verdict = await policy.before_tool_call(_ctx("write", {}), None)
    assert verdict.block is True
    assert verdict.reason is not None
    assert "approval was unavailable" in verdict.reason
    assert verdict.decision is not None
    assert verdict.decision.asked is True


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [False, True])
async def test_policy_ask_calls_the_approver(use_async: bool) -> None:
    seen: list[ApprovalRequest] = []

    def approve_sync(request: ApprovalRequest) -> bool:
        seen.append(request)
        return request.arguments.get("path") == "ok.txt"

    async def approve_async(request: ApprovalRequest) -> bool:
        return approve_sync(request)

    policy = Policy(
        [Rule("write", "ask", reason="writes need a human")],
        ask=approve_async if use_async else approve_sync,
    )
    yes = await policy.before_tool_call(_ctx("write", {"path": "ok.txt"}, "c7"), None)
    no = await policy.before_tool_call(_ctx("write", {"path": "no.txt"}), None)
    assert yes.block is False
    assert yes.decision == Decision("allow", "writes need a human; approved", 0, asked=True)
    assert no.block is True
    assert no.reason == "Denied by policy: writes need a human; not approved"
    assert seen[0].tool_name == "write"
    assert seen[0].tool_call_id == "c7"
    assert seen[0].decision.action == "ask"


@pytest.mark.anyio
async def test_policy_ask_approver_failure_denies() -> None:
    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("tty closed")

    policy = Policy([], default="ask", ask=broken)
    verdict = await policy.before_tool_call(_ctx("x", {}), None)
    assert verdict.block is True
    assert verdict.reason is not None
    assert "approval failed: RuntimeError: tty closed" in verdict.reason


@pytest.mark.anyio
async def test_policy_hook_gates_run_tool_call() -> None:
    from scriptgate.runtime.pipeline import run_tool_call

    ran: list[str] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append(params["path"])
        return AgentToolResult.text("done")

    tool = AgentTool(
        name="write",
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        execute=execute,
    )
    policy = Policy([Rule("write", "allow", arguments={"path": "out/**"})], default="deny")
    ok = await run_tool_call(
        ToolCall("1", "write", {"path": "out/a"}),
        tools=[tool],
        before_tool_call=policy.before_tool_call,
    )
    denied = await run_tool_call(
        ToolCall("2", "write", {"path": "etc/passwd"}),
        tools=[tool],
        before_tool_call=policy.before_tool_call,
    )
    assert ok.is_error is False
    assert denied.is_error is True
    assert denied.blocked is True
    assert denied.result.text_content() == (
        'Denied by policy: no rule allows tool "write" with these arguments'
    )
    assert ran == ["out/a"]
