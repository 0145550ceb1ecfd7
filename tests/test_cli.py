"""The scriptgate command: run, check, stubs, exit codes and one-line errors."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scriptgate.cli import (
    EXIT_OK,
    EXIT_SCRIPT_FAILED,
    EXIT_USAGE,
    check_script,
    load_tool_spec,
    main,
)
from scriptgate.runtime.policy import Policy

# The MCP SDK binds ``errlog=sys.stderr`` as a default argument when
# ``mcp.client.stdio`` is first imported. Import it now, at collection, so that the
# default is not bound to a ``capsys`` buffer (which has no file descriptor) by the
# first --mcp test below, breaking later tests that rely on the default.
with contextlib.suppress(ImportError):
    import mcp.client.stdio  # noqa: F401

TOOLS_MODULE = '''
from scriptgate.runtime.tool import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case some text."""
    return text.upper()


TOOLS = [add, shout]
NOT_A_TOOL = 42
'''

POLICY = """
default = "allow"
[[rules]]
tool = "shout"
action = "deny"
reason = "too loud"
[rules.arguments]
text = "*!"
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with a tools module, a policy and a data file."""
    (tmp_path / "mytools.py").write_text(TOOLS_MODULE, encoding="utf-8")
    (tmp_path / "policy.toml").write_text(POLICY, encoding="utf-8")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "hello.txt").write_text("hello\nworld\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _script(directory: Path, text: str, name: str = "script.py") -> str:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("scriptgate: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# --------------------------------------------------------------------------- usage


def test_cli_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == EXIT_OK
    out = capsys.readouterr().out
    for command in ("run", "check", "stubs"):
        assert command in out
    assert "exit codes:" in out
    for code in ("0 ", "1 ", "2 ", "3 "):
        assert f"  {code}" in out
    assert main(["run", "--help"]) == EXIT_OK
    out = capsys.readouterr().out
    for option in ("--root", "--tools", "--mcp", "--policy", "--audit", "--timeout", "--json"):
        assert option in out
    assert "in_process" in out


def test_cli_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_USAGE
    assert "scriptgate: error:" in capsys.readouterr().err
    assert main(["run"]) == EXIT_USAGE
    assert main(["frobnicate"]) == EXIT_USAGE
    assert main(["run", "x.py", "--isolation", "vm"]) == EXIT_USAGE
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "missing.py"], "missing.py: no such file"),
        (["run", "data"], "data: is a directory"),
        (["check", "missing.py"], "missing.py: no such file"),
        (["run", "{script}", "--policy", "nope.toml"], "nope.toml: policy file not found"),
        (["run", "{script}", "--policy", "{bad_policy}"], "invalid TOML"),
        (["run", "{script}", "--policy", "{bad_rule}"], "rules[0]: 'action' must be one of"),
        (["run", "{script}", "--tools", "no_such_module:x"], "cannot import module"),
        (["run", "{script}", "--tools", "mytools:missing"], "has no attribute 'missing'"),
        (["run", "{script}", "--tools", "mytools:NOT_A_TOOL"], "int is not an AgentTool"),
        (["run", "{script}", "--tools", "nofile.py:x"], "no such file: nofile.py"),
        (["run", "{script}", "--tools", "{broken}:x"], "importing"),
        (["run", "{script}", "--root", "nowhere"], "--root: not a directory: nowhere"),
        (["run", "{script}", "--tools", "mytools:add", "--tools", "mytools:add"], "two tools"),
        (["run", "{script}", "--mcp", "scriptgate-no-such-command-xyz"], "MCP server"),
        (["run", "{script}", "--mcp", "'unbalanced"], "--mcp"),
        (["run", "{script}", "--timeout", "0"], "--timeout must be positive"),
        (["stubs", "--tools", "cli_empty_module"], "the module defines no AgentTool"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(
    workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    values = {
        "script": _script(workdir, "1 + 1\n"),
        "bad_policy": _script(workdir, "default = \n", "bad.toml"),
        "bad_rule": _script(workdir, '[[rules]]\ntool = "x"\naction = "maybe"\n', "rule.toml"),
        "broken": _script(workdir, "raise RuntimeError('boom')\n", "broken.py"),
    }
    argv = [arg.format(**values) for arg in argv]
    (workdir / "cli_empty_module.py").write_text("X = 1\n", encoding="utf-8")
    assert main(argv) == EXIT_USAGE
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith("scriptgate: error: ")
    assert message in line


# --------------------------------------------------------------------------- tool specs


def test_cli_tool_specs_accept_tools_lists_functions_and_modules(workdir: Path) -> None:
    assert [t.name for t in load_tool_spec("mytools:add")] == ["add"]
    assert [t.name for t in load_tool_spec("mytools:TOOLS")] == ["add", "shout"]
    assert [t.name for t in load_tool_spec("mytools:shout")] == ["shout"]  # plain function
    assert [t.name for t in load_tool_spec("mytools")] == ["add"]  # module: its AgentTools
    assert [t.name for t in load_tool_spec(str(workdir / "mytools.py") + ":TOOLS")] == [
        "add",
        "shout",
    ]


# --------------------------------------------------------------------------- stubs


def test_cli_stubs_prints_the_model_facing_api(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stubs", "--no-files", "--tools", "mytools:TOOLS"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "def add(" in out
    assert "def shout(" in out
    assert "Add two numbers." in out
    assert main(["stubs", "--read-only", "--style", "async"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "async def read(" in out
    assert "def write(" not in out


# --------------------------------------------------------------------------- check


def test_cli_check_previews_calls_under_the_policy(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(
        workdir,
        "x = add(a=1, b=2)\n"
        "shout(text='hey!')\n"
        "shout(text='hey')\n"
        "tools.shout(text=str(x))\n"
        "read(path='data/hello.txt')\n",
    )
    argv = ["check", script, "--tools", "mytools:TOOLS", "--policy", "policy.toml"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert "compiles (sync script)" in out
    assert "tools called (3): add, read, shout" in out
    assert "line 1: add(a=1, b=2)  → allow (allowed by default)" in out
    assert "line 2: shout(text='hey!')  → deny (rules[0]: too loud)" in out
    assert "line 3: shout(text='hey')  → allow (allowed by default)" in out
    assert "line 4: shout(text=<expr>)  → depends on arguments" in out


def test_cli_check_reports_syntax_errors_with_line(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(workdir, "x = 1\nif x\n    pass\n")
    assert main(["check", script]) == EXIT_SCRIPT_FAILED
    out = capsys.readouterr().out
    assert f"{script}:2: syntax error" in out


def test_cli_check_reports_unknown_tools_and_dead_rules(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(
        workdir, "def helper():\n    return 1\nhelper()\nfetch(url='x')\ntools.nope()\n"
    )
    policy = _script(workdir, '[[rules]]\ntool = "fetch"\naction = "allow"\n', "p.toml")
    assert main(["check", script, "--policy", policy]) == EXIT_SCRIPT_FAILED
    out = capsys.readouterr().out
    assert f"{script}:4: unknown tool or name 'fetch'" in out
    assert f"{script}:5: unknown tool 'tools.nope'" in out
    assert "helper" not in out.split("calls:")[-1]
    assert "warning: policy rules[0]: tool 'fetch' matches no available tool" in out


def test_cli_check_reports_imports_scripts_cannot_make(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(workdir, "import os\nfrom json import dumps, evil\nimport math\n")
    assert main(["check", script]) == EXIT_SCRIPT_FAILED
    out = capsys.readouterr().out
    assert f"{script}:1: import of 'os' is not allowed" in out
    assert f"{script}:2: json.evil is not available in scripts" in out
    assert "math" not in out.split("tools called")[-1]


def test_cli_check_reports_rejected_constructs(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(workdir, "x = {}\ny = x.__subclasses__\n")
    assert main(["check", script]) == EXIT_SCRIPT_FAILED
    out = capsys.readouterr().out
    assert out.startswith(f"{script}:2: rejected: ")
    assert "__subclasses__" in out


def test_cli_check_warns_about_dynamic_tool_use() -> None:
    from scriptgate.tools.files import file_tools

    report = check_script(
        "f = read\ng = getattr(tools, 'ls')\nread(path='x')\n",
        file_tools(".", read_only=True),
        None,
    )
    assert report.problems == ()
    assert [w.split(":")[0] for w in report.warnings] == ["line 1", "line 2"]
    assert "'read' is used other than by a direct call" in report.warnings[0]
    assert "'tools' is used" in report.warnings[1]


def test_cli_check_script_reads_dict_arguments_and_await() -> None:
    from scriptgate.tools.files import file_tools

    tools = file_tools(".", read_only=True)
    policy = Policy.from_toml(
        '[[rules]]\ntool = "read"\naction = "allow"\n[rules.arguments]\npath = "src/**"\n'
    )
    report = check_script(
        "a = await read({'path': 'src/a.py'})\nb = await tools.read(path='etc/x')\nread(**opts)\n",
        tools,
        policy,
    )
    assert report.error is None
    assert report.is_async is True
    verdicts = [(c.line, c.decision.action if c.decision else None) for c in report.calls]
    assert verdicts == [(1, "allow"), (2, "deny"), (3, None)]


# --------------------------------------------------------------------------- run


SCRIPT = """
print("hello from the script")
total = add(a=2, b="3")          # coerced by the validator
try:
    shout(text="hey!")
    denied = False
except ToolDenied as exc:
    denied = str(exc)
{"total": total, "quiet": shout(text="ok"), "denied": denied}
"""


def test_cli_run_prints_output_value_and_trace(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(workdir, SCRIPT)
    argv = ["run", script, "--no-files", "--tools", "mytools:TOOLS", "--policy", "policy.toml"]
    assert main(argv) == EXIT_OK
    out = capsys.readouterr().out
    assert "hello from the script" in out
    assert '"total": 5' in out
    assert '"quiet": "OK"' in out
    assert '"denied": "Denied by policy: too loud"' in out
    assert "── calls (3)" in out
    assert "add(a=2, b='3')  ok" in out  # the trace shows the arguments as written
    assert "shout(text='hey!')  blocked" in out
    assert "── ok in" in out


def test_cli_run_json_and_audit_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(workdir, SCRIPT)
    argv = [
        "run",
        script,
        "--no-files",
        "--tools",
        "mytools:TOOLS",
        "--policy",
        "policy.toml",
        "--audit",
        "audit.jsonl",
        "--json",
    ]
    assert main(argv) == EXIT_OK
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is True
    assert result["value"] == {"total": 5, "quiet": "OK", "denied": "Denied by policy: too loud"}
    assert [c["status"] for c in result["calls"]] == ["ok", "blocked", "ok"]
    lines = [json.loads(x) for x in (workdir / "audit.jsonl").read_text().splitlines()]
    intents = [x for x in lines if x["event"] == "intent"]
    status = {x["token"]: x["status"] for x in lines if x["event"] == "outcome"}
    assert [(x["tool"], x["decision"], status[x["token"]]) for x in intents] == [
        ("add", "allow", "ok"),
        ("shout", "deny", "blocked"),
        ("shout", "allow", "ok"),
    ]
    assert intents[1]["reason"] == "too loud"
    assert len({x["run_id"] for x in lines}) == 1
    assert [x["tool_call_id"] for x in intents] == [c["id"] for c in result["calls"]]


def test_cli_run_failing_script_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(workdir, "x = 1\nraise ValueError('bad value')\n")
    assert main(["run", script]) == EXIT_SCRIPT_FAILED
    out = capsys.readouterr().out
    assert "── failed (runtime)" in out
    assert "ValueError: bad value (line 2)" in out
    script = _script(workdir, "x = (\n")
    assert main(["run", script, "--json"]) == EXIT_SCRIPT_FAILED
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "syntax"


def test_cli_run_reads_the_script_from_stdin(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("read(path='data/hello.txt')['lines']\n"))
    assert main(["run", "-", "--json", "--root", "."]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["value"] == 2


def test_cli_run_ask_without_a_terminal_denies(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    policy = _script(workdir, 'default = "ask"\n', "ask.toml")
    script = _script(
        workdir, "try:\n    ls()\n    v = None\nexcept ToolDenied as e:\n    v = str(e)\nv\n"
    )
    assert main(["run", script, "--policy", policy, "--json"]) == EXIT_OK
    value = json.loads(capsys.readouterr().out)["value"]
    assert value.startswith("Denied by policy:")
    assert "approval was unavailable" in value


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "approved"), [("y\n", True), ("n\n", False), ("", False)])
def test_cli_run_ask_prompts_on_a_terminal(
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    approved: bool,
) -> None:
    monkeypatch.setattr(sys, "stdin", _FakeTerminal(answer))
    policy = _script(
        workdir, '[[rules]]\ntool = "ls"\naction = "ask"\nreason = "listing"\n', "a.toml"
    )
    script = _script(
        workdir,
        "try:\n    ls(path='data')\n    v = 'listed'\nexcept ToolDenied as e:\n    v = str(e)\nv\n",
    )
    assert main(["run", script, "--policy", policy, "--json"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "scriptgate: ls needs approval (listing):\n    path = 'data'\n" in captured.err
    assert "scriptgate: allow ls? [y/N] " in captured.err
    value = json.loads(captured.out)["value"]
    if approved:
        assert value == "listed"
    else:
        assert value == "Denied by policy: listing; not approved"


MCP_SERVER = """
try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

server = Server("cli-test")


@server.tool()
def greet(name: str) -> str:
    \"\"\"Greet someone.\"\"\"
    return "hello " + name


server.run()
"""


def test_cli_run_with_mcp_tools_under_a_policy(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mcp")
    server = _script(workdir, MCP_SERVER, "server.py")
    policy = _script(
        workdir,
        'default = "deny"\n[[rules]]\ntool = "greet"\naction = "allow"\n'
        '[rules.arguments]\nname = ["ada", "alan"]\n',
        "mcp.toml",
    )
    script = _script(
        workdir,
        "first = greet(name='ada')\n"
        "try:\n    greet(name='eve')\n    second = 'greeted'\n"
        "except ToolDenied as e:\n    second = str(e)\n"
        "[first, second]\n",
    )
    server_cmd = f"{sys.executable} {server}"
    argv = ["run", script, "--no-files", "--mcp", server_cmd, "--policy", policy, "--json"]
    assert main(argv) == EXIT_OK
    result = json.loads(capsys.readouterr().out)
    first, second = result["value"]
    # The SDK wraps a plain return value as structured {"result": ...}.
    assert first in ("hello ada", {"result": "hello ada"})
    assert second == 'Denied by policy: no rule allows tool "greet" with these arguments'


def test_cli_run_in_a_worker_process(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(workdir, "print('in a worker')\nread(path='data/hello.txt')['lines']\n")
    log = workdir.parent / f"{workdir.name}-audit.jsonl"  # outside the root
    argv = ["run", script, "--isolation", "process", "--audit", str(log), "--json"]
    assert main(argv) == EXIT_OK
    result = json.loads(capsys.readouterr().out)
    assert (result["ok"], result["value"], result["output"]) == (True, 2, "in a worker\n")
    intent, outcome = [json.loads(x) for x in log.read_text().splitlines()]
    assert (intent["tool"], outcome["status"]) == ("read", "ok")  # hooks ran in the parent


ANY_TOOLS = '''
from typing import Any
from scriptgate.runtime.tool import tool


@tool
def echo(value: Any) -> str:
    """Take anything."""
    return "ok"
'''


def _no_constants(name: str) -> None:
    raise AssertionError(f"not strict JSON: a bare {name}")


@pytest.mark.parametrize("isolation", ["in_process", "process"])
def test_cli_run_json_is_strict_json_for_nan_and_infinity(
    workdir: Path, capsys: pytest.CaptureFixture[str], isolation: str
) -> None:
    """findings14 A11: the --json document never holds a bare NaN/Infinity (jq refuses those)."""
    (workdir / "anytools.py").write_text(ANY_TOOLS, encoding="utf-8")
    script = _script(
        workdir, "x = float('nan')\necho(value=x)\n[x, float('inf'), {'a': -float('inf')}]\n"
    )
    argv = ["run", script, "--json", "--no-files", "--tools", "anytools:echo"]
    assert main([*argv, "--isolation", isolation]) == EXIT_OK
    result = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
    nan = {"type": "float", "value": "NaN"}
    assert result["value"] == [
        nan,
        {"type": "float", "value": "Infinity"},
        {"a": {"type": "float", "value": "-Infinity"}},
    ]
    assert result["calls"][0]["arguments"] == {"value": nan}


def test_cli_run_json_plain_floats_ok(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(workdir, "[1.5, 2, 'x']\n")
    assert main(["run", script, "--json", "--no-files"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out, parse_constant=_no_constants)["value"] == [
        1.5,
        2,
        "x",
    ]


# --------------------------------------------------------------------------- entry point


def test_cli_python_dash_m_entry_point(workdir: Path) -> None:
    script = _script(workdir, "print('hi')\nread(path='data/hello.txt')['content']\n")
    proc = subprocess.run(
        [sys.executable, "-m", "scriptgate", "run", script, "--root", str(workdir), "--json"],
        capture_output=True,
        text=True,
        cwd=workdir,
        timeout=120,
        check=False,
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    result = json.loads(proc.stdout)
    assert result["output"] == "hi\n"
    assert result["value"] == "hello\nworld"
    missing = subprocess.run(
        [sys.executable, "-m", "scriptgate", "run", "missing.py"],
        capture_output=True,
        text=True,
        cwd=workdir,
        timeout=120,
        check=False,
    )
    assert missing.returncode == EXIT_USAGE
    assert missing.stderr.strip() == "scriptgate: error: missing.py: no such file"


def test_cli_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    import scriptgate

    assert main(["--version"]) == EXIT_OK
    assert capsys.readouterr().out.strip() == f"scriptgate {scriptgate.__version__}"


def test_cli_check_reports_every_rejected_construct(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "bad.py"
    script.write_text('x = _a_\ny = 1\nz = __import__("os")\nw = x.__subclasses__\n')
    assert main(["check", str(script), "--no-files"]) == EXIT_SCRIPT_FAILED
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[1] for line in lines] == ["1", "3", "4"]
    assert all(": rejected: " in line for line in lines)


def test_cli_run_prints_no_value_line_without_a_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    assert main(["run", str(script), "--no-files"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("hi\n")
    assert "── value" not in out
    script.write_text("print('hi')\n1 + 1\n")
    assert main(["run", str(script), "--no-files"]) == EXIT_OK
    assert "── value\n2\n" in capsys.readouterr().out


def test_cli_run_limit_flags_reach_the_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "s.py"
    script.write_text("print('x' * 50)\n")
    assert main(["run", str(script), "--no-files", "--max-output", "10"]) == EXIT_SCRIPT_FAILED
    assert "limit of 10 characters" in capsys.readouterr().out
    (tmp_path / "t.py").write_text(TOOLS_MODULE)
    script.write_text("for i in range(5):\n    add(a=i, b=1)\n")
    code = main(
        [
            "run",
            str(script),
            "--no-files",
            "--tools",
            str(tmp_path / "t.py"),
            "--max-tool-calls",
            "3",
        ]
    )
    assert code == EXIT_SCRIPT_FAILED
    assert "tool-call limit (3 calls)" in capsys.readouterr().out
    assert main(["run", str(script), "--no-files", "--memory", "lots"]) == EXIT_USAGE
    assert "not a size" in capsys.readouterr().err
