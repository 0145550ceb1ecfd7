"""Bounds on the methods whose size argument allocates in one C call (issue 13 §2).

Part of ``guards/`` (sizes): imports only :mod:`.memory` and :mod:`.errors`; the
attribute guard asks :func:`bounded_method` for a wrapper when a script reads one of
these names, so every path to the method (``x.name``, ``getattr``, ``type(x).name``
unbound, a stored bound method) meets the same check. Must not import anything above it.

Each wrapper measures its receiver through the base type's own methods (a subclass
whose ``__len__`` or ``count`` lies cannot make the result look small), refuses a
result longer than :data:`MAX_SEQUENCE` items with a one-line message saying what to
write instead, and charges the memory budget *before* the C call allocates:

- ``int.to_bytes(length)``: ``length`` bytes.
- ``bytes``/``bytearray`` ``center``/``ljust``/``rjust``/``zfill`` (the width),
  ``expandtabs`` (tabs x tab size), ``replace`` (hits x growth) and ``join`` (the
  parts' total, read in chunks so a lazy iterable of new parts is stopped early).
- ``split``/``rsplit``/``splitlines`` of a long text: each piece is a new object (about
  :data:`PIECE_BYTES` each), so a 10 MB text split on spaces made 200 MB in one call,
  charged as a 10 MB copy. The pieces are counted first at C speed (the separator, or
  the ASCII whitespace / line-break characters) and charged with the list.
- :func:`checked_join`: ``str.join``/``bytes.join`` of any iterable: a lazy one is read
  in chunks of :data:`JOIN_CHUNK` parts, the running total checked after each chunk,
  so ``''.join(map(str.upper, [s] * 1000))`` stops after one chunk instead of
  building every part first.
- ``typing`` string forward references: ``typing`` compiles each one (``Optional[s]``,
  ``TypeVar(bound=s)``, ``TypedDict(..., {"a": s})``; a 4 MB expression was 7 s and
  800 MB in one ``compile``). Subscripts of ``typing`` aliases are compiled inline, past
  ``_getitem_``, so the bound sits at the ``compile`` itself: an audit hook (installed
  once per process, :func:`install_compile_hook`) refuses a ``compile`` called by the
  ``typing`` module of a source longer than :data:`MAX_FORWARD_REFERENCE` characters while
  a script runs on the stack; every other ``compile`` passes untouched.
"""

from __future__ import annotations

import itertools
import operator
import sys
import types
from collections.abc import Callable
from typing import Any, NoReturn

from scriptgate.sandbox.guards import memory as _memory
from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.int_work import MAX_FROM_BYTES, check_from_bytes
from scriptgate.sandbox.guards.lengths import base_len, exact_int
from scriptgate.sandbox.guards.memory import CHECK_FROM, MAX_SEQUENCE
from scriptgate.sandbox.guards.text_codecs import checked_decode, checked_encode
from scriptgate.sandbox.guards.ticking import check_budget

__all__ = [
    "BOUNDED_NAMES",
    "JOIN_CHUNK",
    "MAX_FORWARD_REFERENCE",
    "bounded_method",
    "checked_join",
    "install_compile_hook",
    "repeat_count",
    "split_bytes",
]

MAX_FORWARD_REFERENCE = 1_000
"""Longest string forward reference ``typing`` may compile for a script."""

JOIN_CHUNK = 64
"""Parts a ``join`` over a lazy iterable reads between two size checks."""

_WIDTH_NAMES = frozenset({"center", "ljust", "rjust", "zfill"})
_AFFIX_NAMES = frozenset({"startswith", "endswith"})
_SPLIT_NAMES = frozenset({"split", "rsplit", "splitlines"})
BOUNDED_NAMES = frozenset(
    {
        "to_bytes", "from_bytes", "expandtabs", "replace", "join", "encode", "decode",
        *_WIDTH_NAMES, *_SPLIT_NAMES, *_AFFIX_NAMES,
    }
)  # fmt: skip
"""Attribute names :func:`bounded_method` may wrap."""


def _refuse(what: str, size: int, instead: str) -> NoReturn:
    refuse_size(
        f"{what} would be too large for the sandbox ({size} items; at most {MAX_SEQUENCE} "
        f"in one call): {instead}"
    )


def _check(what: str, size: int, instead: str, itemsize: int = 1) -> None:
    if size > MAX_SEQUENCE:
        _refuse(what, size, instead)
    if size > CHECK_FROM:
        _memory.charge_bytes(size * itemsize)  # (looked up per call: tests count charges)


def _base(obj: Any) -> Any:
    for base in (bytes, bytearray, str):
        if isinstance(obj, base):
            return base
    return None


def _to_bytes(number: int) -> Callable[..., bytes]:
    method = int.to_bytes.__get__(number)

    def to_bytes(length: Any = 1, byteorder: Any = "big", *, signed: Any = False) -> bytes:
        length = exact_int(length)  # an int subclass is its int value to C (findings19 N02)
        if type(length) is int:
            _check(
                "int.to_bytes(length)",
                length,
                "ask for the length the number needs, (n.bit_length() + 7) // 8",
            )
        made: bytes = method(length, byteorder, signed=signed)
        return made

    return to_bytes


def _from_bytes(method: Callable[..., Any]) -> Callable[..., Any]:
    def from_bytes(data: Any, byteorder: Any = "big", *, signed: Any = False) -> Any:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            # any other iterable of ints: read at most one byte past the bound
            data = bytes(itertools.islice(data, MAX_FROM_BYTES + 1))
        check_from_bytes(len(data) if not isinstance(data, memoryview) else data.nbytes)
        return method(data, byteorder, signed=signed)  # ints beyond 1 M bits (findings7 F12)

    return from_bytes


def repeat_count(value: Any, what: str = "a repeat count") -> int | None:
    """The int C would read from ``value`` as a count or width, read without running its code.

    The second layer under the object boundary (issue 13, F06): an exact ``int``/``bool``
    is normalised through :func:`operator.index`, an ``int`` subclass through ``int``'s own
    method (C reads the int value, never the subclass's methods); anything else whose type
    has ``__index__`` is refused, since C would call it and trust the (possibly huge) int
    it returns. ``None``: not a count at all (C raises its own ``TypeError``).
    """
    kind = type(value)
    if kind is int or kind is bool:
        return operator.index(value)
    if isinstance(value, int):
        return int.__index__(value)
    if hasattr(kind, "__index__"):
        raise TypeError(f"{what} must be an int in the sandbox, not {kind.__name__!r}")
    return None


def _width(obj: Any, base: Any, name: str) -> Callable[..., Any]:
    method = getattr(base, name).__get__(obj)

    def width_method(width: Any, *args: Any) -> Any:
        count = repeat_count(width, f"the width of {base.__name__}.{name}()")
        if count is not None:
            _check(
                f"{base.__name__}.{name}({count})",
                count,
                "pad to the width you will show, or build the text in pieces",
            )
            width = count  # C reads the plain int, never the value's own methods
        return method(width, *args)

    width_method.__name__ = name
    return width_method


def _expandtabs(obj: Any, base: Any) -> Callable[..., Any]:
    method = base.expandtabs.__get__(obj)
    tab: Any = "\t" if base is str else b"\t"

    def expandtabs(tabsize: Any = 8) -> Any:
        size = repeat_count(tabsize, f"the tab size of {base.__name__}.expandtabs()")
        if size is not None:
            tabsize = size
            if size > 0:
                total = (base.count(obj, tab) + 1) * size + base.__len__(obj)
                _check(f"{base.__name__}.expandtabs({size})", total, "use a smaller tab size")
        return method(tabsize)

    return expandtabs


def _replace(obj: Any, base: Any) -> Callable[..., Any]:
    method = base.replace.__get__(obj)

    def replace(old: Any, new: Any, count: Any = -1) -> Any:
        if isinstance(old, (str, bytes, bytearray)) and isinstance(new, (str, bytes, bytearray)):
            grow = base_len(new) - base_len(old)  # a subclass's __len__ never runs
            # str with str, bytes-like with bytes-like (C takes a bytearray for bytes)
            if grow > 0 and isinstance(old, str) == isinstance(new, str):
                try:
                    hits = base.count(obj, old) if base_len(old) else base.__len__(obj) + 1
                except TypeError:
                    return method(old, new, count)  # the real error
                if type(count) is int and 0 <= count < hits:
                    hits = count
                size = base.__len__(obj) + hits * grow
                _check(
                    f"{base.__name__}.replace",
                    size,
                    "replace in a smaller piece of the text, or with a shorter value",
                )
        return method(old, new, count)

    return replace


AFFIX_WORK = 1 << 22
"""Bytes a ``startswith``/``endswith`` of a tuple may compare in one C call (~1 ms)."""


def _affix(obj: Any, base: Any, name: str) -> Callable[..., Any]:
    method = getattr(base, name).__get__(obj)

    def affix(prefix: Any, *args: Any) -> Any:
        # s.startswith(t) compares s with every item of the tuple t in one C call: 600,000
        # prefixes of a megabyte were 13 s (findings14 D05). A long tuple goes in pieces of
        # at most AFFIX_WORK bytes compared, the budget checked between two; the answer
        # and the errors are C's (the items in order, up to the first that matches)
        if not isinstance(prefix, tuple):
            return method(prefix, *args)
        count = tuple.__len__(prefix)
        piece = max(1, AFFIX_WORK // max(1, base.__len__(obj)))
        if count <= piece:
            return method(prefix, *args)
        for start in range(0, count, piece):
            check_budget()
            if method(tuple.__getitem__(prefix, slice(start, start + piece)), *args):
                return True
        return False

    affix.__name__ = name
    return affix


PIECE_BYTES = 57
"""Charged per piece a split makes: the list slot and a small string or bytes object."""
_WHITESPACE: tuple[str, ...] = (
    " ",
    "\t",
    "\n",
    "\r",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\x85",
)
_LINE_BREAKS: tuple[str, ...] = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85")
_WIDE_WHITESPACE: tuple[str, ...] = (
    "\xa0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2004", "\u2005", "\u2006",
    "\u2007", "\u2008", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
)  # fmt: skip
"""The rest of what ``str.split()`` splits at (every ``str.isspace()`` character): a text
that is not ASCII is counted with them (findings14 A14: 5 M pieces at U+3000 were free)."""
_WIDE_LINE_BREAKS: tuple[str, ...] = ("\u2028", "\u2029")
"""The rest of what ``str.splitlines()`` breaks at."""
WIDE_PIECE_BYTES = 88
"""Charged per piece of a text that is not ASCII: the list slot and a new one-character
object of a character above U+00FF (80 bytes); its characters are charged 4 bytes each."""


def split_bytes(obj: Any, base: Any, name: str, sep: Any = None) -> int:
    """About the bytes ``obj.split(sep)`` (``name``: ``split``, ``rsplit`` or ``splitlines``,
    ``base`` the base type of ``obj``) allocates: its pieces and their characters.

    The pieces are counted at C speed through the base type's own ``count`` (the separator,
    or every character the method splits at); a wrong-typed ``sep`` raises ``TypeError``.
    """
    text = base is str
    length: int = base.__len__(obj)
    wide = text and not str.isascii(obj)
    marks: tuple[str, ...]
    pieces: int
    if name == "splitlines":
        marks = _LINE_BREAKS if text else ("\n", "\r")
        if wide:
            marks += _WIDE_LINE_BREAKS
        pieces = sum(base.count(obj, m if text else m.encode()) for m in marks)
    elif sep is None:
        marks = _WHITESPACE if text else _WHITESPACE[:6]
        if wide:  # a count of a character wider than the text's is free
            marks += _WIDE_WHITESPACE
        pieces = sum(base.count(obj, m if text else m.encode()) for m in marks)
    else:
        pieces = base.count(obj, sep)
    if wide:
        return (pieces + 1) * WIDE_PIECE_BYTES + 4 * length
    return (pieces + 1) * PIECE_BYTES + length


def _split(obj: Any, base: Any, name: str) -> Callable[..., Any]:
    method = getattr(base, name).__get__(obj)

    def split(*args: Any, **kwargs: Any) -> Any:
        if base.__len__(obj) > CHECK_FROM:
            sep = None if name == "splitlines" else (args[0] if args else kwargs.get("sep"))
            try:
                size = split_bytes(obj, base, name, sep)
            except TypeError:
                return method(*args, **kwargs)  # the real error
            _memory.charge_bytes(size)
        return method(*args, **kwargs)

    split.__name__ = name
    return split


def _part_length(part: Any) -> int:
    base = _base(part)
    if base is None:
        raise TypeError
    length: int = base.__len__(part)
    return length


def checked_join(separator: Any, base: Any) -> Callable[[Any], Any]:
    """``separator.join`` (``base``: ``str``, ``bytes`` or ``bytearray``), size-checked as it reads.

    Lists and tuples are measured at once; any other iterable is read
    :data:`JOIN_CHUNK` parts at a time, the total so far checked after each chunk.
    Lengths are read through the base types' own ``__len__``.
    """
    method = base.join.__get__(separator)
    gap = base.__len__(separator)
    name = f"{base.__name__}.join"
    instead = "join fewer or shorter parts, or write them out one at a time"

    def join(iterable: Any) -> Any:
        if type(iterable) is list or type(iterable) is tuple:
            parts: Any = iterable
            try:
                total = sum(map(_part_length, parts)) + gap * max(len(parts) - 1, 0)
            except TypeError:
                return method(parts)  # the real error for a part of the wrong type
        else:
            parts = []
            total = 0
            it = iter(iterable)
            while chunk := list(itertools.islice(it, JOIN_CHUNK)):
                try:
                    total += sum(map(_part_length, chunk)) + gap * len(chunk)
                except TypeError:
                    return method([*parts, *chunk])
                if total > MAX_SEQUENCE:
                    _refuse(name, total, instead)
                parts.extend(chunk)
        wide = base is str and not (str.isascii(separator) and all(map(str.isascii, parts)))
        _check(name, total, instead, 4 if wide else 1)
        return method(parts)

    join.__name__ = "join"
    return join


def bounded_method(obj: Any, name: str) -> Callable[..., Any] | None:
    """The size-checked stand-in for ``obj.name``, or ``None`` when it needs none.

    ``name`` is one of :data:`BOUNDED_NAMES`; ``obj`` an int or a str, bytes or
    bytearray (or a subclass: the base type's method is wrapped, a script's own
    override runs as it is — it is script code, guarded like any other).
    """
    if name == "to_bytes":
        if isinstance(obj, int) and type(obj).to_bytes is int.to_bytes:
            return _to_bytes(obj)
        return None
    if name == "from_bytes":
        owner = obj if isinstance(obj, type) else type(obj)
        if issubclass(owner, int):
            return _from_bytes(getattr(obj, name))
        return None
    base = _base(obj)
    if base is None or getattr(type(obj), name, None) is not getattr(base, name, None):
        return None
    if name in _WIDTH_NAMES:
        return _width(obj, base, name)
    if name == "expandtabs":
        return _expandtabs(obj, base)
    if name == "replace":
        return _replace(obj, base)
    if name == "join":
        return checked_join(obj, base)
    if name in _SPLIT_NAMES:
        return _split(obj, base, name)
    if name in _AFFIX_NAMES:
        return _affix(obj, base, name)
    if name == "encode" and base is str:
        return _encode(obj)
    if name == "decode" and base is not str:
        return _decode(obj)
    return None


def _encode(text: str) -> Callable[..., bytes]:
    def encode(encoding: Any = "utf-8", errors: Any = "strict") -> bytes:
        return checked_encode(text, encoding, errors)

    return encode


def _decode(data: Any) -> Callable[..., str]:
    def decode(encoding: Any = "utf-8", errors: Any = "strict") -> str:
        return checked_decode(data, encoding, errors)

    return decode


def _in_script(frame: types.FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            return True
        frame = frame.f_back
    return False


def _compile_hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "compile" or not args:
        return
    source = args[0]
    if not isinstance(source, (str, bytes)) or base_len(source) <= MAX_FORWARD_REFERENCE:
        return
    caller = sys._getframe(1)
    if caller.f_globals.get("__name__") != "typing" or not _in_script(caller):
        return
    refuse_size(
        f"a typing forward reference of {base_len(source)} characters is too large for the "
        f"sandbox (at most {MAX_FORWARD_REFERENCE}): name the type instead of a long string"
    )


_installed: list[bool] = []


def install_compile_hook() -> None:
    """Install the forward-reference bound (an audit hook; once per process)."""
    if not _installed:
        _installed.append(True)
        sys.addaudithook(_compile_hook)


install_compile_hook()
