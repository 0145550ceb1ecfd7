"""A run's tool functions, ``gather`` and ``asyncio.sleep`` refuse a caller that is not that run.

Issue 13 (defense in depth, the fourth attack's F04): a host cache once carried one run's
object into another Sandbox's run, whose code then called the first run's tool function
while both ran. The boundary closes such channels; this layer holds if one opens again:
a run's functions check that the caller is the run itself (its task, or its sync script's
greenlet). The test opens the channel by hand, moving a function between two sessions'
globals on the host side while the owning run is still running.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.sandbox import Sandbox

pytestmark = pytest.mark.anyio


def _tools(executed: list[Any], gate: anyio.Event, entered: anyio.Event) -> list[AgentTool]:
    def echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        executed.append(params)
        return AgentToolResult(content=(TextContent("echoed"),))

    async def wait(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        entered.set()
        await gate.wait()
        return AgentToolResult(content=(TextContent("released"),))

    schema = {"type": "object", "additionalProperties": True}
    return [
        AgentTool(name="echo", description="Echo.", parameters=schema, execute=echo),
        AgentTool(name="wait", description="Wait.", parameters=schema, execute=wait),
    ]


_OWNER = {
    "async": "keep = echo\nkeep_gather = gather\nawait wait()\n'owner done'",
    "sync": "keep = echo\nkeep_gather = gather\nwait()\n'owner done'",
}
_THIEF = {
    "async": "r = await keep(m='stolen')\nr",
    "sync": "keep(m='stolen')",
    "async-gather": "r = await keep_gather()\nr",
}


@pytest.mark.parametrize("owner", sorted(_OWNER))
@pytest.mark.parametrize("thief", sorted(_THIEF))
async def test_cross_run_tool_function_refuses_another_runs_call(owner: str, thief: str) -> None:
    executed: list[Any] = []
    gate, entered = anyio.Event(), anyio.Event()
    tools = _tools(executed, gate, entered)
    first = Sandbox(tools).session()
    second = Sandbox(tools).session()
    results: dict[str, Any] = {}

    async def run_owner() -> None:
        results["owner"] = await first.run(_OWNER[owner])

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_owner)
        await entered.wait()
        # the channel a boundary break would open: the owner's functions in the thief's globals
        stolen = {name: first._state[name] for name in ("keep", "keep_gather")}
        second._state.update(stolen)
        results["thief"] = await second.run(_THIEF[thief])
        gate.set()

    assert results["owner"].ok, results["owner"].error
    thief_result = results["thief"]
    assert not thief_result.ok
    assert thief_result.error is not None
    assert "belongs to another run" in thief_result.error.message
    assert executed == []
    assert thief_result.calls == ()


def test_cross_run_typing_cache_keeps_no_class_of_a_finished_run() -> None:
    # fifth attack, F04: `typing.List[K]` kept the script's class K (and all it held) in
    # typing's process-wide cache after the run: each run could leave its whole memory
    # budget behind in the host
    import gc

    source = (
        "import typing\nclass RetainedByTyping:\n    pass\n"
        "RetainedByTyping.data = [0] * 1000\n"
        "x = typing.List[RetainedByTyping]\ny = typing.Optional[RetainedByTyping]\n'ok'"
    )
    result = Sandbox().run_sync(source)
    assert result.ok, result.error
    gc.collect()
    left = [o for o in gc.get_objects() if isinstance(o, type) and o.__name__ == "RetainedByTyping"]
    assert left == []


@pytest.mark.parametrize("form", ["bound=Held()", "Held, int"])
def test_cross_run_typing_cache_keeps_no_type_var_argument_of_a_finished_run(form: str) -> None:
    # findings18 B04: `TypeVar("T", bound=obj)` (or class constraints) in a subscript stayed
    # in typing's caches with its bound: 61 MiB a run, never released
    import gc

    source = (
        "import typing\nclass Held:\n    def __call__(self):\n        pass\n"
        f"T = typing.TypeVar('T', {form})\nx = typing.List[T]\ny = typing.Dict[str, T]\n'ok'"
    )
    result = Sandbox().run_sync(source)
    assert result.ok, result.error
    gc.collect()
    left = [
        o
        for o in gc.get_objects()
        if type(o).__name__ == "Held" or getattr(o, "__name__", "") == "Held"
    ]
    assert left == []


@pytest.mark.parametrize(
    "call",
    [
        "from datetime import datetime\ndatetime.strptime('2024', KeptByCache('%Y'))",
        "from datetime import datetime\ndatetime.now().strptime('2024', KeptByCache('%Y'))",
        "import re\nre.sub(KeptByCache('q'), 'b', 'aaa')",
        # findings18 B09: a replacement template stayed in regex's replacement cache
        "import re\nre.sub('a', KeptByCache('b\\\\g<0>'), 'aaa')",
        "import re\nre.match('(a)', 'a').expand(KeptByCache('\\\\1c'))",
        # findings18 B04: a TypeVar named with a subclass, in a cached subscript
        "import typing\nT = typing.TypeVar(KeptByCache('T'))\ntyping.List[T]",
    ],
)
def test_cross_run_host_caches_keep_no_str_subclass_of_a_finished_run(call: str) -> None:
    # sixth attack, F05/F06: CPython's _strptime format cache and the regex library's
    # pattern caches kept a script `str` subclass (its class and what it holds) after the run
    import gc

    source = "class KeptByCache(str):\n    data = [0] * 1000\n" + call + "\n'ok'"
    result = Sandbox().run_sync(source)
    assert result.ok, result.error
    gc.collect()
    left = [o for o in gc.get_objects() if isinstance(o, type) and o.__name__ == "KeptByCache"]
    assert left == []
