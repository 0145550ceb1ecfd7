"""The ``time`` stand-in in both modes: time.sleep bounded by the deadline."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    box = Sandbox(limits=Limits(timeout=10), isolation=request.param)
    yield box
    box.close()


def value(box: Sandbox, source: str) -> Any:
    result: ScriptResult = box.run_sync(source)
    assert result.ok, result.error
    return result.value


def refused(box: Sandbox, source: str, words: str) -> None:
    result = box.run_sync(source)
    assert result.error is not None, result.value
    assert words in result.error.message, result.error.message


def test_time_sleep_waits(sandbox: Sandbox) -> None:
    src = "import time\nt = time.monotonic()\ntime.sleep(0.05)\ntime.monotonic() - t >= 0.05"
    assert value(sandbox, src) is True


def test_time_sleep_past_the_deadline_is_the_timeout() -> None:
    for mode in ("in_process", "process"):
        box = Sandbox(limits=Limits(timeout=0.5), isolation=mode)  # type: ignore[arg-type]
        result = box.run_sync("import time\ntime.sleep(1000)")
        box.close()
        assert result.error is not None
        assert result.error.kind == "limit", result.error
        assert "timed out" in result.error.message


def test_time_sleep_refuses_bad_lengths(sandbox: Sandbox) -> None:
    refused(sandbox, "import time\ntime.sleep(-1)", "non-negative")
    refused(sandbox, "import time\ntime.sleep('1')", "number")
