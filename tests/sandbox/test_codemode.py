"""The code-mode tool: source options, result formatting (pi §5.4), and end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptgate.runtime.types import TextContent
from scriptgate.sandbox.codemode import (
    MAX_CALL_RECORDS,
    CodemodeSource,
    CodemodeSourceError,
    _format_items,
    format_script_result,
    parse_codemode_source,
)
from scriptgate.sandbox.result import CallRecord, ScriptError, ScriptResult

EMPTY_MESSAGE = (
    "Expected Python source text (non-empty). Provide Python only, optionally with a first "
    'line `# @options: {"max_output_tokens": 1000}`.'
)


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
        f"{full[:20]}…{-(-removed // 4)} tokens truncated…{full[-20:]}\n"
        f"[Full output: {path} (read with offset/limit)]"
    )


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
