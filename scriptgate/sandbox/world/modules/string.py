"""The ``string`` stand-in: the character-class constants, ``capwords`` and ``Template``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``Template`` is the sandbox's own class
(:mod:`.string_template`: substitution through the regex guard, bounded).
"""

from __future__ import annotations

import string
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.modules.string_template import Template

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "string"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
    "octdigits", "punctuation", "whitespace", "printable", "capwords", "Template",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (Template,)
"""Value types this stand-in hands to scripts (beyond str)."""
SUBCLASSABLE: tuple[type, ...] = (Template,)
"""``class T(Template): delimiter = "%"``: its methods read the class settings at every call
and check them (the pattern goes through the regex guard)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: getattr(string, name) for name in MEMBERS[:-2]}
    table["capwords"] = _capwords
    table["Template"] = Template
    return table


def _capwords(s: str, sep: str | None = None) -> str:
    """``string.capwords`` (linear in ``s``, which the script already holds)."""
    if not isinstance(s, str) or not (sep is None or isinstance(sep, str)):
        raise TypeError("capwords takes str arguments")
    return string.capwords(s, sep)
