"""The script's generators, coroutines and async generators, known to their run (issue 13 §2).

Owns :class:`ScriptGenerators`: one per run (one per session, kept in the session's globals
under :data:`GENERATORS_KEY`). The compiler decorates every function the script defines whose body has a
``try``/``with`` with the run's ``_gw_`` hook (:meth:`ScriptGenerators.wrap`), and every other
``async def`` with ``_gwa_`` (:meth:`ScriptGenerators.wrap_async`); when the function makes
generators, coroutines or async generators, calling it registers the object it makes (a weak
reference, dropped when the object dies; an async generator expression goes through
``_ga_``, :meth:`ScriptGenerators.adopt`). At the end of the run the engine closes every one
still suspended (:meth:`ScriptGenerators.suspended`), inside the run's own task or greenlet and
under its budget, so a ``finally``/``__exit__`` never runs later in host code (CPython's
generator finalizer, the event loop's async-generator hooks).

Async generators never reach the event loop's hooks: the wrapper initialises each one's hooks
itself (no ``firstiter``, and a finalizer that only keeps the object for the run's end), so
asyncio's or trio's ``sys.set_asyncgen_hooks`` never learn of it. In a session the objects
still alive at a run's end are held (:attr:`ScriptGenerators.kept`) until a later run drops
them or the session is closed, so the host's collector never finalizes one between runs.

Sits in ``guards/`` next to the budget; imports only the constants and ``guards.ticking`` (the
bottom). It must not import the
engine, the world or anything above ``guards/``.
"""

from __future__ import annotations

import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.ticking import READ_EVERY, TICK_STEPS, run_charge

__all__ = [
    "CLEANUP_GRACE",
    "GENERATORS_KEY",
    "WRAPPER_CODES",
    "ScriptGenerators",
    "cleanup_message",
    "delegate",
    "is_async_generator",
]

GENERATORS_KEY = "_gens_"
"""Where a session's globals keep its :class:`ScriptGenerators` (no script can name it)."""

CLEANUP_GRACE = 1.0
"""Seconds the run's end gives the suspended generators' ``finally`` blocks, at most."""

_CO_GENERATOR = 0x20
_CO_COROUTINE = 0x80
_CO_ASYNC_GENERATOR = 0x200

# The wrappers are compiled as script code (the script's file name and module), so a
# decorated function is still "a function the script defined" for every guard (its
# ``__doc__``, ``@contextmanager``, key functions); the engine leaves their frames out of
# error line numbers (:data:`WRAPPER_CODES`).
_SOURCE = """
def plain(fn, live, ref, drop):
    def wrapper(*args, **kwargs):
        made = fn(*args, **kwargs)
        live[ref(made, drop)] = None
        return made
    return wrapper

def asynchronous(fn, live, ref, drop, hooks):
    def wrapper(*args, **kwargs):
        made = fn(*args, **kwargs)
        live[ref(made, drop)] = None
        hooks(made)
        return made
    return wrapper
"""
_FACTORIES: dict[str, Any] = {"__name__": "__script__", "__builtins__": {}}
exec(compile(_SOURCE, FILENAME, "exec"), _FACTORIES)
_plain: Callable[..., Any] = _FACTORIES["plain"]
_asynchronous: Callable[..., Any] = _FACTORIES["asynchronous"]


def _inner_code(factory: Callable[..., Any]) -> types.CodeType:
    for const in factory.__code__.co_consts:
        if isinstance(const, types.CodeType):
            return const
    raise AssertionError("no wrapper code")  # pragma: no cover


WRAPPER_CODES = frozenset({_inner_code(_plain), _inner_code(_asynchronous)})
"""The wrappers' code objects: their frames are not the script's own lines."""

_get_hooks = sys.get_asyncgen_hooks
_set_hooks = sys.set_asyncgen_hooks


def cleanup_message(grace: float) -> str:
    """The limit error of a run whose generators' cleanup outlived the grace."""
    return (
        f"The cleanup of the script's suspended generators (their finally/with blocks, run "
        f"when the script ended) took longer than {grace:g} s"
    )


class ScriptGenerators:
    """The generators, coroutines and async generators one run (or session) made."""

    __slots__ = ("__weakref__", "_drop", "dropped", "kept", "live")

    def __init__(self) -> None:
        self.live: dict[weakref.ref[Any], None] = {}
        """Weak references to every object made and not yet dead, oldest first."""
        self.dropped: list[Any] = []
        """Started async generators collected before the run closed them (kept for it)."""
        self.kept: list[Any] = []
        """A session's objects still alive at its last run's end (held until closed)."""
        self._drop = self.live.pop

    def wrap(self, fn: Any) -> Any:
        """The ``_gw_`` hook (a function with a ``try``/``with``): ``fn``, registering what
        it makes when that is a generator, coroutine or async generator."""
        if type(fn) is not types.FunctionType:
            return fn
        flags = fn.__code__.co_flags
        if flags & _CO_ASYNC_GENERATOR:
            wrapper = _asynchronous(fn, self.live, weakref.ref, self._drop, self._own_hooks)
        elif flags & (_CO_GENERATOR | _CO_COROUTINE):
            wrapper = _plain(fn, self.live, weakref.ref, self._drop)
        else:
            return fn
        wrapper.__name__ = fn.__name__
        wrapper.__qualname__ = fn.__qualname__
        wrapper.__doc__ = fn.__doc__
        return wrapper

    def wrap_async(self, fn: Any) -> Any:
        """The ``_gwa_`` hook (an ``async def`` with no ``try``/``with``): an async generator
        function registers what it makes (its hooks are the run's); a coroutine's is left."""
        if type(fn) is not types.FunctionType or not fn.__code__.co_flags & _CO_ASYNC_GENERATOR:
            return fn
        return self.wrap(fn)

    def adopt(self, made: Any) -> Any:
        """The ``_ga_`` hook: an async generator expression's object, registered."""
        if type(made) is types.AsyncGeneratorType:
            self.live[weakref.ref(made, self._drop)] = None
            self._own_hooks(made)
        return made

    def _own_hooks(self, agen: Any) -> None:
        # Initialise the async generator's hooks now, with ours: no `firstiter` (the loop
        # never learns of it) and a finalizer that keeps it for the run's end. CPython reads
        # the thread's hooks once, at the first `__anext__()`; the awaitable is dropped
        # unstarted, so nothing of the generator runs here.
        old = _get_hooks()
        _set_hooks(firstiter=None, finalizer=self._finalize)
        try:
            agen.__anext__()
        finally:
            _set_hooks(*old)

    def _finalize(self, agen: Any) -> None:
        # the collector reached an async generator the run has not closed: keep it
        # (resurrected) until the run's end closes it in the run; an unstarted one
        # has no code to run
        if _started(agen):
            self.dropped.append(agen)

    def suspended(self) -> list[Any]:
        """Every object to close now, newest first, and forget the dropped ones."""
        found: list[Any] = []
        for ref in reversed(list(self.live)):
            obj = ref()
            if obj is not None and _needs_close(obj):
                found.append(obj)
        for obj in self.kept:
            if _needs_close(obj) and not any(obj is seen for seen in found):
                found.append(obj)
        found.extend(reversed(self.dropped))
        self.dropped.clear()
        return found

    def orphans(self) -> list[Any]:
        """Kept objects only this registry still holds (a later run dropped them)."""
        # a kept object's references: the `kept` list, the loop variable, the argument
        return [obj for obj in self.kept if sys.getrefcount(obj) <= 3 and _needs_close(obj)]

    def keep_alive(self) -> None:
        """Hold every suspended object (a session's run ended: they live on to later runs)."""
        self.kept = [obj for ref in self.live if (obj := ref()) is not None and _started(obj)]

    def pending(self) -> bool:
        """Whether anything is left to close (a cheap test before :meth:`suspended`)."""
        return bool(self.live or self.dropped or self.kept)


def _started(obj: Any) -> bool:
    kind = type(obj)
    if kind is types.GeneratorType:
        return bool(obj.gi_suspended)
    if kind is types.CoroutineType:
        return bool(obj.cr_suspended)
    if kind is types.AsyncGeneratorType:
        frame = obj.ag_frame
        return frame is not None and frame.f_lasti > 0 and not obj.ag_running
    return False


def _needs_close(obj: Any) -> bool:
    kind = type(obj)
    if kind is types.GeneratorType:
        return obj.gi_frame is not None and not obj.gi_running
    if kind is types.CoroutineType:
        # only an unawaited one (closed: no "never awaited" warning in the host); a
        # suspended coroutine is always awaited by someone (the send/throw methods are
        # refused): by a task the run cancels in the run, or by an object closed here
        return obj.cr_frame is not None and not obj.cr_running and not obj.cr_suspended
    return _started(obj)


def is_async_generator(obj: Any) -> bool:
    """Whether ``obj`` is closed with ``aclose()`` (awaited)."""
    return type(obj) is types.AsyncGeneratorType


def delegate(value: Any) -> Any:
    """What a script's ``yield from value`` delegates to (the compiler's ``_yf_``).

    A generator as it is (closing it runs its own ``finally``, compiled with the script's
    checks, or a stand-in's). Anything else is read through :func:`_read_through`, a host
    generator with nothing to run on close: CPython would call the iterator's own ``close``
    (or ``throw``) attribute when the outer generator is closed, and on a script object that
    may be a C callable that never ticks (``C.close = text.split``), run by the host's
    collector after the run (eighth attack F01/F02). A script's iterator classes keep their
    ``__next__``; only their ``close``/``throw`` are not called through ``yield from``.
    The host generator charges the run every :data:`~guards.ticking.READ_EVERY` items: the
    outer generator's frame runs no tick while it delegates, and C consumers trust a
    script generator to tick (findings15 E01: ``all(g())`` of ``yield from range(1,
    10**8)`` ran 8.6 s past a 1 s deadline).
    """
    if type(value) is types.GeneratorType:
        return value
    return _read_through(iter(value), run_charge())


def _read_through(iterator: Any, charge: Callable[[Any], Any] | None) -> Any:
    count = 0
    while True:
        try:
            item = next(iterator)
        except StopIteration as stop:
            return stop.value
        if charge is not None:
            count += 1
            if count >= READ_EVERY:
                count = 0
                charge(TICK_STEPS)  # the run's full periodic check (findings15 E01)
        yield item
