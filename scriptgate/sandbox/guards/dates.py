"""Date formats: ``strftime``, ``format(date, spec)`` and ``strptime`` with bounded formats.

Owns :func:`check_date_format` and :func:`strftime_of`. A date format is short in real
code (``'%Y-%m-%d %H:%M'``), but C renders it in one call: ``'%c' * 5_000_000`` made 120 M
characters (each ``%c`` is 24), ``%Z`` repeats the zone's name, whatever its length, and
CPython's ``_strptime`` is quadratic in the format's length and keeps each format in a
process-wide cache (findings14 A04–A06). Formats longer than :data:`MAX_DATE_FORMAT` are
refused; shorter ones are estimated (24 characters a directive, the zone's name for each
``%Z``) against the render bound.

Part of ``guards/``: imports :mod:`.errors`, :mod:`.lengths` and :mod:`.sizes` only.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.sizes import CHARGE_FROM, MAX_RENDER, charge_render, too_large_render

__all__ = ["MAX_DATE_FORMAT", "check_date_format", "is_date", "strftime_of", "strptime_of"]

MAX_DATE_FORMAT = 1_000
"""Longest date format (characters) ``strftime``/``strptime``/``format`` take in the sandbox."""

_WIDEST = 24
"""Characters one directive renders at most (``%c``: ``Wed Jan  1 00:00:00 2020``) per two
characters of format, so 12 per format character."""

_DATES = (datetime.date, datetime.time)
_WIDTHS = re.compile(r"%[-_0^#]*(\d{1,9})")
"""A directive's field width (``%10Y``, ``%_5d``): glibc's ``strftime`` pads to it."""


def is_date(value: Any) -> bool:
    """Whether ``value`` formats through ``strftime`` (a date, datetime or time)."""
    return isinstance(value, _DATES)


def check_date_format(value: Any, fmt: Any, what: str = "strftime()") -> Any:
    """``fmt`` as an exact ``str``, refused past :data:`MAX_DATE_FORMAT` or the render bound."""
    if not isinstance(fmt, str):
        return fmt  # C raises its own TypeError
    fmt = exact_copy(fmt)
    if len(fmt) > MAX_DATE_FORMAT:
        refuse_size(
            f"{what}: a date format of {len(fmt)} characters is refused in the sandbox "
            f"(at most {MAX_DATE_FORMAT}): format the parts separately and join them"
        )
    size = len(fmt) * (_WIDEST // 2)
    # glibc pads a field to a width written in the directive (`%1500Y`): each counts whole
    size += sum(int(width) for width in _WIDTHS.findall(fmt))
    zones = fmt.count("%Z")
    if zones and isinstance(value, (datetime.datetime, datetime.time)):
        name = value.tzname()  # the zone is the host's (timezone, ZoneInfo): no script code
        if isinstance(name, str):
            size += zones * len(name)
    if size > MAX_RENDER:
        too_large_render(f"{what} with this format", size)
    if size >= CHARGE_FROM:
        charge_render(size)
    return fmt


def strftime_of(value: Any, method: Callable[..., Any]) -> Callable[..., Any]:
    """``value.strftime`` with its format checked first (:func:`check_date_format`)."""

    def strftime(format: Any) -> Any:
        return method(check_date_format(value, format))

    strftime.__name__ = "strftime"
    return strftime


def strptime_of(method: Callable[..., Any]) -> Callable[..., Any]:
    """``datetime.strptime`` on exact ``str`` copies, its format bounded.

    CPython's ``_strptime`` keeps each format in a process-wide cache, where a script's
    ``str`` subclass would keep the run's class (and all it holds) after the run (the sixth
    attack's F05), and a long format both costs quadratic time and stays in that cache
    (findings14 A04/A05).
    """

    def strptime(date_string: Any, format: Any) -> Any:
        return method(exact_copy(date_string), check_date_format(None, format, "strptime()"))

    strptime.__name__ = "strptime"
    return strptime
