"""Host loops that observe the run's deadline: a ticking iterator for C and stdlib loops.

Part of ``guards/`` (the bottom, beside :mod:`.constants`): imports only
:mod:`.constants`. The step budget charges a sized container by its *count* up front,
which bounds how many items a C loop reads but not how long each item takes: ``map(f,
x)``, ``filter(f, x)``, a ``key=`` of ``sorted``/``min``/``max`` or a host stdlib routine
written in Python (``heapq.nlargest``, ``statistics.variance``, ``pprint``) then runs
items × per-item cost with no deadline check (issue 13, findings7 F03/F04/F06/F07: a
``sum(map(s.find, ...))`` of 5,000 slow C calls ran 77 s under a 1 s deadline).

:func:`ticked` feeds such a loop: a C-level ``itertools.chain.from_iterable`` over a
Python generator that yields ``islice`` pieces of :data:`TICK_EVERY` items and charges
each piece to the run's budget (the charge checks the step limit, the deadline, the abort
and the stop flag) before C reads it. Between two checks C runs at full speed, so the
overshoot of a loop of slow C calls is at most :data:`TICK_EVERY` calls.

A C consumer that reads many input items per result with no callable per item
(``all``/``any``, ``itertools.dropwhile``'s skipping, ``islice``'s start, ``compress``,
``deque(x, maxlen=0)``, ``math.fsum``) reads its input through :func:`read_ticked`:
pieces of :data:`READ_EVERY` items, a range in range slices (findings15 E01:
``next(dropwhile(str, range(3*10**7)))`` ran 27 s under a 2 s deadline, ``all(range(10**8))``
1.9 s at 1 s: the up-front charge of a range spends its length, one deadline check).

The charge hook is the run's ``__charge__`` (given, or found in the innermost script
frame's globals); a host loop with no script on the stack is returned unchanged.

A host routine written in Python that loops over a whole container in one call
(``Counter``'s operators, ``random.shuffle``) has no tick inside: :func:`charge_host_loop`
checks the budget and charges the items first, and :func:`counter_work` does so for the
operands of a ``Counter`` operator (``+ - | &``, their in-place forms, unary ``+``/``-``:
:func:`guarded_pos`, :func:`guarded_neg`; findings15 E05).
"""

from __future__ import annotations

import collections
import itertools
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scriptgate.sandbox.guards.constants import FILENAME

__all__ = [
    "BOUNDED_LAZY",
    "HOST_LOOP_INPUT",
    "LARGE_INPUT",
    "READ_EVERY",
    "SUM_PIECE",
    "TICK_EVERY",
    "TICK_STEPS",
    "TickedFilter",
    "TickedList",
    "TickedMap",
    "budget_first",
    "charge_host_loop",
    "check_budget",
    "counter_work",
    "guarded_neg",
    "guarded_pos",
    "pieced_sum",
    "read_ticked",
    "run_charge",
    "ticked",
    "ticked_calls",
    "ticks_itself",
]

TICK_EVERY = 32
"""Items a ticked host loop reads between two budget checks.

Small enough that 32 slow C calls (a ``str.find`` over a 10 MB string, ~10 ms each under
load) overshoot the deadline by a fraction of a second; large enough that the generator
resume per piece costs a few ns an item on ordinary code."""

TICK_STEPS = range(TICK_EVERY)
"""What one piece charges: ``charge(range(n))`` spends ``n`` steps and checks the budget
(the run's ``__charge__`` knows this very object and runs its full periodic check on it:
steps, deadline, abort, the memory poll and the event loop's turn)."""
_STEPS = TICK_STEPS
_END: Any = object()
_chain = itertools.chain
_islice = itertools.islice
_from_iterable = itertools.chain.from_iterable
_GENERATOR = types.GeneratorType
_HINTED_FROM: tuple[Iterable[Any], ...] = (
    [],
    (),
    "",
    "\u00e9",
    b"",
    bytearray(),
    range(0),
    range(1 << 64),
)
_HINTED = frozenset(type(iter(value)) for value in _HINTED_FROM)
"""Sequence and range iterators whose ``__length_hint__`` is live and exact: zero exactly
when ``next`` would end (the sequence shrunk or was read), so :func:`ticked` reads them
in plain ``islice`` pieces, one C layer fewer per item."""

READ_EVERY = 512
"""Items a callable-free C consumer (:func:`read_ticked`) reads between two budget checks.

Nothing but C runs per item there (a truth test, a drop, a delegating ``yield from``), so
a check every 512 items (:data:`SUM_PIECE` additions are as many) sees the deadline
within microseconds; the check itself costs about 2 µs (the memory poll, the event loop's
turn), a few ns an item at this size where 32 items a piece cost tens."""


def ticks_itself(func: Any) -> bool:
    """Whether ``func`` is the script's own function (or a method of one): each call ticks.

    The compiler starts every script function and lambda with the budget's tick, so a host
    loop calling one per item sees the deadline without being fed in ticked pieces (the
    glue workload's ``sort(key=lambda r: ...)`` paid both). An allow-list: anything else —
    builtins, bound C methods, stand-ins, script objects with ``__call__`` — is ticked.
    """
    kind = type(func)
    if kind is types.MethodType:
        func = func.__func__
        kind = type(func)
    return kind is types.FunctionType and func.__code__.co_filename == FILENAME


def run_charge() -> Callable[[Any], Any] | None:
    """The ``__charge__`` hook of the innermost script frame on the stack, or ``None``."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            found = frame.f_globals.get("__charge__")
            return found if callable(found) else None
        frame = frame.f_back
    return None


LARGE_INPUT = 1 << 16
"""Items (characters, bytes, entries) from which a call's work is worth a budget check first:
a method of a 64 Ki-item receiver or a stand-in call on a 64 Ki-item argument takes tens of
microseconds or more, so a loop of them must not wait for its tick chunk (findings14 A16)."""


def check_budget() -> None:
    """The run's full periodic check now (steps, deadline, abort), before a call of slow C.

    A loop of 255 calls of a bounded but slow method (``s.upper()`` of 10 M characters,
    ``html.unescape`` of 10 MB) ran between two tick-chunk checks: 26 s past a 1 s
    deadline. A no-op with no script on the stack.
    """
    charge = run_charge()
    if charge is not None:
        charge(TICK_STEPS)


HOST_LOOP_INPUT = 1 << 10
"""Items from which a stand-in routine that loops over them in host Python (``Counter``'s
operators, ``random.shuffle``) checks the budget and is charged first: at about 0.1-0.3 µs
an item such a loop is a hundred times slower than C, so it is worth the check much earlier
than :data:`LARGE_INPUT` (findings15 E05)."""


def charge_host_loop(items: int) -> None:
    """The run's full periodic check now, then ``items`` steps, before a host-Python loop.

    ``Counter(range(300000)) - c`` loops over both in host Python (tens of ms a call, no
    tick inside): 100 of them ran 11.7 s past a 1 s deadline (findings15 E05). Below
    :data:`HOST_LOOP_INPUT` items, and with no script on the stack, nothing happens.
    """
    if items < HOST_LOOP_INPUT:
        return
    charge = run_charge()
    if charge is not None:
        charge(TICK_STEPS)
        charge(range(items))  # the work, to the step budget (it checks the deadline again)


_COUNTER = collections.Counter


def counter_work(*operands: Any) -> None:
    """:func:`charge_host_loop` of the tables' items when an operand is a ``Counter``.

    ``Counter``'s ``+ - | &`` (and ``+= -= |= &=``, ``+c``, ``-c``) are host Python that
    loop over both operands (findings15 E05: ``a - b`` of 300,000 items, 100 times, ran
    11.7 s past a 1 s deadline); each operand that is a dict counts its items (read by the
    base's ``__len__``). Other operands cost one ``isinstance``.
    """
    for operand in operands:
        if isinstance(operand, _COUNTER):
            charge_host_loop(sum(dict.__len__(x) for x in operands if isinstance(x, dict)))
            return


def guarded_pos(value: Any) -> Any:
    """``+value`` (compiled ``_pos_``): a ``Counter``'s loop charged first (findings15 E05)."""
    if isinstance(value, _COUNTER):
        counter_work(value)
    return +value


def guarded_neg(value: Any) -> Any:
    """``-value`` (compiled ``_neg_``): a ``Counter``'s loop charged first (findings15 E05)."""
    if isinstance(value, _COUNTER):
        counter_work(value)
    return -value


def budget_first(method: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)`` after :func:`check_budget` (bound with ``MethodType``)."""
    check_budget()
    return method(*args, **kwargs)


def ticked(
    iterable: Iterable[Any],
    charge: Callable[[Any], Any] | None = None,
    every: int = TICK_EVERY,
) -> Iterator[Any]:
    """``iter(iterable)`` read in pieces of ``every`` items, each charged first.

    ``charge`` defaults to the running script's hook (:func:`run_charge`); with no script
    on the stack the plain iterator is returned. An error raised by the iterable comes
    after the items it produced, as when C drains it itself. A range is read in range
    slices (each one ``O(1)`` to make, read at C speed), a list, tuple, text or range
    iterator in ``islice`` pieces while its live length hint is not zero, any other
    iterable in pieces of its first item and an ``islice`` of the rest; all read from the
    same live iterator, no further than the consumer asks.
    """
    it = iter(iterable)
    if charge is None:
        charge = run_charge()
        if charge is None:
            return it
    check = charge
    if type(iterable) is range:
        whole: range = iterable

        def slices() -> Iterator[range]:
            # findings15 E01: a range in slices costs nothing per item (the chain reads
            # a range iterator), where islice pieces double the cost of all(range(n))
            for start in range(0, len(whole), every):
                check(_STEPS)
                yield whole[start : start + every]

        return _from_iterable(slices())
    if type(it) in _HINTED:
        left = it.__length_hint__  # type: ignore[attr-defined]

        def hinted() -> Iterator[Iterator[Any]]:
            # each piece is read whole before the next is asked for: no item is lost
            while left():
                check(_STEPS)
                yield _islice(it, every)

        return _from_iterable(hinted())
    rest = every - 1

    def pieces() -> Iterator[Iterator[Any]]:
        while True:
            first = next(it, _END)
            if first is _END:
                return
            check(_STEPS)
            yield _chain((first,), _islice(it, rest))

    return _from_iterable(pieces())


def read_ticked(fed: Any, charge: Callable[[Any], Any] | None = None) -> Any:
    """``fed`` (charged already) for a C consumer that reads many items per result.

    ``all``/``any``, ``dropwhile``/``filterfalse`` skipping, ``islice`` skipping to its
    start, ``compress`` over false selectors, ``deque(x, maxlen=0)``, ``math.fsum``: C
    reads the whole input in one call with no deadline check, and the up-front charge
    of a range (``__charge__``) spends its length, which with no step limit is a single
    deadline check (findings15 E01). Read in :func:`ticked` pieces of :data:`READ_EVERY`
    items, unless it ticks per item already (a generator: the script's own, or a stand-in's
    ticking one; the script's ``map``/``filter``) or is a short list, tuple or range.
    The pieces charge steps on top of the up-front charge of a sized input (as ``map``
    does), an eighth more.
    """
    kind = type(fed)
    if kind is _GENERATOR or kind in BOUNDED_LAZY:
        return fed
    if (kind is list or kind is tuple or kind is range) and len(fed) <= READ_EVERY:
        return fed
    return ticked(fed, charge, READ_EVERY)


def ticked_calls(
    func: Callable[[Any], Any], charge: Callable[[Any], Any] | None = None
) -> Callable[[Any], Any]:
    """``func`` charging the run every :data:`TICK_EVERY` calls (a ``key=`` a C sort calls).

    With no script on the stack (and no ``charge``) ``func`` itself is returned.
    """
    if charge is None:
        charge = run_charge()
        if charge is None:
            return func
    check = charge
    count = [0]

    def call(value: Any) -> Any:
        count[0] += 1
        if count[0] >= TICK_EVERY:
            count[0] = 0
            check(_STEPS)
        return func(value)

    return call


class TickedList(list):  # type: ignore[type-arg]
    """A host-only list whose iteration is :func:`ticked` (never handed to a script).

    For a host stdlib routine written in Python that iterates its data several times
    (``statistics``' ``_sum``/``_ss``): every ``for x in data`` it runs is charged in
    pieces, so the deadline is seen inside the routine.
    """

    __slots__ = ("_charge",)

    def __init__(self, items: Iterable[Any], charge: Callable[[Any], Any] | None) -> None:
        super().__init__(items)
        self._charge = charge

    def __iter__(self) -> Iterator[Any]:
        """The items, ticked."""
        return ticked(list.__iter__(self), self._charge)


class TickedMap(map):  # type: ignore[type-arg]
    """``map`` over inputs the script's ``map()`` made :func:`ticked`: one item reads one
    piece item of each input, so a C consumer needs no second ticking layer."""

    __slots__ = ()


class TickedFilter(filter):  # type: ignore[type-arg]
    """``filter`` over a :func:`ticked` input (the script's ``filter()``): each test reads
    one ticked item, so a C consumer needs no second ticking layer."""

    __slots__ = ()


BOUNDED_LAZY = frozenset({TickedMap, TickedFilter})
"""Lazy iterators whose every item is bounded by construction (no re-ticking needed)."""


SUM_PIECE = 512
"""Items :func:`pieced_sum` adds between two budget checks."""
_sum = sum


def pieced_sum(iterable: Iterable[Any], start: Any, charge: Callable[[Any], Any]) -> Any:
    """``sum(iterable, start)`` in C pieces with a budget check between two (findings10 F01).

    ``sum([a] * 20000)`` of an 8 M-bit int is 20,000 additions of a megabyte each in one C
    call (10 s under a 1 s deadline): each item is small to the step budget and nothing
    runs between the additions. The items are added in pieces of :data:`SUM_PIECE`, the
    run's budget checked between two: a piece of the largest ints a script can make is a
    fraction of a second, and plain numbers pay a few ns an item. The size is fixed: one
    that grew after quick pieces was grown by zeros, then filled with big ints (findings11
    F07: 19.6 s). The result is ``sum``'s (the same additions in the same order; in Python
    3.11 ``sum`` keeps a float total as a plain double, so a piece boundary changes
    nothing), and so are its errors.
    """
    it = iter(iterable)
    total = start
    while True:
        piece = list(_islice(it, SUM_PIECE))
        if not piece:
            return total
        total = _sum(piece, total)
        if len(piece) < SUM_PIECE:
            return total
        charge(_STEPS)
