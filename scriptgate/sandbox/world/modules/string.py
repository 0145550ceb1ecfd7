"""The ``string`` stand-in: the character-class constants.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import string
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "string"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
    "octdigits", "punctuation", "whitespace", "printable", "capwords",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (beyond str)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: getattr(string, name) for name in MEMBERS[:-1]}
    table["capwords"] = _capwords
    return table


def _capwords(s: str, sep: str | None = None) -> str:
    """``string.capwords`` (linear in ``s``, which the script already holds)."""
    if not isinstance(s, str) or not (sep is None or isinstance(sep, str)):
        raise TypeError("capwords takes str arguments")
    return string.capwords(s, sep)
