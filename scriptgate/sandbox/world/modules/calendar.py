"""The ``calendar`` stand-in: leap years, month lengths, weekdays and month grids.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation or
the model-facing text. The functions are the real ones on checked integers (a year is an
``int`` within :data:`MAX_YEAR` either side of zero, so no call does big-number work);
the name tables are plain English tuples (``month_name[1] == 'January'``, index 0 is
``''`` as in CPython) instead of the host's locale-reading ``_localized_month`` objects.
The text calendars (``TextCalendar``, ``month()``, ``prcal``) are not here: their width
arguments would size host strings (build the text from ``monthcalendar`` instead).
"""

from __future__ import annotations

import calendar
import operator
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_YEAR", "MEMBERS", "NAME", "build"]

NAME = "calendar"
"""The name a script imports."""
_FUNCTIONS: tuple[str, ...] = (
    "isleap",
    "leapdays",
    "monthrange",
    "weekday",
    "monthcalendar",
    "timegm",
)
_CONSTANTS: tuple[str, ...] = (
    "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY",
)  # fmt: skip
_TABLES: dict[str, tuple[str, ...]] = {
    "month_name": ("", *(calendar.month_name[i] for i in range(1, 13))),
    "month_abbr": ("", *(calendar.month_abbr[i] for i in range(1, 13))),
    "day_name": tuple(calendar.day_name[i] for i in range(7)),
    "day_abbr": tuple(calendar.day_abbr[i] for i in range(7)),
}
MEMBERS: tuple[str, ...] = (*_FUNCTIONS, *_TABLES, *_CONSTANTS)
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (none: ints, tuples and lists)."""

MAX_YEAR = 1_000_000_000
"""The largest year (either side of zero) a ``calendar`` function takes."""


def _year(value: Any) -> int:
    year = operator.index(value)
    if not -MAX_YEAR <= year <= MAX_YEAR:
        raise ValueError(f"a year beyond ±{MAX_YEAR:,} is outside the sandbox's calendar range")
    return int(year)


def _checked(name: str) -> Callable[..., Any]:
    real = getattr(calendar, name)

    def wrapper(*args: Any) -> Any:
        if name == "timegm":
            (when,) = args
            if type(when) is not tuple or len(when) < 6:
                raise TypeError(
                    "calendar.timegm takes a tuple (year, month, day, hour, minute, second, ...)"
                )
            return real((_year(when[0]), *(operator.index(v) for v in when[1:6])))
        return real(
            *(
                _year(v) if i == 0 or name == "leapdays" else operator.index(v)
                for i, v in enumerate(args)
            )
        )

    wrapper.__name__ = name
    return wrapper


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    members: dict[str, Any] = {name: _checked(name) for name in _FUNCTIONS}
    members.update(_TABLES)
    members.update({name: int(getattr(calendar, name)) for name in _CONSTANTS})
    return members
