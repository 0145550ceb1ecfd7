"""The ``asyncio`` stand-in's tasks and primitives: ``create_task``, ``TaskGroup``,
``Semaphore``, ``Lock``, ``Event``, ``Queue``, ``wait_for`` and ``as_completed``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation or
the model-facing text (the run's task group is reached through ``RunWorld.spawn``, its
caller check through ``RunWorld.check``). Everything runs on anyio (asyncio and trio):
a task is started by the engine in the run's own task group and context (its tool calls
are the run's, checked and recorded), counted against :data:`MAX_TASKS` live tasks and
cancelled at the run's end. What a script holds is this module's own objects: a
:class:`Task` handle (``await``, ``done``, ``result``, ``cancel``, ``cancelled``) and
:class:`Waiting` awaitables with nothing on them; never a host task, future, coroutine
or loop. Every method checks that it is called by the live run that made the object,
so one kept in a session (or passed to another run) is refused there.

Cancellation is asyncio's: ``task.cancel()`` (and ``wait_for``'s timeout, a ``TaskGroup``
whose task failed) throws this module's :class:`CancelledError` into the task at the await
it is suspended at (:func:`at_await`), so its ``except``/``finally`` blocks run, it may
await again in them, and one that catches it and returns ends not cancelled. A task
cancelled before it started never runs its coroutine. A task that swallows every
cancellation runs on, as in CPython, until the run's time limit stops it. The run's own
stop is different: at the run's end (the script's result is made), a limit or an abort,
the run's task group is cancelled and the host's cancellation unwinds every task with
no ``except``/``finally`` block run (``_check_()`` re-raises it at the top of each) —
unlike ``asyncio.run``, which cancels the tasks left and waits for them: nothing of a
script runs after its result, and cleanup cannot hold a run open. Not yet CPython's:
a task cancelled while it awaits ``gather(...)`` does not cancel the gathered
coroutines (they run on, stopped at the run's end), and a ``TaskGroup`` task's failure
cancels its siblings but not the body of the ``async with`` (it goes on to its end).
"""

from __future__ import annotations

import collections
import contextvars
import inspect
import math
import types
from collections.abc import Callable, Coroutine, Generator, Iterator
from typing import Any

import anyio

from scriptgate.sandbox.guards.boundary import register_opaque
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = [
    "MAX_QUEUE",
    "MAX_TASKS",
    "BoundedSemaphore",
    "CancelledError",
    "Event",
    "InvalidStateError",
    "Lock",
    "Queue",
    "QueueEmpty",
    "QueueFull",
    "Semaphore",
    "Task",
    "TaskGroup",
    "Waiting",
    "at_await",
    "check_owner",
    "make_tasks",
]

MAX_TASKS = 10_000
"""Tasks of one run alive at once (``create_task``, ``TaskGroup``, ``wait_for``…)."""
MAX_QUEUE = 1_000_000
"""Items an ``asyncio.Queue`` holds at most (its ``maxsize`` too); the memory budget
bounds what the items weigh."""
MAX_PERMITS = 1_000_000
"""The largest initial value of a ``Semaphore``."""


class CancelledError(BaseException):
    """Thrown into a cancelled task at its await point (its ``except``/``finally`` blocks
    run); raised by awaiting (or ``result()`` of) a task that ended cancelled."""


_CURRENT: contextvars.ContextVar[Task | None] = contextvars.ContextVar(
    "scriptgate_asyncio_task", default=None
)
"""The :class:`Task` whose script code runs in this host task (set by its runner; the
run's own gather runners set ``None``: they are not the task's code)."""


class _Steps:
    """An awaitable over a generator made by an ``__await__`` (for ``await`` in a coroutine)."""

    __slots__ = ("_gen",)

    def __init__(self, gen: Generator[Any, Any, Any]) -> None:
        self._gen = gen

    def __await__(self) -> Generator[Any, Any, Any]:
        return self._gen


def at_await(steps: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """``steps`` (what an awaitable of the run gives a script's ``await``), made a point
    where ``task.cancel()`` of the :class:`Task` running it is delivered: every
    ``__await__`` a script reaches (tool calls, ``gather``, ``sleep``, :class:`Waiting`,
    :class:`Task`) goes through here. Outside a task (the script's main body, a gather
    runner) it is ``steps`` itself."""
    task = _CURRENT.get()
    if task is None:
        return steps
    return task._tracked(_Steps(steps)).__await__()


def set_no_task() -> None:
    """Mark the calling host task as running no :class:`Task`'s code (gather runners)."""
    _CURRENT.set(None)


class InvalidStateError(Exception):
    """``result()`` of a task that is not done."""


class QueueEmpty(Exception):
    """``get_nowait()`` on an empty queue."""


class QueueFull(Exception):
    """``put_nowait()`` on a full queue."""


class Waiting:
    """An awaitable of this module (``sem.acquire()``, ``event.wait()``, ``queue.get()``…):
    nothing on it but ``await``; the host coroutine inside is never reachable."""

    __slots__ = ("_args", "_awaited", "_check", "_fn", "_what")

    def __init__(
        self,
        what: str,
        check: Callable[[str], None],
        fn: Callable[..., Coroutine[Any, Any, Any]],
        args: tuple[Any, ...],
    ) -> None:
        self._what = what
        self._check = check
        self._fn = fn  # the coroutine is made when awaited: none is left never awaited
        self._args = args
        self._awaited = False

    def _owned(self) -> None:
        # one kept from an ended (or another) run is refused
        self._check(self._what.removesuffix("()").removesuffix("(...)"))

    def __await__(self) -> Generator[Any, None, Any]:
        self._owned()
        if self._awaited:
            raise RuntimeError(f"this {self._what} was awaited already")
        self._awaited = True
        fn, args = self._fn, self._args
        self._fn = self._args = None  # type: ignore[assignment]
        return at_await(fn(*args).__await__())

    def __repr__(self) -> str:
        return f"<pending {self._what}>"


def check_owner(aw: Any) -> None:
    """Refuse a :class:`Task` or :class:`Waiting` of an ended or another run, with the
    message its own ``await`` gives; anything else passes (it is checked where it is used).
    Every entry point that takes an awaitable calls it first (``as_completed``,
    ``wait_for``, ``ensure_future``, ``create_task``, ``TaskGroup``, ``gather``)."""
    if type(aw) is Task:
        aw._tasks.check("await task")
    elif type(aw) is Waiting:
        aw._owned()


class _Tasks:
    """The per-run state: the engine's hooks and the count of live tasks."""

    __slots__ = ("check", "live", "run", "spawn")

    def __init__(self, run: RunWorld) -> None:
        self.run = run
        self.live = 0
        spawn, check = run.spawn, run.check

        def no_tasks(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("asyncio tasks work in an async script (one that uses await)")

        def no_check(name: str) -> None:
            return None

        self.spawn: Callable[..., None] = spawn if spawn is not None else no_tasks
        self.check: Callable[[str], None] = check if check is not None else no_check

    def start(self, aw: Any, name: str = "asyncio.create_task") -> Task:
        """A started task running ``aw`` (a script coroutine or an awaitable of the run)."""
        self.check(name)
        check_owner(aw)
        if self.live >= MAX_TASKS:
            raise RuntimeError(
                f"{name}(): more than {MAX_TASKS} tasks alive at once; await some first "
                "(or limit them with asyncio.Semaphore)"
            )
        task = Task(self)
        trusted = type(aw) is Waiting or type(aw) is Task
        self.spawn(aw, task._runner, name, trusted)
        task._source = aw
        self.live += 1
        return task

    def waiting(
        self, what: str, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any
    ) -> Waiting:
        """``fn(*args)`` as an opaque awaitable, made when awaited (the caller checked already)."""
        return Waiting(what, self.check, fn, args)


class Task:
    """What ``asyncio.create_task`` gives: ``await task``, ``done()``, ``result()``,
    ``cancel()``, ``cancelled()``, ``cancelling()``, ``uncancel()``.

    Cancellation is asyncio's, edge-triggered: ``cancel()`` cancels the one await the
    task is suspended at (each await of the task's code runs in its own cancel scope,
    :func:`at_await`), and the script's :class:`CancelledError` is raised there, so its
    ``except``/``finally`` blocks run and later awaits work (a task may catch it and
    return). A task cancelled before it started never runs its coroutine. The run's own
    stop (its end, a limit, an abort) is not this: it cancels the run's task group, and
    the host's cancellation unwinds every task with no handler run (``_check_()``)."""

    __slots__ = (
        "_cancel_msg", "_cancels", "_changes", "_failure", "_finished", "_must_cancel",
        "_result", "_source", "_tasks", "_wait_scope", "_watchers",
    )  # fmt: skip

    def __init__(self, tasks: Any = None) -> None:
        if type(tasks) is not _Tasks:
            raise TypeError("a Task is made by asyncio.create_task(coro)")
        self._tasks = tasks
        self._changes = _Changes()
        self._watchers: list[_Changes] = []
        self._finished = False
        self._result: Any = None
        self._failure: BaseException | None = None
        self._wait_scope: anyio.CancelScope | None = None  # the await it is suspended at
        self._must_cancel = False  # a cancel() not yet delivered
        self._cancel_msg: Any = None
        self._cancels = 0  # cancelling()
        self._source: Any = None

    def __del__(self) -> None:
        source = self._source
        if (
            type(source) is types.CoroutineType
            and inspect.getcoroutinestate(source) == "CORO_CREATED"
        ):
            source.close()  # cancelled before it started: no "never awaited" warning on the host

    def _cancelled_error(self) -> CancelledError:
        msg = self._cancel_msg
        return CancelledError() if msg is None else CancelledError(msg)

    async def _runner(self, aw: Any) -> None:
        _CURRENT.set(self)  # this host task's own context: its awaits are the task's
        cancelled = anyio.get_cancelled_exc_class()
        try:
            if self._must_cancel and type(self._source) is types.CoroutineType:
                self._must_cancel = False  # cancelled before it started: the body never runs
                self._failure = self._cancelled_error()
                return
            try:
                self._result = await aw
            except cancelled:
                raise  # the run's stop: no handler of the task ran, none runs here
            except BaseException as exc:  # raised where the task is awaited (its
                self._failure = exc  # CancelledError; a stop too: final in the run's budget)
        finally:
            self._wait_scope = None
            self._finished = True
            self._tasks.live -= 1
            self._changes.notify()
            for watcher in self._watchers:
                watcher.notify()
            self._watchers = []

    async def _tracked(self, inner: Any) -> Any:
        # one await of the task's code, in its own scope: cancel() cancels this scope
        # only, and the task's code gets CancelledError here (asyncio's edge-triggered
        # cancellation); an outer cancellation (the run's stop) passes through as itself
        outer = self._wait_scope
        with anyio.CancelScope() as scope:
            self._wait_scope = scope
            if self._must_cancel:
                scope.cancel()  # asked while the task ran: delivered at this await
            try:
                result = await inner
            finally:
                self._wait_scope = outer
        if scope.cancelled_caught:
            self._must_cancel = False
            raise self._cancelled_error()
        return result

    async def _done(self) -> None:
        while not self._finished:
            await self._changes.wait()

    def __await__(self) -> Generator[Any, None, Any]:
        self._tasks.check("await task")
        return at_await(self._wait().__await__())

    async def _wait(self) -> Any:
        try:
            await self._done()
        except anyio.get_cancelled_exc_class():
            self._cancel()  # the awaiting task was cancelled: so is this one, as in asyncio
            raise
        return self._outcome()

    def _outcome(self) -> Any:
        if self._failure is not None:
            raise self._failure
        return self._result

    def done(self) -> bool:
        """Whether the task has finished (returned, raised or was cancelled)."""
        self._tasks.check("task.done")
        return self._finished

    def result(self) -> Any:
        """The task's value; its exception re-raised; ``InvalidStateError`` if not done."""
        self._tasks.check("task.result")
        if not self._finished:
            raise InvalidStateError("the task is not done yet: await it first")
        return self._outcome()

    def cancel(self, msg: Any = None) -> bool:
        """Ask the task to stop: ``CancelledError(msg)`` is raised in it at its await;
        ``False`` if it has finished already."""
        self._tasks.check("task.cancel")
        return self._cancel(msg)

    def _cancel(self, msg: Any = None) -> bool:
        if self._finished:
            return False
        self._cancels += 1
        self._must_cancel = True
        scope = self._wait_scope
        if scope is None:
            self._cancel_msg = msg  # delivered at its next await
        elif not scope.cancel_called:
            self._cancel_msg = msg  # a second cancel() before it woke keeps the first's
            scope.cancel()
        return True

    def cancelled(self) -> bool:
        """Whether the task ended by being cancelled (a ``CancelledError`` left it)."""
        self._tasks.check("task.cancelled")
        return self._finished and type(self._failure) is CancelledError

    def cancelling(self) -> int:
        """How many ``cancel()`` requests are pending (``uncancel()`` takes one back)."""
        self._tasks.check("task.cancelling")
        return self._cancels

    def uncancel(self) -> int:
        """Take one ``cancel()`` request back (as asyncio 3.11 does, a cancellation on its
        way is still delivered); the requests left."""
        self._tasks.check("task.uncancel")
        if self._cancels > 0:
            self._cancels -= 1
        return self._cancels

    def __repr__(self) -> str:
        return f"<Task {'done' if self._finished else 'pending'}>"


class TaskGroup:
    """``async with asyncio.TaskGroup() as tg: tg.create_task(work())``: the block's end
    waits for every task; the first failure cancels the others, and the errors are raised
    together as an ``ExceptionGroup``. A cancellation (or a stop of the run) that reaches
    the block's end goes on as itself once the tasks are cancelled, never as a group."""

    __slots__ = ("_entered", "_tasks", "_world")

    def __init__(self, _world: Any = None) -> None:
        if type(_world) is not _Tasks:
            raise TypeError("a TaskGroup is made by asyncio.TaskGroup()")
        self._world = _world
        self._tasks: list[Task] = []
        self._entered = False

    def create_task(self, coro: Any, *, name: Any = None, context: Any = None) -> Task:
        """Start ``coro`` as a task of this group."""
        self._world.check("TaskGroup.create_task")
        if not self._entered:
            raise RuntimeError("TaskGroup.create_task() works inside `async with TaskGroup()`")
        task = self._world.start(coro, "TaskGroup.create_task")
        self._tasks.append(task)
        return task

    def __aenter__(self) -> Waiting:
        self._world.check("TaskGroup")
        if self._entered:
            raise RuntimeError("this TaskGroup was entered already")
        self._entered = True
        return self._world.waiting("TaskGroup", self._enter)

    async def _enter(self) -> TaskGroup:
        return self

    def __aexit__(self, kind: Any, exc: Any, tb: Any) -> Waiting:
        self._world.check("TaskGroup")
        return self._world.waiting("TaskGroup", self._exit, exc)

    async def _exit(self, exc: Any) -> bool:
        tasks = self._tasks
        if exc is not None:
            for task in tasks:
                task._cancel()
        changes = _Changes()
        cancelled = exc is not None
        while True:  # tasks may start more tasks of the group meanwhile
            if not cancelled and any(_failed(t) for t in tasks):
                cancelled = True  # the first failure cancels the others, as asyncio's does
                for task in tasks:
                    task._cancel()
            pending = [t for t in tasks if not t._finished]
            if not pending:
                break
            for task in pending:
                if changes not in task._watchers:
                    task._watchers.append(changes)
            try:
                await changes.wait()
            except anyio.get_cancelled_exc_class():
                for task in tasks:  # the waiting task was cancelled: so are the group's
                    task._cancel()
                raise
        self._entered = False
        if exc is not None and not isinstance(exc, Exception):
            # a cancellation (the run's end, task.cancel()) or a stop reaching the block's
            # end goes on as itself, never as a catchable group (issue 13, F09)
            return False
        errors = [t._failure for t in tasks if _failed(t)]
        if errors and isinstance(exc, Exception):
            errors.insert(0, exc)
        if errors:
            raise ExceptionGroup("unhandled errors in a TaskGroup", errors)  # type: ignore[type-var]
        return False


def _failed(task: Task) -> bool:
    failure = task._failure
    return task._finished and failure is not None and type(failure) is not CancelledError


def _permits(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("the Semaphore value must be an int")
    if value < 0:
        raise ValueError("Semaphore initial value must be >= 0")
    if value > MAX_PERMITS:
        raise ValueError(f"a Semaphore value above {MAX_PERMITS} is refused in the sandbox")
    return value


class _Changes:
    """A condition made of one-shot anyio events: ``wait()`` until the next ``notify()``."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    async def wait(self) -> None:
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()

    def notify(self) -> None:
        event = self._event
        if event is not None:
            self._event = None
            event.set()


class _Waiters:
    """A FIFO of waiting tasks: ``notify()`` wakes the one waiting longest, so each change
    costs one task switch, not one per waiter (F10: waking all was O(N²) for N contending
    tasks). A waiter that re-checks and finds nothing (another took it first) waits again;
    one cancelled after it was woken passes its wake on, so none is lost."""

    __slots__ = ("_queue",)

    def __init__(self) -> None:
        self._queue: collections.deque[list[anyio.Event | None]] = collections.deque()

    async def wait(self) -> None:
        entry: list[anyio.Event | None] = [anyio.Event()]
        event = entry[0]
        assert event is not None
        self._queue.append(entry)
        try:
            await event.wait()
        except BaseException:
            if event.is_set():
                self.notify()  # the wake it got goes to the next waiter
            else:
                entry[0] = None  # skipped by notify(): O(1), not a deque.remove
            raise

    def notify(self) -> None:
        queue = self._queue
        while queue:
            event = queue.popleft()[0]
            if event is not None:
                event.set()
                return


class Semaphore:
    """``asyncio.Semaphore(n)``: ``async with sem:`` lets ``n`` tasks in at once."""

    __slots__ = ("_changes", "_value", "_world")
    _bounded = False
    _bound = 0

    def __init__(self, value: Any = 1, *, _world: Any = None) -> None:
        if type(_world) is not _Tasks:
            raise TypeError("Semaphore() is made through asyncio.Semaphore(value)")
        self._world = _world
        self._value = _permits(value)
        self._changes = _Waiters()

    def locked(self) -> bool:
        """Whether an ``acquire()`` would wait."""
        self._world.check("Semaphore.locked")
        return self._value == 0

    def acquire(self) -> Waiting:
        """Wait for a permit, then take it (gives ``True``)."""
        self._world.check("Semaphore.acquire")
        return self._world.waiting("acquire()", self._acquire)

    async def _acquire(self) -> bool:
        while self._value <= 0:
            await self._changes.wait()
        self._value -= 1
        return True

    def release(self) -> None:
        """Give a permit back (wakes a waiting task)."""
        self._world.check("Semaphore.release")
        self._release()

    def _release(self) -> None:
        if self._bounded and self._value >= self._bound:
            raise ValueError("BoundedSemaphore released too many times")
        self._value += 1
        self._changes.notify()

    def __aenter__(self) -> Waiting:
        self._world.check("Semaphore")
        return self._world.waiting("async with", self._enter)

    async def _enter(self) -> None:
        await self._acquire()

    def __aexit__(self, kind: Any, exc: Any, tb: Any) -> Waiting:
        self._world.check("Semaphore")
        self._release()
        return self._world.waiting("async with", _nothing)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} value={self._value}>"


async def _nothing() -> None:
    return None


class BoundedSemaphore(Semaphore):
    """A ``Semaphore`` whose ``release()`` above the initial value raises ``ValueError``."""

    __slots__ = ("_bound",)
    _bounded = True

    def __init__(self, value: Any = 1, *, _world: Any = None) -> None:
        super().__init__(value, _world=_world)
        self._bound = self._value


class Lock(Semaphore):
    """``asyncio.Lock()``: a semaphore of one (``async with lock:``)."""

    __slots__ = ()
    _bounded = True
    _bound = 1

    def __init__(self, *, _world: Any = None) -> None:
        super().__init__(1, _world=_world)

    def _release(self) -> None:
        if self._value >= 1:
            raise RuntimeError("Lock is not acquired")
        super()._release()


class Event:
    """``asyncio.Event()``: ``await event.wait()`` until ``event.set()``."""

    __slots__ = ("_changes", "_flag", "_world")

    def __init__(self, *, _world: Any = None) -> None:
        if type(_world) is not _Tasks:
            raise TypeError("Event() is made through asyncio.Event()")
        self._world = _world
        self._flag = False
        self._changes = _Changes()

    def is_set(self) -> bool:
        """Whether the event is set."""
        self._world.check("Event.is_set")
        return self._flag

    def set(self) -> None:
        """Set the event: every waiting task wakes."""
        self._world.check("Event.set")
        self._flag = True
        self._changes.notify()

    def clear(self) -> None:
        """Unset the event."""
        self._world.check("Event.clear")
        self._flag = False

    def wait(self) -> Waiting:
        """Wait until the event is set (gives ``True``)."""
        self._world.check("Event.wait")
        return self._world.waiting("Event.wait()", self._wait)

    async def _wait(self) -> bool:
        while not self._flag:
            await self._changes.wait()
        return True

    def __repr__(self) -> str:
        return f"<Event {'set' if self._flag else 'unset'}>"


class Queue:
    """``asyncio.Queue(maxsize=0)``: ``put``/``get`` (awaited), their ``_nowait`` forms,
    ``qsize``/``empty``/``full``, ``task_done``/``join``. At most :data:`MAX_QUEUE` items."""

    __slots__ = ("_getters", "_items", "_joiners", "_maxsize", "_putters", "_unfinished", "_world")

    def __init__(self, maxsize: Any = 0, *, _world: Any = None) -> None:
        if type(_world) is not _Tasks:
            raise TypeError("Queue() is made through asyncio.Queue(maxsize)")
        if type(maxsize) is not int:
            raise TypeError("the Queue maxsize must be an int")
        if maxsize > MAX_QUEUE:
            raise ValueError(f"a Queue maxsize above {MAX_QUEUE} is refused in the sandbox")
        self._world = _world
        self._maxsize = maxsize
        self._items: collections.deque[Any] = collections.deque()
        self._unfinished = 0
        self._getters = _Waiters()  # an item added wakes one getter,
        self._putters = _Waiters()  # one taken wakes one putter,
        self._joiners = _Changes()  # and the last task_done() every join()

    @property
    def maxsize(self) -> int:
        """The most items the queue holds (0: unbounded, up to the sandbox's cap)."""
        return self._maxsize

    def qsize(self) -> int:
        """How many items are queued."""
        self._world.check("Queue.qsize")
        return len(self._items)

    def empty(self) -> bool:
        """Whether no item is queued."""
        self._world.check("Queue.empty")
        return not self._items

    def full(self) -> bool:
        """Whether ``put`` would wait."""
        self._world.check("Queue.full")
        return self._is_full()

    def _is_full(self) -> bool:
        if self._maxsize > 0:
            return len(self._items) >= self._maxsize
        return False

    def _add(self, item: Any) -> None:
        if len(self._items) >= MAX_QUEUE:
            raise QueueFull(
                f"an asyncio.Queue holds at most {MAX_QUEUE} items in the sandbox: "
                "consume some first (or give it a maxsize so put() waits)"
            )
        self._world.run.tick()
        self._items.append(item)
        self._unfinished += 1
        self._getters.notify()

    def put_nowait(self, item: Any) -> None:
        """Queue ``item`` now; ``QueueFull`` if the queue is full."""
        self._world.check("Queue.put_nowait")
        if self._is_full():
            raise QueueFull("the queue is full")
        self._add(item)

    def put(self, item: Any) -> Waiting:
        """Wait for room, then queue ``item``."""
        self._world.check("Queue.put")
        return self._world.waiting("Queue.put()", self._put, item)

    async def _put(self, item: Any) -> None:
        while self._is_full():
            await self._putters.wait()
        self._add(item)

    def get_nowait(self) -> Any:
        """The next item now; ``QueueEmpty`` if there is none."""
        self._world.check("Queue.get_nowait")
        if not self._items:
            raise QueueEmpty("the queue is empty")
        return self._take()

    def _take(self) -> Any:
        item = self._items.popleft()
        self._putters.notify()
        return item

    def get(self) -> Waiting:
        """Wait for an item, then take it."""
        self._world.check("Queue.get")
        return self._world.waiting("Queue.get()", self._get)

    async def _get(self) -> Any:
        while not self._items:
            await self._getters.wait()
        return self._take()

    def task_done(self) -> None:
        """Mark one taken item as processed (``join`` waits for all)."""
        self._world.check("Queue.task_done")
        if self._unfinished <= 0:
            raise ValueError("task_done() called too many times")
        self._unfinished -= 1
        if not self._unfinished:
            self._joiners.notify()

    def join(self) -> Waiting:
        """Wait until every queued item was marked done."""
        self._world.check("Queue.join")
        return self._world.waiting("Queue.join()", self._join)

    async def _join(self) -> None:
        while self._unfinished:
            await self._joiners.wait()

    def __repr__(self) -> str:
        return f"<Queue maxsize={self._maxsize} qsize={len(self._items)}>"


def _timeout_of(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if not isinstance(timeout, int | float) or isinstance(timeout, bool):
        raise TypeError(f"'{type(timeout).__name__}' object cannot be interpreted as a number")
    if math.isnan(timeout):
        raise ValueError("the timeout must be a number")
    return max(0.0, float(timeout))  # the run's deadline ends any wait first


def make_tasks(run: RunWorld) -> dict[str, Any]:
    """The task and primitive members of one run's ``asyncio``."""
    world = _Tasks(run)

    def create_task(coro: Any, *, name: Any = None, context: Any = None) -> Task:
        """Run ``coro`` concurrently as a task of the run; ``await task`` gives its value."""
        if context is not None:
            raise TypeError("create_task(context=...) is not available in the sandbox")
        return world.start(coro)

    def adopt(aw: Any, name: str) -> Task:
        # a task of this run as it is (one of an ended or other run is refused), else a new one
        if type(aw) is Task:
            check_owner(aw)
            return aw
        return world.start(aw, name)

    def ensure_future(coro: Any) -> Task:
        """A task for ``coro`` (a task is returned as it is)."""
        return adopt(coro, "asyncio.ensure_future")

    async def _wait_for(aw: Any, seconds: float | None) -> Any:
        task = adopt(aw, "asyncio.wait_for")
        try:
            if seconds is None:
                await task._done()
            else:
                with anyio.move_on_after(seconds):
                    await task._done()
        except anyio.get_cancelled_exc_class():
            task._cancel()  # the waiting task was cancelled: so is the awaitable
            raise
        if not task._finished:
            task._cancel()
            await task._done()  # its except/finally blocks run first, as in asyncio
            if type(task._failure) is CancelledError:
                raise TimeoutError("asyncio.wait_for: the awaitable did not finish in time")
        return task._outcome()  # it caught the cancellation and returned: its value

    def wait_for(aw: Any, timeout: Any) -> Waiting:
        """Await ``aw`` for at most ``timeout`` seconds; ``TimeoutError`` (and ``aw``
        cancelled) after that."""
        world.check("asyncio.wait_for")
        seconds = _timeout_of(timeout)
        aw = adopt(aw, "asyncio.wait_for")
        return world.waiting("asyncio.wait_for(...)", _wait_for, aw, seconds)

    def as_completed(aws: Any, *, timeout: Any = None) -> Iterator[Waiting]:
        """Awaitables, one per item of ``aws``, giving the results in the order they finish."""
        world.check("asyncio.as_completed")
        seconds = _timeout_of(timeout)
        items = list(run.charge(aws))
        for aw in items:  # all refused before any starts or is watched
            check_owner(aw)
        tasks = [
            aw if type(aw) is Task else world.start(aw, "asyncio.as_completed") for aw in items
        ]
        taken: list[Task] = []
        changes = _Changes()
        for task in tasks:
            task._watchers.append(changes)
        deadline = None if seconds is None else anyio.current_time() + seconds

        def ready() -> Task | None:
            for task in tasks:
                if task._finished and task not in taken:
                    return task
            return None

        async def next_done() -> Any:
            found = ready()
            while found is None:
                if deadline is None:
                    await changes.wait()
                else:
                    with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                        await changes.wait()
                    found = ready()
                    if found is None and anyio.current_time() >= deadline:
                        raise TimeoutError("asyncio.as_completed: timed out")
                found = ready()
            taken.append(found)
            return found._outcome()

        return iter([world.waiting("as_completed item", next_done) for _ in tasks])

    def semaphore(value: Any = 1) -> Semaphore:
        """``asyncio.Semaphore(value)``."""
        world.check("asyncio.Semaphore")
        return Semaphore(value, _world=world)

    def bounded_semaphore(value: Any = 1) -> BoundedSemaphore:
        """``asyncio.BoundedSemaphore(value)``."""
        world.check("asyncio.BoundedSemaphore")
        return BoundedSemaphore(value, _world=world)

    def lock() -> Lock:
        """``asyncio.Lock()``."""
        world.check("asyncio.Lock")
        return Lock(_world=world)

    def event() -> Event:
        """``asyncio.Event()``."""
        world.check("asyncio.Event")
        return Event(_world=world)

    def queue(maxsize: Any = 0) -> Queue:
        """``asyncio.Queue(maxsize=0)``."""
        world.check("asyncio.Queue")
        return Queue(maxsize, _world=world)

    def task_group() -> TaskGroup:
        """``asyncio.TaskGroup()``."""
        world.check("asyncio.TaskGroup")
        return TaskGroup(world)

    for fn, name in (
        (semaphore, "Semaphore"),
        (bounded_semaphore, "BoundedSemaphore"),
        (lock, "Lock"),
        (event, "Event"),
        (queue, "Queue"),
        (task_group, "TaskGroup"),
    ):
        fn.__name__ = name
    return {
        "create_task": create_task,
        "ensure_future": ensure_future,
        "wait_for": wait_for,
        "as_completed": as_completed,
        "Semaphore": semaphore,
        "BoundedSemaphore": bounded_semaphore,
        "Lock": lock,
        "Event": event,
        "Queue": queue,
        "TaskGroup": task_group,
        "Task": Task,
        "CancelledError": CancelledError,
        "InvalidStateError": InvalidStateError,
        "QueueEmpty": QueueEmpty,
        "QueueFull": QueueFull,
    }


register_opaque((Waiting,))
