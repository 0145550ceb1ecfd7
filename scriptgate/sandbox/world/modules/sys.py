"""The ``sys`` stand-in: the constants model code reads, and ``setrecursionlimit`` as a no-op.

Part of ``world/modules/``; must not import the engine, isolation or the model-facing text.
Models write ``import sys`` out of habit, then read ``sys.maxsize`` or ``sys.version_info``
or call ``sys.setrecursionlimit(10**6)`` before a recursive solution; the real module is
the host's (its ``modules``, ``stdout``, ``settrace``, ``setrecursionlimit`` act on the
whole process), so the script gets plain values only, and ``stdout``/``stderr`` that
write to the run's output (``print(..., file=sys.stderr)``, ``sys.stdout.write``).
``setrecursionlimit`` changes nothing: a script's depth is ``Limits.max_recursion``,
enforced by the sandbox; ``exit`` ends the script (:class:`ScriptExit`). Anything else
(``sys.argv``, ``sys.modules``…) is missing, with what to write instead (:data:`HINTS`).
"""

from __future__ import annotations

import sys
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld, script_print

__all__ = ["HINTS", "HOLDABLE", "MEMBERS", "NAME", "ScriptExit", "ScriptStream", "build"]

NAME = "sys"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "maxsize", "version_info", "version", "hexversion", "byteorder", "platform",
    "float_repr_style", "setrecursionlimit", "stdout", "stderr", "exit",
)  # fmt: skip
"""The members a script may use."""


class ScriptStream:
    """``sys.stdout`` and ``sys.stderr`` of the ``sys`` stand-in: the script's own output.

    ``print(..., file=sys.stderr)`` and ``sys.stdout.write(text)`` are what model code
    writes for progress lines and warnings (findings18 M13); both go to the run's output,
    in order, counted against its limit, as ``print`` does (a run has one output).
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def write(self, text: Any, /) -> int:
        """Write ``text`` to the script's output; the number of characters written."""
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            text = str.__str__(text)
        script_print(f"sys.{self.name}.write")(text, end="")
        return len(text)

    def writelines(self, lines: Any, /) -> None:
        """Write each of ``lines`` (no newline added, as a file's ``writelines``)."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Nothing to flush: the output is the run's."""

    def isatty(self) -> bool:
        """Never a terminal."""
        return False

    def __repr__(self) -> str:
        return f"<sandbox {self.name}>"


_STDOUT = ScriptStream("stdout")
_STDERR = ScriptStream("stderr")

HINTS: dict[str, str] = {
    "stdin": "scripts have no input stream: take data from the tools",
    "argv": "scripts have no command line: take data from the tools",
    "getrecursionlimit": "a script's depth is the sandbox's Limits.max_recursion",
    "modules": "import the listed stand-in modules",
    "path": "import the listed stand-in modules",
}
"""What to write instead of a member of the real ``sys`` this stand-in leaves out."""

_VERSION_INFO = tuple(sys.version_info)


def _setrecursionlimit(limit: Any) -> None:
    """Accepted and ignored: the sandbox enforces ``Limits.max_recursion`` on every run."""
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError(f"'{type(limit).__name__}' object cannot be interpreted as an integer")
    if limit < 1:
        raise ValueError("recursion limit must be greater or equal than 1")


class ScriptExit(BaseException):
    """``sys.exit(status)``: ends the script; the engine reports status ``0``/``None`` as a
    finished run and any other as a ``SystemExit`` error (findings18 M36: models end scripts
    with ``sys.exit(0)`` out of habit, which failed the run after all its work). Not the
    host's ``SystemExit``, which an event loop re-raises out of its tasks."""

    def __init__(self, status: Any = None) -> None:
        super().__init__(status)
        self.status = status
        self.code = status  # `except SystemExit as e: e.code`, as CPython's


ScriptExit.__name__ = ScriptExit.__qualname__ = "SystemExit"  # as `type(e).__name__` shows it
ScriptExit.__module__ = "builtins"  # `str(type(e))` is "<class 'SystemExit'>"
HOLDABLE: tuple[type, ...] = (ScriptStream, ScriptExit)
"""Value types this stand-in hands to scripts (plain data, its output streams, its exit)."""


def _exit(status: Any = None, /) -> None:
    """``sys.exit(status=None)``: end the script here."""
    raise ScriptExit(status)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run (plain values; nothing of the host's ``sys``)."""
    return {
        "maxsize": sys.maxsize,
        "version_info": _VERSION_INFO,
        "version": sys.version.split("\n")[0],
        "hexversion": sys.hexversion,
        "byteorder": sys.byteorder,
        "platform": sys.platform,
        "float_repr_style": sys.float_repr_style,
        "setrecursionlimit": _setrecursionlimit,
        "exit": _exit,
        "stdout": _STDOUT,
        "stderr": _STDERR,
    }
