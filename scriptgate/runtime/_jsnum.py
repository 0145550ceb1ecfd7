"""JavaScript number semantics the validator must reproduce (pi §2.9).

- :func:`js_to_number` is ``Number(str)`` / unary ``+str``: whitespace trimming with the
  ECMAScript whitespace set, ``""`` → 0, ``0x``/``0b``/``0o`` literals, ``Infinity``;
  everything Python's ``float()`` accepts beyond that (``"inf"``, ``"nan"``, ``"1_000"``)
  is rejected (``nan``).
- :func:`js_number_to_string` is ``String(number)``: shortest round-trip digits in the
  ECMAScript layout (``1e+21``, ``1e-7``, ``0.1``, ``-0`` → ``"0"``).
- :func:`js_json` / :func:`js_json_pretty` are ``JSON.stringify(v)`` and
  ``JSON.stringify(v, null, 2)`` with those number rules.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "is_js_number",
    "js_json",
    "js_json_pretty",
    "js_number_to_string",
    "js_to_number",
    "normalize_number",
]

#: ECMAScript ``WhiteSpace`` plus ``LineTerminator`` (what ``String.prototype.trim`` strips).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_RADIX = {"x": (16, re.compile(r"[0-9a-fA-F]+")), "b": (2, re.compile(r"[01]+"))}
_RADIX["o"] = (8, re.compile(r"[0-7]+"))
_NAN = math.nan
_SAFE = 2**53


def is_js_number(value: object) -> bool:
    """``typeof value === "number"``: an int or float that is not a bool."""
    return (type(value) is int or type(value) is float) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )


def normalize_number(value: float | int) -> float | int:
    """An integral finite float becomes an ``int``; anything else is returned as is."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def js_to_number(text: str) -> float | int:
    """``Number(text)``: a float (or an int when integral), ``nan`` when JS gives ``NaN``."""
    if len(text) < 16 and text.isdigit() and text.isascii():
        return int(text)  # the common case: plain decimal digits, exact below 10^16 > 2^53
    s = text.strip(JS_WHITESPACE)
    if not s:
        return 0
    if len(s) > 2 and s[0] == "0" and s[1] in "xXbBoO":
        base, digits = _RADIX[s[1].lower()]
        if digits.fullmatch(s, 2) is None:
            return _NAN
        value = int(s[2:], base)
        return value if value <= _SAFE else _to_float(value)
    if _DECIMAL.fullmatch(s) is None:
        return _NAN
    if s.endswith("Infinity"):
        return -math.inf if s[0] == "-" else math.inf
    result = float(s)
    if result.is_integer():
        return int(result) if -_SAFE <= result <= _SAFE else result
    return result


def _to_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf


def js_number_to_string(value: float | int) -> str:
    """``String(value)`` for a JS number (``1e+21``, ``1e-7``, ``0.5``, ``-0`` → ``"0"``)."""
    if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
        if -(10**21) < value < 10**21:
            return str(int(value))
        value = _to_float(int(value)) if abs(value) < 2**1024 else math.copysign(math.inf, value)
    x = float(value)
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mant, _, exp_text = r.partition("e")
    exp = int(exp_text) if exp_text else 0
    int_part, _, frac = mant.partition(".")
    if frac == "0":
        frac = ""
    digits = int_part + frac
    n = len(int_part) + exp
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        e_text = f"e+{e}" if e >= 0 else f"e-{-e}"
        out = (digits[0] + "." + digits[1:] if k > 1 else digits) + e_text
    return sign + out


_SURROGATE = re.compile("[\ud800-\udfff]")
_encode_str: Any = getattr(json.encoder, "c_encode_basestring", None) or (
    json.encoder.py_encode_basestring
)


def _quote(text: str) -> str:
    out: str = _encode_str(text)
    if _SURROGATE.search(out):
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def _scalar(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "null"
        return js_number_to_string(value)
    return None


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact, key order kept, JS number text."""
    text = _scalar(value)
    if text is not None:
        return text
    if isinstance(value, Mapping):
        return "{" + ",".join(_quote(str(k)) + ":" + js_json(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    return _quote(str(value))


def js_json_pretty(value: Any, indent: str = "") -> str:
    """``JSON.stringify(value, null, 2)``: two-space indent, ``[]``/``{}`` when empty."""
    text = _scalar(value)
    if text is not None:
        return text
    inner = indent + "  "
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        parts = [inner + _quote(str(k)) + ": " + js_json_pretty(v, inner) for k, v in value.items()]
        return "{\n" + ",\n".join(parts) + "\n" + indent + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = [inner + js_json_pretty(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    return _quote(str(value))
