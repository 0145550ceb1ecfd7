"""The ``base64`` stand-in: encoding and decoding of bytes (and ASCII text).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Inputs are at most ``MAX_INPUT`` bytes (the
output is a bounded multiple of the input).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import base_len, exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_INPUT", "MEMBERS", "NAME", "build"]

NAME = "base64"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "b64encode", "b64decode", "urlsafe_b64encode", "urlsafe_b64decode", "standard_b64encode",
    "standard_b64decode", "b32encode", "b32decode", "b16encode", "b16decode", "b85encode",
    "b85decode", "Error",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (bytes)."""
MAX_INPUT = 5_000_000
"""The largest input the base64 stand-in takes."""


def _sized(fn: Callable[..., bytes]) -> Callable[..., bytes]:
    def wrapper(data: Any, *args: Any, **kwargs: Any) -> bytes:
        if not isinstance(data, (bytes, bytearray, str)):
            raise TypeError(f"{fn.__name__}() takes bytes or str")
        if base_len(data) > MAX_INPUT:
            refuse_size(f"base64 input above {MAX_INPUT} bytes refused in the sandbox")
        for arg in (*args, *kwargs.values()):
            if isinstance(arg, (bytes, str)) and base_len(arg) > 64:
                raise ValueError("base64 alphabet arguments are at most 64 characters")
        args = tuple(exact_copy(arg) for arg in args)
        kwargs = {key: exact_copy(value) for key, value in kwargs.items()}
        return fn(exact_copy(data), *args, **kwargs)

    wrapper.__name__ = fn.__name__
    return wrapper


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: _sized(getattr(base64, name)) for name in MEMBERS[:-1]}
    table["Error"] = binascii.Error
    return table
