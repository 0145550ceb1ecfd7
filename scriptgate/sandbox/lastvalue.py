"""The JSON rendering of a script's last value that is not JSON data (issue 14).

Owns :func:`render_last_value`, called by the engine when the value of the last
expression is not JSON data (a set, a date, a dict with int keys, an instance…):
the run keeps its result instead of failing after all its work. Never calls a
method a script can define (no ``repr`` of an instance, no ``__iter__`` of a
script class, no comparison of script objects), so it runs outside the budget
in bounded time. Must not import the engine, the guards or isolation.

The rules (what the model sees, also in the README):

- a ``tuple`` becomes a list (as before), a ``set``/``frozenset`` a list, sorted
  when its items are all numbers or all strings (else in iteration order);
- ``datetime``/``date``/``time`` become ISO text (``isoformat()``), a
  ``timedelta`` its ``str`` (``"1 day, 2:00:00"``), ``bytes`` its text when it is
  UTF-8 (else the ``repr``), ``complex``/``range``/``Decimal``… their ``repr``;
- dict keys that are not strings become the text ``json.dumps`` gives them
  (``1`` → ``"1"``, ``True`` → ``"true"``, ``None`` → ``"null"``), a tuple of plain
  scalars its ``repr``;
- anything else becomes ``"<TypeName object>"``, and the note names what
  was replaced.
"""

from __future__ import annotations

import datetime
from typing import Any

__all__ = ["render_last_value"]

_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
_ISO = frozenset({datetime.datetime, datetime.date, datetime.time})
_REPR_EXACT = frozenset({complex, range, slice})
_MAX_DEPTH = 200


def render_last_value(value: Any) -> tuple[Any, str | None]:
    """``value`` as JSON data, and a note when something had to be replaced by a placeholder."""
    replaced: list[str] = []
    out = _render(value, replaced, 0)
    note = None
    if replaced:
        kinds = ", ".join(dict.fromkeys(replaced))
        note = (
            f"the last value held {kinds} (not JSON data), shown as a "
            "'<TypeName object>' placeholder; return plain data (dicts, lists, str, numbers) "
            "or str(...) of it instead"
        )
    return out, note


def _plain_scalar_tuple(value: Any) -> bool:
    return type(value) is tuple and all(
        type(v) in _JSON_SCALARS or _plain_scalar_tuple(v) for v in value
    )


def _key(key: Any, replaced: list[str]) -> str:
    kind = type(key)
    if kind is str:
        return str(key)
    if key is None:
        return "null"
    if kind is bool:
        return "true" if key else "false"
    if kind is int or kind is float:
        return repr(key)
    if _plain_scalar_tuple(key) or kind in _ISO:
        return str(key.isoformat()) if kind in _ISO else repr(key)
    replaced.append(kind.__name__)
    return f"<{kind.__name__} object>"


def _render(value: Any, replaced: list[str], depth: int) -> Any:
    kind = type(value)
    if kind in _JSON_SCALARS:
        return value
    if depth > _MAX_DEPTH:
        replaced.append("too deeply nested values")
        return "<nested too deeply>"
    if isinstance(value, (list, tuple)):  # subclasses read through the base's C iterator
        items = list(list.__iter__(value) if isinstance(value, list) else tuple.__iter__(value))
        return [_render(v, replaced, depth + 1) for v in items]
    if isinstance(value, dict):
        return {_key(k, replaced): _render(v, replaced, depth + 1) for k, v in dict.items(value)}
    if isinstance(value, (set, frozenset)):
        items = list(set.__iter__(value) if isinstance(value, set) else frozenset.__iter__(value))
        kinds = set(map(type, items))
        if kinds <= {int, float} or kinds == {str}:
            items.sort()
        return [_render(v, replaced, depth + 1) for v in items]
    if kind in _ISO:
        tz = getattr(value, "tzinfo", None)
        if tz is None or type(tz) is datetime.timezone:
            return value.isoformat()
    elif kind is datetime.timedelta or kind is datetime.timezone:
        return str(value)
    elif kind is bytes or kind is bytearray:
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return repr(bytes(value))
    elif kind in _REPR_EXACT or kind.__module__ in ("decimal", "fractions"):
        return repr(value)
    replaced.append(kind.__name__)
    return f"<{kind.__name__} object>"
