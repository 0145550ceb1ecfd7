"""Text a script controls, made safe to show on an operator's terminal (used by the CLI).

:func:`escape_controls` keeps newlines and tabs and shows every other control
character — C0 (``ESC`` → ``\\x1b``, ``CR``, ``BS``…), ``DEL``, C1 (``\\x9b`` is a
CSI on some terminals), bidirectional overrides and isolates, the line and
paragraph separators, and lone surrogates — as a visible escape, so printed
output cannot move the cursor, clear the screen or scrollback, or rewrite the
audit lines already on screen. :class:`EscapingWriter` applies it to every write
of a stream. :func:`safe_repr` is ``repr`` that never raises (an int too long for
``str()``, a broken ``__repr__``).

Nothing here imports the rest of scriptgate.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

__all__ = ["EscapingWriter", "escape_controls", "escape_output", "safe_repr"]

_CONTROLS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


# The same, but carriage returns pass (a program's progress line rewrites itself with
# them): what ``scriptgate jail run`` relays to a terminal (findings14 B08).
_OUTPUT_CONTROLS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with control characters other than ``\\n`` and ``\\t`` shown as escapes."""
    return _CONTROLS.sub(_escape, text)


def escape_output(text: str) -> str:
    """``text`` with control characters other than ``\\n``, ``\\t`` and ``\\r`` shown as
    escapes: an escape sequence (``ESC``, a C1 ``CSI``) cannot reach the terminal whole."""
    return _OUTPUT_CONTROLS.sub(_escape, text)


class EscapingWriter:
    """A text stream wrapper that escapes control characters in everything written."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` escaped; returns the length of ``text``."""
        self._stream.write(escape_controls(text))
        return len(text)

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self._stream.flush()

    def isatty(self) -> bool:
        """Whether the wrapped stream is a terminal."""
        try:
            return bool(self._stream.isatty())
        except (AttributeError, OSError, ValueError):
            return False


def safe_repr(value: Any) -> str:
    """``repr(value)``, or a short description when that raises."""
    try:
        return repr(value)
    except ValueError:
        if isinstance(value, int):
            return f"<int of {value.bit_length()} bits>"
        return f"<{type(value).__name__}: too large to show>"
    except Exception:
        return f"<{type(value).__name__}>"
