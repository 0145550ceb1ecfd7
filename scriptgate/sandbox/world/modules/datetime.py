"""The ``datetime`` stand-in: the real classes (immutable values with no path to the host).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``datetime.strptime`` imports ``_strptime`` in C
through the running frame's ``__import__`` (the script's) and then reads it from
``sys.modules``: this module imports it on the host, and the run's import answers
that one internal call with an empty namespace (:data:`C_INTERNAL_IMPORTS`).
"""

from __future__ import annotations

import datetime
import importlib
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["C_INTERNAL_IMPORTS", "HOLDABLE", "MEMBERS", "NAME", "build"]

C_INTERNAL_IMPORTS = frozenset({"_strptime"})
"""Modules C code of this stand-in imports through the script's ``__import__``."""
for _name in C_INTERNAL_IMPORTS:
    importlib.import_module(_name)  # in sys.modules before any script runs

NAME = "datetime"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "datetime", "date", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR", "UTC",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (
    datetime.datetime, datetime.date, datetime.time, datetime.timedelta, datetime.timezone,
)  # fmt: skip
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {name: getattr(datetime, name) for name in MEMBERS}
