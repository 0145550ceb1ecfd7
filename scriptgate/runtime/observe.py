"""What the pipeline tells the observers of a composed before hook, beyond what hooks see.

Hooks never see a call that fails lookup or validation, one aborted before
``execute``, or one cut off (cancelled: a deadline, an abort, the caller) while
``execute`` or the after hooks run. An audit log must see all of them, so
:func:`scriptgate.runtime.hooks.compose_hooks` attaches the sources that observe
verdicts to the before hook it returns (attribute :data:`OBSERVERS_ATTRIBUTE`),
and the pipeline calls :func:`notify_refused` / :func:`notify_cut_off` with that
hook on those paths only (the fast path pays nothing).

An observer implements either method; exceptions from it are swallowed here (the
call has already failed or ended; the observer records its own failure — an
:class:`~scriptgate.runtime.audit.AuditLog` refuses every later call).

Owns no state; imports only the types.
"""

from __future__ import annotations

from typing import Any

from scriptgate.runtime.types import ToolCall

__all__ = ["OBSERVERS_ATTRIBUTE", "notify_cut_off", "notify_refused"]

OBSERVERS_ATTRIBUTE = "scriptgate_call_observers"
"""Name of the attribute of a composed before hook that holds its observers (a tuple)."""


def notify_refused(hook: Any, tool_call: ToolCall, status: str, text: str) -> None:
    """Tell ``hook``'s observers that ``tool_call`` never reached the gate.

    ``status`` is ``invalid`` (unknown tool, bad arguments, a failing argument
    shim) or ``aborted`` (the signal was aborted before the call started).
    """
    for observer in getattr(hook, OBSERVERS_ATTRIBUTE, ()):
        method = getattr(observer, "observe_refused", None)
        if method is not None:
            try:
                method(tool_call, status, text)
            except Exception:  # the observer keeps its own failure
                continue


def notify_cut_off(hook: Any, tool_call: ToolCall, status: str, text: str) -> None:
    """Tell ``hook``'s observers that ``tool_call`` passed the gate but did not finish.

    ``status`` is ``cancelled`` (cut off while running) or ``aborted`` (never
    started: aborted after the gate).
    """
    for observer in getattr(hook, OBSERVERS_ATTRIBUTE, ()):
        method = getattr(observer, "observe_cut_off", None)
        if method is not None:
            try:
                method(tool_call, status, text)
            except Exception:  # the observer keeps its own failure
                continue
