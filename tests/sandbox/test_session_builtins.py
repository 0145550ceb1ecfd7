"""A session's functions act for the run that calls them, not the run that made them.

CPython keeps a function's builtins (its ``__builtins__`` when it was made), so a
function defined in one run of a session and called in a later one used the first run's
``__import__``, ``len``, ``sleep``…, bound to a finished run: an import inside it got the
finished run's stand-ins (``time.sleep`` refused as another run's, an iterator broken by
that run's stop: "generator raised StopIteration"). The session keeps one builtins dict
and fills it with each run's builtins.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    box = Sandbox(limits=Limits(timeout=2), isolation=request.param)
    yield box
    box.close()


def test_session_builtins_an_earlier_runs_function_imports_for_this_run(sandbox: Sandbox) -> None:
    session = sandbox.session()
    made = session.run_sync(
        "def work(n):\n"
        "    import itertools, time\n"
        "    time.sleep(0.01)\n"
        "    return [len(list(itertools.islice(itertools.count(), n))), sorted([3, 1, 2])]\n"
        "work(2)"
    )
    assert made.ok, made.error
    assert made.value == [2, [1, 2, 3]]
    for n in (3, 4):
        later = session.run_sync(f"work({n})")
        assert later.ok, later.error
        assert later.value == [n, [1, 2, 3]]


def test_session_builtins_after_a_timed_out_run() -> None:
    # in-process only: a process session's worker is killed at the deadline, with its globals
    session = Sandbox(limits=Limits(timeout=2)).session()
    made = session.run_sync(
        "def first(n):\n    import itertools\n    for x in itertools.count():\n"
        "        if x == n:\n            return x\n1"
    )
    assert made.ok, made.error
    stopped = session.run_sync("first(10**15)")
    assert stopped.error is not None
    assert stopped.error.kind == "limit"
    again = session.run_sync("first(5)")
    assert again.ok, again.error
    assert again.value == 5
