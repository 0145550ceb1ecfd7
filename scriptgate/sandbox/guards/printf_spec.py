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

import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["Conversion", "PrintfSummary", "conversions", "summarize"]

_REST = re.compile(r"[-#0 +]*+(\*|[0-9]++)?+(?>(?:\.(\*|[0-9]*+))?)[hlL]?+(.)", re.DOTALL)
"""After ``%`` and any key: flags, width, precision, length letter, conversion character."""

_CONVERSION = re.compile(
    r"[^%]*+%(?:(%)|(?:\(([^()]*)\))?+[-#0 +]*+(\*|[0-9]++)?+(?>(?:\.(\*|[0-9]*+))?)[hlL]?+(.))",
    re.DOTALL,
)
"""Literal text, then one whole conversion or ``%%``; a key with nested parentheses is
read by hand. No match where C would raise: an incomplete conversion ends the template."""

_PARENS = re.compile(r"[()]")

_NUMERIC = frozenset("diouxXeEfFgG")
"""Conversions a precision pads (``'%.9999d'``); for ``s``/``r``/``a`` it only truncates."""

_FIXED_FLOAT = 310
"""The integer digits ``%f`` writes of the largest float (309) and its point; the
render walk counts a float as its ``repr`` (``1e+308``: 6 characters)."""

_HUGE = 10**18
"""The value given to a width or precision of more than 18 digits (C: "width too big")."""


class Conversion(NamedTuple):
    """One ``%`` conversion of a template, as C reads it.

    ``width`` and ``precision`` are ``None`` when absent (a bare ``.`` is precision 0),
    ``-1`` for ``*``; ``kind`` is the conversion character (``%`` for ``%%``, empty for
    a key at the end of the template: C looks it up, then raises "incomplete format").
    """

    key: str | None
    width: int | None
    precision: int | None
    kind: str


_PERCENT = Conversion(None, None, None, "%")


def _number(part: str | None) -> int | None:
    if part is None:
        return None
    if part == "*":
        return -1
    if len(part) > 18:
        return _HUGE
    return int(part) if part else 0


def _nested_key(text: str, pos: int) -> tuple[str, int] | None:
    """The key opened at ``text[pos] == '('`` with C's paren count, and where it ends."""
    depth = 0
    for paren in _PARENS.finditer(text, pos):
        depth += 1 if paren.group() == "(" else -1
        if depth == 0:
            return text[pos + 1 : paren.start()], paren.end()
    return None  # "incomplete format key"


def conversions(text: str) -> Iterator[Conversion]:
    """Every conversion of ``text`` in order; stops where C would raise (an incomplete one).

    A bytes template is read as its latin-1 text (keys then decode back with latin-1).
    """
    step = _CONVERSION.match
    pos = 0
    while (found := step(text, pos)) is not None:
        percent, key, width, precision, kind = found.groups()
        pos = found.end()
        if percent is not None:
            yield _PERCENT
            continue
        if kind == "(" and text[pos - 2] == "%":  # `%(` of a key with nested parentheses
            nested = _nested_key(text, pos - 1)
            if nested is None:
                return  # "incomplete format key"
            key, pos = nested
            rest = _REST.match(text, pos)
            if rest is None:
                yield Conversion(key, None, None, "")  # C looked the key up, then raises
                return
            width, precision, kind = rest.groups()
            pos = rest.end()
        yield Conversion(key, _number(width), _number(precision), kind)
    tail = text.find("%", pos)  # an incomplete conversion, or none: the end
    if tail >= 0 and text.startswith("%(", tail):
        nested = _nested_key(text, tail + 1)
        if nested is not None:
            yield Conversion(nested[0], None, None, "")  # C looked the key up, then raises


def _star_int(args: tuple[Any, ...], index: int) -> int | None:
    """The ``int`` C reads for a ``*`` from ``args[index]`` (an int subclass's own value)."""
    if index >= len(args):
        return None  # "not enough arguments for format string"
    value = args[index]
    if not isinstance(value, int):
        return None  # "* wants int"
    return operator.index(value)  # an exact int: no script __index__ runs for an int subclass


@dataclass(slots=True)
class PrintfSummary:
    """What the guards need of a template, in one pass (no list of conversions kept).

    ``star``: some width or precision is ``*`` that was not read from the arguments.
    ``widest``: the largest width or
    precision. ``padding``: every conversion's width, every numeric precision and 310
    characters per ``%f`` (the output is at most the template, this and the arguments'
    text). ``keyless``:
    conversions without a key (``%%`` aside). ``keys``: each key's number of conversions.
    """

    star: bool = False
    widest: int = 0
    padding: int = 0
    keyless: int = 0
    keys: dict[str, int] = field(default_factory=dict)


def summarize(
    text: str,
    reader: Callable[[Iterator[Conversion]], Iterable[Conversion]] | None = None,
    *,
    stop_past: tuple[int, int] | None = None,
    args: tuple[Any, ...] | None = None,
) -> PrintfSummary:
    """The :class:`PrintfSummary` of ``text`` (a bytes template as its latin-1 text).

    ``reader`` wraps the conversions as they are read (the guards pass
    ``guards.ticking.ticked``: a template of millions of conversions is read in pieces
    with the run's deadline checked between two). ``stop_past`` is ``(widest,
    padding)``: reading stops at the first conversion that takes ``widest`` or
    ``padding`` past those bounds, for a caller that refuses such a template anyway
    (the summary is then partial; ``'%9999s' * 100000`` is refused after 1,001
    conversions, not read to its end).

    ``args`` are the right operand's items as C reads them (a tuple's items, any other
    operand as a one-item tuple): each ``*`` width or precision is then the ``int`` C
    takes from them, in C's order (a conversion's ``*`` width, its ``*`` precision,
    then its value), a negative width counting as its size (C left-justifies) and a
    negative precision as 0. Reading stops at a ``*`` C would refuse (no argument left,
    not an ``int``: C raises there, after only what was read so far).
    """
    summary = PrintfSummary()
    if "%" not in text:
        return summary
    keys = summary.keys
    items: Iterable[Conversion] = conversions(text) if reader is None else reader(conversions(text))
    taken = 0
    for key, width, precision, kind in items:
        if kind == "%" and width is None and precision is None and key is None:
            continue  # "%%": one character, from two of the template
        if args is not None and (width == -1 or precision == -1):
            if width == -1:
                value = _star_int(args, taken)
                if value is None:
                    break  # C raises at this conversion
                width, taken = abs(value), taken + 1
            if precision == -1:
                value = _star_int(args, taken)
                if value is None:
                    break
                precision, taken = max(value, 0), taken + 1
        if kind != "%" and key is None:
            taken += 1  # the conversion's value
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
        if kind == "f" or kind == "F":
            summary.padding += _FIXED_FLOAT  # '%f' % 1e308 is 316 characters, not repr's 6
        if key is None:
            summary.keyless += 1
        else:
            keys[key] = keys.get(key, 0) + 1
        if stop_past is not None and (
            summary.widest > stop_past[0] or summary.padding > stop_past[1]
        ):
            break
    return summary
