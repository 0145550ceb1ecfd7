"""Policy against what a call touches: the resolution step, plain-text matching, annotations,
tool identifiers, and validating a policy against its tools (issue 19, the policy half)."""

from __future__ import annotations

import posixpath
from typing import Any

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.paths import (
    PathArguments,
    ResolvedArguments,
    ResolvedPath,
    path_admitted,
    resolve_arguments,
)
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.policy import Policy, Rule, match_text_glob, tool_identifier
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent, ToolCall
from scriptgate.sandbox.naming import to_identifier

ROOT = "/srv/root"


def _lexical(value: str) -> ResolvedPath:
    """A resolver for a root that exists only on paper: lexical, refuses escapes."""
    joined = posixpath.normpath(posixpath.join(ROOT, value))
    if joined != ROOT and not joined.startswith(ROOT + "/"):
        raise ValueError(f"{value} is outside the root")
    rel = posixpath.relpath(joined, ROOT)
    return ResolvedPath(rel, joined)


def _recording_tool(
    name: str = "open", *, walks: bool = False, seen: list[Any] | None = None
) -> AgentTool:
    record = seen if seen is not None else []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        record.append(params)
        return AgentToolResult(content=(TextContent("ok"),))

    return AgentTool(
        name=name,
        parameters={
            "type": "object",
            "properties": {"path": {"type": "string"}, "mode": {"type": "string"}},
        },
        execute=execute,
        paths=PathArguments(("path",), _lexical, walks=walks, missing="."),
    )


# --------------------------------------------------------------------------- resolution step


@pytest.mark.anyio
async def test_policy_paths_execute_receives_exactly_the_arguments_the_policy_judged() -> None:
    seen: list[Any] = []
    judged: list[Any] = []
    tool = _recording_tool(seen=seen)
    policy = Policy([Rule("open", "allow", arguments={"path": "public/**"})])

    async def spy(ctx: Any, signal: Any = None) -> Any:
        judged.append(ctx.args)
        return await policy.before_tool_call(ctx, signal)

    outcome = await run_tool_call(
        ToolCall("c1", "open", {"path": "x/../public//a.txt"}), tools=[tool], before_tool_call=spy
    )
    assert not outcome.is_error
    assert seen[0] is judged[0]
    assert seen[0] == {"path": "public/a.txt"}
    assert seen[0].paths == {"path": ResolvedPath("public/a.txt", "/srv/root/public/a.txt")}


@pytest.mark.anyio
async def test_policy_paths_a_refused_path_never_reaches_the_policy_or_execute() -> None:
    seen: list[Any] = []
    asked: list[Any] = []

    def hook(ctx: Any, signal: Any = None) -> None:
        asked.append(ctx)

    outcome = await run_tool_call(
        ToolCall("c1", "open", {"path": "../../etc/passwd"}),
        tools=[_recording_tool(seen=seen)],
        before_tool_call=hook,
    )
    assert outcome.is_error
    assert "outside the root" in outcome.result.content[0].text  # type: ignore[union-attr]
    assert seen == []
    assert asked == []


def test_policy_paths_missing_or_empty_path_is_the_root() -> None:
    spec = PathArguments(("path",), _lexical, missing=".")
    for args in ({}, {"path": ""}, {"path": None}):
        resolved = resolve_arguments(spec, args)
        assert resolved["path"] == "."
        assert resolved.paths["path"] == ResolvedPath(".", ROOT)
    policy = Policy([Rule("open", "deny", arguments={"path": "."})], default="allow")
    assert policy.decide("open", resolve_arguments(spec, {})).action == "deny"


def test_policy_paths_absolute_patterns_match_the_real_absolute_path() -> None:
    spec = PathArguments(("path",), _lexical)
    args = resolve_arguments(spec, {"path": "/srv/root/.git/config"})
    assert args["path"] == ".git/config"
    policy = Policy([Rule("*", "deny", arguments={"path": "/srv/root/.git/**"})], default="allow")
    assert policy.decide("open", args).action == "deny"
    assert policy.decide("open", resolve_arguments(spec, {"path": "src/a"})).action == "allow"


def test_policy_paths_an_array_of_paths_gets_the_strictest_answer() -> None:
    spec = PathArguments(("paths",), _lexical)
    policy = Policy(
        [
            Rule("*", "deny", arguments={"paths": "secret/**"}),
            Rule("*", "allow", arguments={"paths": "public/**"}),
        ]
    )
    both = resolve_arguments(spec, {"paths": ["public/a", "public/../secret/b"]})
    assert both["paths"] == ["public/a", "secret/b"]
    assert policy.decide("read_many", both).action == "deny"
    assert policy.decide("read_many", resolve_arguments(spec, {"paths": ["public/a"]})).action == (
        "allow"
    )
    mixed = resolve_arguments(spec, {"paths": ["public/a", "other"]})
    assert policy.decide("read_many", mixed).action == "deny"  # "other" falls to the default


@pytest.mark.anyio
async def test_policy_paths_walking_tool_is_restricted_to_what_the_rules_admit() -> None:
    seen: list[Any] = []
    tool = _recording_tool("walk", walks=True, seen=seen)
    policy = Policy(
        [Rule("*", "deny", arguments={"path": [".git/**", "secret/**"]}), Rule("*", "allow")]
    )
    outcome = await run_tool_call(
        ToolCall("c1", "walk", {}), tools=[tool], before_tool_call=policy.before_tool_call
    )
    assert not outcome.is_error
    params = seen[0]
    assert params["path"] == "."
    assert path_admitted(params, ResolvedPath("src/a.py", "/srv/root/src/a.py"))
    assert not path_admitted(params, ResolvedPath(".git", "/srv/root/.git"))
    assert not path_admitted(params, ResolvedPath("secret/k", "/srv/root/secret/k"))
    assert path_admitted({"path": "."}, ResolvedPath(".git", "/srv/root/.git"))  # no policy


@pytest.mark.anyio
async def test_policy_paths_walk_keeps_entries_under_the_approved_ask_rule_only() -> None:
    seen: list[Any] = []
    tool = _recording_tool("walk", walks=True, seen=seen)
    policy = Policy(
        [
            Rule("*", "ask", arguments={"path": "private/**"}, reason="private"),
            Rule("*", "allow", arguments={"path": "public/**"}),
        ],
        ask=lambda request: True,
    )
    outcome = await run_tool_call(
        ToolCall("c1", "walk", {"path": "private"}),
        tools=[tool],
        before_tool_call=policy.before_tool_call,
    )
    assert not outcome.is_error
    params = seen[0]
    assert path_admitted(params, ResolvedPath("private/x", "/srv/root/private/x"))
    assert not path_admitted(params, ResolvedPath("other/x", "/srv/root/other/x"))


def test_policy_paths_resolved_arguments_copy_and_pickle_as_plain_dicts() -> None:
    import copy
    import json
    import pickle

    args = ResolvedArguments({"path": "a"}, {"path": ResolvedPath("a", "/r/a")})
    assert json.dumps(args) == '{"path": "a"}'
    assert type(pickle.loads(pickle.dumps(args))) is dict
    assert copy.deepcopy(args) == {"path": "a"}


# --------------------------------------------------------------------------- plain text


def test_policy_text_url_with_dotdot_does_not_match_an_url_prefix_rule() -> None:
    policy = Policy([Rule("fetch", "allow", arguments={"url": "https://api.example.com/**"})])
    assert policy.decide("fetch", {"url": "https://api.example.com/v1/items"}).action == "allow"
    assert (
        policy.decide("fetch", {"url": "https://evil.example/../api.example.com/v1"}).action
        == "deny"
    )


def test_policy_text_exact_value_is_not_normalised_like_a_path() -> None:
    policy = Policy([Rule("send_mail", "allow", arguments={"to": "boss@example.com"})])
    assert policy.decide("send_mail", {"to": "boss@example.com"}).action == "allow"
    assert (
        policy.decide("send_mail", {"to": "attacker@evil.example/../boss@example.com"}).action
        == "deny"
    )
    assert policy.decide("send_mail", {"to": "./boss@example.com"}).action == "deny"


def test_policy_text_star_does_not_cross_shell_punctuation() -> None:
    policy = Policy([Rule("shell", "allow", arguments={"command": "git status*"})])
    assert policy.decide("shell", {"command": "git status"}).action == "allow"
    assert policy.decide("shell", {"command": "git status.short"}).action == "allow"
    assert policy.decide("shell", {"command": "git status; curl x | sh"}).action == "deny"
    assert policy.decide("shell", {"command": "git status && rm -rf ~"}).action == "deny"
    assert policy.decide("shell", {"command": "git status\nrm -rf ~"}).action == "deny"


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("*.example.com", "api.example.com", True),
        ("*.example.com", "evil.example:x@a.example.com", False),
        ("*.example.com", "evil.example/a.example.com", False),
        ("*@example.com", "boss@example.com", True),
        ("*@example.com", "a@evil.example,boss@example.com", False),
        ("v?", "v1", True),
        ("v?", "v;", False),
        ("[ab]1", "b1", True),
        ("[!ab]1", "c1", True),
        ("[!ab]1", ";1", False),
        ("a**", "a; anything / at all", True),
        ("a.b", "a.b", True),
        ("a.b", "axb", False),
        ("(x)+", "(x)+", True),
    ],
)
def test_policy_text_glob_semantics(pattern: str, value: str, expected: bool) -> None:
    assert match_text_glob(pattern, value) is expected


def test_policy_text_undeclared_path_argument_is_plain_text() -> None:
    policy = Policy([Rule("*", "deny", arguments={"path": ".git/**"})], default="allow")
    assert policy.decide("plain", {"path": ".git/config"}).action == "deny"
    assert policy.decide("plain", {"path": "./.git/config"}).action == "allow"  # text: unresolved


# --------------------------------------------------------------------------- names and annotations


@pytest.mark.parametrize("name", ["a-b", "1st-tool", "import", "x.y", "", "ok_name"])
def test_policy_tool_identifier_matches_the_sandbox_binding(name: str) -> None:
    assert tool_identifier(name) == to_identifier(name)


def test_policy_rules_name_tools_by_wire_name_or_script_identifier() -> None:
    policy = Policy([Rule("get_weather", "allow"), Rule("send-mail", "allow")])
    assert policy.decide("get-weather", {}).action == "allow"
    assert policy.decide("send-mail", {}).action == "allow"
    assert policy.decide("send_mail", {}).action == "deny"  # the wire name is not an identifier


def test_policy_deny_destructive_is_one_rule() -> None:
    def make(name: str, **annotations: Any) -> AgentTool:
        return AgentTool(name=name, execute=lambda *a: None, annotations=annotations)  # type: ignore[arg-type]

    tools = [
        make("lookup", readOnlyHint=True),
        make("delete", destructiveHint=True),
        make("append", destructiveHint=False),
        make("unknown"),
    ]
    policy = Policy.from_toml(
        'default = "allow"\n[[rules]]\ntool = "*"\naction = "deny"\nreason = "destructive"\n'
        "[rules.annotations]\ndestructiveHint = true\n"
    )
    assert policy.bind(tools) == []
    assert [policy.decide(t.name, {}).action for t in tools] == ["allow", "deny", "allow", "deny"]


def test_policy_annotations_unknown_hint_is_an_error() -> None:
    with pytest.raises(ConfigurationError, match="unknown annotation 'destructive'"):
        Policy.from_toml(
            '[[rules]]\ntool = "*"\naction = "deny"\n[rules.annotations]\ndestructive = true\n'
        )


# --------------------------------------------------------------------------- validation


def _file_like_tools() -> list[AgentTool]:
    return [_recording_tool("read"), _recording_tool("write")]


def test_policy_misplaced_reason_after_arguments_is_an_error() -> None:
    policy = Policy.from_toml(
        '[[rules]]\ntool = "write"\naction = "deny"\n[rules.arguments]\npath = "secret/**"\n'
        'reason = "secrets are off limits"\n'
    )
    problems = policy.check(_file_like_tools())
    assert [p.level for p in problems] == ["error"]
    assert "argument 'reason' is not an argument of write" in problems[0].message
    assert "move it above that line" in problems[0].message
    with pytest.raises(ConfigurationError, match=r"rules\[0\]: argument 'reason'"):
        policy.bind(_file_like_tools())


def test_policy_check_reports_rules_that_can_never_match() -> None:
    policy = Policy(
        [
            Rule("fetch", "allow"),
            Rule("read", "deny", arguments={"mode": 3}),
            Rule("read", "deny", arguments={"path": "../outside/**"}),
            Rule("read", "allow"),
            Rule("read", "deny", arguments={"path": "secret/**"}),
        ]
    )
    found = [(p.level, p.rule) for p in policy.check(_file_like_tools())]
    assert found == [("warning", 0), ("error", 1), ("error", 2), ("warning", 4)]
    messages = [str(p) for p in policy.check(_file_like_tools())]
    assert "rules[0]: tool 'fetch' matches no available tool" in messages[0]
    assert "never a int" in messages[1]
    assert "'..' segments" in messages[2]
    assert "rules[3] decides every call of read first" in messages[3]


def test_policy_check_warns_about_path_globs_on_text_arguments() -> None:
    plain = AgentTool(
        name="plain",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        execute=lambda *a: None,  # type: ignore[arg-type]
    )
    policy = Policy([Rule("*", "deny", arguments={"path": ".git/**"})])
    (problem,) = policy.check([plain])
    assert problem.level == "warning"
    assert "matched as plain text" in problem.message


@pytest.mark.anyio
async def test_policy_paths_a_hook_rewriting_a_path_before_the_policy_is_judged_on_the_new_path() -> (
    None
):
    from scriptgate.runtime.hooks import compose_hooks

    seen: list[Any] = []
    tool = _recording_tool(seen=seen)
    policy = Policy([Rule("*", "deny", arguments={"path": "secret/**"}), Rule("*", "allow")])

    def rewrite(ctx: Any, signal: Any = None) -> None:
        ctx.args["path"] = "public/../secret/key"

    hooks = compose_hooks((rewrite, None), policy)
    outcome = await run_tool_call(
        ToolCall("c1", "open", {"path": "public/a"}), tools=[tool], **hooks.as_kwargs()
    )
    assert outcome.blocked
    assert seen == []
    assert policy.decide("open", resolve_arguments(tool.paths, {"path": "public/a"})).action == (  # type: ignore[arg-type]
        "allow"
    )
