"""The ``asyncio`` stand-in's tasks and primitives (issue 14), each with its attack next to it.

``create_task``, ``TaskGroup``, ``Semaphore``/``BoundedSemaphore``/``Lock``, ``Event``,
``Queue``, ``wait_for`` and ``as_completed`` run on the run's own task group: each feature
script runs in both isolation modes (the ``sandbox`` fixture) and, in-process, on asyncio
and trio (``test_asyncio_tasks_feature_on_both_backends``). The attacks: holding a host
object through a handle or an awaitable, a task outliving its run, unbounded tasks and
queues, a handle kept in a session and used by a later run, a handle of another run.

Cancellation (findings18 M38): ``task.cancel()`` throws the script's ``CancelledError`` into the
task at its await point, so its ``except``/``finally`` blocks run as in CPython; each
``CANCELLATION`` script gives plain Python's value in both modes. A task that swallows
every cancellation is still ended by the run's time limit, and a task left pending at the
run's end is stopped with no handler run (the documented divergence from ``asyncio.run``).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sandbox_support import MODES, jsonish, plain, refused, same_as_python, value

from scriptgate import tool
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.modules import asyncio_tasks

EXECUTED: list[int] = []


@tool
async def ping(i: int) -> int:
    """Echo ``i`` (recorded host-side in :data:`EXECUTED`)."""
    EXECUTED.append(i)
    return i


@tool
async def block() -> str:
    """Wait for ever (only a cancellation ends it)."""
    await anyio.sleep_forever()
    return "never"


SANDBOX_TOOLS = [ping, block]

FEATURES: dict[str, tuple[str, Any]] = {
    "create_task": (
        "import asyncio\n"
        "async def work(n):\n"
        "    await asyncio.sleep(0.001 * n)\n"
        "    return await ping(i=n)\n"
        "tasks = [asyncio.create_task(work(n)) for n in range(4)]\n"
        "first = await tasks[0]\n"
        "rest = await asyncio.gather(*tasks[1:])\n"
        "[first, rest, [t.done() for t in tasks], tasks[2].result(), tasks[0].cancelled()]",
        [0, [1, 2, 3], [True] * 4, 2, False],
    ),
    "task_error": (
        "import asyncio\n"
        "async def bad():\n"
        "    raise KeyError('k')\n"
        "t = asyncio.create_task(bad())\n"
        "try:\n"
        "    await t\n"
        "except KeyError as e:\n"
        "    a = repr(e)\n"
        "r = await asyncio.gather(t, asyncio.create_task(ping(i=5)), return_exceptions=True)\n"
        "try:\n"
        "    t.result()\n"
        "except KeyError:\n"
        "    b = 'again'\n"
        "[a, type(r[0]).__name__, r[1], b]",
        ["KeyError('k')", "KeyError", 5, "again"],
    ),
    "task_cancel": (
        "import asyncio\n"
        "async def forever():\n"
        "    await asyncio.sleep(60)\n"
        "t = asyncio.create_task(forever())\n"
        "await asyncio.sleep(0)\n"
        "asked = t.cancel()\n"
        "try:\n"
        "    await t\n"
        "except asyncio.CancelledError:\n"
        "    seen = 'cancelled'\n"
        "try:\n"
        "    asyncio.create_task(forever()).result()\n"
        "except asyncio.InvalidStateError:\n"
        "    early = 'not done'\n"
        "[asked, seen, t.cancelled(), t.done(), t.cancel(), early]",
        [True, "cancelled", True, True, False, "not done"],
    ),
    "task_group": (
        "import asyncio\n"
        "async def sq(n):\n"
        "    await asyncio.sleep(0)\n"
        "    return n * n\n"
        "async with asyncio.TaskGroup() as tg:\n"
        "    ts = [tg.create_task(sq(n)) for n in range(5)]\n"
        "ok = [t.result() for t in ts]\n"
        "async def boom():\n"
        "    raise ValueError('boom')\n"
        "async def slow():\n"
        "    await asyncio.sleep(60)\n"
        "try:\n"
        "    async with asyncio.TaskGroup() as tg:\n"
        "        s = tg.create_task(slow())\n"
        "        tg.create_task(boom())\n"
        "except* ValueError as eg:\n"
        "    got = [str(e) for e in eg.exceptions]\n"
        "[ok, got, s.cancelled()]",
        [[0, 1, 4, 9, 16], ["boom"], True],
    ),
    "semaphore": (
        "import asyncio\n"
        "sem = asyncio.Semaphore(2)\n"
        "state = {'now': 0, 'peak': 0}\n"
        "async def job(i):\n"
        "    async with sem:\n"
        "        state['now'] += 1\n"
        "        state['peak'] = max(state['peak'], state['now'])\n"
        "        await asyncio.sleep(0.005)\n"
        "        state['now'] -= 1\n"
        "    return await ping(i=i)\n"
        "r = await asyncio.gather(*[job(i) for i in range(6)])\n"
        "b = asyncio.BoundedSemaphore(1)\n"
        "await b.acquire()\n"
        "locked = b.locked()\n"
        "b.release()\n"
        "try:\n"
        "    b.release()\n"
        "except ValueError:\n"
        "    over = 'refused'\n"
        "[r, state['peak'], locked, over]",
        [[0, 1, 2, 3, 4, 5], 2, True, "refused"],
    ),
    "lock": (
        "import asyncio\n"
        "lock = asyncio.Lock()\n"
        "log = []\n"
        "async def crit(name):\n"
        "    async with lock:\n"
        "        log.append(name + '+')\n"
        "        await asyncio.sleep(0.001)\n"
        "        log.append(name + '-')\n"
        "await asyncio.gather(crit('a'), crit('b'))\n"
        "try:\n"
        "    lock.release()\n"
        "except RuntimeError:\n"
        "    log.append('unlocked')\n"
        "[sorted(log[:4]), log[0][0] == log[1][0], log[2][0] == log[3][0], log[4]]",
        [["a+", "a-", "b+", "b-"], True, True, "unlocked"],
    ),
    "event": (
        "import asyncio\n"
        "ev = asyncio.Event()\n"
        "log = []\n"
        "async def waiter(n):\n"
        "    await ev.wait()\n"
        "    log.append(n)\n"
        "ts = [asyncio.create_task(waiter(n)) for n in range(3)]\n"
        "await asyncio.sleep(0.01)\n"
        "before = list(log)\n"
        "ev.set()\n"
        "await asyncio.gather(*ts)\n"
        "was = ev.is_set()\n"
        "ev.clear()\n"
        "[before, sorted(log), was, ev.is_set()]",
        [[], [0, 1, 2], True, False],
    ),
    "queue": (
        "import asyncio\n"
        "q = asyncio.Queue(maxsize=2)\n"
        "out = []\n"
        "async def producer():\n"
        "    for i in range(6):\n"
        "        await q.put(i)\n"
        "async def consumer():\n"
        "    while True:\n"
        "        item = await q.get()\n"
        "        out.append(await ping(i=item))\n"
        "        q.task_done()\n"
        "workers = [asyncio.create_task(consumer()) for _ in range(2)]\n"
        "await producer()\n"
        "await q.join()\n"
        "for w in workers:\n"
        "    w.cancel()\n"
        "q.put_nowait(1)\n"
        "q.put_nowait(2)\n"
        "try:\n"
        "    q.put_nowait(3)\n"
        "except asyncio.QueueFull:\n"
        "    full = q.full()\n"
        "got = [q.get_nowait(), q.get_nowait()]\n"
        "try:\n"
        "    q.get_nowait()\n"
        "except asyncio.QueueEmpty:\n"
        "    empty = q.empty()\n"
        "[sorted(out), full, got, empty, q.qsize(), q.maxsize]",
        [[0, 1, 2, 3, 4, 5], True, [1, 2], True, 0, 2],
    ),
    "wait_for": (
        "import asyncio\n"
        "async def after(s, v):\n"
        "    await asyncio.sleep(s)\n"
        "    return v\n"
        "fast = await asyncio.wait_for(after(0, 'fast'), timeout=5)\n"
        "try:\n"
        "    await asyncio.wait_for(after(60, 'slow'), 0.02)\n"
        "except asyncio.TimeoutError:\n"
        "    slow = 'timed out'\n"
        "t = asyncio.create_task(after(60, 'x'))\n"
        "try:\n"
        "    await asyncio.wait_for(t, 0.01)\n"
        "except TimeoutError:\n"
        "    pass\n"
        "none = await asyncio.wait_for(ping(i=3), None)\n"
        "[fast, slow, t.cancelled(), none]",
        ["fast", "timed out", True, 3],
    ),
    "as_completed": (
        "import asyncio\n"
        "async def after(s, v):\n"
        "    await asyncio.sleep(s)\n"
        "    return v\n"
        "order = []\n"
        "for fut in asyncio.as_completed([after(0.04, 'c'), after(0, 'a'), after(0.02, 'b')]):\n"
        "    order.append(await fut)\n"
        "late = []\n"
        "try:\n"
        "    for fut in asyncio.as_completed([after(60, 'z'), after(0, 'y')], timeout=0.02):\n"
        "        late.append(await fut)\n"
        "except TimeoutError:\n"
        "    late.append('timeout')\n"
        "[order, late]",
        [["a", "b", "c"], ["y", "timeout"]],
    ),
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_asyncio_tasks_feature_in_both_modes(sandbox: Sandbox, name: str) -> None:
    source, expected = FEATURES[name]
    assert value(sandbox, source) == expected


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(FEATURES))
async def test_asyncio_tasks_feature_on_both_backends(name: str) -> None:
    source, expected = FEATURES[name]
    result = await Sandbox(SANDBOX_TOOLS, limits=Limits(timeout=10)).run(source)
    assert result.ok, result.error
    assert result.value == expected


def test_asyncio_tasks_tool_calls_of_tasks_are_the_runs_own() -> None:
    box = Sandbox(SANDBOX_TOOLS, limits=Limits(timeout=10))
    source = (
        "import asyncio\n"
        "async def one(i):\n"
        "    return await ping(i=i)\n"
        "async with asyncio.TaskGroup() as tg:\n"
        "    for i in range(3):\n"
        "        tg.create_task(one(i))\n"
        "1"
    )
    result = box.run_sync(source)
    assert result.ok, result.error
    assert sorted(c.arguments["i"] for c in result.calls) == [0, 1, 2]  # type: ignore[index]
    assert all(c.status == "ok" for c in result.calls)


# ------------------------------------------------------------------------------- attacks


@pytest.mark.parametrize(
    "probe",
    [
        "t._scope",
        "t._tasks",
        "getattr(t, '_runner')",
        "w.send(None)",
        "w.close()",
        "w._coro",
        "asyncio.Event().wait().cr_frame",
        "sem.acquire().throw(ValueError)",
        "type(t)(None)",
        "q._items",
    ],
)
def test_asyncio_tasks_attack_handle_leads_to_no_host_object(sandbox: Sandbox, probe: str) -> None:
    source = (
        "import asyncio\n"
        "async def c():\n"
        "    return 1\n"
        "t = asyncio.create_task(c())\n"
        "sem = asyncio.Semaphore(1)\n"
        "q = asyncio.Queue()\n"
        "w = asyncio.sleep(0)\n"
        f"x = {probe}\n"
        "x"
    )
    result = sandbox.run_sync(source)
    assert not result.ok, (probe, result.value)
    assert result.error is not None
    assert "Traceback" not in result.error.message


@pytest.mark.parametrize(
    "arg",
    ["42", "(lambda: 1)", "(i for i in range(3))", "asyncio.create_task", "[c()]"],
)
def test_asyncio_tasks_attack_create_task_takes_only_a_script_coroutine(
    sandbox: Sandbox, arg: str
) -> None:
    refused(
        sandbox,
        f"import asyncio\nasync def c():\n    return 1\nawait asyncio.sleep(0)\n"
        f"asyncio.create_task({arg})",
        "takes a coroutine",
    )


def test_asyncio_tasks_attack_create_task_in_a_sync_script_is_refused(sandbox: Sandbox) -> None:
    refused(
        sandbox,
        "import asyncio\nasync def c():\n    return 1\ndef f():\n    return asyncio.create_task(c())\nf()",
        "works in an async script",
    )


@pytest.mark.anyio
async def test_asyncio_tasks_attack_a_task_left_running_is_cancelled_at_the_run_end() -> None:
    EXECUTED.clear()

    @tool
    async def hold() -> str:
        """Wait (for ever: only the run's end stops it)."""
        await anyio.sleep_forever()
        return "never"

    box = Sandbox([ping, hold], limits=Limits(timeout=10))
    source = (
        "import asyncio\n"
        "started = asyncio.Event()\n"
        "async def later():\n"
        "    call = hold()\n"
        "    started.set()\n"
        "    await call\n"
        "    return await ping(i=99)\n"
        "t = asyncio.create_task(later())\n"
        "await started.wait()\n"
        "'ended'"
    )
    result = await box.run(source)
    assert result.ok, result.error
    assert result.value == "ended"
    # the task's call was cancelled with the run: nothing of the task runs after it
    assert [(c.tool, c.status) for c in result.calls] == [("hold", "cancelled")]
    assert 99 not in EXECUTED


def test_asyncio_tasks_attack_unbounded_tasks_are_refused(sandbox: Sandbox) -> None:
    source = (
        "import asyncio\n"
        "async def forever():\n"
        "    await asyncio.sleep(60)\n"
        "ts = []\n"
        "try:\n"
        "    while True:\n"
        "        ts.append(asyncio.create_task(forever()))\n"
        "except RuntimeError as e:\n"
        "    msg = str(e)\n"
        "[len(ts), 'alive at once' in msg]"
    )
    assert value(sandbox, source) == [asyncio_tasks.MAX_TASKS, True]


def test_asyncio_tasks_attack_unbounded_queue_is_refused(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused(sandbox, "import asyncio\nasyncio.Queue(maxsize=10**12)", "maxsize above")
    refused(sandbox, "import asyncio\nasyncio.Semaphore(10**12)", "value above")
    monkeypatch.setattr(asyncio_tasks, "MAX_QUEUE", 50)  # in-process: the cap a put meets
    box = Sandbox(limits=Limits(timeout=10))
    source = "import asyncio\nq = asyncio.Queue()\nwhile True:\n    q.put_nowait(0)"
    result = box.run_sync(source)
    assert not result.ok
    assert result.error is not None
    assert "holds at most 50 items" in result.error.message


@pytest.mark.parametrize(
    "later",
    [
        "await t",
        "t.done()",
        "t.result()",
        "await asyncio.gather(t)",
        "await sem.acquire()",
        "q.put_nowait(1)",
        "ev.set()",
        "await asyncio.wait_for(t, 1)",
        "await w",
    ],
)
def test_asyncio_tasks_attack_handle_kept_in_a_session_is_dead_later(later: str) -> None:
    box = Sandbox(SANDBOX_TOOLS, limits=Limits(timeout=10))
    session = box.session()
    first = session.run_sync(
        "import asyncio\n"
        "async def c():\n"
        "    return await ping(i=1)\n"
        "t = asyncio.create_task(c())\n"
        "sem = asyncio.Semaphore(1)\n"
        "q = asyncio.Queue()\n"
        "ev = asyncio.Event()\n"
        "q.put_nowait(0)\n"
        "w = q.get()\n"
        "await t"
    )
    assert first.ok, first.error
    second = session.run_sync(f"import asyncio\nx = await ping(i=2)\n{later}")
    assert not second.ok, later
    assert second.error is not None
    assert "run that has ended" in second.error.message


@pytest.mark.anyio
async def test_asyncio_tasks_attack_handle_of_another_run_is_refused() -> None:
    gate, entered = anyio.Event(), anyio.Event()

    @tool
    async def hold() -> str:
        """Wait until the test releases the owner."""
        entered.set()
        await gate.wait()
        return "released"

    tools = [ping, hold]
    first = Sandbox(tools).session()
    second = Sandbox(tools).session()
    results: dict[str, Any] = {}

    async def run_owner() -> None:
        results["owner"] = await first.run(
            "import asyncio\n"
            "async def c():\n"
            "    await asyncio.sleep(60)\n"
            "t = asyncio.create_task(c())\n"
            "q = asyncio.Queue()\n"
            "await hold()\n"
            "'owner done'"
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_owner)
        await entered.wait()
        # the channel a boundary break would open: the owner's objects in the thief's globals
        second._state.update({name: first._state[name] for name in ("t", "q")})
        results["task"] = await second.run("t.cancel()")
        results["queue"] = await second.run("q.put_nowait(1)")
        gate.set()

    assert results["owner"].ok, results["owner"].error
    for key in ("task", "queue"):
        stolen = results[key]
        assert not stolen.ok
        assert stolen.error is not None
        assert "belongs to another run" in stolen.error.message


KEPT_FIRST = (
    "import asyncio\n"
    "async def c():\n"
    "    return await ping(i=1)\n"
    "t = asyncio.create_task(c())\n"
    "q = asyncio.Queue()\n"
    "q.put_nowait(0)\n"
    "w = q.get()\n"
    "s = asyncio.sleep(0)\n"
    "await t"
)


@pytest.mark.parametrize(
    ("handle", "later"),
    [
        ("t", "[await a for a in asyncio.as_completed([t])]"),
        ("t", "asyncio.ensure_future(t)"),
        ("t", "await asyncio.wait_for(t, 1)"),
        ("t", "await asyncio.gather(t)"),
        ("t", "async with asyncio.TaskGroup() as tg:\n    tg.create_task(t)"),
        ("t", "asyncio.create_task(t)"),
        ("w", "[await a for a in asyncio.as_completed([w])]"),
        ("w", "await asyncio.gather(w)"),
        ("w", "await asyncio.wait_for(w, 1)"),
        ("w", "asyncio.create_task(w)"),
        ("s", "await s"),
        ("s", "await asyncio.gather(s)"),
        ("s", "[await a for a in asyncio.as_completed([s])]"),
    ],
)
def test_asyncio_tasks_attack_kept_handle_is_refused_by_every_entry_point(
    handle: str, later: str
) -> None:
    # F01 (ninth attack): as_completed took a Task of an ended run and gave its result
    session = Sandbox(SANDBOX_TOOLS, limits=Limits(timeout=10)).session()
    first = session.run_sync(KEPT_FIRST)
    assert first.ok, first.error
    direct = session.run_sync(f"import asyncio\nx = await ping(i=2)\nawait {handle}")
    assert direct.error is not None
    assert "run that has ended" in direct.error.message
    EXECUTED.clear()
    second = session.run_sync(f"import asyncio\nx = await ping(i=3)\n{later}")
    assert not second.ok, later
    assert second.error is not None
    assert second.error.message == direct.error.message  # the same refusal as a direct await
    assert EXECUTED == [3]  # nothing of the old run ran again


CANCEL_IN_GROUP = (
    "import asyncio\n"
    "async def failing():\n"
    "    raise ValueError('child')\n"
    "held = {}\n"
    "ready = asyncio.Event()\n"
    "async def outer():\n"
    "    try:\n"
    "        async with asyncio.TaskGroup() as tg:\n"
    "            held['child'] = tg.create_task(failing())\n"
    "            ready.set()\n"
    "            await asyncio.sleep(60)\n"
    "    except* ValueError:\n"
    "        print('swallowed the cancel')\n"
    "        held['ran on'] = True\n"
    "    return 'outer done'\n"
    "t = asyncio.create_task(outer())\n"
    "await ready.wait()\n"
    "try:\n"
    "    await held['child']\n"
    "except ValueError:\n"
    "    pass\n"
)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("ending", "expected"),
    [
        ("'main done'", "main done"),  # the run's end cancels t (its group's body waits)
        (
            "t.cancel()\n"
            "try:\n"
            "    got = await t\n"
            "except asyncio.CancelledError:\n"
            "    got = 'cancelled'\n"
            "[got, t.cancelled(), 'ran on' in held]",
            ["cancelled", True, False],
        ),
    ],
)
async def test_asyncio_tasks_attack_taskgroup_exit_passes_a_cancellation_on(
    ending: str, expected: Any
) -> None:
    # F09 (ninth attack): a failed child made the group's exit raise a catchable
    # ExceptionGroup in place of the body's cancellation: the task ran on after the run
    result = await Sandbox(limits=Limits(timeout=10)).run(CANCEL_IN_GROUP + ending)
    assert result.ok, result.error
    assert result.value == expected
    assert "swallowed" not in result.output
    assert result.wall_time < 5


@pytest.mark.anyio
async def test_asyncio_tasks_attack_primitive_wakes_one_waiter_and_none_is_lost() -> None:
    # F10 (ninth attack): every release woke every waiter (O(N²) task switches: 2,000
    # tasks took ~11 s); now one waiter a release, and one woken as it is cancelled (the
    # release right after the cancel) passes the wake on
    contended = (
        "import asyncio\n"
        "sem = asyncio.Semaphore(1)\n"
        "q = asyncio.Queue()\n"
        "async def w(i):\n"
        "    async with sem:\n"
        "        await asyncio.sleep(0)\n"
        "    return await q.get()\n"
        "ts = [asyncio.create_task(w(i)) for i in range(3000)]\n"
        "for i in range(3000):\n"
        "    q.put_nowait(i)\n"
        "sorted([await t for t in ts]) == list(range(3000))"
    )
    result = await Sandbox(limits=Limits(timeout=8)).run(contended)
    assert result.ok, result.error  # waking all: ~25 s here, past the 8 s deadline
    assert result.value is True
    handed_on = (
        "import asyncio\n"
        "sem = asyncio.Semaphore(0)\n"
        "got = []\n"
        "ready = asyncio.Event()\n"
        "async def w(n):\n"
        "    ready.set()\n"
        "    async with sem:\n"
        "        got.append(n)\n"
        "a = asyncio.create_task(w('a'))\n"
        "await ready.wait()\n"
        "ready.clear()\n"
        "b = asyncio.create_task(w('b'))\n"
        "await ready.wait()\n"
        "a.cancel()\n"
        "sem.release()\n"
        "try:\n"
        "    await a\n"
        "except asyncio.CancelledError:\n"
        "    pass\n"
        "await asyncio.wait_for(b, 5)\n"
        "[got[-1], b.done(), sem.locked()]"
    )
    result = await Sandbox(limits=Limits(timeout=10)).run(handed_on)
    assert result.ok, result.error
    assert result.value == ["b", True, False]


# ---------------------------------------------------------------------------- cancellation

CANCELLATION: dict[str, str] = {
    "finally_runs": (
        "import asyncio\n"
        "async def worker(out):\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    finally:\n"
        '        out.append("cleanup")\n'
        "async def main():\n"
        "    out = []\n"
        "    t = asyncio.create_task(worker(out))\n"
        "    await asyncio.sleep(0.01)\n"
        "    t.cancel()\n"
        "    await asyncio.sleep(0.01)\n"
        "    return out, t.cancelled()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "except_runs_and_the_task_returns": (
        "import asyncio\n"
        "async def worker():\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    except asyncio.CancelledError:\n"
        "        await asyncio.sleep(0)\n"
        '        return "graceful"\n'
        "async def main():\n"
        "    t = asyncio.create_task(worker())\n"
        "    await asyncio.sleep(0.01)\n"
        "    t.cancel()\n"
        "    got = await t\n"
        "    return got, t.cancelled(), t.done()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "wait_for_timeout_runs_finally": (
        "import asyncio\n"
        "async def worker(out):\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    finally:\n"
        '        out.append("cleanup")\n'
        "async def main():\n"
        "    out = []\n"
        "    try:\n"
        "        await asyncio.wait_for(worker(out), timeout=0.05)\n"
        "    except TimeoutError:\n"
        '        out.append("timeout")\n'
        "    return out\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "task_group_failure_runs_the_siblings_finally": (
        "import asyncio\n"
        "async def sibling(out, n):\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    finally:\n"
        '        out.append(f"cleanup {n}")\n'
        "async def boom():\n"
        "    await asyncio.sleep(0.01)\n"
        '    raise ValueError("boom")\n'
        "async def main():\n"
        "    out = []\n"
        "    try:\n"
        "        async with asyncio.TaskGroup() as tg:\n"
        "            a = tg.create_task(sibling(out, 1))\n"
        "            b = tg.create_task(sibling(out, 2))\n"
        "            tg.create_task(boom())\n"
        "    except* ValueError as eg:\n"
        "        out.append([str(e) for e in eg.exceptions])\n"
        "    return sorted(map(str, out)), a.cancelled(), b.cancelled()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "cancel_before_start_never_runs_the_body": (
        "import asyncio\n"
        "async def worker(out):\n"
        '    out.append("body ran")\n'
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    finally:\n"
        '        out.append("cleanup")\n'
        "async def main():\n"
        "    out = []\n"
        "    t = asyncio.create_task(worker(out))\n"
        "    t.cancel()\n"
        "    try:\n"
        "        await t\n"
        "    except asyncio.CancelledError:\n"
        '        out.append("cancelled")\n'
        "    return out, t.cancelled()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "message_cancelling_and_uncancel": (
        "import asyncio\n"
        "seen = []\n"
        "async def worker():\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    except asyncio.CancelledError as e:\n"
        "        seen.append(list(e.args))\n"
        "        raise\n"
        "async def main():\n"
        "    t = asyncio.create_task(worker())\n"
        "    await asyncio.sleep(0.01)\n"
        "    a = t.cancelling()\n"
        '    t.cancel("stop now")\n'
        "    b = t.cancelling()\n"
        "    c = t.uncancel()\n"
        "    t.cancel()\n"
        "    try:\n"
        "        await t\n"
        "    except asyncio.CancelledError:\n"
        "        pass\n"
        "    return seen, a, b, c, t.cancelling(), t.cancelled(), t.cancel()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "self_cancel_is_delivered_at_the_next_await": (
        "import asyncio\n"
        "async def worker(out):\n"
        '    out.append("start")\n'
        '    holder["t"].cancel()\n'
        '    out.append("still running")\n'
        "    try:\n"
        "        await asyncio.sleep(0)\n"
        '        out.append("not reached")\n'
        "    except asyncio.CancelledError:\n"
        '        out.append("cancelled at await")\n'
        "    await asyncio.sleep(0)\n"
        '    out.append("after")\n'
        '    return "done"\n'
        "holder = {}\n"
        "async def main():\n"
        "    out = []\n"
        '    holder["t"] = asyncio.create_task(worker(out))\n'
        '    r = await holder["t"]\n'
        '    return out, r, holder["t"].cancelled()\n'
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "awaited_task_is_cancelled_with_its_waiter": (
        "import asyncio\n"
        "async def inner(out):\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    finally:\n"
        '        out.append("inner cleanup")\n'
        "async def outer(out, t2):\n"
        "    try:\n"
        "        await t2\n"
        "    finally:\n"
        '        out.append("outer cleanup")\n'
        "async def main():\n"
        "    out = []\n"
        "    t2 = asyncio.create_task(inner(out))\n"
        "    t1 = asyncio.create_task(outer(out, t2))\n"
        "    await asyncio.sleep(0.01)\n"
        "    t1.cancel()\n"
        "    await asyncio.sleep(0.01)\n"
        "    return sorted(out), t1.cancelled(), t2.cancelled()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
    "each_cancel_is_delivered_once": (
        "import asyncio\n"
        "async def worker(out):\n"
        "    for i in range(2):\n"
        "        try:\n"
        "            await asyncio.sleep(10)\n"
        "        except asyncio.CancelledError:\n"
        '            out.append(f"caught {i}")\n'
        '    return "survived twice"\n'
        "async def main():\n"
        "    out = []\n"
        "    t = asyncio.create_task(worker(out))\n"
        "    await asyncio.sleep(0.01)\n"
        "    t.cancel()\n"
        "    await asyncio.sleep(0.01)\n"
        "    t.cancel()\n"
        "    return out, await t, t.cancelled()\n"
        "result = asyncio.run(main())\n"
        "result\n"
    ),
}


@pytest.mark.parametrize("name", sorted(CANCELLATION))
def test_asyncio_tasks_cancel_is_plain_pythons(sandbox: Sandbox, name: str) -> None:
    # findings18 M38: the handlers of a cancelled task never ran (the host's cancellation was
    # re-raised at the top of each except/finally block): now its CancelledError
    same_as_python(sandbox, CANCELLATION[name])


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(CANCELLATION))
async def test_asyncio_tasks_cancel_on_both_backends(name: str) -> None:
    source = CANCELLATION[name]
    expected = await anyio.to_thread.run_sync(plain, source)  # its own asyncio.run
    result = await Sandbox(SANDBOX_TOOLS, limits=Limits(timeout=10)).run(source)
    assert result.ok, result.error
    assert result.value == jsonish(expected)


def test_asyncio_tasks_cancel_of_a_task_waiting_on_a_tool_call(sandbox: Sandbox) -> None:
    source = (
        "import asyncio\n"
        "started = asyncio.Event()\n"
        "out = []\n"
        "async def worker():\n"
        "    try:\n"
        "        call = block()\n"
        "        started.set()\n"
        "        await call\n"
        "    except asyncio.CancelledError:\n"
        "        out.append('cancelled in the call')\n"
        "        raise\n"
        "    finally:\n"
        "        out.append('cleanup')\n"
        "t = asyncio.create_task(worker())\n"
        "await started.wait()\n"
        "t.cancel()\n"
        "try:\n"
        "    await t\n"
        "except asyncio.CancelledError:\n"
        "    out.append('awaited')\n"
        "[out, t.cancelled()]"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == [["cancelled in the call", "cleanup", "awaited"], True]
    assert [(c.tool, c.status) for c in result.calls] == [("block", "cancelled")]


@pytest.mark.parametrize("mode", MODES)
def test_asyncio_tasks_cancel_swallowed_for_ever_ends_at_the_time_limit(mode: Any) -> None:
    source = (
        "import asyncio\n"
        "async def stubborn():\n"
        "    while True:\n"
        "        try:\n"
        "            await asyncio.sleep(1)\n"
        "        except asyncio.CancelledError:\n"
        "            pass\n"
        "t = asyncio.create_task(stubborn())\n"
        "await asyncio.sleep(0)\n"
        "t.cancel()\n"
        "await t"
    )
    box = Sandbox(limits=Limits(timeout=0.5), isolation=mode)
    try:
        result = box.run_sync(source)
    finally:
        box.close()
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "timed out" in result.error.message


def test_asyncio_tasks_cancel_at_the_run_end_runs_no_handler(sandbox: Sandbox) -> None:
    # the documented divergence from asyncio.run (which cancels the tasks left and runs
    # the loop until they finish): nothing of a script runs after its result
    EXECUTED.clear()
    source = (
        "import asyncio\n"
        "async def worker():\n"
        "    try:\n"
        "        await asyncio.sleep(10)\n"
        "    except asyncio.CancelledError:\n"
        "        print('handler')\n"
        "    finally:\n"
        "        print('cleanup')\n"
        "        await ping(i=7)\n"
        "t = asyncio.create_task(worker())\n"
        "await asyncio.sleep(0)\n"
        "'main done'"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == "main done"
    assert result.output == ""
    assert list(result.calls) == []
    assert 7 not in EXECUTED


def test_asyncio_tasks_cancel_timeout_context_is_refused_with_the_alternative(
    sandbox: Sandbox,
) -> None:
    refused(
        sandbox,
        "import asyncio\nasync with asyncio.timeout(1):\n    pass",
        "asyncio.wait_for(work(), timeout=seconds)",
    )
