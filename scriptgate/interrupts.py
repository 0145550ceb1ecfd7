"""Ctrl-C for the commands: the first SIGINT cancels the work, later ones cannot break its cleanup.

Owns SIGINT handling of ``scriptgate run/check/stubs/serve``. Without it, asyncio
turns a second SIGINT (``uv run`` forwards one after the terminal's own) into a
``KeyboardInterrupt`` raised at an arbitrary point, possibly inside the shielded
code that stops an MCP server: the server was left running and the process hung.
Here every SIGINT is received as an event: the first cancels the command, whose
cleanup (bounded by the SDK) then runs to the end. Must not import ``sandbox``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.abc

__all__ = ["Interrupted", "run_interruptible", "run_quiet_on_interrupt"]

T = TypeVar("T")


class Interrupted(Exception):
    """The command was cancelled by SIGINT (after its cleanup finished)."""


async def run_interruptible(fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """``await fn(*args)``; raise :class:`Interrupted` once it is cancelled by SIGINT.

    Outside the main thread (where signals cannot be received) ``fn`` simply runs.
    """
    if threading.current_thread() is not threading.main_thread():
        return await fn(*args)
    interrupted = False
    work = anyio.CancelScope()
    result: list[T] = []

    async def watch(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        nonlocal interrupted
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            task_status.started()
            async for _signum in signals:
                interrupted = True
                work.cancel()  # again on every SIGINT: a no-op once cancelled

    async with anyio.create_task_group() as tg:
        await tg.start(watch)
        try:
            with work:
                result.append(await fn(*args))
        finally:
            tg.cancel_scope.cancel()
    if interrupted or not result:
        raise Interrupted
    return result[0]


def _only_interrupts(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``KeyboardInterrupt`` or a group of nothing but those (and
    cancellations)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_interrupts(inner) for inner in exc.exceptions)
    return isinstance(exc, KeyboardInterrupt | anyio.get_cancelled_exc_class())


async def run_quiet_on_interrupt(fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """``await fn(*args)`` with asyncio's shutdown log quiet about a ``KeyboardInterrupt``.

    ``scriptgate run`` turns a second SIGINT into ``KeyboardInterrupt`` (_live.sigint_aborts);
    raised inside a task (an MCP server's stdin writer), it reaches ``main`` at once, which
    says "interrupted", while asyncio's shutdown logged the command's task, ended by a group
    of that one interrupt, with a full traceback. Only such tasks are left out of the log.
    """
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another backend: nothing to quiet
        return await fn(*args)
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        exc = context.get("exception")
        if isinstance(exc, BaseException) and _only_interrupts(exc):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    return await fn(*args)
