"""Exceptions a script sees, and the signal that ends a script for good.

The bottom of ``guards/`` with :mod:`.constants`: imports nothing else from scriptgate, so
every guard can raise these.

``ToolError`` and ``ToolDenied`` are bound in every script's namespace: an
error tool result (without structured content) raises ``ToolError`` carrying
the model-facing text, and a call blocked by ``before_tool_call`` raises
``ToolDenied`` (which is also a ``PermissionError``). Both carry a message only —
never a host exception, traceback or object.

:class:`ScriptStop` is how a breached limit or an abort ends a script. It is a
``BaseException`` subclass that is not bound in the script's namespace, so
``except Exception`` never catches it; a bare ``except:`` would, which is why the
policy injects a check at the top of every ``except`` handler that re-raises it,
and why every budget check re-raises it once tripped (the engine also treats a
tripped budget as final when the script ends).

Size refusals are limits too: every guard that refuses an operation whose result
would be too large for the sandbox (``'x' * 10**12``, ``1 << 10**11``, ``str()``
of a 300 MB rendering, ``range(10**18)``, a format width of ``10**10``…) ends the
script through :func:`refuse_size` with ``error.kind == "limit"`` and
``error.type == "LimitExceeded"`` (the type of every other limit), keeping its
message (texts models read, such as ``"a repeated sequence would be too large for
the sandbox"``) and the line of the refused operation. The refusal trips the running script's budget, found through the
globals of the innermost script frame on the stack (:data:`STOP_NAME`), so it is
final like any other limit: ``except MemoryError``, ``except Exception``, a
bare ``except:`` or ``finally: return`` cannot swallow it, and nothing the
script runs afterwards executes. Without a script on the stack (a guard called
directly by host code) the stop is raised untripped. A real ``MemoryError``
from the interpreter (an allocation that failed) is not a refusal and keeps its
handling (``"runtime"`` in-process; ``"limit"`` under process isolation's
address-space limit).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any, Literal, NoReturn

from scriptgate.sandbox.guards.constants import FILENAME

__all__ = [
    "STOP_NAME",
    "RunEnded",
    "ScriptStop",
    "ToolDenied",
    "ToolError",
    "Trip",
    "refuse_size",
    "size_stop",
]

STOP_NAME = "__stop__"
"""The name of the run's ``Budget.trip`` in the script's globals (scripts cannot read it)."""


class ToolError(Exception):
    """A tool call failed; ``str(err)`` is the model-facing text of the error result."""

    data: Any = None
    """The structured content of the error result (tools with an output schema), else ``None``."""


class ToolDenied(ToolError, PermissionError):
    """A tool call was blocked by the ``before_tool_call`` hook (a policy)."""


class ScriptStop(BaseException):
    """Ends a script: a limit was breached (``kind="limit"``), the run was aborted, or the
    script broke the sandbox's own protocol (``kind="sandbox"``: a foreign loop yield).

    Not catchable by the script (see the module docstring).
    """

    def __init__(self, kind: Literal["limit", "aborted", "sandbox"], message: str) -> None:
        super().__init__(message)
        self.kind: Literal["limit", "aborted", "sandbox"] = kind
        self.message = message
        self.line: int | None = None
        """The script line that caused the stop, when known (size refusals record it)."""


class RunEnded(ScriptStop, GeneratorExit):
    """The stop of a run that has ended: what its code meets if anything resumes it later.

    A finished run's budget keeps this as its stop (``Budget.close``), so the first check of
    any of its code still reachable afterwards (a ``finally`` of a generator the host's
    collector finalizes after a session was dropped) raises it before a statement runs. It is
    a ``GeneratorExit`` so that the generator's finalizer takes it as a clean close and the
    host prints nothing.
    """

    def __init__(self) -> None:
        super().__init__("sandbox", "the run has ended")


Trip = Callable[[str, str], BaseException]
"""A budget's ``trip(kind, message)``: sets the run's stop flag and returns the stop."""


def size_stop(message: str, trip: Trip | None = None) -> BaseException:
    """The stop that ends the running script because an operation would be too large.

    ``trip`` is the run's ``Budget.trip`` when the caller holds it; otherwise the
    innermost script frame's globals provide it (:data:`STOP_NAME`). Tripping
    makes the stop final (every later check re-raises it). With no run in
    reach, an untripped ``ScriptStop("limit", message)``.
    """

    line = None
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            line = frame.f_lineno  # the refused operation's line (not a later handler's)
            if trip is None:
                found = frame.f_globals.get(STOP_NAME)
                if callable(found):
                    trip = found
            break
        frame = frame.f_back
    stop = ScriptStop("limit", message) if trip is None else trip("limit", message)
    if isinstance(stop, ScriptStop) and stop.line is None and stop.message == message:
        stop.line = line
    return stop


def refuse_size(message: str, trip: Trip | None = None) -> NoReturn:
    """Refuse an operation whose result would be too large: end the script (:func:`size_stop`)."""
    raise size_stop(message, trip)
