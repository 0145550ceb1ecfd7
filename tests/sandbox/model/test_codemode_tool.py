"""The code-mode tool: source options, result formatting (pi §5.4), and end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.pipeline import ToolCallOutcome, run_tool_call
from scriptgate.runtime.tool import AgentTool, tool
from scriptgate.runtime.types import (
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)
from scriptgate.sandbox.model.codemode_tool import (
    MAX_CALL_RECORDS,
    CodemodeSource,
    CodemodeSourceError,
    CodemodeTool,
    _format_items,
    codemode_description,
    codemode_tool,
    format_script_result,
    parse_codemode_source,
)
from scriptgate.sandbox.model.stubs import render_stubs
from scriptgate.sandbox.result import CallRecord, Limits, ScriptError, ScriptResult

EMPTY_MESSAGE = (
    "Expected Python source text (non-empty). Provide Python only, optionally with a first "
    'line `# @options: {"max_output_tokens": 1000}`.'
)


def _execute(_id: str, _params: Any, _signal: Any, _on_update: Any) -> AgentToolResult:
    return AgentToolResult.text("ok")


# ----------------------------------------------------------------------------- source


def test_parse_codemode_source_parses_the_options_line_and_keeps_line_numbers() -> None:
    parsed = parse_codemode_source(
        '# @options: {"max_output_tokens": 2000, "timeout_ms": 30000}\nreturn 1'
    )
    assert parsed == CodemodeSource(code="\nreturn 1", max_output_tokens=2000, timeout_ms=30000)


def test_parse_codemode_source_returns_plain_code_unchanged() -> None:
    code = "x = 1\n# a comment\nx + 1\n"
    assert parse_codemode_source(code) == CodemodeSource(code=code)


@pytest.mark.parametrize("code", ["", "   \n\t\n", None, 42])
def test_parse_codemode_source_rejects_empty_input(code: Any) -> None:
    with pytest.raises(CodemodeSourceError) as info:
        parse_codemode_source(code)
    assert str(info.value) == EMPTY_MESSAGE


def test_parse_codemode_source_tolerates_leading_whitespace_and_crlf() -> None:
    parsed = parse_codemode_source('  # @options: {"timeout_ms": 5}\r\nx = 1\r\nx')
    assert parsed == CodemodeSource(code="\nx = 1\r\nx", timeout_ms=5)


def test_parse_codemode_source_only_treats_the_first_line_as_options() -> None:
    with pytest.raises(CodemodeSourceError) as info:
        parse_codemode_source('x = 1\ny = 2\n  # @options: {"timeout_ms": 5}\n')
    assert str(info.value) == (
        "The # @options: line must be the first line of the input; found one on line 3"
    )


def test_parse_codemode_source_treats_the_old_form_without_colon_as_code() -> None:
    code = '# @options {"timeout": 30}\nx = 1'
    assert parse_codemode_source(code) == CodemodeSource(code=code)


@pytest.mark.parametrize("rest", ["", "\n", "\n   \n"])
def test_parse_codemode_source_options_line_needs_code_after_it(rest: str) -> None:
    with pytest.raises(CodemodeSourceError) as info:
        parse_codemode_source('# @options: {"timeout_ms": 5}' + rest)
    assert str(info.value) == (
        "The @options line must be followed by Python source on subsequent lines"
    )


FIELDS = "`max_output_tokens` and `timeout_ms`"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("[1]", f"@options must be a JSON object with supported fields {FIELDS}"),
        ('"x"', f"@options must be a JSON object with supported fields {FIELDS}"),
        ('{"timeout": 5}', f"@options only supports {FIELDS}; got `timeout`"),
        (
            '{"max_output_tokens": -1}',
            "@options field `max_output_tokens` must be a non-negative safe integer",
        ),
        (
            '{"max_output_tokens": 1.5}',
            "@options field `max_output_tokens` must be a non-negative safe integer",
        ),
        (
            '{"max_output_tokens": true}',
            "@options field `max_output_tokens` must be a non-negative safe integer",
        ),
        (
            '{"max_output_tokens": 9007199254740992}',
            "@options field `max_output_tokens` must be a non-negative safe integer",
        ),
        (
            '{"timeout_ms": 0}',
            "@options field `timeout_ms` must be a positive integer up to 2147483647",
        ),
        (
            '{"timeout_ms": 2147483648}',
            "@options field `timeout_ms` must be a positive integer up to 2147483647",
        ),
        (
            '{"timeout_ms": "100"}',
            "@options field `timeout_ms` must be a positive integer up to 2147483647",
        ),
    ],
)
def test_parse_codemode_source_rejects_invalid_options(options: str, message: str) -> None:
    with pytest.raises(CodemodeSourceError) as info:
        parse_codemode_source(f"# @options: {options}\nx = 1")
    assert str(info.value) == message


@pytest.mark.parametrize("options", ["{", "", "{'a': 1}", '{"timeout_ms": NaN}'])
def test_parse_codemode_source_rejects_invalid_json(options: str) -> None:
    with pytest.raises(CodemodeSourceError) as info:
        parse_codemode_source(f"# @options: {options}\nx = 1")
    assert str(info.value).startswith(
        f"@options must be valid JSON with supported fields {FIELDS}: "
    )


def test_parse_codemode_source_accepts_boundary_values() -> None:
    parsed = parse_codemode_source(
        '# @options: {"max_output_tokens": 0, "timeout_ms": 2147483647}\nx'
    )
    assert (parsed.max_output_tokens, parsed.timeout_ms) == (0, 2147483647)
    # JSON 1.0 is the integer 1 in JavaScript.
    parsed = parse_codemode_source('# @options: {"max_output_tokens": 1.0, "timeout_ms": 1e3}\nx')
    assert (parsed.max_output_tokens, parsed.timeout_ms) == (1, 1000)
    assert parse_codemode_source("# @options: {}\nx") == CodemodeSource(code="\nx")


# ----------------------------------------------------------------------------- formatting


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def call(n: int, tool: str = "read", status: Any = "ok", **kwargs: Any) -> CallRecord:
    return CallRecord(
        id=f"call_1/{n}", tool=tool, arguments={"path": f"f{n}"}, status=status, **kwargs
    )


def test_format_script_result_success_with_a_string_value() -> None:
    result = format_script_result(ScriptResult(ok=True, value="hello\nworld", wall_time=0.123))
    assert text_of(result) == "Script completed\nWall time 0.1 seconds\nOutput:\nhello\nworld"
    assert result.is_error is False
    assert result.details == {"calls": []}


def test_format_script_result_other_values_are_compact_json() -> None:
    result = format_script_result(
        ScriptResult(ok=True, value={"a": [1, 2.5, None, True], "é": "ü"}, wall_time=2)
    )
    assert text_of(result) == (
        'Script completed\nWall time 2.0 seconds\nOutput:\n{"a":[1,2.5,null,true],"é":"ü"}'
    )


@pytest.mark.parametrize(("value", "text"), [(0, "0"), (False, "false"), ([], "[]"), ("", "")])
def test_format_script_result_falsy_values_are_still_shown(value: Any, text: str) -> None:
    result = format_script_result(ScriptResult(ok=True, value=value))
    assert text_of(result) == f"Script completed\nWall time 0.0 seconds\nOutput:\n{text}"


def test_format_script_result_none_value_is_not_shown() -> None:
    result = format_script_result(ScriptResult(ok=True, value=None))
    assert text_of(result) == "Script completed\nWall time 0.0 seconds\nOutput:\n"


def test_format_script_result_printed_output_is_console_output_after_the_value() -> None:
    result = format_script_result(
        ScriptResult(ok=True, value={"n": 2}, output="first\nsecond\n", wall_time=0.05)
    )
    assert text_of(result) == (
        "Script completed\nWall time 0.1 seconds\nOutput:\n"
        '{"n":2}\n'
        "<console_output>\nfirst\nsecond\n</console_output>"
    )


def test_format_script_result_printed_output_only() -> None:
    result = format_script_result(ScriptResult(ok=True, output="no newline at end"))
    assert text_of(result) == (
        "Script completed\nWall time 0.0 seconds\nOutput:\n"
        "<console_output>\nno newline at end\n</console_output>"
    )


@pytest.mark.parametrize(
    ("seconds", "text"), [(1.25, "1.3"), (0.05, "0.1"), (0.15, "0.1"), (12.34, "12.3")]
)
def test_format_script_result_wall_time_rounds_like_to_fixed(seconds: float, text: str) -> None:
    result = format_script_result(ScriptResult(ok=True, wall_time=seconds))
    assert text_of(result).splitlines()[1] == f"Wall time {text} seconds"


def test_format_items_prefixes_several_text_items() -> None:
    assert _format_items(["a", "b"], "log") == [
        "==> text 1/2 <==\na",
        "==> text 2/2 <==\nb",
        "<console_output>\nlog\n</console_output>",
    ]
    assert _format_items(["a"], None) == ["a"]


def test_format_script_result_runtime_failure_keeps_partial_output_and_lists_calls() -> None:
    result = format_script_result(
        ScriptResult(
            ok=False,
            output="before\n",
            error=ScriptError("runtime", "KeyError", "'missing'", line=4),
            calls=(call(1), call(2, tool="write", status="error", error="disk full")),
            wall_time=0.4,
        )
    )
    assert text_of(result) == (
        "Script failed\nWall time 0.4 seconds\nOutput:\n"
        "<console_output>\nbefore\n</console_output>\n"
        "Script error:\nKeyError: 'missing' (line 4)\n\n"
        "Tool calls made before the failure (they are not undone): read (ok), write (error)"
    )
    assert result.is_error is True


def test_format_script_result_failure_without_calls() -> None:
    result = format_script_result(
        ScriptResult(ok=False, error=ScriptError("syntax", "SyntaxError", "invalid syntax", 2))
    )
    assert text_of(result) == (
        "Script failed\nWall time 0.0 seconds\nOutput:\n"
        "Script error:\nSyntaxError: invalid syntax (line 2)\n\nNo tool calls were made."
    )


@pytest.mark.parametrize(
    ("error", "head"),
    [
        (
            ScriptError("limit", "TimeoutError", "Execution timed out after 200 ms"),
            "Script timed out: Execution timed out after 200 ms",
        ),
        (
            ScriptError("limit", "LimitExceeded", "Script timed out after 30 s", 7),
            "Script timed out after 30 s",
        ),
        (
            ScriptError("aborted", "AbortError", "user pressed Esc"),
            "Script aborted: user pressed Esc",
        ),
        (ScriptError("aborted", "AbortError", ""), "Script aborted: Execution aborted"),
        (
            ScriptError("sandbox", "WorkerCrashed", "The worker process exited"),
            "Script sandbox failed: The worker process exited",
        ),
        (
            ScriptError("limit", "LimitExceeded", "Script exceeded the step limit (10 steps)", 3),
            "LimitExceeded: Script exceeded the step limit (10 steps) (line 3)",
        ),
        (
            ScriptError("tool", "ToolDenied", "Blocked by policy"),
            "ToolDenied: Blocked by policy",
        ),
        (ScriptError("rejected", "", 'Line 1: "_x" is invalid'), 'Line 1: "_x" is invalid'),
        (
            ScriptError("rejected", "SyntaxError", 'Line 2: "_x" is invalid', 2),
            'SyntaxError: Line 2: "_x" is invalid',
        ),
        (
            ScriptError("tool", "ToolError", "Validation failed:\n  - a: bad\n", 5),
            "ToolError (line 5): Validation failed:\n  - a: bad\n",
        ),
        (ScriptError("runtime", "", "two\nlines", 5), "Line 5: two\nlines"),
    ],
)
def test_format_script_result_error_heads(error: ScriptError, head: str) -> None:
    result = format_script_result(ScriptResult(ok=False, error=error))
    assert text_of(result).split("Script error:\n", 1)[1] == f"{head}\n\nNo tool calls were made."


def test_format_script_result_details_carry_the_call_records() -> None:
    big = {"text": "x" * 9000}
    calls = (
        call(1, duration_ms=3),
        CallRecord(id="c/2", tool="write", arguments=big, status="blocked", error="e" * 600),
        CallRecord(id="c/3", tool="ls", arguments={}, status="cancelled"),
    )
    result = format_script_result(ScriptResult(ok=True, calls=calls))
    assert result.details["calls"][0] == {
        "id": "call_1/1",
        "name": "read",
        "arguments": {"path": "f1"},
        "status": "ok",
        "durationMs": 3,
    }
    second = result.details["calls"][1]
    assert "arguments" not in second
    assert second["argumentsBytes"] == len(json.dumps(big, separators=(",", ":")))
    assert second["status"] == "blocked"
    assert len(second["error"]) == 500
    assert second["error"].endswith("…")
    assert result.details["calls"][2] == {
        "id": "c/3",
        "name": "ls",
        "arguments": {},
        "status": "cancelled",
    }
    json.dumps(result.details)


def test_format_script_result_details_keep_at_most_256_calls() -> None:
    calls = tuple(call(n) for n in range(1, MAX_CALL_RECORDS + 11))
    result = format_script_result(ScriptResult(ok=True, calls=calls))
    assert len(result.details["calls"]) == MAX_CALL_RECORDS
    assert result.details["omittedCalls"] == 10


def test_format_script_result_truncates_to_the_budget_and_saves_the_full_output(
    tmp_path: Path,
) -> None:
    output = "".join(f"line {n:03d}\n" for n in range(100))  # 900 characters
    result = format_script_result(
        ScriptResult(ok=True, output=output, wall_time=1),
        max_output_tokens=10,
        output_dir=tmp_path,
    )
    full = "<console_output>\n" + output[:-1] + "\n</console_output>"
    path = result.details["fullOutputPath"]
    assert Path(path).parent == tmp_path
    assert Path(path).read_text(encoding="utf-8") == full
    removed = len(full) - 40
    assert text_of(result) == (
        "Script completed\nWall time 1.0 seconds\nOutput:\n"
        f"Warning: truncated output (original token count: {-(-len(full) // 4)})\n"
        f"Total output lines: {full.count(chr(10)) + 1}\n\n"
        f"{full[:20]}\n</console_output>…{-(-removed // 4)} tokens truncated…"
        f"<console_output>\n{full[-20:]}\n"
        f"[Full output: {path} (read with offset/limit)]"
    )


def test_format_script_result_truncation_never_cuts_a_console_tag(tmp_path: Path) -> None:
    for budget_tokens in range(1, 12):
        result = format_script_result(
            ScriptResult(ok=True, value="v" * 30, output="x" * 300, wall_time=1),
            max_output_tokens=budget_tokens,
            output_dir=tmp_path,
        )
        body = text_of(result).split("Total output lines:", 1)[1]
        body = body.split("[Full output:", 1)[0]
        opened = body.count("<console_output>")
        closed = body.count("</console_output>")
        assert opened == closed, (budget_tokens, body)
        for piece in ("<console_outpu…", "<console…", "…onsole_output>", "…_output>"):
            assert piece not in body, (budget_tokens, body)


def test_format_script_result_at_the_budget_is_not_truncated(tmp_path: Path) -> None:
    result = format_script_result(
        ScriptResult(ok=True, value="x" * 40), max_output_tokens=10, output_dir=tmp_path
    )
    assert text_of(result).endswith("\n" + "x" * 40)
    assert "fullOutputPath" not in result.details
    assert list(tmp_path.iterdir()) == []


def test_format_script_result_truncation_keeps_the_error_at_the_tail(tmp_path: Path) -> None:
    result = format_script_result(
        ScriptResult(
            ok=False,
            output="y" * 5000,
            error=ScriptError("runtime", "ValueError", "bad"),
        ),
        max_output_tokens=50,
        output_dir=tmp_path,
    )
    text = text_of(result)
    assert text.startswith("Script failed\n")
    assert "Script error:\nValueError: bad\n\nNo tool calls were made.\n[Full output: " in text
    assert result.is_error is True


def test_format_script_result_zero_budget_keeps_only_the_notes(tmp_path: Path) -> None:
    result = format_script_result(
        ScriptResult(ok=True, value="abcdefgh"), max_output_tokens=0, output_dir=tmp_path
    )
    assert text_of(result).split("Output:\n", 1)[1].splitlines()[:4] == [
        "Warning: truncated output (original token count: 2)",
        "Total output lines: 1",
        "",
        "…2 tokens truncated…",
    ]


def test_format_script_result_reports_a_full_output_that_cannot_be_saved(tmp_path: Path) -> None:
    missing = tmp_path / "does-not-exist"
    result = format_script_result(
        ScriptResult(ok=True, value="z" * 100), max_output_tokens=5, output_dir=missing
    )
    assert "fullOutputPath" not in result.details
    assert text_of(result).splitlines()[-1].startswith("[Could not save the full output: ")


# ----------------------------------------------------------------------------- end to end


def _read_tool() -> AgentTool:
    @tool
    def read(path: str) -> str:
        """Read a file."""
        if path == "missing":
            raise FileNotFoundError(f"no such file: {path}")
        return f"contents of {path}"

    return read


def _stat_tool() -> AgentTool:
    @tool(output_schema={"type": "object", "properties": {"size": {"type": "integer"}}})
    def stat(path: str) -> AgentToolResult:
        """Size of a file."""
        return AgentToolResult(
            content=(TextContent(f"{path}: {len(path)} bytes"),),
            structured_content={"size": len(path)},
        )

    return stat


async def run_code(
    cm: CodemodeTool, code: str, *, call_id: str = "call_1", **kwargs: Any
) -> ToolCallOutcome:
    return await run_tool_call(
        ToolCall(id=call_id, name=cm.name, arguments={"code": code}), tools=[cm], **kwargs
    )


def test_codemode_tool_shape_and_description() -> None:
    read = _read_tool()
    cm = codemode_tool([read, _stat_tool()])
    assert cm.name == "python"
    assert cm.parameters_schema == {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "Raw Python source."}},
        "required": ["code"],
    }
    assert cm.is_async
    assert cm.description.startswith("Run a Python script in which every tool below")
    assert render_stubs([read, _stat_tool()]) in cm.description
    assert "# @options:" in cm.description
    assert "print" in cm.description
    assert "json" in cm.description


def test_codemode_tool_excludes_itself_from_the_callable_tools() -> None:
    other = _read_tool()
    inner = AgentTool(name="python", description="an older python tool", execute=_execute)
    cm = codemode_tool([other, inner])
    assert [t.name for t in cm.callable_tools] == ["read", "read_output"]
    assert "an older python tool" not in cm.description
    named = codemode_tool([other, inner], name="run")
    assert [t.name for t in named.callable_tools] == ["read", "python", "read_output"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"isolation": "thread"}, "isolation must be"),
        ({"max_output_tokens": -1}, "must not be negative"),
        ({"max_output_tokens": 1.5}, "must be an integer"),
        ({"style": "fancy"}, "style must be"),
    ],
)
def test_codemode_tool_rejects_bad_configuration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        codemode_tool([_read_tool()], **kwargs)
    with pytest.raises(ConfigurationError, match="AgentTool instances"):
        codemode_tool([lambda: None])  # type: ignore[list-item]


@pytest.mark.anyio
async def test_codemode_tool_runs_a_script_and_reports_calls() -> None:
    cm = codemode_tool([_read_tool(), _stat_tool()])
    outcome = await run_code(
        cm,
        'text = read(path="a.txt")\nprint(text)\ninfo = stat(path="abc")\n{"size": info["size"]}',
        call_id="call_7",
    )
    assert outcome.is_error is False
    text = text_of(outcome.result)
    assert text.startswith("Script completed\nWall time ")
    assert text.split("Output:\n", 1)[1] == (
        '{"size":3}\n<console_output>\ncontents of a.txt\n</console_output>'
    )
    calls = outcome.result.details["calls"]
    assert [(c["id"], c["name"], c["status"]) for c in calls] == [
        ("call_7/1", "read", "ok"),
        ("call_7/2", "stat", "ok"),
    ]
    assert calls[0]["arguments"] == {"path": "a.txt"}
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_failure_lists_the_calls_made_before_it() -> None:
    cm = codemode_tool([_read_tool()])
    outcome = await run_code(cm, 'read(path="a")\nread(path="missing")\n')
    assert outcome.is_error is True
    text = text_of(outcome.result)
    assert text.startswith("Script failed\n")
    error = text.split("Script error:\n", 1)[1]
    assert error.startswith("ToolError: no such file: missing (line 2)")
    assert error.endswith(
        "Tool calls made before the failure (they are not undone): read (ok), read (error)"
    )
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_nested_calls_go_through_the_hooks() -> None:
    seen: list[tuple[str, Any]] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult | None:
        seen.append((ctx.tool_call.id, ctx.args))
        if ctx.args.get("path") == "secret":
            return BeforeToolCallResult(block=True, reason="secret files are off limits")
        return None

    cm = codemode_tool([_read_tool()], before_tool_call=before)
    code = (
        'try:\n    read(path="secret")\nexcept ToolDenied as err:\n    print("denied:", err)\n'
        'read(path="ok")'
    )
    outcome = await run_code(cm, code, call_id="c")
    assert seen == [("c/1", {"path": "secret"}), ("c/2", {"path": "ok"})]
    text = text_of(outcome.result)
    assert text.split("Output:\n", 1)[1] == (
        "contents of ok\n<console_output>\ndenied: secret files are off limits\n</console_output>"
    )
    assert [c["status"] for c in outcome.result.details["calls"]] == ["blocked", "ok"]
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_the_codemode_call_itself_goes_through_the_hooks_once() -> None:
    names: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        names.append(ctx.tool_call.name)

    cm = codemode_tool([_read_tool()], before_tool_call=before)
    await run_code(cm, 'read(path="x")', before_tool_call=before)
    assert names == ["python", "read"]
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_async_script_with_gather() -> None:
    cm = codemode_tool([_read_tool()], style="async")
    assert "async def read(" in cm.description
    outcome = await run_code(cm, 'a, b = await gather(read(path="1"), read(path="2"))\n[a, b]')
    assert text_of(outcome.result).split("Output:\n", 1)[1] == ('["contents of 1","contents of 2"]')
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_invalid_source_is_an_error_result() -> None:
    cm = codemode_tool([_read_tool()])
    outcome = await run_code(cm, "   ")
    assert outcome.is_error is True
    assert text_of(outcome.result) == EMPTY_MESSAGE
    outcome = await run_code(cm, 'x = 1\n# @options: {"timeout_ms": 5}\nx')
    assert text_of(outcome.result) == (
        "The # @options: line must be the first line of the input; found one on line 2"
    )
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_options_line_keeps_line_numbers_and_sets_the_budget(
    tmp_path: Path,
) -> None:
    cm = codemode_tool([_read_tool()], output_dir=tmp_path)
    outcome = await run_code(cm, '# @options: {"max_output_tokens": 5}\nx = 1\nprint("z" * 100)')
    text = text_of(outcome.result)
    assert "Warning: truncated output (original token count: 34)" in text
    assert "fullOutputPath" in outcome.result.details
    outcome = await run_code(
        cm, '# @options: {"timeout_ms": 60000}\nx = 1\nraise ValueError("boom")'
    )
    assert "ValueError: boom (line 3)" in text_of(outcome.result)
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_timeout_option_lowers_the_time_limit() -> None:
    cm = codemode_tool([_read_tool()], limits=Limits(timeout=60))
    outcome = await run_code(cm, '# @options: {"timeout_ms": 50}\nwhile True:\n    pass')
    assert outcome.is_error is True
    error = text_of(outcome.result).split("Script error:\n", 1)[1]
    assert error.startswith("Script timed out")
    assert error.endswith("No tool calls were made.")
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_abort_signal_ends_the_script() -> None:
    started = anyio.Event()

    @tool
    async def wait_forever() -> str:
        """Never returns."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    cm = codemode_tool([wait_forever])
    controller = AbortController()
    outcomes: list[ToolCallOutcome] = []

    async def run() -> None:
        outcomes.append(await run_code(cm, "wait_forever()", signal=controller.signal))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await started.wait()
        controller.abort()
    text = text_of(outcomes[0].result)
    assert outcomes[0].is_error is True
    assert "Script aborted" in text
    await cm.aclose()


@pytest.mark.anyio
async def test_codemode_tool_process_isolation() -> None:
    async with codemode_tool([_read_tool(), _stat_tool()], isolation="process") as cm:
        assert cm.sandbox.isolation == "process"
        outcome = await run_code(cm, 'x = read(path="a")\nprint(x)\nstat(path="abc")')
        assert text_of(outcome.result).split("Output:\n", 1)[1] == (
            '{"size":3}\n<console_output>\ncontents of a\n</console_output>'
        )
        assert [c["id"] for c in outcome.result.details["calls"]] == ["call_1/1", "call_1/2"]
        outcome = await run_code(cm, "_x_ = 1")
        assert outcome.is_error is True
        assert "No tool calls were made." in text_of(outcome.result)


def test_codemode_description_states_limits_capabilities_and_stubs() -> None:
    from scriptgate.sandbox.world.builtins import SAFE_BUILTIN_NAMES
    from scriptgate.sandbox.world.modules import MODULE_NAMES

    read = _read_tool()
    text = codemode_description(
        [read], limits=Limits(timeout=12.5, max_tool_calls=7), max_output_tokens=300
    )
    assert (
        "- Limits per script: 12.5 s of wall time, 7 tool calls, 1000000 printed characters."
        in text
    )
    assert "(at most 12500)" in text
    assert "Output longer than about 300 tokens" in text
    assert f"- Built-ins: {', '.join(dict.fromkeys(SAFE_BUILTIN_NAMES))}." in text
    assert f"- Importable modules: {', '.join(MODULE_NAMES)}." in text
    assert text.endswith("Tools:\n```python\n" + render_stubs([read]) + "\n```")
    unlimited = codemode_description(
        [], limits=Limits(timeout=None, max_tool_calls=None, max_output_chars=None)
    )
    assert "Limits per script" not in unlimited
    assert "(at most" not in unlimited
    assert unlimited.endswith("Tools: none.")


def test_codemode_tool_close_from_sync_code_then_calls_fail_cleanly() -> None:
    cm = codemode_tool([_read_tool()])
    cm.close()

    async def main() -> ToolCallOutcome:
        return await run_code(cm, "1 + 1")

    outcome = anyio.run(main)
    assert outcome.is_error is True
    assert text_of(outcome.result) == "the sandbox is closed"


@pytest.mark.anyio
async def test_codemode_tool_truncated_output_is_readable_by_the_next_script() -> None:
    cm = codemode_tool([], max_output_tokens=20)
    lines = "\n".join(f"row {n}" for n in range(1, 301))
    first = await cm.execute("call-1", {"code": f"print({lines!r})"}, None, None)
    text = text_of(first)
    assert "read_output(id='call-1', offset=1, limit=200)" in text
    assert "fullOutputPath" not in first.details  # no file anywhere
    script = "print(read_output(id='call-1', offset=150, limit=2))"
    second = await cm.execute("call-2", {"code": script}, None, None)
    assert "row 149\nrow 150\n" in text_of(second)  # (line 1 is the console tag)
    await cm.aclose()
    assert cm._outputs == {}
