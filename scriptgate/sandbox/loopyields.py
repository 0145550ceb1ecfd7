"""What an async script's coroutine may yield to the event loop (issue 13, F07).

Owns :class:`CheckedAwait`, the driver the engine awaits a script's coroutine through,
and the allow-list of loop messages (:func:`loop_message`). The second layer under the
object boundary: a script cannot make an ``__await__`` of its own (the compile policy
refuses the name and no class-making metaclass is holdable), but should either layer
break, a script object must still never reach the loop's driver, which calls methods on
what it receives (an asyncio ``Task`` calls ``get_loop()`` on anything with
``_asyncio_future_blocking``). So every value the script's coroutine yields is checked
against the messages the engine's own awaitables send: ``None`` and asyncio futures and
tasks on asyncio, trio's trap messages on trio; anything else ends the run with a
``sandbox`` error. Imports nothing of the sandbox; must not import the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Generator
from typing import Any

__all__ = ["CheckedAwait", "loop_message"]

_MESSAGES: set[type] = set()
"""Exact types of the loop messages seen as allowed (asyncio's and, once imported, trio's)."""
_MESSAGE_VALUES: list[Any] = []
"""Loop messages that are values, not instances (trio yields its ``CancelShieldedCheckpoint``
class itself)."""


def _refresh() -> None:
    kinds: set[type] = {asyncio.Future, asyncio.Task}
    for module_name, names in (
        ("asyncio.futures", ("_PyFuture",)),
        ("asyncio.tasks", ("_PyTask",)),
    ):
        module = sys.modules.get(module_name)
        for name in names:
            kind = getattr(module, name, None)
            if isinstance(kind, type):
                kinds.add(kind)
    traps = sys.modules.get("trio._core._traps")
    if traps is not None:
        for name in ("WaitTaskRescheduled", "PermanentlyDetachCoroutineObject"):
            kind = getattr(traps, name, None)
            if isinstance(kind, type):
                kinds.add(kind)
        checkpoint = getattr(traps, "CancelShieldedCheckpoint", None)
        if checkpoint is not None and checkpoint not in _MESSAGE_VALUES:
            _MESSAGE_VALUES.append(checkpoint)
    _MESSAGES.update(kinds)


def loop_message(value: Any) -> bool:
    """Whether ``value``, yielded by a script's coroutine, is one of the loop's own messages."""
    if value is None or type(value) in _MESSAGES:
        return True
    if any(value is known for known in _MESSAGE_VALUES):
        return True
    _refresh()  # trio imported since the last look
    return type(value) in _MESSAGES or any(value is known for known in _MESSAGE_VALUES)


class CheckedAwait:
    """Awaits ``awaitable`` (a script's coroutine), checking everything it yields to the loop.

    What the loop sends or throws in is passed down unchanged; a yield that is not a loop
    message (:func:`loop_message`) closes the coroutine and raises ``refuse(message)``
    (the engine's budget stop of kind ``"sandbox"``) instead of reaching the loop.
    """

    __slots__ = ("_awaitable", "_refuse")

    def __init__(self, awaitable: Any, refuse: Callable[[str], BaseException]) -> None:
        self._awaitable = awaitable
        self._refuse = refuse

    def __await__(self) -> Generator[Any, Any, Any]:
        inner = self._awaitable.__await__()
        send = inner.send
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                yielded = send(value) if error is None else inner.throw(error)
            except StopIteration as done:
                return done.value
            if yielded is not None and not loop_message(yielded):
                stop = self._refuse(
                    f"The script yielded a {type(yielded).__name__} object to the event loop: "
                    "only the sandbox's own awaitables (tool calls, gather) may suspend a script"
                )
                with contextlib.suppress(BaseException):  # its finally met the stop: final
                    inner.close()
                raise stop
            try:
                value = yield yielded
                error = None
            except GeneratorExit:
                inner.close()
                raise
            except BaseException as exc:
                value = None
                error = exc
