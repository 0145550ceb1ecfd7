"""ECMAScript (``u`` flag) regular expressions on Python's :mod:`re`, or ``regex``.

JSON Schema ``pattern`` and ``patternProperties`` are ECMAScript regexes. The translation
keeps ECMAScript meaning where Python's differs, spelling every class out so that no
engine flag is needed:

- ``\\d``, ``\\w`` and their negations are ASCII classes; ``\\b``/``\\B`` are ASCII
  boundaries (``(?a:\\b)``);
- ``\\s``/``\\S`` use the ECMAScript white-space set (Unicode spaces included); inside a
  class a negated escape (``[a\\D]``) becomes an alternation;
- ``.`` does not match the line terminators ``\\n``, ``\\r``, U+2028, U+2029;
- ``$`` matches only at the very end (Python's ``$`` also matches before a final newline);
- ``(?<name>…)`` → ``(?P<name>…)``, ``\\k<name>`` → ``(?P=name)``;
- ``\\u{1F600}``, ``\\uD83D\\uDE00`` (a surrogate pair), ``\\cJ`` become the character;
- ``[]`` never matches, ``[^]`` matches any character;
- ``/`` and other identity escapes keep their literal meaning;
- Unicode property escapes (``\\p{Lu}``, ``\\P{Letter}``, ``\\p{Script=Greek}``,
  ``\\p{gc=Nd}``, binary properties such as ``\\p{Emoji}``), inside classes too: the
  names ECMAScript defines (case-sensitive, as in JavaScript) are translated to the
  ``regex`` engine's classes, which has them natively.

A pattern is compiled with ``regex``, the engine whose searches take a timeout: the
strings a schema's ``pattern`` tests are a script's tool arguments, matched on the host,
and a backtracking pattern (``^(a+)+$``-shaped) against 30 crafted characters stalled
``re`` on the host's event loop for 25 s (findings18 L09). Each search stops after
:data:`MATCH_TIMEOUT` seconds and raises :class:`PatternTimeout`; the validator reports
the string as not matching (``pattern``) and a key as matching (``patternProperties``:
its schema applies, so a timeout never skips a check). A pattern the engine cannot
express makes :func:`compile_ecma` return ``None``; callers treat it as matching every
string (like an unknown ``format``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Protocol

__all__ = [
    "MATCH_TIMEOUT",
    "EcmaPattern",
    "PatternTimeout",
    "compile_ecma",
    "is_valid_ecma",
    "translate_ecma",
]

MATCH_TIMEOUT = 0.1
"""Seconds one search may take before :class:`PatternTimeout`."""


class PatternTimeout(Exception):
    """A search ran past :data:`MATCH_TIMEOUT` (a backtracking pattern)."""


class EcmaPattern(Protocol):
    """A compiled pattern whose searches are bounded in time."""

    def search(self, string: str, /) -> Any:
        """The first match in ``string``, or ``None``; :class:`PatternTimeout` past the bound."""

    def matches(self, string: str, /) -> bool:
        """Whether the pattern matches somewhere in ``string`` (``False`` past the bound)."""


class _Bounded:
    """A ``regex`` pattern whose ``search`` stops after :data:`MATCH_TIMEOUT`."""

    __slots__ = ("_search",)

    def __init__(self, compiled: Any) -> None:
        self._search = compiled.search

    def search(self, string: str, /) -> Any:
        try:
            return self._search(string, timeout=MATCH_TIMEOUT)
        except TimeoutError:
            raise PatternTimeout from None

    def matches(self, string: str, /) -> bool:
        try:
            return self._search(string, timeout=MATCH_TIMEOUT) is not None
        except TimeoutError:
            return False


_JS_SPACE = (
    "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_CLASS_ESCAPES = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": _JS_SPACE,
}
# Negated class escapes inside ``[...]``: the complement of these ranges.
_CLASS_COMPLEMENTS = {"D": "0-9", "W": "A-Za-z0-9_", "S": _JS_SPACE}
_OUTSIDE_ESCAPES = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": "[" + _JS_SPACE + "]",
    "S": "[^" + _JS_SPACE + "]",
    "b": r"(?a:\b)",
    "B": r"(?a:\B)",
}
_SIMPLE = {"t": "\\t", "n": "\\n", "v": "\\v", "f": "\\f", "r": "\\r", "0": "\\x00"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_HEX2 = re.compile(r"[0-9a-fA-F]{2}")
_BRACED = re.compile(r"\{([0-9a-fA-F]{1,6})\}")
_NAME = re.compile(r"<([A-Za-z_$][A-Za-z0-9_$]*)>")
_PROPERTY = re.compile(r"\{([A-Za-z0-9_]+)(?:=([A-Za-z0-9_]+))?\}")

# ECMAScript's property names (ECMA-262, tables "Non-binary Unicode property aliases",
# "Binary Unicode property aliases" and the General_Category value aliases). JavaScript
# matches them case-sensitively and exactly; ``regex`` is loose, so names are checked
# here first and emitted in a form ``regex`` reads one way only.
_GENERAL_CATEGORY = {
    short: short
    for short in [
        "C",
        "Cc",
        "Cf",
        "Cn",
        "Co",
        "Cs",
        "L",
        "LC",
        "Ll",
        "Lm",
        "Lo",
        "Lt",
        "Lu",
        "M",
        "Mc",
        "Me",
        "Mn",
        "N",
        "Nd",
        "Nl",
        "No",
        "P",
        "Pc",
        "Pd",
        "Pe",
        "Pf",
        "Pi",
        "Po",
        "Ps",
        "S",
        "Sc",
        "Sk",
        "Sm",
        "So",
        "Z",
        "Zl",
        "Zp",
        "Zs",
    ]
}
_GENERAL_CATEGORY.update(
    {
        "Other": "C",
        "Control": "Cc",
        "cntrl": "Cc",
        "Format": "Cf",
        "Unassigned": "Cn",
        "Private_Use": "Co",
        "Surrogate": "Cs",
        "Letter": "L",
        "Cased_Letter": "LC",
        "Lowercase_Letter": "Ll",
        "Modifier_Letter": "Lm",
        "Other_Letter": "Lo",
        "Titlecase_Letter": "Lt",
        "Uppercase_Letter": "Lu",
        "Mark": "M",
        "Combining_Mark": "M",
        "Spacing_Mark": "Mc",
        "Enclosing_Mark": "Me",
        "Nonspacing_Mark": "Mn",
        "Number": "N",
        "Decimal_Number": "Nd",
        "digit": "Nd",
        "Letter_Number": "Nl",
        "Other_Number": "No",
        "Punctuation": "P",
        "punct": "P",
        "Connector_Punctuation": "Pc",
        "Dash_Punctuation": "Pd",
        "Close_Punctuation": "Pe",
        "Final_Punctuation": "Pf",
        "Initial_Punctuation": "Pi",
        "Other_Punctuation": "Po",
        "Open_Punctuation": "Ps",
        "Symbol": "S",
        "Currency_Symbol": "Sc",
        "Modifier_Symbol": "Sk",
        "Math_Symbol": "Sm",
        "Other_Symbol": "So",
        "Separator": "Z",
        "Line_Separator": "Zl",
        "Paragraph_Separator": "Zp",
        "Space_Separator": "Zs",
    }
)
_BINARY = {}
for _long, _short in (
    ("ASCII", ""),
    ("ASCII_Hex_Digit", "AHex"),
    ("Alphabetic", "Alpha"),
    ("Any", ""),
    ("Assigned", ""),
    ("Bidi_Control", "Bidi_C"),
    ("Bidi_Mirrored", "Bidi_M"),
    ("Case_Ignorable", "CI"),
    ("Cased", ""),
    ("Changes_When_Casefolded", "CWCF"),
    ("Changes_When_Casemapped", "CWCM"),
    ("Changes_When_Lowercased", "CWL"),
    ("Changes_When_NFKC_Casefolded", "CWKCF"),
    ("Changes_When_Titlecased", "CWT"),
    ("Changes_When_Uppercased", "CWU"),
    ("Dash", ""),
    ("Default_Ignorable_Code_Point", "DI"),
    ("Deprecated", "Dep"),
    ("Diacritic", "Dia"),
    ("Emoji", ""),
    ("Emoji_Component", "EComp"),
    ("Emoji_Modifier", "EMod"),
    ("Emoji_Modifier_Base", "EBase"),
    ("Emoji_Presentation", "EPres"),
    ("Extended_Pictographic", "ExtPict"),
    ("Extender", "Ext"),
    ("Grapheme_Base", "Gr_Base"),
    ("Grapheme_Extend", "Gr_Ext"),
    ("Hex_Digit", "Hex"),
    ("IDS_Binary_Operator", "IDSB"),
    ("IDS_Trinary_Operator", "IDST"),
    ("ID_Continue", "IDC"),
    ("ID_Start", "IDS"),
    ("Ideographic", "Ideo"),
    ("Join_Control", "Join_C"),
    ("Logical_Order_Exception", "LOE"),
    ("Lowercase", "Lower"),
    ("Math", ""),
    ("Noncharacter_Code_Point", "NChar"),
    ("Pattern_Syntax", "Pat_Syn"),
    ("Pattern_White_Space", "Pat_WS"),
    ("Quotation_Mark", "QMark"),
    ("Radical", ""),
    ("Regional_Indicator", "RI"),
    ("Sentence_Terminal", "STerm"),
    ("Soft_Dotted", "SD"),
    ("Terminal_Punctuation", "Term"),
    ("Unified_Ideograph", "UIdeo"),
    ("Uppercase", "Upper"),
    ("Variation_Selector", "VS"),
    ("White_Space", "space"),
    ("XID_Continue", "XIDC"),
    ("XID_Start", "XIDS"),
):
    _BINARY[_long] = _long
    if _short:
        _BINARY[_short] = _long
_SCRIPT_KEYS = {"Script": "sc", "sc": "sc", "Script_Extensions": "scx", "scx": "scx"}
_SCRIPT_VALUE = re.compile(r"[A-Z][A-Za-z_]*")


class _Unsupported(Exception):
    pass


def _char(code: int) -> str:
    """A code point as a Python-regex-safe literal."""
    return f"\\U{code:08x}"


def _property(p: str, j: int, negated: bool) -> tuple[str, int]:
    """Translate the ``{…}`` of ``\\p``/``\\P`` at ``p[j]`` to a ``regex`` class escape."""
    m = _PROPERTY.match(p, j)
    if m is None:
        raise _Unsupported("bad unicode property escape")
    name, value = m.group(1), m.group(2)
    if value is None:
        if name in _GENERAL_CATEGORY:
            body = "gc=" + _GENERAL_CATEGORY[name]
        elif name in _BINARY:
            body = _BINARY[name]
        else:
            raise _Unsupported(f"unknown unicode property {name}")
    elif name in ("General_Category", "gc") and value in _GENERAL_CATEGORY:
        body = "gc=" + _GENERAL_CATEGORY[value]
    elif name in _SCRIPT_KEYS and _SCRIPT_VALUE.fullmatch(value):
        body = f"{_SCRIPT_KEYS[name]}={value}"
    else:
        raise _Unsupported(f"unknown unicode property {name}={value}")
    return ("\\P{" if negated else "\\p{") + body + "}", m.end()


def _read_escape(p: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape starting at ``p[i] == '\\\\'``; return (python text, next index)."""
    if i + 1 >= len(p):
        raise _Unsupported("trailing backslash")
    c = p[i + 1]
    j = i + 2
    if in_class and c in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[c], j
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
        return _property(p, j, c == "P")
    if c.isascii() and c.isalnum():
        raise _Unsupported(f"unknown escape \\{c}")
    return re.escape(c), j


def translate_ecma(pattern: str) -> str:
    """Translate an ECMAScript (``u`` flag) pattern to Python :mod:`re`/``regex`` syntax.

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
    """Translate ``[...]`` starting at ``p[i] == '['``.

    A negated class escape inside (``[a\\D]``) has no flag-free spelling inside one
    class, so the class becomes an alternation with the complement.
    """
    j = i + 1
    negate = j < len(p) and p[j] == "^"
    if negate:
        j += 1
    if j < len(p) and p[j] == "]":
        return ("(?s:.)" if negate else "(?!)"), j + 1
    parts: list[str] = []
    complements: list[str] = []
    while j < len(p):
        c = p[j]
        if c == "]":
            alternatives = ["[" + "".join(parts) + "]"] if parts else []
            alternatives.extend("[^" + body + "]" for body in complements)
            if not complements:
                return "[" + ("^" if negate else "") + "".join(parts) + "]", j + 1
            union = "(?:" + "|".join(alternatives) + ")"
            return ("(?:(?!" + union + ")(?s:.))" if negate else union), j + 1
        if c == "\\":
            if j + 1 < len(p) and p[j + 1] in _CLASS_COMPLEMENTS:
                complements.append(_CLASS_COMPLEMENTS[p[j + 1]])
                j += 2
                continue
            text, j = _read_escape(p, j, True)
            parts.append(text)
            continue
        if c in "[&~|^-" and not (c == "-" and parts and j + 1 < len(p) and p[j + 1] != "]"):
            parts.append("\\" + c)
        else:
            parts.append(c)
        j += 1
    raise _Unsupported("unterminated character class")


def _compile(translated: str) -> EcmaPattern:
    """Compile a translated pattern with ``regex`` (imported lazily), searches bounded.

    Raises ``regex.error`` (an ``Exception``) when it cannot.
    """
    import regex

    return _Bounded(regex.compile(translated))


@lru_cache(maxsize=1024)
def compile_ecma(pattern: str) -> EcmaPattern | None:
    """Compile an ECMAScript pattern, or ``None`` when neither engine can express it."""
    try:
        return _compile(_translate(pattern))
    except (_Unsupported, OverflowError, RecursionError):
        return None
    except Exception:  # re.error, regex.error: not a pattern either engine accepts
        return None


def is_valid_ecma(pattern: str) -> bool:
    """Whether ``pattern`` is a regex this module can use (the ``regex`` format)."""
    return compile_ecma(pattern) is not None
