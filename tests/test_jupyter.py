"""The %%scriptgate cell magic and the rich display of ScriptResult."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.jupyter import load_ipython_extension, run_cell
from scriptgate.sandbox.result import CallRecord, ScriptError, ScriptResult


class FakeRunner:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def run_sync(self, code: str) -> ScriptResult:
        self.seen.append(code)
        return ScriptResult(ok=True, value=3, output="hi\n", wall_time=0.001)


def test_jupyter_run_cell_uses_the_named_sandbox_and_stores_the_result() -> None:
    runner = FakeRunner()
    ns: dict[str, Any] = {"sb": runner}
    result = run_cell("sb", "1 + 2", ns)
    assert runner.seen == ["1 + 2"]
    assert result.value == 3
    assert ns["scriptgate_result"] is result


def test_jupyter_run_cell_defaults_to_a_variable_named_sandbox() -> None:
    runner = FakeRunner()
    run_cell("", "x", {"sandbox": runner})
    assert runner.seen == ["x"]


@pytest.mark.parametrize(
    ("line", "ns", "message"),
    [
        pytest.param("missing", {}, "no variable 'missing'", id="missing"),
        pytest.param("x", {"x": 5}, "is a int, not a Sandbox", id="not-a-sandbox"),
        pytest.param("a b", {}, "usage", id="too-many-words"),
    ],
)
def test_jupyter_run_cell_bad_target_is_a_clear_error(
    line: str, ns: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        run_cell(line, "1", ns)


def test_jupyter_extension_registers_a_cell_magic_that_prints_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    registered: dict[str, Any] = {}

    class FakeShell:
        user_ns: dict[str, Any] = {}  # noqa: RUF012

        def register_magic_function(self, fn: Any, magic_kind: str, magic_name: str) -> None:
            registered[magic_name] = (fn, magic_kind)

    load_ipython_extension(FakeShell())
    fn, kind = registered["scriptgate"]
    assert kind == "cell"
    assert fn("nothing_here", "1") is None
    assert "no variable 'nothing_here'" in capsys.readouterr().out


def test_jupyter_summary_shows_output_value_error_and_calls() -> None:
    result = ScriptResult(
        ok=False,
        value=None,
        output="line one\nline two\n",
        error=ScriptError("tool", "ToolDenied", "read-only run", 4),
        calls=(
            CallRecord("script/1", "read", {"path": "a.txt"}, "ok", 2),
            CallRecord("script/2", "write", {"path": "b", "content": "x" * 200}, "blocked"),
        ),
        wall_time=0.25,
    )
    text = result.summary()
    assert text.splitlines()[0] == "failed in 0.250 s"
    assert "  line two" in text
    assert "error [tool]: ToolDenied: read-only run (line 4)" in text
    assert 'script/1 read({"path": "a.txt"}) -> ok 2 ms' in text
    assert "-> blocked" in text
    assert "..." in text  # long arguments are shortened
    assert result._repr_html_().startswith("<pre>")
