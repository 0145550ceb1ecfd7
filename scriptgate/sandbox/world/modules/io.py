"""The ``io`` stand-in: in-memory files only (``StringIO``, ``BytesIO``).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Both are subclasses of the real classes whose
content is at most :data:`MAX_CHARS` characters (bytes): a ``write`` or ``seek``
past it is refused (``seek(10**12)`` then ``write`` would allocate the gap).
``BytesIO.getbuffer`` (a view that pins the buffer) is not available. There is no
``open``: files are reached through the host's file tools.
"""

from __future__ import annotations

import io
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_CHARS", "MEMBERS", "NAME", "BytesIO", "StringIO", "build"]

NAME = "io"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("StringIO", "BytesIO", "SEEK_SET", "SEEK_CUR", "SEEK_END")
"""The members a script may use."""
MAX_CHARS = 50_000_000
"""The most characters (bytes) an in-memory file holds."""


def _refuse() -> None:
    refuse_size(f"an in-memory file above {MAX_CHARS} characters is refused in the sandbox")


def _room(f: Any, extra: int) -> None:
    if f.tell() + extra > MAX_CHARS:
        _refuse()


class StringIO(io.StringIO):
    """An in-memory text file (bounded)."""

    def __init__(self, initial_value: Any = "", newline: Any = "\n") -> None:
        initial_value = exact_copy(initial_value)
        if isinstance(initial_value, str) and len(initial_value) > MAX_CHARS:
            _refuse()
        super().__init__(initial_value, newline)

    def write(self, s: Any) -> int:
        """Write ``s`` at the current position."""
        if isinstance(s, str):
            s = exact_copy(s)  # measured and written as the characters it holds
            _room(self, len(s))
        return super().write(s)

    def writelines(self, lines: Any) -> None:
        """Write each string of ``lines``."""
        for line in lines:
            self.write(line)

    def seek(self, pos: Any, whence: Any = 0) -> int:
        """Move to ``pos`` (at most the size cap)."""
        if isinstance(pos, int):
            pos = int.__index__(pos)  # an int subclass's __gt__ never answers the bound
            if pos > MAX_CHARS:
                _refuse()
        return super().seek(pos, whence)


class BytesIO(io.BytesIO):
    """An in-memory binary file (bounded)."""

    def __init__(self, initial_bytes: Any = b"") -> None:
        initial_bytes = exact_copy(initial_bytes)
        if isinstance(initial_bytes, bytes | bytearray) and len(initial_bytes) > MAX_CHARS:
            _refuse()
        super().__init__(initial_bytes)

    def write(self, b: Any) -> int:
        """Write ``b`` at the current position."""
        if isinstance(b, bytes | bytearray):
            b = exact_copy(b)
            _room(self, len(b))
        elif not isinstance(b, bytes | bytearray):
            raise TypeError(f"a bytes-like object is required, not {type(b).__name__!r}")
        return super().write(b)

    def writelines(self, lines: Any) -> None:
        """Write each bytes object of ``lines``."""
        for line in lines:
            self.write(line)

    def seek(self, pos: Any, whence: Any = 0) -> int:
        """Move to ``pos`` (at most the size cap)."""
        if isinstance(pos, int):
            pos = int.__index__(pos)  # an int subclass's __gt__ never answers the bound
            if pos > MAX_CHARS:
                _refuse()
        return super().seek(pos, whence)

    def getbuffer(self) -> Any:
        """Not available in the sandbox (use ``getvalue()``)."""
        raise TypeError("BytesIO.getbuffer() is not available in the sandbox: use getvalue()")

    def readinto(self, buffer: Any) -> int:
        """Not available in the sandbox (use ``read()``)."""
        raise TypeError("BytesIO.readinto() is not available in the sandbox: use read()")


HOLDABLE: tuple[type, ...] = (StringIO, BytesIO)
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "StringIO": StringIO,
        "BytesIO": BytesIO,
        "SEEK_SET": io.SEEK_SET,
        "SEEK_CUR": io.SEEK_CUR,
        "SEEK_END": io.SEEK_END,
    }
