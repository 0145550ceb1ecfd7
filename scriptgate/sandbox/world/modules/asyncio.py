"""The ``asyncio`` stand-in: ``run``, ``gather``, ``sleep``, tasks and primitives for async scripts.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text. A script can ``await`` at its top level, so the event loop is
the run's own: ``asyncio.run(main())`` at the top of a script is compiled as
``await main()`` (:mod:`scriptgate.sandbox.compile.cache`), ``asyncio.gather`` is the
run's ``gather`` and ``asyncio.sleep`` an opaque awaitable that waits on the loop,
bounded by the run's deadline; ``create_task``, ``TaskGroup``, ``Semaphore``, ``Lock``,
``Event``, ``Queue``, ``wait_for`` and ``as_completed`` are the sandbox's own, on the run's
task group (:mod:`.asyncio_tasks`). Nothing of the host's ``asyncio`` (loops, tasks,
futures, coroutines) is reachable.
"""

from __future__ import annotations

import inspect
from typing import Any

from scriptgate.sandbox.world.modules import asyncio_tasks as tasks
from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.modules.time import seconds_of

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "RUN_ONLY_AT_TOP", "build"]

NAME = "asyncio"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "run", "gather", "sleep", "TimeoutError",
    "create_task", "ensure_future", "wait_for", "as_completed", "TaskGroup", "Task",
    "Semaphore", "BoundedSemaphore", "Lock", "Event", "Queue",
    "CancelledError", "InvalidStateError", "QueueEmpty", "QueueFull",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (
    tasks.Task, tasks.TaskGroup, tasks.Semaphore, tasks.BoundedSemaphore, tasks.Lock,
    tasks.Event, tasks.Queue, tasks.CancelledError, tasks.InvalidStateError,
    tasks.QueueEmpty, tasks.QueueFull,
)  # fmt: skip
"""Value types this stand-in hands to scripts (its awaitables are opaque: the engine's, and
:class:`~.asyncio_tasks.Waiting`)."""

RUN_ONLY_AT_TOP = (
    "asyncio.run() works only as a statement of the script's own top level "
    "(`asyncio.run(main())`); inside a function write `await main()` — a script may "
    "await at its top level"
)
"""The error of an ``asyncio.run`` the compiler did not turn into an ``await``."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""

    def run_(main: Any, *, debug: Any = None) -> Any:
        """Refused where it is not the top-level idiom (see :data:`RUN_ONLY_AT_TOP`)."""
        if inspect.iscoroutine(main):
            main.close()  # the script's own coroutine: no "never awaited" warning on the host
        raise RuntimeError(RUN_ONLY_AT_TOP)

    def sleep(delay: Any, result: Any = None) -> Any:
        """An awaitable that waits ``delay`` seconds on the run's loop, then gives ``result``."""
        run.tick()
        return run.async_sleep(seconds_of(delay), result)

    def gather(*aws: Any, return_exceptions: bool = False) -> Any:
        """The run's ``gather``: ``await asyncio.gather(a(), b())`` runs them concurrently."""
        return run.gather(*aws, return_exceptions=return_exceptions)

    run_.__name__ = "run"
    return {
        "run": run_,
        "gather": gather,
        "sleep": sleep,
        "TimeoutError": TimeoutError,
        **tasks.make_tasks(run),
    }
