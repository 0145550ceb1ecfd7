"""The ``string`` stand-in: the character-class constants, ``capwords`` and ``Template``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``Template`` is the sandbox's own class
(:mod:`.string_template`: substitution through the regex guard, bounded).
"""

from __future__ import annotations

import string
from typing import Any

from scriptgate.sandbox.guards.allocations import split_bytes
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.memory import CHECK_FROM, charge_bytes
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
    """``string.capwords``: ``s`` split, each word capitalized, joined (charged first).

    One host call makes every piece and a capitalized copy of each (findings14 A09: 5 M
    words grew the host 900 MB uncharged), so it is charged as two splits of ``s`` (the
    pieces priced by the text's width, :func:`~scriptgate.sandbox.guards.allocations.split_bytes`)
    and the joined result. A ``str`` subclass is read as its characters (its own ``split``
    never runs in the host).
    """
    if not isinstance(s, str) or not (sep is None or isinstance(sep, str)):
        raise TypeError("capwords takes str arguments")
    text: str = exact_copy(s)
    separator: str | None = None if sep is None else exact_copy(sep)
    if len(text) > CHECK_FROM:
        if separator == "":
            raise ValueError("empty separator")
        # capitalize() may lengthen a word up to 3x ('ŉ' → 'ʼN'); 4 bytes a wide character
        grown = len(text) if text.isascii() else 12 * len(text)
        charge_bytes(2 * split_bytes(text, str, "split", separator) + grown)
    return string.capwords(text, separator)
