"""The ``traceback`` stand-in: the text of the script's own exceptions, from its own frames.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

The real module walks frames and reads source files: a host frame, path or line of the
sandbox's own code would reach the script. :func:`script_traceback` builds CPython's text
from the script's frames only (``File "<script>", line N, in name``: the names and line
numbers are the script's own, frames of the sandbox's code are left out), then
``TypeName: message`` with the message rendered as the run's error message is
(:func:`guards.sizes.exception_text`: no script ``__str__`` runs, a huge message is
abbreviated). No source lines are shown. Chained exceptions (``raise X from e``, an error
in an ``except`` block) come first with CPython's separator lines, at most
:data:`MAX_CHAIN` of them; ``chain=False`` leaves them out, and ``limit`` keeps the first
(``limit > 0``) or last (``limit < 0``) frames of each, as CPython does.

``format_exc``/``print_exc`` take the exception being handled; ``format_exception``,
``print_exception`` and ``format_exception_only`` take an exception (or CPython's older
``(type, value, tb)``). The ``print_`` functions write to the script's output (where
``print`` and the sandbox's ``sys.stderr`` write) or to an ``io.StringIO``. Frame and stack
objects (``extract_tb``, ``print_stack``, ``TracebackException``…) are missing, with what
to write instead (:data:`HINTS`).
"""

from __future__ import annotations

import sys
from typing import Any

from scriptgate.sandbox.guards.constants import ENTRY, FILENAME
from scriptgate.sandbox.guards.sizes import exception_text
from scriptgate.sandbox.world.modules.common import RunWorld, script_print
from scriptgate.sandbox.world.modules.io import StringIO
from scriptgate.sandbox.world.modules.sys import ScriptStream

__all__ = ["HINTS", "HOLDABLE", "MEMBERS", "NAME", "build", "script_name", "script_traceback"]

NAME = "traceback"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "format_exc", "print_exc", "format_exception", "print_exception", "format_exception_only",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (str and lists of str only)."""
HINTS: dict[str, str] = {
    name: "frames are not available in the sandbox: use traceback.format_exc() inside the "
    "except block, traceback.format_exception(e), or str(e) and type(e).__name__"
    for name in (
        "extract_tb", "extract_stack", "format_tb", "print_tb", "format_stack", "print_stack",
        "walk_tb", "walk_stack", "TracebackException", "StackSummary", "FrameSummary",
        "print_last", "format_list", "print_list", "clear_frames",
    )
}  # fmt: skip
"""What to write instead of a member of the real ``traceback`` this stand-in leaves out."""
MAX_MESSAGE = 2_000
"""The longest exception message the text holds (longer ones are abbreviated)."""
MAX_FRAMES = 50
"""At most this many frames are listed per exception (the innermost); the rest are counted."""
MAX_CHAIN = 10
"""At most this many exceptions of a chain (``__cause__``/``__context__``) are shown."""

TOP_LEVEL = ENTRY
"""The code name of a script's top level (compiled as a function of that name)."""
CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"

# BaseException's own descriptors: no property or __getattr__ of a script class runs
_type_name = type.__dict__["__name__"].__get__
_exc_traceback = BaseException.__dict__["__traceback__"].__get__
_exc_cause = BaseException.__dict__["__cause__"].__get__
_exc_context = BaseException.__dict__["__context__"].__get__
_exc_suppress = BaseException.__dict__["__suppress_context__"].__get__
_MISSING = object()


def script_name(code: Any) -> str:
    """The name CPython shows for a script frame's code (``<module>`` at the top level)."""
    name: str = code.co_name
    return "<module>" if name == TOP_LEVEL else name


def _frame_lines(exc: BaseException, limit: int | None) -> list[str]:
    lines: list[str] = []
    tb = _exc_traceback(exc)
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == FILENAME:  # the script's own frames only
            lines.append(f'  File "{FILENAME}", line {tb.tb_lineno}, in {script_name(code)}\n')
            if limit is not None and limit >= 0 and len(lines) >= limit:
                break
        tb = tb.tb_next
    if limit is not None and limit < 0:
        lines = lines[limit:]
    if len(lines) > MAX_FRAMES:
        skipped = len(lines) - MAX_FRAMES
        lines = [f"  [{skipped} more frames]\n", *lines[-MAX_FRAMES:]]
    return lines


def _only(exc: BaseException) -> str:
    name = _type_name(type(exc))
    message = exception_text(exc, MAX_MESSAGE)
    return f"{name}: {message}\n" if message else f"{name}\n"


def _one(exc: BaseException, limit: int | None) -> list[str]:
    frames = _frame_lines(exc, limit)
    head = ["Traceback (most recent call last):\n"] if frames else []
    return [*head, *frames, _only(exc)]


def script_lines(
    exc: BaseException | None, limit: int | None = None, chain: bool = True
) -> list[str]:
    """``exc`` as CPython's ``format_exception`` lines, from the script's frames only."""
    if exc is None:
        return ["NoneType: None\n"]
    parts: list[list[str]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if len(parts) >= MAX_CHAIN:
            parts.append([f"[{MAX_CHAIN} exceptions of the chain are shown]\n"])
            break
        parts.append([*_one(current, limit), *([link] if link else [])])
        if not chain:
            break
        cause = _exc_cause(current)
        context = _exc_context(current)
        if cause is not None:
            current, link = cause, CAUSE
        elif context is not None and not _exc_suppress(current):
            current, link = context, CONTEXT
        else:
            current = None
    return [line for part in reversed(parts) for line in part]


def script_traceback(exc: BaseException | None) -> str:
    """``exc`` as CPython's traceback text (``format_exc``), from the script's frames only."""
    return "".join(script_lines(exc))


def _check_limit(limit: Any) -> int | None:
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise TypeError(f"limit must be an int or None, not {type(limit).__name__}")
    return None if limit is None else int(limit)


def _exception_of(exc: Any, value: Any) -> BaseException | None:
    """The exception of ``format_exception(exc)`` or ``format_exception(type, value, tb)``."""
    if value is not _MISSING:
        exc = value
    if exc is None or isinstance(exc, BaseException):
        return exc
    raise TypeError(
        f"traceback.format_exception() takes an exception, not {type(exc).__name__} "
        "(inside an except block: traceback.format_exc())"
    )


def _write(text: str, file: Any, what: str) -> None:
    if file is None or type(file) is ScriptStream:
        script_print(what)(text, end="")
    elif isinstance(file, StringIO):
        file.write(text)
    else:
        raise TypeError(f"{what}(file=...) takes sys.stderr, sys.stdout or an io.StringIO")


def format_exc(limit: Any = None, chain: Any = True) -> str:
    """The traceback text of the exception being handled (``'NoneType: None'`` outside one)."""
    return "".join(script_lines(sys.exception(), _check_limit(limit), bool(chain)))


def print_exc(limit: Any = None, file: Any = None, chain: Any = True) -> None:
    """Write :func:`format_exc`'s text to the script's output (or ``file``)."""
    text = "".join(script_lines(sys.exception(), _check_limit(limit), bool(chain)))
    _write(text, file, "traceback.print_exc")


def format_exception(
    exc: Any, /, value: Any = _MISSING, tb: Any = _MISSING, limit: Any = None, chain: Any = True
) -> list[str]:
    """The lines of ``exc``'s traceback text (its chain first)."""
    return script_lines(_exception_of(exc, value), _check_limit(limit), bool(chain))


def print_exception(
    exc: Any,
    /,
    value: Any = _MISSING,
    tb: Any = _MISSING,
    limit: Any = None,
    file: Any = None,
    chain: Any = True,
) -> None:
    """Write :func:`format_exception`'s text to the script's output (or ``file``)."""
    lines = script_lines(_exception_of(exc, value), _check_limit(limit), bool(chain))
    _write("".join(lines), file, "traceback.print_exception")


def format_exception_only(exc: Any, /, value: Any = _MISSING) -> list[str]:
    """``['TypeName: message\\n']`` of ``exc``, without its traceback."""
    found = _exception_of(exc, value)
    return ["NoneType: None\n"] if found is None else [_only(found)]


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "format_exc": format_exc,
        "print_exc": print_exc,
        "format_exception": format_exception,
        "print_exception": print_exception,
        "format_exception_only": format_exception_only,
    }
