"""Live events (``Sandbox.run(on_event=...)``) and aborts requested from other threads."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from scriptgate.runtime.abort import AbortController, AbortError, loop_scheduler
from scriptgate.runtime.tool import tool
from scriptgate.sandbox.events import RunEvent
from scriptgate.sandbox.sandbox import Sandbox


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


def _summary(events: list[RunEvent]) -> list[tuple[str, str]]:
    out = []
    for event in events:
        if event.kind == "output":
            out.append(("output", event.text))
        else:
            out.append((event.kind, f"{event.tool}:{event.status}"))
    return out


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_events_arrive_in_order_as_they_happen(isolation: str) -> None:
    events: list[RunEvent] = []
    seen_before_call: list[list[tuple[str, str]]] = []

    @tool
    def probe() -> str:
        """Record what the host had been told when the call ran."""
        seen_before_call.append(_summary(events))
        return "probed"

    async with Sandbox([double, probe], isolation=isolation) as sandbox:
        result = await sandbox.run(
            'print("a")\nx = double(n=2)\nprint(x)\nprobe()\nx', on_event=events.append
        )
    assert result.ok, result.error
    assert _summary(events) == [
        ("output", "a\n"),
        ("call_start", "double:None"),
        ("call_end", "double:ok"),
        ("output", "4\n"),
        ("call_start", "probe:None"),
        ("call_end", "probe:ok"),
    ]
    # live: when the second call ran, the host had already received the earlier events
    assert seen_before_call == [_summary(events)[:5]]
    assert result.output == "a\n4\n"


@pytest.mark.anyio
async def test_events_failing_callback_does_not_break_the_run() -> None:
    def broken(event: RunEvent) -> None:
        raise RuntimeError("display gone")

    result = await Sandbox([double]).run('print("x")\ndouble(n=1)', on_event=broken)
    assert result.ok
    assert result.value == 2
    assert result.output == "x\n"


def test_event_json_round_trip() -> None:
    event = RunEvent("call_end", call_id="s/1", tool="t", arguments={"a": 1}, status="ok")
    assert RunEvent.from_json(event.to_json()) == event


@pytest.mark.anyio
async def test_abort_soon_from_another_thread_stops_a_busy_script() -> None:
    controller = AbortController()
    started = threading.Event()
    events: list[Any] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        started.set()

    soon = loop_scheduler()

    def interrupter() -> None:
        started.wait(30)
        controller.abort_soon(AbortError("stop now"), soon)

    thread = threading.Thread(target=interrupter)
    thread.start()
    try:
        with anyio.fail_after(20):
            result = await Sandbox().run(
                'print("go")\nwhile True:\n    pass',
                signal=controller.signal,
                on_event=on_event,
            )
    finally:
        thread.join()
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("aborted", "stop now")
    assert result.output == "go\n"
    assert controller.signal.pending is not None
