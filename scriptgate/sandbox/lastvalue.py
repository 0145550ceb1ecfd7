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
  scalars its ``repr``; an enum member or a subclass of ``int``/``float``/``str`` as a key
  is its plain value first, as it is as a value;
- an enum member becomes its value (``IntEnum``/``StrEnum`` members are numbers and
  text already in JSON), a script subclass of ``int``/``float``/``str`` its base value, a
  ``@dataclass`` instance a dict of its fields (read from the instance itself, never
  through a property or ``__getattr__`` of the script);
- anything else becomes ``"<TypeName object>"``, and the note names what
  was replaced.

A dict key (an int, a tuple of them) or a ``Fraction``/``range``/``slice`` whose text would
hold an int longer than Python's int-to-text limit raises :class:`IntTooLongForText`, which
the engine turns into the error a bare int that long gives (findings15 E08).
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import sys
import types
from typing import Any

__all__ = ["IntTooLongForText", "render_last_value"]


class IntTooLongForText(ValueError):
    """A key or ``repr`` of the last value holds an int past ``sys.get_int_max_str_digits()``."""


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
_ISO = frozenset({datetime.datetime, datetime.date, datetime.time})
_REPR_EXACT = frozenset({complex, range, slice})
_MAX_DEPTH = 200
_MAX_NODES = 100_000
"""The most values the walk renders; the rest become ``"<too many values>"``."""
_BASE_VALUE = ((int, int.__int__), (float, float.__float__), (str, str.__str__))
"""The builtin bases whose own C method gives a subclass instance's plain value."""
_DATACLASS_FIELDS = "__dataclass_fields__"


def render_last_value(value: Any) -> tuple[Any, str | None]:
    """``value`` as JSON data, and a note when something had to be replaced by a placeholder."""
    replaced = _Notes()
    try:
        out = _render(value, replaced, 0)
    except RecursionError:  # the walk is depth-bounded; a host already deep in its stack
        replaced.append("too deeply nested values")
        out = "<nested too deeply>"
    note = None
    if replaced:
        kinds = ", ".join(dict.fromkeys(replaced))
        note = (
            f"the last value held {kinds} (not JSON data), shown as a "
            "'<TypeName object>' placeholder; return plain data (dicts, lists, str, numbers) "
            "or str(...) of it instead"
        )
    return out, note


_KEY_MAX_DEPTH = 32
_KEY_MAX_ITEMS = 1_000
"""A tuple key is shown as its ``repr`` only within these bounds (depth, scalars and tuples
visited, shared ones counted each time): ``repr`` recurses once per level and copies every
path, so a 5,000-deep or a self-sharing ``t = (t, t)`` key must never reach it."""


def _tuple_key_fits(value: Any) -> bool | None:
    """Whether ``value`` is a tuple of plain scalars and tuples of them (``None``: too big)."""
    stack = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > _KEY_MAX_ITEMS or depth > _KEY_MAX_DEPTH:
            return None
        if type(item) is tuple:
            stack.extend((v, depth + 1) for v in tuple.__iter__(item))
        elif type(item) not in _JSON_SCALARS:
            return False
    return True


def _text(value: Any) -> str:
    """``repr(value)`` of an exact builtin (an int, a tuple of scalars, a ``Fraction``…).

    The only ``ValueError`` these raise is CPython's int-to-text limit: a
    ``{10**5000: 1}`` key raised it out of ``run_sync`` (findings15 E08); it is the
    script's error, as for a bare ``10**5000``.
    """
    try:
        return repr(value)
    except ValueError:
        raise IntTooLongForText(sys.get_int_max_str_digits()) from None


def _key(key: Any, replaced: _Notes) -> str:
    try:
        return _key_text(_plain_key(key, [0]), replaced)
    except IntTooLongForText:
        raise
    except (ValueError, OverflowError):
        # a second layer (findings15 E08): no key's text may raise out of the run
        kind = type(key).__name__
        replaced.append(f"a {kind} key without text")
        return f"<{kind} key>"


def _plain_key(key: Any, seen: list[int], depth: int = 0) -> Any:
    """A key of a subclass as its base value, as values are shown (findings16 L01).

    ``{Color.RED: 1}`` (an ``IntEnum``), a script's ``class Name(str)`` key and tuples of
    them: the key ``json.dumps`` would write. Anything else, or a tuple past the key bounds,
    is returned as it is (and shown as a placeholder or "too large" by :func:`_key_text`).
    """
    kind = type(key)
    if kind in _JSON_SCALARS:
        return key
    seen[0] += 1
    if seen[0] > _KEY_MAX_ITEMS or depth > _KEY_MAX_DEPTH:
        return key
    if isinstance(key, tuple):
        return tuple([_plain_key(item, seen, depth + 1) for item in tuple.__iter__(key)])
    if kind in _ISO:
        return key
    plain = _plain_value(key, kind)
    if plain is not _NOTHING and (type(plain) in _JSON_SCALARS or type(plain) is tuple):
        return _plain_key(plain, seen, depth + 1)
    return key


def _key_text(key: Any, replaced: _Notes) -> str:
    kind = type(key)
    if kind is str:
        return str(key)
    if key is None:
        return "null"
    if kind is bool:
        return "true" if key else "false"
    if kind is float or (kind is int and key.bit_length() <= 3 * sys.get_int_max_str_digits()):
        return repr(key)  # (3 bits a digit: within the int-to-text limit, the common keys)
    if kind is int:
        return _text(key)
    if kind in _ISO:
        return str(key.isoformat())
    if kind is tuple:
        fits = _tuple_key_fits(key)
        if fits:
            return _text(key)
        if fits is None:
            replaced.append(
                f"a tuple key nested over {_KEY_MAX_DEPTH} levels or of over "
                f"{_KEY_MAX_ITEMS:,} items"
            )
            return "<tuple key too large>"
    replaced.append(kind.__name__)
    return f"<{kind.__name__} object>"


def _render(value: Any, replaced: _Notes, depth: int) -> Any:
    kind = type(value)
    if kind in _JSON_SCALARS:
        return value
    if depth > _MAX_DEPTH:
        replaced.append("too deeply nested values")
        return "<nested too deeply>"
    replaced.nodes += 1
    if replaced.nodes > _MAX_NODES:
        replaced.append(f"more than {_MAX_NODES:,} values")
        return "<too many values>"
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
        return _text(value)
    else:
        plain = _plain_value(value, kind)
        if plain is not _NOTHING:
            return _render(plain, replaced, depth + 1)
        fields = _dataclass_fields(value, kind)
        if fields is not None:
            return {name: _render(v, replaced, depth + 1) for name, v in fields.items()}
    replaced.append(kind.__name__)
    return f"<{kind.__name__} object>"


_NOTHING = object()


class _Notes(list[str]):
    """What was replaced, and how many containers the walk has opened (bounded: a value
    that shares itself, ``x = N(x, x)`` sixty times, would expand to 2**60 nodes)."""

    nodes = 0


def _mro(kind: type) -> tuple[type, ...]:
    return type.__dict__["__mro__"].__get__(kind)  # type: ignore[no-any-return]


def _own_dict(klass: type) -> Any:
    return type.__dict__["__dict__"].__get__(klass)


def _plain_value(value: Any, kind: type) -> Any:
    """An enum member's value, or a builtin subclass instance's base value (C methods only)."""
    mro = _mro(kind)
    if enum.Enum in mro:
        own = object.__getattribute__(value, "__dict__")
        if type(own) is dict and "_value_" in own:
            return own["_value_"]
    for base, plain in _BASE_VALUE:
        if base in mro:
            return plain(value)
    return _NOTHING


def _dataclass_fields(value: Any, kind: type) -> dict[str, Any] | None:
    """A dataclass instance's fields by name, read from its ``__dict__`` or slots."""
    mro = _mro(kind)
    table = None
    for klass in mro:
        table = _own_dict(klass).get(_DATACLASS_FIELDS)
        if table is not None:
            break
    if type(table) is not dict:
        return None
    try:
        own = object.__getattribute__(value, "__dict__")
    except AttributeError:
        own = None
    out: dict[str, Any] = {}
    for name, field in dict.items(table):
        if type(name) is not str or getattr(field, "kind", "field") != "field":
            continue
        if type(own) is dict and name in own:
            out[name] = own[name]
            continue
        for klass in mro:
            slot = _own_dict(klass).get(name)
            if type(slot) is types.MemberDescriptorType:
                with contextlib.suppress(AttributeError):  # an unset slot
                    out[name] = slot.__get__(value, kind)
                break
    return out
