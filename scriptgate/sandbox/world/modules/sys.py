"""The ``sys`` stand-in: the constants model code reads, and ``setrecursionlimit`` as a no-op.

Part of ``world/modules/``; must not import the engine, isolation or the model-facing text.
Models write ``import sys`` out of habit, then read ``sys.maxsize`` or ``sys.version_info``
or call ``sys.setrecursionlimit(10**6)`` before a recursive solution; the real module is
the host's (its ``modules``, ``stdout``, ``settrace``, ``setrecursionlimit`` act on the
whole process), so the script gets plain values only. ``setrecursionlimit`` changes
nothing: a script's depth is ``Limits.max_recursion``, enforced by the sandbox. Anything
else (``sys.exit``, ``sys.stdout``, ``sys.argv``…) is missing, with what to write instead
(:data:`HINTS`).
"""

from __future__ import annotations

import sys
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HINTS", "HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "sys"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "maxsize", "version_info", "version", "hexversion", "byteorder", "platform",
    "float_repr_style", "setrecursionlimit",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (plain data only)."""

HINTS: dict[str, str] = {
    "exit": "end the script by returning or raising an exception instead of sys.exit()",
    "stdout": "print(...) writes the script's output; print(file=buf) writes to an io.StringIO",
    "stderr": "print(...) writes the script's output; raise an exception to report an error",
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
    }
