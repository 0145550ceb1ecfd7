"""No script code runs after its run: suspended generators are closed inside the run.

Issue 13 §2 ("a run's tool functions ... are dead once the run ends"), the generator gap:
a script generator or async generator left suspended when a run ends used to be finalized
later by the host (CPython's generator finalizer when the object is collected, asyncio's or
trio's async-generator hooks), running the script's ``finally``/``__exit__`` outside the
run's context, limits and records. The run now closes every suspended one at its end,
inside the run: what their ``finally`` blocks print and call is in the run's result. The
host counts every execution of its ``echo`` tool; a run's records must hold every one.
"""

from __future__ import annotations

import gc
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_support import EchoTool

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox

_ECHO = EchoTool()
_TOOL = _ECHO.tool
_EXECUTED = _ECHO.executed

_GEN = """
def gen():
    try:
        yield 1
        yield 2
    finally:
        print("fin")
        echo(m="fin")
"""

_CM = """
class Guard:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        print("exit")
        echo(m="exit")
        return False
def gen():
    with Guard():
        yield 1
        yield 2
"""

_AGEN = """
async def agen():
    try:
        yield 1
        yield 2
    finally:
        print("fin")
        await echo(m="fin")
"""

_SUSPENDED = {
    "next": _GEN + "g = gen()\nnext(g)\n1",
    "with": _CM + "g = gen()\nnext(g)\n1",
    "for-break": _GEN + "g = gen()\nfor x in g:\n    break\n1",
    "in-a-cycle": _GEN + "g = gen()\nnext(g)\nbox = [g]\nbox.append(box)\ndel g, box\n1",
    "yield-from": _GEN + "def outer():\n    yield from gen()\nh = outer()\nnext(h)\n1",
    "held-by-a-plain-generator": _GEN
    + "def outer():\n    inner = gen()\n    next(inner)\n    yield 0\nh = outer()\nnext(h)\n1",
    "method": "class C:\n    def items(self):\n        try:\n            yield 1\n"
    "        finally:\n            print('fin')\n            echo(m='fin')\nc = C()\n"
    "g = c.items()\nnext(g)\n1",
    "async-for-break": _AGEN + "async for x in agen():\n    break\n1",
    "async-kept": _AGEN + "a = agen()\nasync for x in a:\n    break\n1",
    "async-in-a-cycle": _AGEN
    + "a = agen()\nasync for x in a:\n    break\nbox = [a]\nbox.append(box)\ndel a, box\n1",
}


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    isolation: Isolation = request.param
    box = Sandbox([_TOOL], isolation=isolation, limits=Limits(timeout=20, max_tool_calls=None))
    yield box
    box.close()


_unrecorded = _ECHO.unrecorded


@pytest.mark.parametrize("case", list(_SUSPENDED), ids=str)
def test_attack_suspended_generator_finally_runs_inside_its_run(
    sandbox: Sandbox, case: str
) -> None:
    before = len(_EXECUTED)
    result = sandbox.run_sync(_SUSPENDED[case])
    assert result.ok, result.error
    assert result.value == 1
    word = "exit" if case == "with" else "fin"
    assert result.output == f"{word}\n"
    assert [(call.tool, call.status) for call in result.calls] == [("echo", "ok")]
    assert _unrecorded(before, len(result.calls)) == []


def test_attack_suspended_generator_of_a_tripped_run_is_closed_with_the_stop(
    sandbox: Sandbox,
) -> None:
    # the run ended on its step limit: the generator's finally runs, and its tool call
    # meets the stop (no execution), the result stays the limit
    box = Sandbox([_TOOL], isolation=sandbox.isolation, limits=Limits(max_steps=2_000))
    try:
        before = len(_EXECUTED)
        result = box.run_sync(_GEN + "g = gen()\nnext(g)\nwhile True:\n    pass")
        assert result.error is not None
        assert result.error.kind == "limit", result.error
        assert result.calls == ()
        assert _unrecorded(before) == []
    finally:
        box.close()


@pytest.mark.parametrize(
    "cleanup",
    [
        "def gen():\n    try:\n        yield 1\n    finally:\n        while True:\n            pass\n",
        "async def gen():\n    try:\n        yield 1\n    finally:\n        import asyncio\n"
        "        await asyncio.sleep(3600)\n",
        "async def gen():\n    try:\n        yield 1\n    finally:\n"
        "        while True:\n            await echo(m='loop')\n",
    ],
    ids=["loop", "await-forever", "tool-loop"],
)
def test_attack_suspended_generator_cleanup_cannot_hold_the_run(
    sandbox: Sandbox, cleanup: str
) -> None:
    # the script ended well within its 20 s; its generator's finally never ends: the
    # run ends after a short grace, as a limit
    step = "async for x in g:\n    break" if "async" in cleanup else "next(g)"
    before = len(_EXECUTED)
    started = time.monotonic()
    result = sandbox.run_sync(cleanup + f"g = gen()\n{step}\n1")
    assert time.monotonic() - started < 10
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "clean" in result.error.message
    assert _unrecorded(before, len(result.calls)) == []


def test_attack_generator_kept_in_a_session_lives_on_and_closes_at_reset(
    sandbox: Sandbox,
) -> None:
    session = sandbox.session()
    before = len(_EXECUTED)
    first = session.run_sync(_GEN + "g = gen()\nnext(g)")
    assert first.ok, first.error
    assert first.calls == ()
    later = session.run_sync("next(g)")
    assert later.ok, later.error
    assert later.value == 2
    assert later.calls == ()
    assert _unrecorded(before) == []
    dropped = session.run_sync("h = gen()\nnext(h)\ndel h\n1")
    assert dropped.output == "fin\n"  # no reference left: closed (CPython) in the run
    assert len(dropped.calls) == 1
    session.run_sync("k = gen()\nnext(k)")
    forgotten = session.run_sync("del k\n1")  # the session held it: the run closes it
    assert forgotten.output == "fin\n"
    assert [call.status for call in forgotten.calls] == ["ok"]
    before = len(_EXECUTED)
    session.reset()
    gc.collect()
    # in-process the reset closes `g` inside a run (its tool call executes in it);
    # process mode discards the session's worker, and nothing of it runs again
    expected = [{"m": "fin"}] if sandbox.isolation == "in_process" else []
    assert _EXECUTED[before:] == expected


def test_attack_async_generator_kept_in_a_session_resumes_in_a_later_run(
    sandbox: Sandbox,
) -> None:
    session = sandbox.session()
    before = len(_EXECUTED)
    first = session.run_sync(_AGEN + "a = agen()\nasync for v in a:\n    break\nv")
    assert first.ok, first.error
    later = session.run_sync("async for v in a:\n    break\nv")
    assert later.ok, later.error
    assert later.value == 2
    assert _unrecorded(before) == []
    session.reset()
    gc.collect()
    expected = [{"m": "fin"}] if sandbox.isolation == "in_process" else []
    assert _EXECUTED[before:] == expected


@pytest.mark.parametrize(
    "source",
    [
        _GEN + "gen()",
        _GEN + "g = gen()\nnext(g)\ng",
        _GEN + "[gen(), {'k': gen()}]",
    ],
    ids=["fresh", "suspended", "nested"],
)
def test_attack_escaping_generator_is_rendered_without_running_it(
    sandbox: Sandbox, source: str
) -> None:
    before = len(_EXECUTED)
    result = sandbox.run_sync(source.replace("yield 1", "echo(m='body')\n        yield 1"))
    assert "generator" in str(result.value), result
    ran = [call for call in result.calls if call.arguments == {"m": "body"}]
    assert len(ran) == source.count("next(g)")  # the script's own steps, in the run
    assert _unrecorded(before, len(result.calls)) == []


def test_attack_generator_in_a_tool_argument_is_not_run(sandbox: Sandbox) -> None:
    before = len(_EXECUTED)
    source = _GEN.replace("yield 1", "echo(m='body')\n        yield 1") + "echo(g=gen())"
    result = sandbox.run_sync(source)
    assert result.error is not None
    assert [call.arguments for call in result.calls if call.status == "ok"] == []
    assert _unrecorded(before, len(result.calls)) == []


def _script_generator(agen: Any) -> bool:
    code = getattr(agen, "ag_code", None)
    return code is not None and code.co_filename == FILENAME


@pytest.mark.anyio
async def test_attack_script_async_generators_never_reach_the_loops_hooks() -> None:
    # the host loop's asyncgen hooks (asyncio's or trio's) never learn of a script's
    # async generator: neither at its first iteration nor when it is collected
    seen: list[str] = []
    firstiter, finalizer = sys.get_asyncgen_hooks()

    def spy_first(agen: Any) -> None:
        if _script_generator(agen):
            seen.append("firstiter")
        if firstiter is not None:
            firstiter(agen)

    def spy_final(agen: Any) -> None:
        if _script_generator(agen):
            seen.append("finalizer")
        if finalizer is not None:
            finalizer(agen)

    sys.set_asyncgen_hooks(spy_first, spy_final)
    box = Sandbox([_TOOL])
    try:
        for case in ("async-for-break", "async-kept", "async-in-a-cycle"):
            result = await box.run(_SUSPENDED[case])
            assert result.ok, (case, result.error)
            assert result.output == "fin\n", case
        expression = await box.run(
            _AGEN + "e = (x async for x in agen())\nasync for v in e:\n    break\nv"
        )
        assert expression.ok, expression.error
        assert expression.value == 1
        assert expression.output == "fin\n"
        plain = await box.run(
            "async def plain():\n    yield 1\n    yield 2\nasync for v in plain():\n    break\n"
            "kept = plain()\nasync for w in kept:\n    break\nv + w"
        )
        assert plain.value == 2, plain
        session = box.session()
        kept = await session.run(_AGEN + "a = agen()\nasync for v in a:\n    break\nv")
        assert kept.ok, kept.error
        assert (await session.run("async for v in a:\n    break\nv")).value == 2
        gc.collect()
        before = len(_EXECUTED)
        await session.aclose()  # closed in a last run of the session, on this loop
        assert _EXECUTED[before:] == [{"m": "fin"}]
    finally:
        sys.set_asyncgen_hooks(firstiter, finalizer)
        await box.aclose()
    assert seen == []


_CONTEXT = '''
import contextlib
@contextlib.contextmanager
def opened(name):
    """Open it."""
    try:
        yield name
    finally:
        print("closed", name)
with opened("a") as x:
    print("in", x)
def walk():
    """Walk it."""
    with opened("b"):
        yield 1
[opened.__name__, walk.__name__, walk.__doc__]
'''


def test_generators_registered_functions_keep_their_names_lines_and_contexts() -> None:
    box = Sandbox([_TOOL])
    try:
        result = box.run_sync(_CONTEXT)
        assert result.ok, result.error
        assert result.output == "in a\nclosed a\n"
        assert result.value == ["opened", "walk", "Walk it."]
        named = box.run_sync(_GEN + "[gen.__name__, repr(gen).split()[1]]")
        assert named.value == ["gen", "gen"], named
        wrong = box.run_sync(_GEN + "g = gen(1, 2)\n")
        assert wrong.error is not None
        assert wrong.error.type == "TypeError"
        assert wrong.error.line == _GEN.count("\n") + 1  # the script's line, not the hook's
    finally:
        box.close()


def test_generators_plain_generator_functions_are_not_registered() -> None:
    # the hot path: a generator with no try/with in its body runs nothing when closed,
    # so it is compiled as it was (no hook call per generator made)
    from scriptgate.sandbox.compile.cache import CompiledScript, compile_script

    def hooks(source: str) -> set[str]:
        compiled = compile_script(source, max_source_bytes=100_000, session=False)
        assert isinstance(compiled, CompiledScript)
        names: set[str] = set()
        todo = [compiled.code]
        while todo:
            code = todo.pop()
            names.update(code.co_names)
            todo.extend(c for c in code.co_consts if hasattr(c, "co_names"))
        return names & {"_gw_", "_gwa_", "_ga_"}

    assert hooks("def nums(n):\n    for i in range(n):\n        yield i\nsum(nums(3))") == set()
    assert hooks("def f():\n    return 1\nf()") == set()
    assert hooks(_GEN + "gen()") == {"_gw_"}
    assert hooks(_CM + "gen()") == {"_gw_"}
    assert hooks("async def a():\n    yield 1\nNone") == {"_gwa_"}
    assert hooks("async def a():\n    yield 1\ng = (x async for x in a())") == {"_gwa_", "_ga_"}
    assert hooks("g = (x for x in (1, 2))") == set()


_LEFT_RUNNING = """
import asyncio
async def slow():
    try:
        await asyncio.sleep(30)
    finally:
        print("slow fin")
        await echo(m="slow")
async def bad():
    raise ValueError("x")
try:
    await gather(slow(), bad())
except ValueError:
    pass
unawaited = slow()
1
"""


def test_attack_gathered_coroutine_left_running_ends_inside_its_run(sandbox: Sandbox) -> None:
    # gather raised at once, its other coroutine still waits when the script ends: the
    # run cancels it (its finally meets the cancellation first: nothing of it runs), and
    # nothing of it runs later in the host; the unawaited one is closed unstarted (no
    # "never awaited" warning from the host's collector)
    before = len(_EXECUTED)
    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sandbox.run_sync(_LEFT_RUNNING)
        gc.collect()
    assert time.monotonic() - started < 10
    assert result.ok, result.error
    assert result.output == ""
    assert _unrecorded(before, len(result.calls)) == []
    assert [w for w in caught if "never awaited" in str(w.message)] == []


def test_attack_generator_of_a_dropped_session_runs_nothing_afterwards() -> None:
    # seventh attack F11b's last variant: a session dropped without reset()/close() leaves its
    # suspended generators to the host's collector; their finally starts with `_check_()`,
    # which meets the ended run's RunEnded stop (a GeneratorExit: a clean, silent close)
    box = Sandbox([_TOOL], limits=Limits(timeout=20))
    session = box.session()
    kept = session.run_sync(
        "log = []\ndef gen():\n    try:\n        yield 1\n    finally:\n"
        "        log.append('finally ran')\n        echo(m='late')\n"
        "g = gen()\nnext(g)\nbox = [g]\nbox.append(box)\nlen(log)"
    )
    assert kept.ok, kept.error
    state = session._state
    unraisable: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        before = len(_EXECUTED)
        del session
        state.pop("g")
        state.pop("box")
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert state["log"] == []
    assert _EXECUTED[before:] == []
    assert unraisable == []
    box.close()


_DELEGATE = (
    "log = [1]\n"
    "class It:\n"
    "    def __iter__(self):\n"
    "        return self\n"
    "    def __next__(self):\n"
    "        return 7\n"
    "    close = log.clear\n"  # a C callable: closing through `yield from` would call it
    "def g():\n"
    "    yield from It()\n"
)


def test_attack_yield_from_delegate_close_is_never_called_by_the_host() -> None:
    # eighth attack F01/F02: a generator stopped at `yield from` has nothing to register
    # (no try/with), but CPython's close() calls the delegate's `close` attribute: any
    # callable, C code that never ticks, run by the host's collector after the run (a
    # session dropped without close here). `yield from` reads a non-generator through a
    # host generator that calls nothing on close.
    box = Sandbox([], limits=Limits(timeout=20))
    session = box.session()
    kept = session.run_sync(_DELEGATE + "x = g()\nnext(x)\nbox = [x]\nbox.append(box)\nlen(log)")
    assert kept.ok, kept.error
    assert kept.value == 1
    state = session._state
    del session
    state.pop("x")
    state.pop("box")
    gc.collect()
    assert state["log"] == [1]
    box.close()


def test_generators_yield_from_reads_iterables_as_python_does(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        _DELEGATE + "def inner():\n    yield 1\n    return 'done'\n"
        "def outer():\n    got = yield from inner()\n    yield got\n"
        "    yield from [2, 3]\n    yield from (i * i for i in range(3))\n"
        "    yield from {'k': 1}\n"
        "class R:\n    def __iter__(self):\n        return iter([8, 9])\n"
        "def third():\n    yield from R()\n    yield from It()\n"
        "t = third()\n"
        "[list(outer()), [next(t), next(t), next(t)], log]"
    )
    assert result.ok, result.error
    assert result.value == [[1, "done", 2, 3, 0, 1, 4, "k"], [8, 9, 7], [1]]
