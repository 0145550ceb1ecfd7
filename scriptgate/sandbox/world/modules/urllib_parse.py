"""The ``urllib.parse`` stand-in: splitting, joining and quoting URLs and query strings.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

The functions are the real module's, pure text work, called on exact ``str``/``bytes``
copies of the arguments (no script ``__str__`` or subclass method runs inside them), each
text at most :data:`MAX_INPUT` characters and a query at most :data:`MAX_FIELDS` fields
(``parse_qs``'s ``max_num_fields`` is capped to it). ``urlparse``/``urlsplit`` give
:class:`ParseResult`/:class:`SplitResult`, tuples of ``str`` with the field names,
``geturl()``, ``hostname``, ``port``, ``username`` and ``password`` (the real result
classes' methods are the host's). ``urlencode`` takes a dict or a list of pairs whose
keys and values are ``str``, ``bytes``, numbers, ``bool`` or ``None`` (with ``doseq=True``,
lists or tuples of them); its ``quote_via`` is ``quote`` or ``quote_plus``.
"""

from __future__ import annotations

import urllib.parse as _real
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.ticking import LARGE_INPUT, check_budget
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_FIELDS", "MAX_INPUT", "MEMBERS", "NAME", "ParseResult", "build"]

NAME = "urllib.parse"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "urlparse", "urlsplit", "urlunparse", "urlunsplit", "urljoin", "urlencode", "quote",
    "quote_plus", "unquote", "unquote_plus", "parse_qs", "parse_qsl", "ParseResult",
    "SplitResult",
)  # fmt: skip
"""The members a script may use."""
MAX_INPUT = 1_000_000
"""The longest text (URL, component or query) one call takes."""
MAX_FIELDS = 10_000
"""At most this many fields in a query (``parse_qs``/``parse_qsl``/``urlencode``)."""
_SCALARS = (str, bytes, int, float, bool, type(None))


def _text(value: Any, what: str, *, none: bool = False) -> Any:
    """``value`` as an exact ``str``/``bytes`` of at most :data:`MAX_INPUT` characters."""
    if value is None and none:
        return None
    if not isinstance(value, (str, bytes, bytearray)):
        raise TypeError(f"{what} takes a str or bytes, not {type(value).__name__}")
    value = exact_copy(value)
    if type(value) is bytearray:
        value = bytes(value)
    if len(value) >= LARGE_INPUT:
        if len(value) > MAX_INPUT:
            refuse_size(f"{what} of more than {MAX_INPUT} characters is refused in the sandbox")
        check_budget()  # quote(big) in a loop: each call's work is seen (findings14 A16)
    return value


class _Result(tuple[Any, ...]):
    """What :class:`SplitResult` and :class:`ParseResult` share (a tuple of ``str``)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _real(self) -> Any:
        raise NotImplementedError

    @property
    def scheme(self) -> Any:
        """The URL scheme (``'https'``)."""
        return self[0]

    @property
    def netloc(self) -> Any:
        """The network location (``'user@host:8080'``)."""
        return self[1]

    @property
    def path(self) -> Any:
        """The path."""
        return self[2]

    @property
    def query(self) -> Any:
        """The query string, without the ``?``."""
        return self[-2]

    @property
    def fragment(self) -> Any:
        """The fragment, without the ``#``."""
        return self[-1]

    @property
    def hostname(self) -> Any:
        """The host name, lower-cased (``None`` without one)."""
        return self._real().hostname

    @property
    def port(self) -> Any:
        """The port number (``None`` without one; ``ValueError`` for a bad one)."""
        return self._real().port

    @property
    def username(self) -> Any:
        """The user name of the network location (``None`` without one)."""
        return self._real().username

    @property
    def password(self) -> Any:
        """The password of the network location (``None`` without one)."""
        return self._real().password

    def geturl(self) -> Any:
        """The URL put back together."""
        return self._real().geturl()

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
        return f"{type(self).__name__}({fields})"


class SplitResult(_Result):
    """``urlsplit``'s result: ``(scheme, netloc, path, query, fragment)``."""

    __slots__ = ()
    _fields = ("scheme", "netloc", "path", "query", "fragment")

    def __new__(cls, scheme: Any, netloc: Any, path: Any, query: Any, fragment: Any) -> Any:
        parts = (scheme, netloc, path, query, fragment)
        return tuple.__new__(cls, [_text(p, f"{cls.__name__}()") for p in parts])

    def _real(self) -> Any:
        return _real.SplitResult(*self)


class ParseResult(_Result):
    """``urlparse``'s result: ``(scheme, netloc, path, params, query, fragment)``."""

    __slots__ = ()
    _fields = ("scheme", "netloc", "path", "params", "query", "fragment")

    def __new__(
        cls, scheme: Any, netloc: Any, path: Any, params: Any, query: Any, fragment: Any
    ) -> Any:
        parts = (scheme, netloc, path, params, query, fragment)
        return tuple.__new__(cls, [_text(p, f"{cls.__name__}()") for p in parts])

    def _real(self) -> Any:
        return _real.ParseResult(*self)

    @property
    def params(self) -> Any:
        """The ``;params`` of the last path segment."""
        return self[3]


for _cls in (_Result, SplitResult, ParseResult):
    _cls.__module__ = "urllib.parse"

HOLDABLE: tuple[type, ...] = (SplitResult, ParseResult)
"""Value types this stand-in hands to scripts."""


def urlsplit(url: Any, scheme: Any = "", allow_fragments: Any = True) -> Any:
    """``(scheme, netloc, path, query, fragment)`` of ``url``."""
    found = _real.urlsplit(
        _text(url, "urlsplit()"), _text(scheme, "urlsplit()"), bool(allow_fragments)
    )
    return tuple(found) if type(found[0]) is bytes else SplitResult(*found)


def urlparse(url: Any, scheme: Any = "", allow_fragments: Any = True) -> Any:
    """``(scheme, netloc, path, params, query, fragment)`` of ``url``."""
    found = _real.urlparse(
        _text(url, "urlparse()"), _text(scheme, "urlparse()"), bool(allow_fragments)
    )
    return tuple(found) if type(found[0]) is bytes else ParseResult(*found)


def _parts(parts: Any, count: int, what: str) -> list[Any]:
    if not isinstance(parts, (tuple, list)) or len(parts) != count:
        raise ValueError(f"{what} takes {count} parts")
    return [_text(p, what, none=True) for p in exact_copy(parts)]


def urlunsplit(components: Any) -> Any:
    """The URL of ``(scheme, netloc, path, query, fragment)``."""
    return _real.urlunsplit(_parts(components, 5, "urlunsplit()"))


def urlunparse(components: Any) -> Any:
    """The URL of ``(scheme, netloc, path, params, query, fragment)``."""
    return _real.urlunparse(_parts(components, 6, "urlunparse()"))


def urljoin(base: Any, url: Any, allow_fragments: Any = True) -> Any:
    """``url`` resolved against ``base``."""
    return _real.urljoin(_text(base, "urljoin()"), _text(url, "urljoin()"), bool(allow_fragments))


def _safe(safe: Any) -> Any:
    return _text(safe, "quote(safe=...)")


def quote(string: Any, safe: Any = "/", encoding: Any = None, errors: Any = None) -> str:
    """``string`` with the characters a URL may not hold written as ``%XX``."""
    return _real.quote(
        _text(string, "quote()"), _safe(safe), _text(encoding, "quote()", none=True),
        _text(errors, "quote()", none=True),
    )  # fmt: skip


def quote_plus(string: Any, safe: Any = "", encoding: Any = None, errors: Any = None) -> str:
    """:func:`quote`, with spaces written as ``+`` (form encoding)."""
    return _real.quote_plus(
        _text(string, "quote_plus()"), _safe(safe), _text(encoding, "quote_plus()", none=True),
        _text(errors, "quote_plus()", none=True),
    )  # fmt: skip


def unquote(string: Any, encoding: Any = "utf-8", errors: Any = "replace") -> Any:
    """``string`` with each ``%XX`` replaced by its character."""
    return _real.unquote(
        _text(string, "unquote()"), _text(encoding, "unquote()"), _text(errors, "unquote()")
    )


def unquote_plus(string: Any, encoding: Any = "utf-8", errors: Any = "replace") -> str:
    """:func:`unquote`, with ``+`` read as a space."""
    return _real.unquote_plus(
        _text(string, "unquote_plus()"), _text(encoding, "unquote_plus()"),
        _text(errors, "unquote_plus()"),
    )  # fmt: skip


def _max_fields(max_num_fields: Any) -> int:
    if max_num_fields is None:
        return MAX_FIELDS
    if not isinstance(max_num_fields, int) or isinstance(max_num_fields, bool):
        raise TypeError("max_num_fields must be an int or None")
    return min(int(max_num_fields), MAX_FIELDS)


def parse_qsl(
    qs: Any,
    keep_blank_values: Any = False,
    strict_parsing: Any = False,
    encoding: Any = "utf-8",
    errors: Any = "replace",
    max_num_fields: Any = None,
    separator: Any = "&",
) -> list[tuple[Any, Any]]:
    """The ``(name, value)`` pairs of a query string."""
    return _real.parse_qsl(
        _text(qs, "parse_qsl()"), bool(keep_blank_values), bool(strict_parsing),
        _text(encoding, "parse_qsl()"), _text(errors, "parse_qsl()"),
        _max_fields(max_num_fields), _text(separator, "parse_qsl()"),
    )  # fmt: skip


def parse_qs(
    qs: Any,
    keep_blank_values: Any = False,
    strict_parsing: Any = False,
    encoding: Any = "utf-8",
    errors: Any = "replace",
    max_num_fields: Any = None,
    separator: Any = "&",
) -> dict[Any, list[Any]]:
    """A query string as ``{name: [value, ...]}``."""
    return _real.parse_qs(
        _text(qs, "parse_qs()"), bool(keep_blank_values), bool(strict_parsing),
        _text(encoding, "parse_qs()"), _text(errors, "parse_qs()"),
        _max_fields(max_num_fields), _text(separator, "parse_qs()"),
    )  # fmt: skip


def _plain_value(value: Any, doseq: bool) -> Any:
    if isinstance(value, _SCALARS) and type(value) in _SCALARS:
        if type(value) is str or type(value) is bytes:
            return _text(value, "urlencode()")
        return value
    if doseq and type(value) in (list, tuple):
        if len(value) > MAX_FIELDS:
            refuse_size(f"urlencode() of more than {MAX_FIELDS} fields is refused in the sandbox")
        return [_plain_value(v, False) for v in value]
    raise TypeError(
        f"urlencode() takes str, bytes, numbers, bool or None as keys and values, not "
        f"{type(value).__name__} (write str(value) first; lists need doseq=True)"
    )


def urlencode(
    query: Any,
    doseq: Any = False,
    safe: Any = "",
    encoding: Any = None,
    errors: Any = None,
    quote_via: Any = None,
) -> str:
    """A dict or a list of pairs as a query string (``a=1&b=x+y``)."""
    doseq = bool(doseq)
    if type(query) is dict:
        pairs = list(query.items())
    elif type(query) in (list, tuple):
        pairs = list(query)
    else:
        raise TypeError(f"urlencode() takes a dict or a list of pairs, not {type(query).__name__}")
    if len(pairs) > MAX_FIELDS:
        refuse_size(f"urlencode() of more than {MAX_FIELDS} fields is refused in the sandbox")
    plain: list[tuple[Any, Any]] = []
    pair: Any
    for pair in pairs:
        if type(pair) not in (tuple, list) or len(pair) != 2:
            raise TypeError("urlencode() takes a dict or a list of (name, value) pairs")
        plain.append((_plain_value(pair[0], False), _plain_value(pair[1], doseq)))
    if quote_via is None or quote_via is quote_plus:
        via = _real.quote_plus
    elif quote_via is quote:
        via = _real.quote
    else:
        raise TypeError("urlencode(quote_via=...) takes urllib.parse.quote or quote_plus")
    text = _real.urlencode(
        plain, doseq, _safe(safe), _text(encoding, "urlencode()", none=True),
        _text(errors, "urlencode()", none=True), via,
    )  # fmt: skip
    return text


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "urlparse": urlparse,
        "urlsplit": urlsplit,
        "urlunparse": urlunparse,
        "urlunsplit": urlunsplit,
        "urljoin": urljoin,
        "urlencode": urlencode,
        "quote": quote,
        "quote_plus": quote_plus,
        "unquote": unquote,
        "unquote_plus": unquote_plus,
        "parse_qs": parse_qs,
        "parse_qsl": parse_qsl,
        "ParseResult": ParseResult,
        "SplitResult": SplitResult,
    }
