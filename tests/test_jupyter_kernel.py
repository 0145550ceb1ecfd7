"""The %%scriptgate magic on a real IPython kernel: live output, --raise, interrupts, options."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

SETUP = """
import threading
from scriptgate import Sandbox, tool

calls = []

@tool
def count() -> int:
    \"\"\"Count a call.\"\"\"
    calls.append(1)
    return len(calls)

sandbox = Sandbox([count])
%load_ext scriptgate
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[Any]:
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    try:
        _execute(client, SETUP)
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _execute(client: Any, code: str, until: str | None = None, then: Any = None) -> list[dict]:
    """Run ``code``; collect its iopub messages until idle. When a stream message
    containing ``until`` arrives, call ``then()`` once (e.g. interrupt the kernel)."""
    msg_id = client.execute(code)
    outputs: list[dict] = []
    fired = False
    while True:
        try:
            msg = client.get_iopub_msg(timeout=60)
        except queue.Empty:
            raise AssertionError(f"no answer from the kernel; so far: {outputs}") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            return outputs
        if kind in ("stream", "execute_result", "display_data", "error"):
            outputs.append({"type": kind, **msg["content"]})
            if (
                not fired
                and until is not None
                and kind == "stream"
                and until in msg["content"]["text"]
            ):
                fired = True
                then()


def _text(outputs: list[dict]) -> str:
    parts = []
    for out in outputs:
        if out["type"] == "stream":
            parts.append(out["text"])
        elif out["type"] in ("execute_result", "display_data"):
            parts.append(out["data"].get("text/html", "") + out["data"].get("text/plain", ""))
        elif out["type"] == "error":
            parts.append(f"ERROR {out['ename']}: {out['evalue']}")
    return "\n".join(parts)


def test_jupyter_magic_streams_output_and_shows_a_rich_result(kernel: Any) -> None:
    _manager, client = kernel
    outputs = _execute(client, '%%scriptgate sandbox\nprint("live line")\ncount()\n{"a": [1, 2]}')
    assert outputs[0]["type"] == "stream"
    assert outputs[0]["text"] == "live line\n"  # shown before the result
    result = outputs[-1]
    assert result["type"] == "execute_result"
    page = result["data"]["text/html"]
    assert "<table class='scriptgate-calls'>" in page
    assert ">ok</td>" in page
    assert "<details" in page  # the value as a tree, the streamed output collapsed
    assert "text/markdown" in result["data"]


def test_jupyter_magic_raise_makes_a_failed_script_a_cell_error(kernel: Any) -> None:
    _manager, client = kernel
    outputs = _execute(client, "%%scriptgate sandbox --raise\nx = 1\nraise ValueError('bad')")
    errors = [out for out in outputs if out["type"] == "error"]
    assert len(errors) == 1
    assert errors[0]["ename"] == "CellScriptError"
    assert "ValueError: bad (line 2)" in errors[0]["evalue"]
    quiet = _execute(client, "%%scriptgate sandbox\nraise ValueError('bad')")
    assert not [out for out in quiet if out["type"] == "error"]


def test_jupyter_magic_timeout_option_applies_to_the_cell(kernel: Any) -> None:
    _manager, client = kernel
    outputs = _execute(client, "%%scriptgate sandbox --timeout 0.2\nwhile True:\n    pass")
    assert "timed out after 0.2 s" in _text(outputs)
    bad = _execute(client, "%%scriptgate sandbox --nope\n1")
    assert "usage: %%scriptgate" in _text(bad)


def test_jupyter_interrupt_stops_the_script_and_its_tool_calls(kernel: Any) -> None:
    manager, client = kernel
    _execute(client, "calls.clear()")
    # the marker follows the first call, so at least one call happened before the interrupt
    script = '%%scriptgate sandbox\ncount()\nprint("STARTED")\nwhile True:\n    count()'
    outputs = _execute(client, script, until="STARTED", then=manager.interrupt_kernel)
    text = _text(outputs)
    assert "ERROR KeyboardInterrupt" in text
    assert "interrupted" in text  # the result was shown before the interrupt was raised
    assert "Interrupted (kernel interrupt)" in text
    # the helper thread stopped calling tools: the count does not move any more
    first = _text(_execute(client, "print(len(calls))"))
    _execute(client, "import time; t = time.monotonic()\nwhile time.monotonic() - t < 0.3: pass")
    second = _text(_execute(client, "print(len(calls))"))
    assert first == second
    assert int(first) > 0
