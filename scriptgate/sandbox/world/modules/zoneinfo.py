"""The ``zoneinfo`` stand-in: ``ZoneInfo`` time zones for ``datetime``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``ZoneInfo`` is a subclass of the real class
(it reads the system's tzdata files, or the ``tzdata`` package): keys are IANA names
(letters, digits, ``_+-/``, at most :data:`MAX_KEY` characters, no ``..``), and the
class methods that read arbitrary files or change the host-wide cache
(``from_file``, ``clear_cache``, ``no_cache``) are not available.
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any

from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_KEY", "MEMBERS", "NAME", "ZoneInfo", "build"]

NAME = "zoneinfo"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("ZoneInfo", "ZoneInfoNotFoundError", "available_timezones")
"""The members a script may use."""
MAX_KEY = 100
"""The longest time zone key."""
_KEY = re.compile(r"[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*")


def _refused(*args: Any, **kwargs: Any) -> Any:
    raise TypeError("this ZoneInfo method is not available in the sandbox: use ZoneInfo(key)")


class ZoneInfo(zoneinfo.ZoneInfo):
    """An IANA time zone (``ZoneInfo("Europe/Paris")``), a ``datetime`` tzinfo."""

    def __new__(cls, key: Any) -> Any:
        # a str subclass would be measured by its own __len__ and kept as a key of
        # zoneinfo's process-wide cache (its __eq__/__hash__ run in later lookups)
        key = exact_copy(key)
        if not isinstance(key, str) or len(key) > MAX_KEY or not _KEY.fullmatch(key):
            raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key!r}"[:200])
        try:
            return super().__new__(cls, key)
        except (OSError, ValueError):
            raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key}") from None

    from_file = classmethod(_refused)
    clear_cache = classmethod(_refused)
    no_cache = classmethod(_refused)


HOLDABLE: tuple[type, ...] = (ZoneInfo, zoneinfo.ZoneInfoNotFoundError)
"""Value types this stand-in hands to scripts."""

_AVAILABLE: list[frozenset[str]] = []


def _available_timezones() -> set[str]:
    if not _AVAILABLE:
        _AVAILABLE.append(frozenset(zoneinfo.available_timezones()))
    return set(_AVAILABLE[0])


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "ZoneInfo": ZoneInfo,
        "ZoneInfoNotFoundError": zoneinfo.ZoneInfoNotFoundError,
        "available_timezones": _available_timezones,
    }
