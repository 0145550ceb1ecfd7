"""Serialise mutations of the same file (pi §7, ``withFileMutationQueue``).

Callers that mutate one file run one at a time, in call order; callers on
different files run in parallel. The key is the real path of the absolute
path, so symlinks and relative spellings of one file share a queue. Works on
both anyio backends (within one event loop at a time).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["file_mutation_queue_size", "mutation_key", "with_file_mutation_queue"]

T = TypeVar("T")


class _Queue:
    """A FIFO lock: ``busy`` while someone holds it, waiters woken in arrival order."""

    __slots__ = ("busy", "waiters")

    def __init__(self) -> None:
        self.busy = False
        self.waiters: deque[anyio.Event] = deque()


_queues: dict[str, _Queue] = {}


def mutation_key(path: str | os.PathLike[str]) -> str:
    """The queue key of ``path``: ``realpath(abspath(path))``.

    A path that does not exist (yet) resolves as far as it can, as pi falls back
    to the resolved path on ENOENT/ENOTDIR.
    """
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def file_mutation_queue_size() -> int:
    """How many files currently have a holder or waiters (0 when idle)."""
    return len(_queues)


def _release(key: str, queue: _Queue) -> None:
    if queue.waiters:
        queue.waiters.popleft().set()  # hand ownership to the next caller
        return
    queue.busy = False
    if _queues.get(key) is queue:
        del _queues[key]


async def with_file_mutation_queue(
    path: str | os.PathLike[str], fn: Callable[[], Awaitable[T]]
) -> T:
    """Run ``fn()`` once every earlier caller for the same file has finished.

    ``fn``'s result is returned and its exception re-raised; the queue is released
    either way (also on cancellation), and no entry is left behind once idle.
    The key is computed synchronously, so enqueue order equals call order.
    """
    key = mutation_key(path)
    queue = _queues.get(key)
    if queue is None:
        queue = _queues[key] = _Queue()
    if queue.busy:
        turn = anyio.Event()
        queue.waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():
                _release(key, queue)  # ownership arrived as we were cancelled: pass it on
            else:
                queue.waiters.remove(turn)
            raise
    else:
        queue.busy = True
    try:
        return await fn()
    finally:
        _release(key, queue)
