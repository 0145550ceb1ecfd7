"""Text codecs: an allow-list of encodings and error handlers, and sized encode/decode.

Owns :func:`check_codec`, :func:`checked_encode` and :func:`checked_decode`, which
``str.encode``, ``bytes.decode``/``bytearray.decode``, ``bytes(s, enc)``,
``bytearray(s, enc)`` and ``str(b, enc)`` go through (findings14 A01/A02/A15):

- **Encodings** are an allow-list of the codecs whose work is linear: the Unicode ones
  (``utf-8``, ``utf-16``, ``utf-32``, ``utf-7``, their endian forms, ``utf-8-sig``), ``ascii``,
  ``latin-1``, the ``iso8859``/``cp``/``mac``/``koi8`` charmaps, the CJK codecs and the escape
  codecs, under any of their aliases. ``punycode`` and ``idna`` are pure Python and
  quadratic (8,000 characters took 15 s in one call), ``mbcs``/``oem`` are Windows-only, and
  the bytes-to-bytes codecs are not text encodings. The name is normalised here, as
  ``encodings`` does, before any lookup: CPython caches every name it is asked for, known
  or not, in a process-wide dict, and normalises it in Python (a 10 MB name: 1.85 s and
  10 MB kept per run).
- **Error handlers** are CPython's own eight.
- **Sizes**: before a large encode or decode the result is estimated from the input's
  length and widest character, the codec and the handler (``namereplace`` turns one
  character into up to 96 bytes: 10 M characters made 870 MB in one call), charged to the
  memory budget and refused past :data:`MAX_CODEC_BYTES`; a large input also checks the
  run's deadline first (one call is milliseconds).

Part of ``guards/``: imports :mod:`.errors`, :mod:`.memory` and :mod:`.ticking` only.
"""

from __future__ import annotations

import encodings.aliases
import re
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.memory import CHECK_FROM, MAX_SEQUENCE, charge_bytes
from scriptgate.sandbox.guards.ticking import TICK_STEPS, run_charge

__all__ = [
    "ERROR_HANDLERS",
    "MAX_CODEC_BYTES",
    "MAX_SLOW_UNITS",
    "check_codec",
    "checked_decode",
    "checked_encode",
    "encoded",
    "is_decoding_call",
    "str_of_bytes",
]

MAX_CODEC_BYTES = 4 * MAX_SEQUENCE
"""Largest result (bytes of memory) one encode or decode may make: a 10 M-character text of
the widest characters in UTF-8."""

ERROR_HANDLERS = frozenset(
    {
        "strict", "ignore", "replace", "backslashreplace", "xmlcharrefreplace",
        "namereplace", "surrogateescape", "surrogatepass",
    }
)  # fmt: skip
"""The error handlers a script may name (CPython's own; none can be registered)."""

_LINEAR = re.compile(
    r"(utf_(8|8_sig|16|16_le|16_be|32|32_le|32_be|7)|ascii|latin_1|iso8859_\d+|cp\d+"
    r"|mac_[a-z0-9]+|koi8_[a-z]|kz1048|ptcp154|hp_roman8|tis_620|big5(hkscs)?|gb2312|gbk"
    r"|gb18030|hz|shift_jis(_2004|x0213)?|euc_[a-z0-9_]+|iso2022_[a-z0-9_]+|johab"
    r"|unicode_escape|raw_unicode_escape)"
)
"""Canonical names of the codecs whose encode and decode are linear C (the charmaps are a
Python call into C's ``charmap_encode``/``charmap_decode``; ``utf_8_sig`` adds a BOM)."""

_MAX_NAME = 40
"""Longest encoding or handler name (the longest alias is 20 characters)."""

_SEPARATORS = re.compile(r"[^a-z0-9.]+")


def _normal(name: str) -> str:
    return _SEPARATORS.sub("_", name.lower()).strip("_")


def _allowed() -> dict[str, str]:
    names: dict[str, str] = {}
    canonical = set(encodings.aliases.aliases.values()) | {
        "utf_8_sig", "unicode_escape", "raw_unicode_escape", "cp65001", "mac_arabic",
        "mac_croatian", "mac_farsi", "mac_romanian", "mac_centeuro", "cp720", "cp737",
        "cp856", "cp874", "cp875", "cp1006", "koi8_t", "koi8_u", "iso8859_1",
    }  # fmt: skip
    for name in canonical:
        if _LINEAR.fullmatch(name):
            names[name] = name
    for alias, name in encodings.aliases.aliases.items():
        if name in names:
            names[_normal(alias)] = name
    return names


_ENCODINGS = _allowed()
"""Normalised name (an alias or the codec's own) → the canonical name of an allowed codec."""

_WIDE_ESCAPES = frozenset({"unicode_escape", "raw_unicode_escape"})
_SHIFTING = frozenset({"utf_7"})


def check_codec(encoding: Any, errors: Any, what: str) -> tuple[str, str]:
    """The allowed codec and handler named, as exact ``str``; refused with what to write."""
    if not isinstance(encoding, str):
        raise TypeError(f"{what}() argument 'encoding' must be str, not {type(encoding).__name__}")
    if not isinstance(errors, str):
        raise TypeError(f"{what}() argument 'errors' must be str, not {type(errors).__name__}")
    short = str.__len__(encoding) <= _MAX_NAME
    name = _ENCODINGS.get(_normal(str.__str__(encoding))) if short else None
    if name is None:
        shown = str.__str__(encoding)[:_MAX_NAME]
        raise LookupError(
            f"unknown encoding or one not available in the sandbox: {shown!r} (the sandbox "
            "has the Unicode codecs, ascii, latin-1, the cp/iso8859/mac charmaps, the CJK and "
            "escape codecs; not punycode or idna): use 'utf-8'"
        )
    handler = str.__str__(errors)
    if handler not in ERROR_HANDLERS:
        raise LookupError(
            f"unknown error handler name {handler[:_MAX_NAME]!r} (the sandbox has "
            f"{', '.join(sorted(ERROR_HANDLERS))})"
        )
    return name, handler


def _width(text: str) -> int:
    """Bytes a character of ``text`` takes in memory: 1 (Latin-1), 2 (the BMP) or 4.

    Read off the base type's own size (a subclass's ``__sizeof__`` is never asked), for a
    text long enough that the header does not count.
    """
    return min(4, max(1, str.__sizeof__(text) // max(str.__len__(text), 1)))


def _encoded_size(text: str, codec: str, errors: str) -> int:
    length = str.__len__(text)
    if str.isascii(text):
        if codec in _WIDE_ESCAPES:
            return 4 * length  # control characters as \xNN
        if codec.startswith("utf_32"):
            return 4 * length + 4
        if codec.startswith("utf_16") or codec in _SHIFTING:
            return 2 * length + 4
        return length + 3
    width = _width(text)
    per = 10 if codec in _WIDE_ESCAPES else 8 if codec in _SHIFTING else 4
    if codec == "utf_8" or codec == "utf_8_sig":
        per = {1: 2, 2: 3}.get(width, 4)
    if errors == "namereplace":
        per = max(per, 96)  # \N{...}: the longest character name is 88
    elif errors in ("backslashreplace", "xmlcharrefreplace"):
        per = max(per, 10)  # \U0010ffff, &#1114111;
    return per * length + 4


def _check_budget() -> None:
    charge = run_charge()
    if charge is not None:
        charge(TICK_STEPS)  # the deadline and the abort, before a C call of milliseconds


def _charge(size: int, what: str) -> None:
    if size > MAX_CODEC_BYTES:
        refuse_size(
            f"{what} would make about {size} bytes, too large for the sandbox (at most "
            f"{MAX_CODEC_BYTES}): encode or decode the text in parts"
        )
    _check_budget()
    charge_bytes(size)


_MULTIBYTE = re.compile(
    r"big5(hkscs)?|cp9(32|49|50)|euc_[a-z0-9_]+|gb(2312|k|18030)|hz|iso2022_[a-z0-9_]+|johab"
    r"|shift_jis(_2004|x0213)?"
)
"""The CJK codecs: they call a non-inline error handler back through Python, once a character."""
_INLINE_HANDLERS = frozenset({"strict", "ignore", "replace"})
MAX_SLOW_UNITS = 500_000
"""Most characters (bytes) one encode or decode takes where each one may cost a Python
callback: a CJK codec with another handler, or ``utf-7`` (0.4–1.1 µs a unit: 10 M of them
were 4–11 s in one call, findings14 C01)."""


def _check_slow(codec: str, handler: str, length: int, what: str) -> None:
    slow = codec == "utf_7" or (
        handler not in _INLINE_HANDLERS and _MULTIBYTE.fullmatch(codec) is not None
    )
    if slow and length > MAX_SLOW_UNITS:
        refuse_size(
            f"{what} with {codec!r} and errors={handler!r} of {length} units is too slow for the "
            f"sandbox (at most {MAX_SLOW_UNITS} at a time): split the text, or use 'utf-8'"
        )


def checked_encode(text: str, encoding: Any = "utf-8", errors: Any = "strict") -> bytes:
    """``str.encode`` of ``text`` (a ``str`` or subclass, by the base method) with the checks."""
    codec, handler = check_codec(encoding, errors, "encode")
    length = str.__len__(text)
    if length > CHECK_FROM:
        _check_slow(codec, handler, length, "str.encode")
        _charge(_encoded_size(text, codec, handler), "str.encode")
    return str.encode(text, codec, handler)


def checked_decode(data: Any, encoding: Any = "utf-8", errors: Any = "strict") -> str:
    """``bytes.decode``/``bytearray.decode`` of ``data`` with the checks."""
    codec, handler = check_codec(encoding, errors, "decode")
    kind: Any = bytearray if isinstance(data, bytearray) else bytes
    length = kind.__len__(data)
    if length > CHECK_FROM:
        _check_slow(codec, handler, length, "bytes.decode")
        # at most one character a byte (4 with backslashreplace), 4 bytes each in memory
        per = 16 if handler == "backslashreplace" else 4
        _charge(per * length + 64, "bytes.decode")
    result: str = kind.decode(data, codec, handler)
    return result


def is_decoding_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether ``str(*args, **kwargs)`` decodes bytes (an encoding or errors is given)."""
    return len(args) > 1 or "encoding" in kwargs or "errors" in kwargs


def str_of_bytes(object: Any = b"", encoding: Any = "utf-8", errors: Any = "strict") -> str:
    """``str(data, encoding, errors)`` of bytes or a bytearray, checked like ``decode``."""
    if not isinstance(object, (bytes, bytearray)):
        raise TypeError(f"decoding to str: need a bytes-like object, {type(object).__name__} found")
    return checked_decode(object, encoding, errors)


def encoded(text: str, encoding: Any = "utf-8", errors: Any = "strict") -> bytes:
    """The bytes of ``bytes(text, encoding, errors)`` / ``bytearray(...)``, checked like ``encode``."""
    return checked_encode(text, encoding, errors)
