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

__all__ = ["Interrupted", "run_interruptible"]

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
