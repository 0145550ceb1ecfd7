"""The ``html`` stand-in: ``escape`` and ``unescape``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Both are linear in the text, which is at most
:data:`MAX_TEXT` characters.
"""

from __future__ import annotations

import html
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_TEXT", "MEMBERS", "NAME", "build"]

NAME = "html"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("escape", "unescape")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (str only)."""
MAX_TEXT = 10_000_000
"""The longest text ``escape``/``unescape`` take."""


def _text(s: Any) -> str:
    if not isinstance(s, str):
        raise TypeError(f"expected a str, not {type(s).__name__}")
    if str.__len__(s) > MAX_TEXT:
        refuse_size(f"html of more than {MAX_TEXT} characters refused in the sandbox")
    text: str = exact_copy(s)  # escape() calls the text's own methods: never a script's
    return text


def _escape(s: Any, quote: bool = True) -> str:
    return html.escape(_text(s), bool(quote))


def _unescape(s: Any) -> str:
    return html.unescape(_text(s))


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"escape": _escape, "unescape": _unescape}
