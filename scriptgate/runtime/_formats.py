"""String ``format`` checks (pi §2.3): the standard set pi-ai enables.

Each checker takes a ``str`` and returns whether it conforms. Unknown format names
are not in :data:`FORMATS`; the schema compiler ignores them (they pass).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable

from scriptgate.runtime._ecma_regex import is_valid_ecma

__all__ = ["FORMATS"]

_A = re.ASCII
_I = re.ASCII | re.IGNORECASE

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", _A)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:z|([+-])(\d{2}):(\d{2}))", _I)
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DURATION = re.compile(
    r"P(?:(?:\d+Y)?(?:\d+M)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+S)?)?|\d+W)", _A
)
_ATEXT = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]"
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_EMAIL = re.compile(rf"{_ATEXT}+(?:\.{_ATEXT}+)*@(?:{_LABEL}\.)*{_LABEL}", _I)
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?", _I)
_IDN_EMAIL = re.compile(r"[^\s@\"(),:;<>\[\\\]]+@[^\s@]+")
_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)", _A
)
_PCT = r"%[0-9a-fA-F]{2}"
_URI_CHARS = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]"
_URI = re.compile(rf"[A-Za-z][A-Za-z0-9+.\-]*:(?:{_URI_CHARS}|{_PCT})*", _A)
_URI_REF = re.compile(rf"(?:{_URI_CHARS}|{_PCT})*", _A)
_IRI_CHARS = r"[^\x00-\x20<>\"{}|\\^`%\x7f]"
_IRI = re.compile(rf"[A-Za-z][A-Za-z0-9+.\-]*:(?:{_IRI_CHARS}|{_PCT})*")
_IRI_REF = re.compile(rf"(?:{_IRI_CHARS}|{_PCT})*")
_URL = re.compile(
    rf"[A-Za-z][A-Za-z0-9+.\-]*://(?:[^\s/?#@]+@)?(?:\[[0-9A-Fa-f:.]+\]|[^\s/?#:@\[\]]+)(?::\d+)?"
    rf"(?:[/?#](?:{_URI_CHARS}|{_PCT})*)?",
    _A,
)
_URI_TEMPLATE = re.compile(r"(?:[^\x00-\x20\"'<>\\^`{|}]|\{[+#./;?&=,!@|]?[^{}\s]+\})*")
_JSON_POINTER = re.compile(r"(?:/(?:[^~/]|~[01])*)*")
_JSON_POINTER_FRAGMENT = re.compile(
    r"#(?:/(?:[A-Za-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-fA-F]{2}|~[01])*)*", _A
)
_RELATIVE_POINTER = re.compile(r"(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~[01])*)*)", _A)
_UUID = re.compile(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", _I)


def _is_date(s: str) -> bool:
    m = _DATE.fullmatch(s)
    if m is None:
        return False
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= month <= 12 or day < 1:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(s: str) -> bool:
    m = _TIME.fullmatch(s)
    if m is None:
        return False
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if m.group(4) is not None and (int(m.group(5)) > 23 or int(m.group(6)) > 59):
        return False
    return hour <= 23 and minute <= 59 and second <= 60


def _is_date_time(s: str) -> bool:
    # RFC 3339's ``T`` (either case) only: pi rejects the space its note allows.
    if len(s) < 11 or s[10] not in "Tt":
        return False
    return _is_date(s[:10]) and _is_time(s[11:])


def _is_duration(s: str) -> bool:
    return len(s) > 1 and not s.endswith("T") and _DURATION.fullmatch(s) is not None


def _is_hostname(s: str) -> bool:
    return len(s.rstrip(".")) <= 253 and _HOSTNAME.fullmatch(s) is not None


def _is_idn_hostname(s: str) -> bool:
    if not s or any(ch.isspace() for ch in s):
        return False
    try:
        ascii_form = s.encode("idna").decode("ascii")
    except (UnicodeError, ValueError):
        return False
    return _is_hostname(ascii_form)


def _is_ipv6(s: str) -> bool:
    if "%" in s or not s or s.strip() != s:
        return False
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def _full(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    def check(s: str) -> bool:
        return pattern.fullmatch(s) is not None

    return check


#: format name → checker.
FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _is_date,
    "date-time": _is_date_time,
    "duration": _is_duration,
    "email": _full(_EMAIL),
    "hostname": _is_hostname,
    "idn-email": _full(_IDN_EMAIL),
    "idn-hostname": _is_idn_hostname,
    "ipv4": _full(_IPV4),
    "ipv6": _is_ipv6,
    "iri": _full(_IRI),
    "iri-reference": _full(_IRI_REF),
    "json-pointer": _full(_JSON_POINTER),
    "json-pointer-uri-fragment": _full(_JSON_POINTER_FRAGMENT),
    "regex": is_valid_ecma,
    "relative-json-pointer": _full(_RELATIVE_POINTER),
    "time": _is_time,
    "uri": _full(_URI),
    "uri-reference": _full(_URI_REF),
    "uri-template": _full(_URI_TEMPLATE),
    "url": _full(_URL),
    "uuid": _full(_UUID),
}
