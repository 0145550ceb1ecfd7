"""The ``hashlib`` stand-in: the common digests as hash objects a script can hold.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Each constructor (``sha256(b"...")``, ``new``)
returns a real hash object (``update``, ``digest``, ``hexdigest``, ``copy``,
``name``, ``digest_size``, ``block_size``): C objects with no path to the host.
Data is hashed in chunks of at most ``MAX_CHUNK`` bytes per call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import base_len, exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_CHUNK", "MEMBERS", "NAME", "build"]

_ALGORITHMS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s",
               "sha3_256", "sha3_512")  # fmt: skip

NAME = "hashlib"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (*_ALGORITHMS, "new", "algorithms_available", "algorithms_guaranteed")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = tuple(
    dict.fromkeys(type(getattr(hashlib, name)()) for name in _ALGORITHMS)
)
"""Value types this stand-in hands to scripts (the hash objects)."""
MAX_CHUNK = 100_000_000
"""The most bytes one constructor or ``update`` call hashes."""


def _data(data: Any) -> Any:
    if isinstance(data, str):
        raise TypeError("Strings must be encoded before hashing")
    if base_len(data, 0) > MAX_CHUNK:
        refuse_size(f"hashing more than {MAX_CHUNK} bytes at once refused in the sandbox")
    return exact_copy(data)


def _constructor(name: str) -> Callable[..., Any]:
    real = getattr(hashlib, name)

    def make(data: Any = b"", *, usedforsecurity: bool = True) -> Any:
        return real(_data(data), usedforsecurity=usedforsecurity)

    make.__name__ = name
    return make


def _new(name: str, data: Any = b"", **kwargs: Any) -> Any:
    if name not in _ALGORITHMS:
        raise ValueError(
            f"unsupported hash type {name} (the sandbox has: {', '.join(_ALGORITHMS)})"
        )
    return getattr(hashlib, name)(_data(data), **kwargs)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: _constructor(name) for name in _ALGORITHMS}
    table["new"] = _new
    table["algorithms_available"] = frozenset(_ALGORITHMS)
    table["algorithms_guaranteed"] = frozenset(_ALGORITHMS)
    return table
