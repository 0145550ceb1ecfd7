"""Exceptions a script sees, and the signal that ends a script for good.

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
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ScriptStop", "ToolDenied", "ToolError"]


class ToolError(Exception):
    """A tool call failed; ``str(err)`` is the model-facing text of the error result."""


class ToolDenied(ToolError, PermissionError):
    """A tool call was blocked by the ``before_tool_call`` hook (a policy)."""


class ScriptStop(BaseException):
    """Ends a script: a limit was breached (``kind="limit"``) or the run was aborted.

    Not catchable by the script (see the module docstring).
    """

    def __init__(self, kind: Literal["limit", "aborted"], message: str) -> None:
        super().__init__(message)
        self.kind: Literal["limit", "aborted"] = kind
        self.message = message
