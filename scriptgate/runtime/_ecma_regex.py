"""ECMAScript (``u`` flag) regular expressions on top of Python's :mod:`re`.

JSON Schema ``pattern`` and ``patternProperties`` are ECMAScript regexes. The translation
keeps ECMAScript meaning where Python's differs:

- ``\\d``, ``\\w``, ``\\b`` are ASCII (the whole pattern compiles with :data:`re.ASCII`);
- ``\\s``/``\\S`` use the ECMAScript white-space set (Unicode spaces included);
- ``.`` does not match the line terminators ``\\n``, ``\\r``, U+2028, U+2029;
- ``$`` matches only at the very end (Python's ``$`` also matches before a final newline);
- ``(?<name>…)`` → ``(?P<name>…)``, ``\\k<name>`` → ``(?P=name)``;
- ``\\u{1F600}``, ``\\uD83D\\uDE00`` (a surrogate pair), ``\\cJ`` become the character;
- ``[]`` never matches, ``[^]`` matches any character;
- ``/`` and other identity escapes keep their literal meaning.

- ``\\p{L}``/``\\p{Letter}`` and ``\\p{Nd}`` (and their ``\\P`` negations) outside a
  character class map to Unicode-mode Python classes (``L`` approximated, see
  ``_PROPERTIES``).

Fallback (documented divergence): a pattern Python cannot express after translation —
other Unicode property escapes, a property escape inside ``[...]``, variable-width
lookbehind — is compiled as written when Python accepts it; otherwise
:func:`compile_ecma` returns ``None`` and callers treat the pattern as matching every
string (like an unknown ``format``).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["compile_ecma", "translate_ecma"]

_JS_SPACE = (
    "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_CLASS_ESCAPES = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": _JS_SPACE,
}
_OUTSIDE_ESCAPES = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": "[" + _JS_SPACE + "]",
    "S": "[^" + _JS_SPACE + "]",
    "b": r"\b",
    "B": r"\B",
}
_SIMPLE = {"t": "\\t", "n": "\\n", "v": "\\v", "f": "\\f", "r": "\\r", "0": "\\x00"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_HEX2 = re.compile(r"[0-9a-fA-F]{2}")
_BRACED = re.compile(r"\{([0-9a-fA-F]{1,6})\}")
_NAME = re.compile(r"<([A-Za-z_$][A-Za-z0-9_$]*)>")
_PROPERTY = re.compile(r"\{([A-Za-z_=]+)\}")
# Unicode property escapes Python's ``re`` can express (class bodies: positive, negated).
# ``L`` is approximated by "word character, not a digit, not ``_``" (Python's Unicode
# ``\w`` is ``str.isalnum()``, so a few ``No``/``Nl`` characters such as "½" count too).
_LETTER = ("^\\W\\d_", "\\W\\d_")
_DIGIT = ("\\d", "^\\d")
_PROPERTIES = {
    "L": _LETTER,
    "Letter": _LETTER,
    "Nd": _DIGIT,
    "Decimal_Number": _DIGIT,
    "digit": _DIGIT,
}


class _Unsupported(Exception):
    pass


def _char(code: int) -> str:
    """A code point as a Python-regex-safe literal."""
    return f"\\U{code:08x}"


def _read_escape(p: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape starting at ``p[i] == '\\\\'``; return (python text, next index)."""
    if i + 1 >= len(p):
        raise _Unsupported("trailing backslash")
    c = p[i + 1]
    j = i + 2
    if in_class and c in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[c], j
    if in_class and c in "DWS":
        # Python's ASCII-mode class escapes; only \S differs (Unicode spaces).
        return "\\" + c, j
    if in_class and c == "b":
        return "\\x08", j
    if not in_class and c in _OUTSIDE_ESCAPES:
        return _OUTSIDE_ESCAPES[c], j
    if c in _SIMPLE and not (c == "0" and j < len(p) and p[j].isdigit()):
        return _SIMPLE[c], j
    if c == "u":
        m = _BRACED.match(p, j)
        if m:
            return _char(int(m.group(1), 16)), m.end()
        m = _HEX4.match(p, j)
        if m:
            code = int(m.group(), 16)
            if 0xD800 <= code <= 0xDBFF and p.startswith("\\u", m.end()):
                low = _HEX4.match(p, m.end() + 2)
                if low and 0xDC00 <= int(low.group(), 16) <= 0xDFFF:
                    code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
                    return _char(code), low.end()
            return _char(code), m.end()
        raise _Unsupported("bad \\u escape")
    if c == "x":
        m = _HEX2.match(p, j)
        if m:
            return _char(int(m.group(), 16)), m.end()
        raise _Unsupported("bad \\x escape")
    if c == "c" and j < len(p) and p[j].isascii() and p[j].isalpha():
        return _char(ord(p[j]) % 32), j + 1
    if c == "k" and not in_class:
        m = _NAME.match(p, j)
        if m:
            return f"(?P={m.group(1)})", m.end()
        raise _Unsupported("bad \\k escape")
    if c.isdigit():
        if in_class:
            raise _Unsupported("backreference in class")
        k = j
        while k < len(p) and p[k].isdigit():
            k += 1
        return "\\" + p[i + 1 : k], k
    if c in "pP":
        m = _PROPERTY.match(p, j)
        name = m.group(1) if m else ""
        pair = _PROPERTIES.get(name)
        if m is None or pair is None:
            raise _Unsupported("unicode property escape")
        if in_class:
            raise _Unsupported("unicode property escape in a class")
        positive, negative = pair
        return "(?u:[" + (positive if c == "p" else negative) + "])", m.end()
    if c.isascii() and c.isalnum():
        raise _Unsupported(f"unknown escape \\{c}")
    return re.escape(c), j


def translate_ecma(pattern: str) -> str:
    """Translate an ECMAScript (``u`` flag) pattern to Python :mod:`re` syntax.

    Raises ``ValueError`` for a construct this translation does not support.
    """
    try:
        return _translate(pattern)
    except _Unsupported as exc:
        raise ValueError(str(exc)) from None


def _translate(p: str) -> str:
    out: list[str] = []
    i = 0
    n = len(p)
    while i < n:
        c = p[i]
        if c == "\\":
            text, i = _read_escape(p, i, False)
            out.append(text)
            continue
        if c == "[":
            text, i = _translate_class(p, i)
            out.append(text)
            continue
        if c == "(" and p.startswith("(?<", i) and not p.startswith(("(?<=", "(?<!"), i):
            m = _NAME.match(p, i + 2)
            if not m:
                raise _Unsupported("bad group name")
            out.append(f"(?P<{m.group(1)}>")
            i = m.end()
            continue
        if c == "(" and p.startswith("(?", i) and not p.startswith(("(?:", "(?=", "(?!", "(?<"), i):
            raise _Unsupported("unsupported group")
        if c == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _translate_class(p: str, i: int) -> tuple[str, int]:
    """Translate ``[...]`` starting at ``p[i] == '['``."""
    j = i + 1
    negate = j < len(p) and p[j] == "^"
    if negate:
        j += 1
    if j < len(p) and p[j] == "]":
        return ("(?s:.)" if negate else "(?!)"), j + 1
    parts: list[str] = []
    while j < len(p):
        c = p[j]
        if c == "]":
            return "[" + ("^" if negate else "") + "".join(parts) + "]", j + 1
        if c == "\\":
            text, j = _read_escape(p, j, True)
            parts.append(text)
            continue
        if c in "[&~|^-" and not (c == "-" and parts and j + 1 < len(p) and p[j + 1] != "]"):
            parts.append("\\" + c)
        else:
            parts.append(c)
        j += 1
    raise _Unsupported("unterminated character class")


@lru_cache(maxsize=1024)
def compile_ecma(pattern: str) -> re.Pattern[str] | None:
    """Compile an ECMAScript pattern, or ``None`` when Python cannot express it."""
    try:
        return re.compile(_translate(pattern), re.ASCII)
    except (_Unsupported, re.error, OverflowError, RecursionError):
        pass
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return None


def is_valid_ecma(pattern: str) -> bool:
    """Whether ``pattern`` is a regex this module can use (the ``regex`` format)."""
    try:
        re.compile(_translate(pattern), re.ASCII)
    except (_Unsupported, re.error, OverflowError, RecursionError):
        return False
    return True
