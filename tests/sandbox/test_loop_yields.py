"""Only the loop's own messages leave an async script's coroutine (issue 13, F07 second layer).

The first layers stop a script from writing ``__await__`` (compile policy) or building a
class that has one (no metaclass is holdable, F06). These tests assume both broken: a
host-made object with ``__await__`` and the asyncio Future protocol is put in a session's
globals, and the script awaits it. The loop's driver must never see it (asyncio's Task
would call its ``get_loop()``): the run ends with a ``sandbox`` error, on both backends.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from scriptgate.sandbox.bridge import HostToolBridge
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.loopyields import loop_message
from scriptgate.sandbox.result import Limits, ScriptResult

pytestmark = pytest.mark.anyio


class _FakeFuture:
    """A script-side object that speaks the asyncio Future protocol to the loop."""

    _asyncio_future_blocking = True

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def get_loop(self) -> None:
        self.seen.append("get_loop")

    def add_done_callback(self, *args: Any, **kwargs: Any) -> None:
        self.seen.append("add_done_callback")

    def __await__(self) -> Generator[Any, Any, Any]:
        self.seen.append("awaited")
        yield self


async def _run(source: str, seen: list[str]) -> ScriptResult:
    return await run_script(
        source,
        bridge=HostToolBridge([]),
        tools=[],
        limits=Limits(timeout=5),
        state={"evil": _FakeFuture(seen)},
    )


@pytest.mark.parametrize(
    "source",
    [
        "await evil",
        "async def f():\n    await evil\nawait f()",
        "async def f():\n    await evil\nawait gather(f())",
        "try:\n    await evil\nexcept BaseException:\n    pass\n'swallowed'",
        "try:\n    await evil\nfinally:\n    x = 1",
    ],
    ids=["direct", "nested", "gather", "caught", "finally"],
)
async def test_loop_yields_script_object_never_reaches_the_loop(source: str) -> None:
    seen: list[str] = []
    result = await _run(source, seen)
    assert seen == ["awaited"]  # no method of it was called by the loop
    assert not result.ok
    assert result.error is not None
    assert (result.error.kind, result.error.type) == ("sandbox", "SandboxViolation")
    assert "_FakeFuture object to the event loop" in result.error.message


async def test_loop_yields_the_engines_own_awaitables_pass() -> None:
    seen: list[str] = []
    result = await _run("async def f(x):\n    return x * 2\nawait gather(f(1), f(2), 3)", seen)
    assert result.ok, result.error
    assert result.value == [2, 4, 3]


async def test_loop_yields_allow_list_is_the_loops_own_messages() -> None:
    import asyncio

    import sniffio

    if sniffio.current_async_library() == "asyncio":
        assert loop_message(asyncio.get_running_loop().create_future())
    else:
        from trio._core import _traps

        assert loop_message(_traps.CancelShieldedCheckpoint)
        assert loop_message(_traps.WaitTaskRescheduled(lambda raise_cancel: None))  # type: ignore[arg-type,return-value]
    assert loop_message(None)
    assert not loop_message(_FakeFuture([]))
    assert not loop_message(object())
    assert not loop_message(asyncio.Future)  # the class itself is no message
