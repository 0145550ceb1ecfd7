"""The file tools under a policy: every spelling of a path is judged as the file it opens,
and walks skip what the policy denies (issue 19, the policy half)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from scriptgate import Sandbox
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.policy import Policy
from scriptgate.runtime.types import ToolCall
from scriptgate.tools.files import file_tools

EXAMPLE_POLICY = Path(__file__).parents[3] / "examples" / "policy.toml"

PUBLIC_ONLY = """
default = "deny"
[[rules]]
tool = "*"
action = "allow"
[rules.arguments]
path = "public/**"
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A root named ``repo`` with .git, .venv, public/, secret/ and links between them."""
    root = tmp_path / "repo"
    for folder in (".git/hooks", ".venv", "public", "secret", "src"):
        (root / folder).mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (root / "secret" / "token.txt").write_text("s3cret\n", encoding="utf-8")
    (root / "public" / "notes.txt").write_text("hello\n", encoding="utf-8")
    (root / "src" / "a.py").write_text("x = 1  # hello\n", encoding="utf-8")
    os.symlink("../secret", root / "public" / "shared")
    os.symlink(".git", root / "vcs")
    return root


async def _call(tools: list[Any], policy: Policy, name: str, **args: Any) -> tuple[bool, str]:
    outcome = await run_tool_call(
        ToolCall("c1", name, args), tools=tools, before_tool_call=policy.before_tool_call
    )
    text = "".join(getattr(block, "text", "") for block in outcome.result.content)
    return outcome.blocked, text


@pytest.mark.anyio
async def test_files_policy_shipped_policy_denies_absolute_and_dotdot_spellings(
    repo: Path,
) -> None:
    tools = file_tools(repo)
    policy = Policy.from_toml(EXAMPLE_POLICY)
    policy.bind(tools)
    spellings = [
        ".git/config",
        f"{repo}/.git/config",
        f"../{repo.name}/.venv/pyvenv.cfg",
        "src/../.venv/pyvenv.cfg",
        "./.git//config",
        "vcs/config",  # a link already inside the root, into .git
    ]
    for spelling in spellings:
        blocked, text = await _call(tools, policy, "read", path=spelling)
        assert blocked, (spelling, text)
        assert "the .git and .venv folders are off limits" in text
    blocked, text = await _call(tools, policy, "read", path=f"{repo}/src/a.py")
    assert not blocked
    assert "x = 1" in text


@pytest.mark.anyio
async def test_files_policy_symlink_into_secret_is_judged_by_its_target(repo: Path) -> None:
    tools = file_tools(repo)
    policy = Policy.from_toml(PUBLIC_ONLY)
    blocked, _ = await _call(tools, policy, "read", path="public/notes.txt")
    assert not blocked
    blocked, text = await _call(tools, policy, "read", path="public/shared/token.txt")
    assert blocked, text
    blocked, text = await _call(tools, policy, "write", path="public/shared/token.txt", content="x")
    assert blocked, text
    blocked, text = await _call(
        tools,
        policy,
        "edit",
        path="public/shared/token.txt",
        edits=[{"oldText": "s3cret", "newText": "owned"}],
    )
    assert blocked, text
    assert (repo / "secret" / "token.txt").read_text(encoding="utf-8") == "s3cret\n"


@pytest.mark.anyio
@pytest.mark.parametrize("path", [None, "", "."])
async def test_files_policy_find_and_grep_without_path_skip_denied_subtrees(
    repo: Path, path: str | None
) -> None:
    tools = file_tools(repo)
    policy = Policy.from_toml(
        'default = "deny"\n'
        '[[rules]]\ntool = "*"\naction = "deny"\n[rules.arguments]\npath = ["secret/**", ".venv/**"]\n'
        '[[rules]]\ntool = ["find", "grep", "ls", "read"]\naction = "allow"\n'
    )
    extra = {} if path is None else {"path": path}
    outcome = await run_tool_call(
        ToolCall("c1", "find", {"pattern": "*", **extra}),
        tools=tools,
        before_tool_call=policy.before_tool_call,
    )
    files = outcome.result.structured_content["files"]
    assert "public/notes.txt" in files
    assert "src/a.py" in files
    assert not [f for f in files if f.startswith(("secret", ".venv"))]
    assert "public/shared" not in files  # a link into a denied subtree is not listed

    outcome = await run_tool_call(
        ToolCall("c2", "grep", {"pattern": "s3cret|home|hello", **extra}),
        tools=tools,
        before_tool_call=policy.before_tool_call,
    )
    hits = {m["path"] for m in outcome.result.structured_content["matches"]}
    assert hits == {"public/notes.txt", "src/a.py"}

    outcome = await run_tool_call(
        ToolCall("c3", "ls", dict(extra)), tools=tools, before_tool_call=policy.before_tool_call
    )
    names = {e["name"] for e in outcome.result.structured_content["entries"]}
    assert "secret" not in names
    assert ".venv" not in names
    assert {"public", "src", ".git"} <= names


@pytest.mark.anyio
async def test_files_policy_a_denied_start_of_a_walk_is_blocked(repo: Path) -> None:
    tools = file_tools(repo)
    policy = Policy.from_toml(EXAMPLE_POLICY)
    for spelling in (".git", f"{repo}/.git/hooks", "vcs", "src/../.venv"):
        blocked, text = await _call(tools, policy, "grep", pattern="core", path=spelling)
        assert blocked, (spelling, text)


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_files_policy_script_cannot_reach_git_by_any_spelling(
    repo: Path, isolation: str
) -> None:
    tools = file_tools(repo)
    policy = Policy.from_toml(EXAMPLE_POLICY)
    policy.bind(tools)
    code = f"""
out = {{}}
for p in [{str(repo / ".git" / "config")!r}, "../{repo.name}/.venv/pyvenv.cfg", "vcs/config"]:
    try:
        read(path=p)
        out[p] = "read"
    except ToolDenied:
        out[p] = "denied"
out["find"] = [f for f in find(pattern="*")["files"] if f.startswith((".git", ".venv", "vcs"))]
out["grep"] = [m["path"] for m in grep(pattern="core|home")["matches"]]
out
"""
    sandbox = Sandbox(tools, before_tool_call=policy.before_tool_call, isolation=isolation)
    try:
        result = await sandbox.run(code)
    finally:
        await sandbox.aclose()
    assert result.ok, result.error
    value = result.value
    assert [v for k, v in value.items() if k not in ("find", "grep")] == ["denied"] * 3
    assert value["find"] == []
    assert value["grep"] == []


@pytest.mark.anyio
async def test_files_policy_tools_declare_paths_and_annotations(repo: Path) -> None:
    tools = {t.name: t for t in file_tools(repo)}
    assert all(t.paths is not None and t.paths.names == ("path",) for t in tools.values())
    assert {n for n, t in tools.items() if t.paths and t.paths.walks} == {"ls", "find", "grep"}
    assert {n for n, t in tools.items() if t.annotations.get("readOnlyHint")} == {
        "read",
        "ls",
        "find",
        "grep",
    }
    policy = Policy.from_toml(
        'default = "allow"\n[[rules]]\ntool = "*"\naction = "deny"\n'
        "[rules.annotations]\ndestructiveHint = true\n"
    )
    policy.bind(tools.values())
    assert policy.decide("write", {"path": "a"}).action == "deny"
    assert policy.decide("read", {"path": "a"}).action == "allow"
