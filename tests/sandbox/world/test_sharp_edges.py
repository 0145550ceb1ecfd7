"""Issue 14's sharp edges and defaults: strptime, a last value that is not JSON, the budgets."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scriptgate.sandbox.lastvalue import render_last_value
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

MODES = ["in_process", "process"]


def run(source: str, isolation: str = "in_process", **limits: Any) -> ScriptResult:
    async def go() -> ScriptResult:
        sandbox = Sandbox(limits=Limits(**{"timeout": 20, **limits}), isolation=isolation)
        try:
            return await sandbox.run(source)
        finally:
            close = getattr(sandbox, "aclose", None)
            if close is not None:
                await close()

    return anyio.run(go)


@pytest.mark.parametrize("isolation", MODES)
def test_strptime_works_without_the_host_having_imported_it(isolation: str) -> None:
    source = (
        "from datetime import datetime\n"
        "d = datetime.strptime('2024-03-05 10:20', '%Y-%m-%d %H:%M')\n"
        "[d.isoformat(), datetime.strptime('05/03/24', '%d/%m/%y').year]"
    )
    result = run(source, isolation)
    assert result.ok, result.error
    assert result.value == ["2024-03-05T10:20:00", 2024]


def test_strptime_internal_import_gives_the_script_nothing() -> None:
    result = run("from _strptime import _strptime_datetime")
    assert not result.ok


@pytest.mark.parametrize("isolation", MODES)
def test_last_value_not_json_is_rendered_in_both_modes(isolation: str) -> None:
    source = (
        "import datetime\nclass Point:\n    pass\n"
        "{'s': {3, 1, 2}, 'd': datetime.date(2024, 1, 2), 'k': {1: 'a', None: 'b'},"
        " 't': (1, 2), 'p': Point(), 'delta': datetime.timedelta(hours=2)}"
    )
    result = run(source, isolation)
    assert result.ok, result.error
    assert result.value == {
        "s": [1, 2, 3],
        "d": "2024-01-02",
        "k": {"1": "a", "null": "b"},
        "t": [1, 2],
        "p": "<Point object>",
        "delta": "2:00:00",
    }
    assert "[note: the last value held Point (not JSON data)" in result.output


def test_last_value_set_of_mixed_items_keeps_its_items() -> None:
    value, note = render_last_value({(1, "a"), "x"})
    assert sorted(map(str, value)) == sorted(["[1, 'a']", "x"])
    assert note is None


def test_last_value_never_calls_script_methods() -> None:
    source = "class Loud:\n    def __repr__(self):\n        while True:\n            pass\n[Loud()]"
    result = run(source, max_steps=None, timeout=5)
    assert result.ok, result.error
    assert result.value == ["<Loud object>"]


def test_last_value_deep_nesting_is_bounded() -> None:
    _, note = render_last_value(_nested_set(400))
    assert note is not None
    assert "too deeply" in note


def _nested_set(depth: int) -> Any:
    value: Any = frozenset({1})
    for _ in range(depth):
        value = frozenset({value})
    return value


def test_defaults_make_the_deadline_the_budget() -> None:
    limits = Limits()
    assert limits.max_steps is None
    assert limits.timeout is not None
    # 20M loop iterations: far past the old 10M step default, well inside 30 s
    result = run("n = 0\nfor i in range(20_000_000):\n    n += 1\nn", timeout=60)
    assert result.ok, result.error
    assert result.value == 20_000_000


def test_defaults_deadline_still_stops_an_endless_loop() -> None:
    result = run("while True:\n    pass", timeout=0.5)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "timed out" in result.error.message


@pytest.mark.parametrize("isolation", MODES)
def test_defaults_recursion_is_cpython_like(isolation: str) -> None:
    source = "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nf(900)"
    result = run(source, isolation)
    assert result.ok, result.error
    assert result.value == 900


@pytest.mark.parametrize("isolation", MODES)
def test_last_value_renders_enums_dataclasses_and_builtin_subclasses(isolation: str) -> None:
    source = (
        "from dataclasses import dataclass, field\n"
        "from enum import Enum, IntEnum, StrEnum\n"
        "class Color(Enum):\n    RED = 'red'\n"
        "class Level(IntEnum):\n    HIGH = 3\n"
        "class Mode(StrEnum):\n    FAST = 'fast'\n"
        "class Meters(float):\n    pass\n"
        "@dataclass\nclass Item:\n    name: str\n    tags: list = field(default_factory=list)\n"
        "    @property\n    def loud(self):\n        while True:\n            pass\n"
        "@dataclass(slots=True)\nclass Pair:\n    a: int\n    b: object\n"
        "[Color.RED, Level.HIGH, Mode.FAST, Meters(2.5), Item('x', [Pair(1, Color.RED)])]"
    )
    result = run(source, isolation, max_steps=None, timeout=10)
    assert result.ok, result.error
    assert result.value == ["red", 3, "fast", 2.5, {"name": "x", "tags": [{"a": 1, "b": "red"}]}]


def test_last_value_walk_is_bounded_for_a_value_that_shares_itself() -> None:
    # sixty levels of N(x, x) would render 2**60 nodes after the run, outside its budget
    source = (
        "from dataclasses import dataclass\n"
        "@dataclass\nclass N:\n    a: object\n    b: object\n"
        "x = N(1, 1)\nfor i in range(60):\n    x = N(x, x)\nx"
    )
    result = run(source, timeout=10)
    assert result.ok, result.error
    assert "<too many values>" in str(result.value)
    assert result.wall_time < 5
