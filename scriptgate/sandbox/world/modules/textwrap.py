"""The ``textwrap`` stand-in: ``wrap``, ``fill``, ``shorten``, ``dedent``, ``indent``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The text is at most ``MAX_TEXT`` characters
and ``width`` at least 1 and at most ``MAX_TEXT`` (the real functions are linear
in the text); ``indent``'s predicate is the script's own function.
"""

from __future__ import annotations

import textwrap
from typing import Any

from scriptgate.sandbox.guards.allocations import split_bytes
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.memory import CHECK_FROM, charge_bytes
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_TEXT", "MEMBERS", "NAME", "build"]

NAME = "textwrap"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("wrap", "fill", "shorten", "dedent", "indent")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (str and lists of str)."""
MAX_TEXT = 1_000_000
"""The longest text (and widest width) the textwrap stand-in takes."""

_OPTIONS = frozenset(
    {
        "initial_indent", "subsequent_indent", "expand_tabs", "replace_whitespace",
        "fix_sentence_endings", "break_long_words", "drop_whitespace", "break_on_hyphens",
        "tabsize", "max_lines", "placeholder",
    }
)  # fmt: skip


def _checked(text: Any, width: Any, options: dict[str, Any]) -> str:
    """``text`` as an exact ``str`` within the bounds; ``options``' texts made exact in place.

    textwrap is pure Python calling the text's own methods: a ``str`` subclass (whose
    ``__len__`` could lie to the bound) is copied, so only the real characters are wrapped.
    """
    if not isinstance(text, str):
        raise TypeError("textwrap takes a str")
    exact: str = exact_copy(text)
    if len(exact) > MAX_TEXT:
        refuse_size(f"textwrap of more than {MAX_TEXT} characters refused in the sandbox")
    if not isinstance(width, int) or width > MAX_TEXT:
        refuse_size(f"textwrap width above {MAX_TEXT} refused in the sandbox")
    for key, value in options.items():
        if key not in _OPTIONS:
            raise TypeError(f"unexpected keyword argument {key!r}")
        if isinstance(value, str):
            value = options[key] = exact_copy(value)
            if len(value) > 1000:
                refuse_size("textwrap option text above 1000 characters refused in the sandbox")
        if isinstance(value, int) and value > MAX_TEXT:
            refuse_size(f"textwrap {key} above {MAX_TEXT} refused in the sandbox")
    return exact


def _wrap(text: str, width: int = 70, **options: Any) -> list[str]:
    text = _checked(text, width, options)
    return textwrap.wrap(text, width, **options)


def _fill(text: str, width: int = 70, **options: Any) -> str:
    text = _checked(text, width, options)
    return textwrap.fill(text, width, **options)


def _shorten(text: str, width: int, **options: Any) -> str:
    text = _checked(text, width, options)
    return textwrap.shorten(text, width, **options)


def _dedent(text: str) -> str:
    text = _checked(text, 1, {})
    return textwrap.dedent(text)


def _indent(text: str, prefix: str, predicate: Any = None) -> str:
    text = _checked(text, 1, {})
    prefix = exact_copy(prefix)
    if not isinstance(prefix, str):
        raise TypeError("textwrap.indent takes a str prefix")
    # textwrap.indent splits with str.splitlines(True): every line boundary it knows
    # counts, not only '\n' (findings14 A13: 'a\r' * 3000 under a 100 K prefix made 300 M)
    lines = split_bytes(text, str, "splitlines") if len(text) > CHECK_FROM else 0
    if len(prefix) * (_line_count(text) + 1) > MAX_TEXT:
        refuse_size(
            "textwrap.indent result too large for the sandbox: the prefix times the lines "
            f"is over {MAX_TEXT} characters (indent fewer lines, or use a shorter prefix)"
        )
    charge_bytes(2 * lines)  # the lines and their prefixed copies
    return textwrap.indent(text, prefix, predicate)


_LINE_BOUNDARIES = (
    "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029",
)  # fmt: skip
"""Every character ``str.splitlines`` breaks a line at (``'\r\n'`` is one boundary)."""


def _line_count(text: str) -> int:
    """The lines ``text.splitlines()`` makes, less one, counted at C speed (no pieces made)."""
    return sum(map(text.count, _LINE_BOUNDARIES)) - text.count("\r\n")


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "wrap": _wrap,
        "fill": _fill,
        "shorten": _shorten,
        "dedent": _dedent,
        "indent": _indent,
    }
