"""In-process memory accounting: the run's memory budget and the growth guards.

Part of ``guards/`` (memory): imports only :mod:`.constants`, :mod:`.errors`,
:mod:`.lengths` and :mod:`.ticking`; the
compiler uses its :class:`NumericNames`. Must not import anything above it.

Process isolation caps a worker's memory with ``RLIMIT_AS``; an in-process run
shares the host's address space, so :attr:`Limits.memory_bytes` is enforced
there by measuring instead:

- :class:`MemoryMeter` bounds the growth of the host process's resident memory
  (``/proc/self/statm``, a ``pread`` of a kept-open descriptor, a few µs) during a
  run, relative to the value when the run first checks it. The budget's periodic
  check polls it at most every :data:`POLL_INTERVAL` seconds, so a loop pays
  nothing per step; the size guards charge large allocations
  (:func:`charge_bytes`) and check *before* allocating, so a loop appending
  megabyte strings is stopped within about one allocation of the limit. A breach
  trips the budget: ``error.kind == "limit"``, "Script exceeded the memory limit".
  The figure is approximate by nature: other threads of the host allocate (and
  free) at the same time and are counted too, memory the allocator keeps after
  a ``free`` is not given back, and concurrent runs see each other's growth.
  Without ``/proc`` (macOS, Windows) the meter is off and only the size guards
  apply.
- :func:`guarded_add` / :func:`guarded_iadd` (``a + b``, ``a += b``),
  :func:`guarded_extend` (``list.extend``, ``deque.extend``/``extendleft``) and
  :func:`guarded_star` (``[*x, *x]``, ``f(*x)``, ``x[i:j] = v``) and
  :func:`check_field` (``f'{s}{s}'``) refuse a str,
  list, tuple or bytes result (or part) longer than :data:`MAX_SEQUENCE` (a
  size limit that ends the script: ``scriptgate.sandbox.guards.errors.refuse_size``), the
  bound ``*`` already uses — this is what stops geometric growth
  (``s = s + s``, ``x.extend(x)``), which doubles within one step, faster than
  any periodic check could see. The length check runs only when an operand is
  already large; large results are charged to the meter.
- :class:`NumericNames` (compile time) proves operands numeric — literals,
  ``range`` loop variables, ``len()``, arithmetic on numbers, names only ever
  bound to those — so ``total += i * i`` and ``t = t + i`` compile to a plain
  ``+`` without the guard call.

- :func:`charge_copy` charges the copy of an existing large str, list, tuple,
  set, dict, deque or bytes before it is made: slices (``x[:]``, ``s[1:]``, in
  the item guard), ``list(x)``/``tuple(x)``/``set(x)``/``frozenset(x)``/
  ``dict(x)`` (the policy wraps the argument), ``sorted(x)``, ``.copy()`` and
  the str methods that return a string as long as the receiver
  (``s.upper()``…, in the attribute guard). The poll runs only at the budget's
  checks (up to 256 loop iterations apart), so without these a loop whose every
  iteration copies 80 MB (``y.append(x[:])`` of a 10-million-item list) could
  allocate 20 GB between two polls; with them it stops within one copy of the
  limit. Only values longer than :data:`CHECK_FROM` are charged: small ones pay
  one type check.

- :func:`growth_checked`: ``list(x)``/``tuple(x)``/``sorted(x)`` of an iterable that is
  not a builtin container (a generator, ``map``, ``range``, a stand-in iterator) grows
  its result in one C call. The meter reads resident memory, and a growing list's spare
  capacity (an eighth; a tuple's a quarter) is allocated but not yet touched, so the
  poll saw about 12% less than the allocation (``list(itertools.repeat(1, 10**8))``
  ended 12% past the budget; ``list(range(10**8))`` without a step limit, 3.6 GB under a
  96 MB budget, reported ``ok``). The iterable is fed in chunks and the meter is read
  each time the count has grown by a sixteenth, charged the spare capacity the next
  resize may add (:data:`_SPARE`), so the run stops before the allocation passes
  the budget.

Sizes are read through the builtin base type (:func:`.lengths.base_len`): a
subclass whose ``__len__`` lies does not make a copy look small.

Residual: a copy made inside a C call no guard wraps (``collections.deque(x)``,
``json.loads`` of a large text, the backtracking stack of one regular-expression
call) is seen at the next poll; process isolation's ``RLIMIT_AS`` is the hard
cap.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import itertools
import os
import sys
import time
import types
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, Protocol

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.direct_calls import MAX_ROUNDS, call_sites, direct_functions
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.known_length import known_length
from scriptgate.sandbox.guards.lengths import (
    SIZED_BASES,
    base_len,
    is_wide_text,
    sequence_len,
)
from scriptgate.sandbox.guards.ticking import counter_work

__all__ = [
    "CHECK_FROM",
    "MAX_SEQUENCE",
    "METER_NAME",
    "POLL_INTERVAL",
    "REAL_OF_STAND_IN",
    "GrowthFeed",
    "MemoryMeter",
    "NumericNames",
    "charge_bytes",
    "charge_copy",
    "charge_sequence",
    "check_field",
    "growth_checked",
    "guarded_add",
    "guarded_extend",
    "guarded_iadd",
    "guarded_star",
    "is_extendable",
    "memory_available",
    "resident_bytes",
]

MAX_SEQUENCE = 10_000_000
"""Longest str/list/tuple/bytes a concatenation or extension may build (= ``guards.MAX_SEQUENCE``)."""

CHECK_FROM = 4096
"""Operand length from which ``+``/``+=``/``extend`` check the result's size and charge it."""

POLL_INTERVAL = 0.002
"""Seconds between two resident-memory reads by the budget's periodic check."""

METER_NAME = "__memory__"
"""The name of the run's :class:`MemoryMeter` in the script's globals (scripts cannot read it)."""

_CHECK_BYTES = 1 << 20
"""Allocations charged since the last read that trigger a read (1 MiB)."""

_SEQUENCES = frozenset({str, list, tuple, bytes, bytearray})
_EXTENDABLE = (list, collections.deque, bytearray)
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

# ----------------------------------------------------------------------------- measuring

_fd: list[int] = []
"""The open ``/proc/self/statm`` descriptor (empty: not opened yet)."""
_unavailable: list[bool] = []
"""Set once ``/proc/self/statm`` could not be read: the meter stays off."""


def _reset_after_fork() -> None:
    # "/proc/self" was resolved when the descriptor was opened: a forked child
    # (the process pool's workers) must open its own.
    if _fd:
        fd = _fd.pop()
        with contextlib.suppress(OSError):
            os.close(fd)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def resident_bytes() -> int | None:
    """The resident memory of this process in bytes, or ``None`` without ``/proc``."""
    if _unavailable:
        return None
    try:
        if not _fd:
            _fd.append(os.open("/proc/self/statm", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)))
        return int(os.pread(_fd[0], 128, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError, AttributeError):
        _unavailable.append(True)
        return None


def memory_available() -> bool:
    """Whether resident memory can be measured here (Linux ``/proc``)."""
    return resident_bytes() is not None


class _Budget(Protocol):
    def trip(self, kind: str, message: str) -> BaseException: ...


class MemoryMeter:
    """The memory budget of one in-process run (see the module docstring).

    ``limit`` bytes of resident-memory growth are allowed, counted from the
    first check of the run (the run's start: the budget checks on the first
    tick, and the size guards before the first large allocation).
    """

    __slots__ = ("_budget", "baseline", "limit", "next_poll", "peak")

    def __init__(self, limit: int, budget: _Budget) -> None:
        self.limit = limit
        self._budget = budget
        self.baseline: int | None = None
        self.peak = 0
        """The largest growth seen so far, in bytes."""
        self.next_poll = 0.0

    @classmethod
    def create(cls, limit: int | None, budget: _Budget) -> MemoryMeter | None:
        """A meter for ``limit`` bytes, or ``None`` (no limit, or no ``/proc``)."""
        if limit is None or limit <= 0 or _unavailable:
            return None
        return cls(limit, budget)

    def message(self) -> str:
        """The text of a memory-limit stop."""
        return (
            f"Script exceeded the memory limit ({self.limit} bytes): the host process grew "
            "by more than that during the run"
        )

    def check(self, extra: int = 0) -> None:
        """Read resident memory; trip the budget if growth plus ``extra`` bytes exceeds the limit."""
        rss = resident_bytes()
        if rss is None:
            return
        baseline = self.baseline
        if baseline is None:
            self.baseline = rss
            growth = 0
        else:
            growth = rss - baseline
        if growth > self.peak:
            self.peak = growth
        if growth + extra > self.limit:
            raise self._budget.trip("limit", self.message())

    def poll(self) -> None:
        """The periodic check: read resident memory at most every :data:`POLL_INTERVAL` s."""
        now = time.monotonic()
        if now >= self.next_poll:
            self.next_poll = now + POLL_INTERVAL
            self.check()


_pending = [0]
"""Bytes charged by small allocations since the last read (all runs of the process)."""


def charge_bytes(nbytes: int) -> None:
    """Account an allocation of about ``nbytes`` the running script is about to make.

    Small allocations add up; from :data:`_CHECK_BYTES` on, the meter of the
    script on the current stack (found through its globals) checks resident
    memory plus this allocation against the limit before it happens.
    """
    pending = _pending[0] + nbytes
    if pending < _CHECK_BYTES:
        _pending[0] = pending
        return
    _pending[0] = 0
    meter = _current_meter()
    if meter is not None:
        meter.check(nbytes)


def charge_sequence(like: Any, length: int) -> None:
    """:func:`charge_bytes` for a new sequence of ``length`` items of the kind of ``like``."""
    charge_bytes(length * _itemsize(like))


CHAR_OBJECT_BYTES = 80
"""A new one-character ``str`` of a character above U+00FF (76 or 80 bytes; pymalloc: 80)."""
_ITEM_COPIES = frozenset({"list", "tuple"})
"""Copies that keep every item (a set or dict keeps one object per distinct character)."""


def char_objects_bytes(value: Any) -> int:
    """Bytes of the new one-character objects C makes when it copies ``value`` item by item.

    ``list(s)``, ``[*s]``, ``x.extend(s)``… of a ``str`` make one object per character:
    ASCII and Latin-1 characters are cached singletons (only the pointer is new), every
    other one is a new :data:`CHAR_OBJECT_BYTES`-byte object (findings14 A10: 10 M CJK
    characters charged as pointers made 900 MB). Counted at C speed with ``str``'s own
    encoder (a subclass's methods never run); 0 for anything else and for short texts.
    """
    if not isinstance(value, str) or str.isascii(value):
        return 0
    length = str.__len__(value)
    if length <= CHECK_FROM:
        return 0
    kept = len(str.encode(value, "latin-1", "ignore"))  # the Latin-1 characters
    return (length - kept) * CHAR_OBJECT_BYTES


_COPY_ITEM_BYTES: dict[type, int] = {
    list: 8,
    tuple: 8,
    set: 32,
    frozenset: 32,
    dict: 40,
    collections.deque: 8,
    bytes: 1,
    bytearray: 1,
}
"""About how many bytes a copy takes per item (str: per character, 1 or 4)."""
_COPY_BASES = tuple(_COPY_ITEM_BYTES)
_COPY_INTO_BYTES: dict[str, int] = {"list": 8, "tuple": 8, "set": 32, "frozenset": 32, "dict": 40}
"""The same per builtin that makes the copy (``set(x)`` of a list is a set)."""


def charge_copy(value: Any, into: str | None = None, length: int | None = None) -> Any:
    """Charge a copy of ``value`` (``length`` items of it, default all) before it is made.

    Only str, list, tuple, set, frozenset, dict, deque, bytes and bytearray (or
    subclasses) longer than :data:`CHECK_FROM` are charged, at the item size of the
    copy's kind: ``into`` names the builtin the copy is made by (``"set"`` for
    ``set(x)``), else it is ``value``'s own kind. The length is the base type's
    (:func:`.lengths.base_len`: a subclass's ``__len__`` never runs). Returns ``value``.
    """
    kind = type(value)
    if kind is str:
        size = 1 if value.isascii() else 4
    else:
        found = _COPY_ITEM_BYTES.get(kind)
        if found is None:
            if isinstance(value, str):
                found = 4 if is_wide_text(value) else 1  # a str subclass: str's own methods
            elif not isinstance(value, _COPY_BASES):
                if into in _TABLE_BYTES:
                    _charge_table(value, into)  # set(range(n)): its known final size
                return value  # generators, ranges, maps…: nothing is copied up front
            else:
                # Counter, OrderedDict, defaultdict, namedtuples…: their base's size; C
                # copies a subclass item by item, so the copy grows with spare capacity
                # (an eighth, untouched: resident memory does not show it) — a quarter more
                found = next(
                    _COPY_ITEM_BYTES[base] for base in kind.__mro__ if base in _COPY_ITEM_BYTES
                )
                found += found >> 2
        size = found
    count = base_len(value)
    if count > CHECK_FROM:
        if into is not None:
            into_size = _COPY_INTO_BYTES.get(into)
            if into_size is not None:
                size = into_size if kind in _COPY_ITEM_BYTES else into_size + (into_size >> 2)
        extra = char_objects_bytes(value) if into in _ITEM_COPIES else 0
        if extra and length is not None:
            extra = extra * length // count
        charge_bytes((count if length is None else length) * size + extra)
    return value


_TABLE_BYTES: dict[str, int] = {"set": 64, "frozenset": 64, "dict": 80, "counter": 80}
"""Peak bytes per entry while a set or dict table of a lazy input is built (the resize
keeps the old table beside the new one; measured: 67 for a set, 84 for a dict of 3 M)."""


def _charge_table(value: Any, into: str) -> None:
    """Charge ``set(x)``/``dict(x)``… of a lazy input of known length before the C call.

    The meter reads resident memory between fed chunks, but one table resize doubles
    the table in a step: ``dict.fromkeys(range(3 * 10**7))`` grew the host 1.6x the
    budget before it was seen (findings10 F05). The length comes from
    :func:`.known_length.known_length` (an allow-list of builtin lazy inputs).
    """
    found = known_length(value, stored=into != "dict")
    if found is None:
        return
    count, fresh = found
    if count > CHECK_FROM:
        charge_bytes(count * (_TABLE_BYTES[into] + fresh))


_SPARE: dict[str, int] = {"list": 2, "tuple": 3}
"""Bytes per item charged on top of resident memory while ``list()``/``tuple()`` grows.

A list resizes to about 9/8 of its length, a tuple built from an iterator to 5/4, and
the items counted between two reads add a sixteenth: the spare pointers (8 bytes each)
are allocated but untouched, so resident memory does not show them. 2 (3) bytes an
item covers them with a margin (8n + 2n ≥ 8 · 1.2n).
"""
_FEED_CHUNK = 256
_END: Any = object()


REAL_OF_STAND_IN: dict[int, type] = {}
"""``id`` of the script's ``list``/``tuple`` stand-in class → the real type (filled by
``world/sequence_types``): the compiled ``list(x)`` makes the real list at once."""


class GrowthFeed(itertools.chain):  # type: ignore[type-arg]
    """What :func:`growth_checked` returns for an iterator: its chunks, growth read between them.

    Its own type so the script's ``list``/``tuple`` stand-ins (``world/sequence_types``)
    hand a feed the compiled ``list(x)`` made already straight to C, without a second wrapper.
    """

    __slots__ = ()


def growth_checked(value: Any, into: str, meter: MemoryMeter | None = None) -> Any:
    """``value`` for ``list(value)``/``tuple(value)``, fed so its growth is checked.

    Builtin containers (and subclasses) are returned as they are (:func:`charge_copy`
    charges their copy at their base length). Any other iterable is read in C-speed
    chunks; each time the count of items has grown by a sixteenth (at least
    :data:`CHECK_FROM`), ``meter`` reads resident memory plus the spare capacity the
    next resize may allocate (:data:`_SPARE`), so the run stops before the result passes
    the budget. The wrapper has no length hint: a lying ``__len__``/``__length_hint__``
    cannot make C preallocate either. ``meter`` defaults to the meter of the script on
    the stack; without one, ``value`` is returned.
    """
    if into not in _SPARE or isinstance(value, SIZED_BASES):
        return value
    if meter is None:
        meter = _current_meter()
        if meter is None:
            return value
    try:
        it = iter(value)
    except TypeError:
        return value  # list(5): the builtin's own error
    return _feed_from_iterable(_growth_chunks(it, meter, _SPARE[into]))


_feed_from_iterable = GrowthFeed.from_iterable
_islice = itertools.islice
_chain = itertools.chain


def _growth_chunks(it: Any, meter: MemoryMeter, spare: int) -> Any:
    count = 0
    check_at = CHECK_FROM
    while True:
        first = next(it, _END)
        if first is _END:
            return
        count += _FEED_CHUNK  # at most this many items so far
        if count >= check_at:
            meter.check(count * spare)
            check_at = count + max(count >> 4, CHECK_FROM)
        yield _chain((first,), _islice(it, _FEED_CHUNK - 1))


def _current_meter() -> MemoryMeter | None:

    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            meter = frame.f_globals.get(METER_NAME)
            return meter if type(meter) is MemoryMeter else None
        frame = frame.f_back
    return None


# ----------------------------------------------------------------------------- growth guards


def _too_big(what: str) -> NoReturn:
    refuse_size(f"{what} would be too large for the sandbox")  # a limit: ends the script


def _itemsize(value: Any) -> int:
    if isinstance(value, str):
        return 1 if value.isascii() else 4
    if isinstance(value, (bytes, bytearray)):
        return 1
    return 8


def _check_concat(a: Any, b: Any, in_place: bool = False) -> None:
    # One operand is a large sequence: the result's length is the sum (if the
    # other is not a sequence, the operation itself raises its TypeError). A
    # subclass (``class L(list)``) is measured by its base type, whatever its
    # ``__len__`` answers.
    length_a = sequence_len(a)
    length_b = sequence_len(b)
    total = length_a + length_b
    if total > MAX_SEQUENCE:
        _too_big("a concatenated sequence")
    extra = char_objects_bytes(b) if in_place and isinstance(a, _EXTENDS_IN_PLACE) else 0
    charge_bytes(total * _itemsize(a if length_a else b) + extra)


def guarded_add(a: Any, b: Any) -> Any:
    """``a + b`` refusing str/list/tuple/bytes results longer than :data:`MAX_SEQUENCE`.

    Blocks ``s = s + s`` doubling (test_memory_guard_concat_*), also of subclasses
    (``L(y + y)``: measured by the base type); small operands pay two type lookups.
    """
    if sequence_len(a) > CHECK_FROM or sequence_len(b) > CHECK_FROM:
        _check_concat(a, b)
    elif isinstance(a, _TABLES) and isinstance(b, _TABLES):
        charge_copy(a)  # Counter + Counter: a new table of both (findings14 C03)
        charge_copy(b)
        counter_work(a, b)  # ... made by a host-Python loop over both (findings15 E05)
    return a + b


_TABLES = (dict, set, frozenset)
"""Containers whose ``+`` (``Counter``) builds a new table of both operands."""


_EXTENDS_IN_PLACE = (list, collections.deque)
"""Types whose ``+=`` extends from *any* iterable in one C call (``list += range(10**8)``)."""


def guarded_iadd(a: Any, b: Any) -> Any:
    """``a += b`` (in place for lists) with the size check of :func:`guarded_add`.

    A list's or deque's ``+=`` reads any iterable in one C call, which no length check
    sees (ninth attack F06/F07: ``d += range(3 * 10**7)`` grew the host 1.15 GB): an
    operand that is not a builtin container's own storage is first read through the
    growth check (:func:`guarded_star`), then measured like any other.
    """
    if isinstance(a, _EXTENDS_IN_PLACE) and not _reads_storage(b):
        b = guarded_star(b, f"{type(a).__name__} += of this iterable")
    if sequence_len(a) > CHECK_FROM or sequence_len(b) > CHECK_FROM:
        _check_concat(a, b, in_place=True)  # x += s: each character a new object
    elif isinstance(a, _TABLES):
        counter_work(a, b)  # Counter += Counter: a host-Python loop (findings15 E05)
    a += b
    return a


def guarded_star(value: Any, what: str = "an unpacked sequence") -> Any:
    """``*value`` in a display or call, and a slice assignment's value, size-checked.

    Each unpacked part may hold at most :data:`MAX_SEQUENCE` items, so
    ``x = [*x, *x]`` and ``x[len(x):] = x`` stop doubling at the bound. Unsized
    iterables are materialized first (the unpacking consumes them whole anyway).
    """
    if not _reads_storage(value):
        # an iterator, a script iterable, or a subclass with its own __iter__: C reads
        # what it yields, so the guard measures that (its own __len__ is never asked);
        # a subclass too large by its base type is refused before the copy
        if base_len(value, 0) > MAX_SEQUENCE:
            _too_big(what)
        value = list(growth_checked(value, "list"))
    length = base_len(value)
    if length > CHECK_FROM:
        if length > MAX_SEQUENCE:
            _too_big(what)
        charge_bytes(length * 8 + char_objects_bytes(value))
    return value


_EXACT_SIZED = frozenset(SIZED_BASES)


def _reads_storage(value: Any) -> bool:
    """Whether C iterates ``value``'s own storage: a builtin container, or a subclass of
    one that keeps its base's ``__iter__`` (its base length is then what C reads)."""
    kind = type(value)
    if kind in _EXACT_SIZED:
        return True
    own = getattr(kind, "__iter__", None)
    return any(
        isinstance(value, base) and own is vars(base).get("__iter__") for base in SIZED_BASES
    )


def check_field(text: str) -> str:
    """An f-string field's text, refused above :data:`MAX_SEQUENCE` (``f'{s}{s}'`` doubling)."""
    if len(text) > MAX_SEQUENCE:
        _too_big("an f-string field")
    charge_sequence(text, len(text))
    return text


def guarded_extend(target: Any, name: str = "extend") -> Any:
    """``target.extend`` refusing a result longer than :data:`MAX_SEQUENCE` (``x.extend(x)``).

    Arguments of exact builtin sized types are checked by length; other iterables
    (and subclasses, whose ``__len__`` may lie) are materialized first (``extend``
    consumes them whole anyway), so ``x.extend(map(f, x))`` and ``x.extend(x)`` on a
    ``class L(list)`` are checked too; the target is measured by its base type.
    ``name`` is ``"extendleft"`` for a deque's.
    """
    method = getattr(target, name)

    def extend(iterable: Any) -> None:
        items = iterable
        current = base_len(target, 0)
        if not _reads_storage(items):
            if current + base_len(items, 0) > MAX_SEQUENCE:
                _too_big(f"{type(target).__name__}.{name}")
            items = list(growth_checked(items, "list"))
        added = base_len(items)
        if current + added > CHECK_FROM:
            if current + added > MAX_SEQUENCE:
                _too_big(f"{type(target).__name__}.{name}")
            if isinstance(target, bytearray):
                charge_bytes(added)
            else:
                charge_bytes(added * 8 + char_objects_bytes(items))
        method(items)

    return extend


def is_extendable(value: Any) -> bool:
    """Whether ``value.extend`` must go through :func:`guarded_extend`."""
    return isinstance(value, _EXTENDABLE)


# ----------------------------------------------------------------------------- compile-time facts

_NUMERIC_CALLS = frozenset({"len", "int", "float", "ord", "bool", "hash"})
"""Builtins that return an exact number whatever their argument (when the script does not
rebind their names). Not ``abs`` or ``round``: they return what a class's ``__abs__`` or
``__round__`` returns (the sixth attack's F01/F03)."""
_BOTH = (
    ast.Add, ast.Sub, ast.Div, ast.FloorDiv, ast.Pow, ast.Mod,
    ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift,
)  # fmt: skip
"""Operators whose result is a number only if both operands are numbers: with one number,
``1 + x`` may still be anything, since a script class's ``__radd__`` (``__rsub__``,
``__rmod__``…) returns what it likes (the sixth attack's F01)."""
_BOOL_COMPARISONS = (ast.In, ast.NotIn, ast.Is, ast.IsNot)
"""Comparison operators whose result is always a bool, whatever the operands."""
_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_NESTED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_UNKNOWN: Any = None
_RANGE_ITEM = ast.Constant(0)
_ARGUMENT = ast.Constant(0)
"""The binding of a parameter that every direct call passes a number (:meth:`NumericNames._solve_calls`)."""
"""The binding of a ``for`` target over ``range(...)``: an int no larger than the range's bounds."""
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BINDERS = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.For,
    ast.AsyncFor,
    ast.With,
    ast.AsyncWith,
)


def cast_name(call: ast.Call) -> str:
    """The name a direct call calls (``call.func`` is an ``ast.Name``)."""
    func = call.func
    assert isinstance(func, ast.Name)
    return func.id


def _always_returns(body: list[ast.stmt]) -> bool:
    """Whether a block never falls off its end: it ends in ``return``/``raise`` on every branch."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


class NumericNames:
    """Which names provably hold numbers, per scope, so ``a + b`` can skip the size guard.

    ``a + b`` can only build a large sequence when both operands are sequences,
    so the policy leaves it unguarded when one operand is provably a number (or
    the operation raises ``TypeError``): number literals, ``in``/``is`` tests and
    comparisons of numbers (a script class's ``__eq__`` may return anything), ``len()``
    and other number-returning builtins, arithmetic on numbers, and names whose
    every binding in their scope is one of those (``for i in range(n)``,
    ``total = 0`` … ``total += i * i``). Arithmetic is a number only when both
    operands are (``1 + x`` calls ``x.__radd__``, which a script class defines as it
    likes), so a name is proved by the greatest fixpoint: every binding reads only
    values bound before it, so assuming the names numeric and dropping each that has a
    binding which is not proves ``i = 0`` … ``i = i + 1``.

    In a session the script's globals (and the builtins' names) may hold values
    from earlier runs, so module-level names and builtin calls prove nothing
    there (``session=True``); function locals cannot be read before they are
    bound, so their facts hold in both.

    It also knows which names are *range items*: bound only as the target of
    ``for`` loops and comprehensions over ``range(...)``. They hold ints no
    larger than values the guards already allowed, so ``i * i`` on them cannot
    start a repeated-squaring blow-up and needs no guard (``ranges``).
    """

    def __init__(
        self,
        tree: ast.Module,
        *,
        session: bool,
        walk: Callable[[ast.AST], Iterable[ast.AST]] = ast.walk,
    ) -> None:
        self._session = session
        bound: set[str] = set()
        self._unsafe: set[str] = set()
        for node in walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self._unsafe.update(node.names)
            elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                self._unsafe.add(node.target.id)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bound.add(node.rest)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
        self._bound = frozenset(bound)
        self._builtins = frozenset() if session else _NUMERIC_CALLS - bound
        self._range = not session and "range" not in bound
        self.scopes: dict[int, frozenset[str]] = {}
        self.ranges: dict[int, frozenset[str]] = {}
        """Per scope, the names bound only as items of ``range(...)`` loops."""
        self._calls: frozenset[str] = frozenset()
        """Functions whose every call gives a number (see :meth:`_solve_calls`)."""
        self._arguments: dict[int, frozenset[str]] = {}
        """Per such function (its node's id), the parameters every call passes a number."""
        self._scope_nodes = [node for node in walk(tree) if isinstance(node, _SCOPES)]
        functions = {} if session else direct_functions(tree, walk)
        if functions:
            self._solve_calls(tree, functions)
        else:
            self._solve_scopes()

    def _solve_scopes(self) -> None:
        for node in self._scope_nodes:
            self.scopes[id(node)], self.ranges[id(node)] = self._solve(node)

    def _solve_calls(self, tree: ast.Module, functions: dict[str, ast.FunctionDef]) -> None:
        """Carry numbers across the direct calls of ``functions`` (:mod:`.direct_calls`).

        The same greatest fixpoint as the names of a scope, over the whole script: assume
        every such function returns a number and every parameter receives one, solve the
        scopes under that, then drop each function with a ``return`` (or an end it can fall
        off) that is not a number and each parameter a call passes something else; again
        until nothing changes. Sound by the same induction: a call's arguments are evaluated
        before its parameters are bound and a ``return`` value before it is returned, so
        every value ever bound to a kept parameter or returned by a kept function is a
        number. Only direct calls reach these functions, so their calls are all in the tree.
        """
        sites = list(call_sites(tree, functions))
        # a function no call reaches proves nothing of its parameters (vacuous, and useless)
        shaped = {name: any(cast_name(call) == name for call, _ in sites) for name in functions}
        for call, _ in sites:
            name = cast_name(call)
            arity = len(functions[name].args.args)
            if (
                call.keywords
                or len(call.args) != arity
                or any(isinstance(arg, ast.Starred) for arg in call.args)
            ):
                shaped[name] = False  # it raises TypeError, or binds what we do not follow
        calls = set(functions)
        arguments = {
            name: {a.arg for a in node.args.args} - self._unsafe if shaped[name] else set()
            for name, node in functions.items()
        }
        for _ in range(MAX_ROUNDS):
            self._calls = frozenset(calls)
            self._arguments = {
                id(functions[name]): frozenset(params) for name, params in arguments.items()
            }
            self._solve_scopes()
            changed = False
            for name in sorted(calls):
                node = functions[name]
                facts = self.scopes[id(node)]
                returns = [n for n in self._own_nodes(node) if isinstance(n, ast.Return)]
                if not _always_returns(node.body) or not all(
                    r.value is not None and self.is_numeric(r.value, facts) for r in returns
                ):
                    calls.discard(name)
                    changed = True
            for call, scopes in sites:
                name = cast_name(call)
                params = arguments[name]
                if not params:
                    continue
                facts = self._facts_in(scopes)
                for arg, param in zip(call.args, functions[name].args.args, strict=False):
                    if param.arg in params and not self.is_numeric(arg, facts):
                        params.discard(param.arg)
                        changed = True
            if not changed:
                return
        # not settled within the bound (each round drops a fact): prove nothing across calls
        self._calls = frozenset()
        self._arguments = {}
        self._solve_scopes()

    def _facts_in(self, scopes: tuple[ast.AST, ...]) -> frozenset[str]:
        """The numeric names where a call is evaluated, given its scopes (outermost first)."""
        numeric: frozenset[str] = frozenset()
        ranges: frozenset[str] = frozenset()
        for scope in scopes:
            if id(scope) in self.scopes:
                numeric, ranges = self.scopes[id(scope)], self.ranges[id(scope)]
            elif isinstance(scope, _COMPREHENSIONS):
                numeric, ranges = self.comprehension(scope, numeric, ranges)
            else:  # a class body: proves nothing
                numeric, ranges = frozenset(), frozenset()
        return numeric

    def is_builtin(self, name: str) -> bool:
        """Whether ``name`` provably means the builtin: the script never binds it (not a session)."""
        return not self._session and name not in self._bound

    def comprehension(
        self, node: ast.AST, numeric: frozenset[str], ranges: frozenset[str]
    ) -> tuple[frozenset[str], frozenset[str]]:
        """The facts inside a comprehension, given those of the enclosing scope.

        Names the comprehension binds shadow the enclosing ones; a target over
        ``range(...)`` is a range item, unless the first iterable (evaluated in
        the enclosing scope) reads the same name.
        """
        if not isinstance(node, _COMPREHENSIONS):
            return frozenset(), frozenset()
        targets: set[str] = set()
        items: set[str] = set()
        others: set[str] = set()
        for generator in node.generators:
            names = {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
            targets |= names
            if (
                self._range
                and not generator.is_async
                and isinstance(generator.target, ast.Name)
                and self._is_range(generator.iter)
            ):
                items.add(generator.target.id)
            else:
                others |= names  # `for n in range(1) for n in [y]`: n is not a range item
        outer_reads = {n.id for n in ast.walk(node.generators[0].iter) if isinstance(n, ast.Name)}
        items = items - outer_reads - others - self._unsafe
        return (numeric - targets) | items, (ranges - targets) | items

    @staticmethod
    def _is_range(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "range"
        )

    # -- per scope ------------------------------------------------------------

    def _solve(self, scope: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
        if isinstance(scope, ast.Module) and self._session:
            return frozenset(), frozenset()
        bindings: dict[str, list[Any]] = {}

        def bind(name: str, value: Any) -> None:
            bindings.setdefault(name, []).append(value)

        handled: set[int] = set()

        def targets(target: ast.AST, value: Any) -> None:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    handled.add(id(sub))
                    bind(sub.id, value if sub is target else _UNKNOWN)

        outer: set[str] = set()
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = scope.args
            passed = self._arguments.get(id(scope), frozenset())
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    bind(arg.arg, _ARGUMENT if arg.arg in passed else _UNKNOWN)
            # defaults, decorators and annotations run in the enclosing scope, but the
            # policy sees them with this scope's facts: names they read prove nothing
            parts: list[Any] = [*args.defaults, *args.kw_defaults]
            if not isinstance(scope, ast.Lambda):
                parts += [*scope.decorator_list, scope.returns]
                parts += [a.annotation for a in ast.walk(args) if isinstance(a, ast.arg)]
            for part in parts:
                if part is not None:
                    outer.update(n.id for n in ast.walk(part) if isinstance(n, ast.Name))
        nodes = self._own_nodes(scope)
        nodes.sort(key=lambda n: not isinstance(n, _BINDERS))  # binders before bare names
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    targets(target, node.value)
            elif isinstance(node, ast.AugAssign):
                if isinstance(node.target, ast.Name):
                    handled.add(id(node.target))
                    bind(node.target.id, ast.BinOp(node.target, node.op, node.value))
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    targets(node.target, node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                value = _UNKNOWN
                if isinstance(node, ast.For) and self._range and self._is_range(node.iter):
                    value = _RANGE_ITEM  # range() yields ints
                targets(node.target, value)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars, _UNKNOWN)
            elif (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, (ast.Store, ast.Del))
                and id(node) not in handled
            ):
                bind(node.id, _UNKNOWN)  # any other binding (except-as, match…) proves nothing
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bind(node.name, _UNKNOWN)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    bind((alias.asname or alias.name).split(".")[0], _UNKNOWN)
            elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
                # names held as strings, not ast.Name: `except E as e`, `case n`, `case [*n]`
                if node.name:
                    bind(node.name, _UNKNOWN)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bind(node.rest, _UNKNOWN)  # `case {**n}`
        # the greatest fixpoint: assume every name whose bindings are all expressions is a
        # number, then drop those with a binding that is not one under the assumption. It is
        # sound because a binding can only read values bound before it (a name read before
        # any binding raises), so by induction every value ever bound is a number; it proves
        # `i = 0` … `i = i + 1` while `+` needs both operands proven (a script class's
        # `__radd__` may return anything)
        numeric: set[str] = {
            name
            for name, values in bindings.items()
            if name not in self._unsafe
            and name not in outer
            and all(v is not _UNKNOWN for v in values)
        }
        changed = True
        while changed:
            changed = False
            for name in sorted(numeric):
                if not all(self.is_numeric(v, numeric) for v in bindings[name]):
                    numeric.discard(name)
                    changed = True
        ranges = frozenset(
            name
            for name, values in bindings.items()
            if name in numeric and all(v is _RANGE_ITEM for v in values)
        )
        return frozenset(numeric), ranges

    @staticmethod
    def _own_nodes(scope: ast.AST) -> list[ast.AST]:
        # the scope's nodes without those of nested scopes (their names are bound
        # there); nested definitions' own names are bound here
        found: list[ast.AST] = []
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            found.append(node)
            if isinstance(node, _NESTED):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    stack.extend(node.decorator_list)
                continue
            stack.extend(ast.iter_child_nodes(node))
        return found

    def is_numeric(self, node: Any, names: frozenset[str] | set[str]) -> bool:
        """Whether ``node`` evaluates to a number (or raises) given the numeric ``names``."""
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, float, complex, bool)
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, ast.Not) or self.is_numeric(node.operand, names)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, _BOTH):
                return self.is_numeric(node.left, names) and self.is_numeric(node.right, names)
            return False
        if isinstance(node, ast.Compare):
            # `in` and `is` always give a bool; `==`, `<`… call the operands' own
            # methods, and a script class's `__eq__` may return any value
            return all(isinstance(op, _BOOL_COMPARISONS) for op in node.ops) or all(
                self.is_numeric(operand, names) for operand in (node.left, *node.comparators)
            )
        if isinstance(node, ast.BoolOp):
            return all(self.is_numeric(v, names) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.is_numeric(node.body, names) and self.is_numeric(node.orelse, names)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id in self._builtins or node.func.id in self._calls
        return False
