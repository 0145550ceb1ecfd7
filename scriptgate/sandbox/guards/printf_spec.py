"""The one reader of printf (``%``) templates: CPython's conversion grammar, sizes summed.

Part of ``guards/`` (sizes and rendering); imports only the standard library, so the
compile-time policy (``compile/policy.py``), the width cap (``guards/attributes.py``) and
the mapping estimate (``guards/printf.py``) read templates the same way, and as C does
(``Objects/unicodeobject.c`` ``unicode_format_arg_parse``, ``Objects/bytesobject.c``):
``%%``, or ``%`` [``(`` key with nested parentheses ``)``] flags ``[-#0 +]*``, width
(``*`` or ASCII digits), [``.`` precision (``*`` or digits, none meaning 0)], one length
letter ``[hlL]``, then any one character as the conversion. Three regexes once stood in
for this and missed a bare ``.`` precision (``'%1000000000.s'``) and nested parentheses in
a key (``'%(a(b))9999s'``; findings12 F03, F05, F09). Must not import anything of the
sandbox: it owns no policy, only the reading and the sums.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["Conversion", "PrintfSummary", "conversions", "summarize"]

_REST = re.compile(r"[-#0 +]*+(\*|[0-9]++)?+(?>(?:\.(\*|[0-9]*+))?)[hlL]?+(.)", re.DOTALL)
"""After ``%`` and any key: flags, width, precision, length letter, conversion character."""

_PARENS = re.compile(r"[()]")

_NUMERIC = frozenset("diouxXeEfFgG")
"""Conversions a precision pads (``'%.9999d'``); for ``s``/``r``/``a`` it only truncates."""

_HUGE = 10**18
"""The value given to a width or precision of more than 18 digits (C: "width too big")."""


class Conversion(NamedTuple):
    """One ``%`` conversion of a template, as C reads it.

    ``width`` and ``precision`` are ``None`` when absent (a bare ``.`` is precision 0),
    ``-1`` for ``*``; ``kind`` is the conversion character (``%`` for ``%%``).
    """

    key: str | None
    width: int | None
    precision: int | None
    kind: str


def _number(part: str | None) -> int | None:
    if part is None:
        return None
    if part == "*":
        return -1
    if len(part) > 18:
        return _HUGE
    return int(part) if part else 0


def conversions(text: str) -> Iterator[Conversion]:
    """Every conversion of ``text`` in order; stops where C would raise (an incomplete one).

    A bytes template is read as its latin-1 text (keys then decode back with latin-1).
    """
    find = text.find
    size = len(text)
    pos = find("%")
    while pos >= 0:
        pos += 1
        if pos < size and text[pos] == "%":
            yield Conversion(None, None, None, "%")
            pos = find("%", pos + 1)
            continue
        key: str | None = None
        if pos < size and text[pos] == "(":
            depth = 1
            start = pos + 1
            for paren in _PARENS.finditer(text, start):
                depth += 1 if paren.group() == "(" else -1
                if depth == 0:
                    key = text[start : paren.start()]
                    pos = paren.end()
                    break
            else:
                return  # "incomplete format key"
        rest = _REST.match(text, pos)
        if rest is None:
            return  # "incomplete format"
        width, precision, kind = rest.groups()
        yield Conversion(key, _number(width), _number(precision), kind)
        pos = find("%", rest.end())


@dataclass(slots=True)
class PrintfSummary:
    """What the guards need of a template, in one pass (no list of conversions kept).

    ``star``: some width or precision is ``*``. ``widest``: the largest width or
    precision. ``padding``: every conversion's width plus every numeric precision (the
    output is at most the template, this and the arguments' text). ``keyless``:
    conversions without a key (``%%`` aside). ``keys``: each key's number of conversions.
    """

    star: bool = False
    widest: int = 0
    padding: int = 0
    keyless: int = 0
    keys: dict[str, int] = field(default_factory=dict)


def summarize(text: str) -> PrintfSummary:
    """The :class:`PrintfSummary` of ``text`` (a bytes template as its latin-1 text)."""
    summary = PrintfSummary()
    if "%" not in text:
        return summary
    keys = summary.keys
    for key, width, precision, kind in conversions(text):
        if kind == "%" and width is None and precision is None and key is None:
            continue  # "%%": one character, from two of the template
        for part in (width, precision):
            if part is not None:
                if part < 0:
                    summary.star = True
                elif part > summary.widest:
                    summary.widest = part
        if width is not None and width > 0:
            summary.padding += width
        if precision is not None and precision > 0 and kind in _NUMERIC:
            summary.padding += precision
        if key is None:
            summary.keyless += 1
        else:
            keys[key] = keys.get(key, 0) + 1
    return summary
