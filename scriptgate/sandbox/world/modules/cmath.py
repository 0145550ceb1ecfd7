"""The ``cmath`` stand-in: complex-number functions and constants (issue 14).

Part of ``world/modules/``; must not import the engine, isolation or the model-facing
text. Every member is the real C function or constant: each takes numbers and returns a
``complex`` (``phase``: a float, ``polar``: a pair of floats, the ``is*`` tests: a bool), of
fixed size and fixed cost, as ``math``'s float functions are; nothing else of ``cmath``
is listed.
"""

from __future__ import annotations

import cmath
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "cmath"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "pi", "e", "tau", "inf", "infj", "nan", "nanj", "sqrt", "exp", "log", "log10",
    "phase", "polar", "rect", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "isclose", "isfinite", "isinf", "isnan",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (beyond numbers)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run: the real functions and constants (they hold no state)."""
    return {name: getattr(cmath, name) for name in MEMBERS}
