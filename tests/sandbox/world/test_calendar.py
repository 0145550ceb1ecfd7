"""The ``calendar`` stand-in against plain Python, in both isolation modes.

Attack-style scripts for it are in ``tests/sandbox/attacks_extra.py`` (``x-calendar-*``).
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox

FEATURES = {
    "month-lengths": "import calendar\n"
    "[calendar.monthrange(2024, 2), calendar.monthrange(2023, 12), calendar.isleap(1900),"
    " calendar.isleap(2000), calendar.leapdays(1900, 2024), [calendar.monthrange(2024, m)[1] for m in range(1, 13)]]",
    "names": "import calendar\n"
    "[calendar.month_name[3], calendar.month_abbr[12], calendar.day_name[0], calendar.day_abbr[6],"
    " list(calendar.month_name)[:2], len(calendar.month_abbr), calendar.SUNDAY, calendar.MONDAY]",
    "grid-and-weekday": "import calendar\nfrom datetime import date\n"
    "weeks = calendar.monthcalendar(2024, 3)\n"
    "[weeks[0], len(weeks), calendar.weekday(2024, 3, 15), calendar.day_name[calendar.weekday(2024, 3, 15)],"
    " calendar.timegm((2024, 3, 1, 12, 30, 0)), calendar.timegm(date(2000, 1, 1).timetuple()[:6])]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_calendar_matches_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


def test_calendar_refuses_with_a_hint(sandbox: Sandbox) -> None:
    refused(sandbox, "import calendar\ncalendar.monthrange(2024, 13)", "runtime", "bad month")
    refused(sandbox, "import calendar\ncalendar.isleap(10**100)", "runtime", "calendar range")
    refused(sandbox, "import calendar\ncalendar.month(2024, 1)", "runtime", "no attribute 'month'")
    refused(sandbox, "from calendar import TextCalendar", "runtime", "cannot import name")
