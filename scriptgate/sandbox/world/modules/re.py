"""The ``re`` stand-in: :mod:`scriptgate.sandbox.guards.regex` (the ``regex`` engine behind
``re``'s surface, so a catastrophic pattern stops at the run's deadline).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.guards import regex
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "re"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall",
    "finditer", "escape", "error", "IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE",
    "ASCII", "I", "M", "S", "X", "A",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (regex.Pattern, regex.Match, regex.SandboxFlag)
"""Value types this stand-in hands to scripts (the pattern and match wrappers are guards')."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run (regexguard: the regex engine, stopped at the deadline)."""
    return regex.make_re()
