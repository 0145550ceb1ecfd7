"""pi's cancellation contract (``AbortSignal`` / ``AbortController``), bridged to anyio.

A signal is a one-way flag with a reason. Hooks and tools receive it and are
expected to honour it themselves (pi §3.11): the pipeline checks it at fixed
points, and a running tool can ``await signal.wait()`` or wrap work in
``async with signal.cancel_scope():`` to be cancelled by anyio when it fires.

Call ``abort()`` from the event loop's thread (from another thread, use
``anyio.from_thread.run_sync(controller.abort)``); listeners run synchronously in
the aborting call. From a signal handler or another thread, use
:meth:`AbortController.abort_soon`: it marks the signal *pending* at once (a
plain attribute store, which a busy script's budget check sees) and fires it on
the loop through a thread- and signal-safe scheduler (:func:`loop_scheduler`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

import anyio
from anyio import CancelScope

__all__ = ["AbortController", "AbortError", "AbortSignal", "loop_scheduler"]


class AbortError(Exception):
    """The default abort reason (pi: ``This operation was aborted``)."""

    def __init__(self, message: str = "This operation was aborted") -> None:
        super().__init__(message)


class AbortSignal:
    """A read-only cancellation flag; create one with :class:`AbortController`."""

    __slots__ = ("_aborted", "_listeners", "_lock", "_pending", "_reason", "_waiters")

    def __init__(self) -> None:
        self._aborted = False
        self._pending: object = None
        self._reason: object = None
        self._listeners: list[Callable[[object], None]] = []
        self._waiters: list[anyio.Event] = []
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        """True once the controller has aborted."""
        return self._aborted

    @property
    def pending(self) -> object:
        """The reason of an abort requested by :meth:`AbortController.abort_soon` (or fired);
        ``None`` while neither. A busy script's budget check polls it."""
        if self._aborted:
            return self._reason
        return self._pending

    @property
    def reason(self) -> object:
        """Why it aborted (an exception or any value); ``None`` while not aborted."""
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the reason (or :class:`AbortError`) if aborted."""
        if self._aborted:
            reason = self._reason
            if isinstance(reason, BaseException):
                raise reason
            raise AbortError(str(reason) if reason is not None else "This operation was aborted")

    def add_listener(self, callback: Callable[[object], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` once on abort (at once if already aborted).

        Returns a function that removes the listener.
        """
        with self._lock:
            if not self._aborted:
                self._listeners.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._listeners:
                            self._listeners.remove(callback)

                return remove
        callback(self._reason)
        return lambda: None

    async def wait(self) -> object:
        """Wait until aborted; return the reason."""
        event = anyio.Event()
        with self._lock:
            if self._aborted:
                return self._reason
            self._waiters.append(event)
        try:
            await event.wait()
        finally:
            with self._lock:
                if event in self._waiters:
                    self._waiters.remove(event)
        return self._reason

    @asynccontextmanager
    async def cancel_scope(self) -> AsyncIterator[CancelScope]:
        """An anyio cancel scope that is cancelled when this signal aborts."""
        with anyio.CancelScope() as scope:
            if self._aborted:
                scope.cancel()
            remove = self.add_listener(lambda _reason: scope.cancel())
            try:
                yield scope
            finally:
                remove()

    def _fire(self, reason: object) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            self._reason = reason
            listeners, self._listeners = self._listeners, []
            waiters = list(self._waiters)
        for event in waiters:
            event.set()
        for listener in listeners:
            listener(reason)

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted!r}, reason={self._reason!r})"


class AbortController:
    """Owns an :class:`AbortSignal` and fires it with :meth:`abort`."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        """Abort the signal once; later calls do nothing.

        With no reason, the reason is an :class:`AbortError`, like the DOM's.
        """
        self.signal._fire(AbortError() if reason is None else reason)

    def abort_soon(self, reason: object, call_soon: Callable[[Callable[[], None]], None]) -> None:
        """Abort from a signal handler or another thread: safe wherever it runs.

        Marks the signal pending at once (no lock taken, no listener run: a
        running script's next budget check stops it), then fires it on the
        event loop through ``call_soon`` (from :func:`loop_scheduler`).
        """
        self.signal._pending = reason if reason is not None else AbortError()
        call_soon(lambda: self.abort(reason))

    @classmethod
    def aborted_signal(cls, reason: object = None) -> AbortSignal:
        """A signal that is already aborted (pi ``AbortSignal.abort()``)."""
        controller = cls()
        controller.abort(reason)
        return controller.signal


def loop_scheduler() -> Callable[[Callable[[], None]], None]:
    """A function that runs a callback on the current event loop, from any thread or signal handler.

    Call it in the loop's thread (asyncio's ``call_soon_threadsafe`` or trio's
    ``TrioToken.run_sync_soon``, both safe in signal handlers and other threads).
    """
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio (the other backend anyio runs on)
        import trio

        token = trio.lowlevel.current_trio_token()

        def trio_soon(callback: Callable[[], None]) -> None:
            with suppress(trio.RunFinishedError):
                token.run_sync_soon(callback)

        return trio_soon

    def asyncio_soon(callback: Callable[[], None]) -> None:
        with suppress(RuntimeError):  # the loop is closed
            loop.call_soon_threadsafe(callback)

    return asyncio_soon
