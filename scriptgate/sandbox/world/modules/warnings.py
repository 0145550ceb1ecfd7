"""The ``warnings`` stand-in: ``warn`` writes one line to the script's output.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

The real module keeps the process's filters and registries (``simplefilter("error")``
would turn the host's own warnings into exceptions), so nothing here touches them.
``warn(message, category=UserWarning, stacklevel=1)`` prints ``Category: message`` through
the script's own ``print`` (captured and counted against the output limit), every call (no
once-per-location registry). ``filterwarnings``, ``simplefilter`` and ``resetwarnings``
check their arguments as CPython does and change nothing; ``catch_warnings`` is a context
manager that changes nothing (``record=True`` gives an empty list; warnings still print).
The categories are the builtin warning classes (``UserWarning``, ``DeprecationWarning``…).
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld, script_print

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build", "catch_warnings"]

NAME = "warnings"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "warn", "filterwarnings", "simplefilter", "resetwarnings", "catch_warnings",
)  # fmt: skip
"""The members a script may use."""

_ACTIONS = frozenset({"error", "ignore", "always", "default", "module", "once"})


def _check_category(category: Any) -> None:
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(f"category must be a Warning subclass, not '{type(category).__name__}'")


def _check_filter(action: Any, category: Any, lineno: Any, append: Any) -> None:
    if action not in _ACTIONS or type(action) is not str:
        raise ValueError(f"invalid action: {action!r}")
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError("category must be a Warning subclass")
    if not isinstance(lineno, int) or lineno < 0:
        raise ValueError("lineno must be an int >= 0")
    if not isinstance(append, bool | int):
        raise TypeError("append must be a bool")


def warn(message: Any, category: Any = None, stacklevel: Any = 1, source: Any = None) -> None:
    """Write ``Category: message`` to the script's output."""
    if isinstance(message, Warning):
        category = type(message)
    if category is None:
        category = UserWarning
    _check_category(category)
    if not isinstance(stacklevel, int):
        raise TypeError(f"'{type(stacklevel).__name__}' object cannot be interpreted as an integer")
    out = script_print("warnings.warn")
    out(f"{category.__name__}:", message)  # print renders the message within its bounds


def filterwarnings(
    action: Any,
    message: Any = "",
    category: Any = Warning,
    module: Any = "",
    lineno: Any = 0,
    append: Any = False,
) -> None:
    """Accepted (arguments checked); changes nothing in the sandbox."""
    _check_filter(action, category, lineno, append)
    if not isinstance(message, str):
        raise TypeError("message must be a string")
    if not isinstance(module, str):
        raise TypeError("module must be a string")


def simplefilter(
    action: Any, category: Any = Warning, lineno: Any = 0, append: Any = False
) -> None:
    """Accepted (arguments checked); changes nothing in the sandbox."""
    _check_filter(action, category, lineno, append)


def resetwarnings() -> None:
    """Accepted; changes nothing in the sandbox."""


class catch_warnings:
    """``with warnings.catch_warnings():`` — changes nothing (``record=True`` gives ``[]``)."""

    __slots__ = ("_record",)

    def __init__(
        self,
        *,
        record: bool = False,
        module: Any = None,
        action: Any = None,
        category: Any = Warning,
        lineno: Any = 0,
        append: Any = False,
    ) -> None:
        if action is not None:
            _check_filter(action, category, lineno, append)
        self._record = bool(record)

    def __enter__(self) -> list[Any] | None:
        return [] if self._record else None

    def __exit__(self, *exc_info: object) -> None:
        return None

    def __repr__(self) -> str:
        return f"catch_warnings(record={self._record})"


catch_warnings.__module__ = "warnings"

HOLDABLE: tuple[type, ...] = (catch_warnings,)
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "warn": warn,
        "filterwarnings": filterwarnings,
        "simplefilter": simplefilter,
        "resetwarnings": resetwarnings,
        "catch_warnings": catch_warnings,
    }
