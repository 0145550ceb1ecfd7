"""The ``re`` stand-in, backed by the ``regex`` engine so a catastrophic pattern can be stopped.

Part of ``guards/`` (regex): imports :mod:`.constants`, :mod:`.errors`, :mod:`.memory`; must
not import the attribute guard or anything above ``guards/``.

CPython's ``re`` runs a whole match in one C call that nothing in-process can
interrupt: ``re.match('(a+)+$', 'a' * 64 + 'b')`` backtracks for minutes and
blocks the event loop the script runs on. The ``regex`` package (mrab; its
default ``VERSION0`` syntax is ``re``-compatible) takes a ``timeout`` on every
matching call and raises ``TimeoutError`` when it expires, so the stand-in
gives every match, search, ``findall``, ``split``, ``sub`` and ``finditer`` step
a deadline:

- The calling run's :class:`~scriptgate.sandbox.guards.attributes.Budget` is found through
  the script frame on the stack (its globals hold it under :data:`BUDGET_NAME`),
  so a pattern compiled in one session run and used in the next obeys the run
  that uses it. A call outside any run (host-side use) has no timeout.
- A call first gets a *slice* of :data:`FIRST_SLICE` seconds plus
  :data:`SLICE_PER_CHAR` per character of the subject (ordinary patterns run in
  linear time and finish well inside it), or the time left to the run's
  deadline if that is shorter. If the slice expires before the deadline, the
  event loop gets a turn (a sync script in its greenlet: an abort or the
  watchdog can act), the stop flag is checked, and the call is retried with
  twice the slice. A call cannot be resumed, so a legitimate operation longer
  than its first slice pays for the retries (at most about twice its own
  time); a catastrophic one runs until the deadline, with the loop getting a
  turn (and an abort honoured) at the end of each slice.
- A timeout at the deadline stops the run like any other: ``error.kind ==
  "limit"`` with the run's timeout message. The script never sees the
  ``TimeoutError``.
- ``findall``/``split``/``sub`` (a literal replacement) of a subject of
  :data:`PIECED_FROM` characters or more get one call of at most a quarter of the time
  left; past it the subject is scanned in pieces of matches with the wall clock read between them (``findall('', 'a' * 10**7)``, ten
  million matches, ran 2.3 s under a 1 s deadline on a loaded host: findings10 F07).
- ``sub``/``subn`` with a callable replacement are not retried (the callable
  is script code with effects); they get the time left to the deadline, and
  the callable's own ticks give the loop its turns.

``regex`` counts its timeout in CPU time, not wall time (observed: a 1 s timeout
took 1.8 s of wall time next to a busy thread; time spent in a callable
replacement does not count), so on a loaded host a call can end after the
deadline; the engine then reports the deadline as usual, and process isolation's
kill stays the hard bound. Reading that clock costs about 1 µs here, once per
call and about once per match: a small ``re.match`` costs ~8 µs instead of
~1.5 µs with ``re``, a ``findall`` of every word of a 4.7 MB text ~4-5× the
time, and a search that rarely matches the same.

Patterns are checked before they are compiled: ``regex`` unrolls counted
repeats when it compiles (``a{1000000}`` costs about 250 MB and half a second,
``(?:(?:a{100}){100}){100}{100}`` tens of gigabytes), which no timeout covers.
:func:`repeat_units` bounds the unrolled size from the pattern's text
conservatively; above :data:`MAX_REPEAT_UNITS` the pattern is refused, below
it the estimate is charged to the run's memory budget (``memguard``) before
compiling. Patterns longer than :data:`MAX_PATTERN` characters are refused
(the parser is pure Python: seconds per megabyte).

The surface is ``re``'s: :class:`Pattern` and :class:`Match` wrap ``regex``'s
objects and expose exactly the attributes of ``re.Pattern``/``re.Match``
(``regex``'s extras, such as ``Match.expandf`` with its ``str.format``
templates or ``Match.re`` handing out the unwrapped pattern, are not
reachable), flags are ``re``'s values, and ``re.error`` is ``regex``'s error
class so ``except re.error`` catches pattern errors. Syntax ``re`` rejects
but ``regex`` accepts (``\\p{L}``, ``\\G``, ``[\\d-z]``) compiles.
"""

from __future__ import annotations

import enum
import itertools
import operator
import re
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, Protocol

from scriptgate.sandbox.guards.boundary import register_holdable
from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import base_len, exact_copy
from scriptgate.sandbox.guards.memory import MAX_SEQUENCE, charge_bytes

__all__ = [
    "BUDGET_NAME",
    "FIRST_SLICE",
    "MAX_PATTERN",
    "MAX_REPEAT_UNITS",
    "SLICE_PER_CHAR",
    "Match",
    "Pattern",
    "SandboxFlag",
    "make_re",
    "repeat_units",
]

BUDGET_NAME = "__budget__"
"""The name of the run's budget in the script's globals (scripts cannot read it)."""

FIRST_SLICE = 0.25
"""Seconds a regex call may run before the event loop gets a turn (plus :data:`SLICE_PER_CHAR`)."""

SLICE_PER_CHAR = 5e-7
"""Extra first-slice seconds per character of the subject (linear patterns run at ~0.1 µs/char)."""

MAX_PATTERN = 100_000
"""Longest pattern (in characters) the stand-in compiles."""

MAX_REPEAT_UNITS = 1_000_000
"""Largest unrolled size of a pattern's counted repeats (:func:`repeat_units`) it compiles."""

_MARGIN = 0.02
"""Seconds before the deadline the last slice ends (``regex`` overshoots its timeout)."""

_UNIT_BYTES = 256
"""Bytes ``regex`` allocates per unrolled repeat unit when compiling (measured: ~250)."""

_CACHE_MAX = 512
_CACHE_UNITS = 1_000
_CACHE_LENGTH = 1_000
_MAXSIZE = sys.maxsize


# re's flag values -> regex's (ASCII differs: 256 in re, 128 in regex; 256 is VERSION1 there)
def _sandbox_flag() -> Any:
    """``re.RegexFlag``'s twin whose combinations are never kept (findings18 B05).

    ``Flag`` keeps every value it is called with (``re.I | n``, ``type(re.I)(n)``) as a
    pseudo-member in its class's ``_value2member_map_``: on the host's own ``RegexFlag``
    each run left what it made there for good (100 MiB for 300,000 values, or a script
    int subclass with its class). This class has the same members, reprs (``re.I``) and
    arithmetic; a combination is made afresh each time and dropped from the map at once.
    """
    make: Any = enum.IntFlag
    flag: Any = make(
        "RegexFlag",
        {member.name: member.value for member in re.RegexFlag},
        boundary=enum.KEEP,
        module="re",
    )
    keep: Any = enum.IntFlag._missing_.__func__  # type: ignore[attr-defined]

    def _missing_(cls: Any, value: Any) -> Any:
        member = keep(cls, value)
        cls._value2member_map_.pop(value, None)
        return member

    setattr(flag, "_missing_", classmethod(_missing_))  # noqa: B010 - an enum's hook
    for name in ("__repr__", "__str__", "_numeric_repr_"):  # `re.I`, as re shows it
        setattr(flag, name, getattr(re.RegexFlag, name))
    return flag


SandboxFlag: Any = _sandbox_flag()
"""The class of the ``re`` stand-in's flags."""

_SAME_MASK = int(re.I | re.L | re.M | re.S | re.U | re.X)
_RE_ASCII = int(re.A)
_REGEX_ASCII = 128
_REGEX_V1 = 0x100

_QUANTIFIER = re.compile(r"\{\s*(\d*)\s*(?:,\s*\d*\s*)?\}")
_GROUP_END = frozenset(")}*+?")


class _Budget(Protocol):
    stop: BaseException | None
    deadline: float | None
    pause: Callable[[], None] | None

    def trip(self, kind: str, message: str) -> BaseException: ...

    def timeout_message(self) -> str: ...


def _current_budget() -> _Budget | None:
    """The budget of the run whose script frame is innermost on the stack."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            budget: _Budget | None = frame.f_globals.get(BUDGET_NAME)
            return budget
        frame = frame.f_back
    return None


def _too_big(what: str) -> NoReturn:
    refuse_size(f"{what} would be too large for the sandbox")  # a limit: ends the script


def repeat_units(pattern: str) -> int:
    """An upper bound of how many units ``regex`` unrolls the counted repeats of ``pattern`` into.

    Every ``{m}``/``{m,}``/``{m,n}`` in the text counts, even inside a class or
    after a backslash (an over-estimate only). A repeat counts ``m`` units
    times the counts of every later repeat that could apply to a group around
    it: one after ``)`` (or after another quantifier, or anywhere when the
    pattern may hold verbose comments, which can hide a ``)``). So
    ``(?:a{100}){100}`` is 10,100 units and ``\\d{4}-\\d{2}-\\d{2}`` 8.
    """
    counts: list[tuple[int, bool]] = []
    anywhere = "#" in pattern
    cap = MAX_REPEAT_UNITS + 1
    for found in _QUANTIFIER.finditer(pattern):
        digits = found.group(1)
        count = (int(digits) if len(digits) < 16 else cap) if digits else 0
        at = found.start() - 1
        while at >= 0 and pattern[at].isspace():
            at -= 1
        outer = anywhere or (at >= 0 and pattern[at] in _GROUP_END)
        counts.append((count, outer))
    total = 0
    product = 1
    for count, outer in reversed(counts):
        total = min(total + count * product, cap)
        if outer:
            product = min(product * max(count, 1), cap)
    return total


def _to_regex_flags(flags: int) -> int:
    value = flags & _SAME_MASK
    if flags & _RE_ASCII:
        value |= _REGEX_ASCII
    return value


def _to_re_flags(flags: int, is_bytes: bool) -> int:
    value = flags & _SAME_MASK
    if flags & _REGEX_ASCII and not is_bytes:
        value |= _RE_ASCII
    return value


def _subject_length(string: Any) -> int:
    try:
        return base_len(string)  # a str subclass's __len__ never runs
    except TypeError:
        return 0


def _next_slice(budget: _Budget, slice_: float) -> tuple[float, bool]:
    """The timeout of the next attempt, and whether it is the last one (ends at the deadline).

    The last one ends :data:`_MARGIN` before the deadline: ``regex`` notices its
    timeout a few milliseconds late, and the stop must be reported by the
    deadline (in process isolation the parent kills a worker shortly after it).
    """
    stop = budget.stop
    if stop is not None:
        raise stop
    deadline = budget.deadline
    if deadline is None:
        return slice_, False
    remaining = deadline - time.monotonic() - _MARGIN
    if remaining <= 0:
        raise budget.trip("limit", budget.timeout_message())
    if remaining <= slice_:
        return remaining, True
    return slice_, False


def _timed(budget: _Budget | None, method: Any, args: tuple[Any, ...], string: Any) -> Any:
    """``method(*args, timeout=...)`` in slices up to the run's deadline (module docstring)."""
    if budget is None:
        return method(*args)
    length = len(string) if type(string) is str else _subject_length(string)
    slice_ = FIRST_SLICE + length * SLICE_PER_CHAR
    while True:
        timeout, final = _next_slice(budget, slice_)
        try:
            return method(*args, timeout=timeout)
        except TimeoutError:
            _slice_ran_out(budget, final)
        slice_ *= 2


def _slice_ran_out(budget: _Budget, final: bool) -> None:
    """After a slice's ``TimeoutError``: the run's timeout if it was the last slice; else
    let the loop run (an abort, the watchdog, other runs) before a longer slice starts."""
    if final:
        raise budget.trip("limit", budget.timeout_message()) from None
    pause = budget.pause
    if pause is not None:
        pause()


def _once(budget: _Budget | None, method: Any, args: tuple[Any, ...]) -> Any:
    """``method(*args, timeout=...)`` once, up to the deadline (callable replacements)."""
    if budget is None:
        return method(*args)
    stop = budget.stop
    if stop is not None:
        raise stop
    deadline = budget.deadline
    if deadline is None:
        return method(*args)
    remaining = deadline - time.monotonic() - _MARGIN
    if remaining <= 0:
        raise budget.trip("limit", budget.timeout_message())
    try:
        return method(*args, timeout=remaining)
    except TimeoutError as exc:
        if str(exc) == "regex timed out" and time.monotonic() >= deadline - 2 * _MARGIN:
            raise budget.trip("limit", budget.timeout_message()) from None
        raise  # the callable's own TimeoutError


PIECED_FROM = 1 << 20
"""Subjects from this many characters on are scanned in pieces by ``findall``/``split``."""
_PIECE = 4096
_GROUP = operator.methodcaller("group")
_GROUPS = operator.methodcaller("groups", "")
_FIRST = operator.itemgetter(0)


def _pieced(string: Any) -> bool:
    """Whether ``findall``/``split`` of ``string`` goes through :func:`_pieces`.

    One C call of ``findall('', s)`` makes ``len(s)`` matches; ``regex`` counts its
    timeout in CPU time, so on a loaded host it ran 2.3 s under a 1 s deadline (10.7 s
    under 5 s; findings10 F07). A long exact str/bytes subject gets one C call of at
    most a quarter of the time left (:func:`_first_call`: the common case, at C speed);
    past it the subject is scanned in pieces of matches, with the wall-clock deadline, the
    stop flag and the memory budget checked between pieces.
    """
    kind = type(string)
    return (kind is str or kind is bytes) and len(string) >= PIECED_FROM


def _first_call(
    budget: _Budget, method: Any, args: tuple[Any, ...], string: Any
) -> list[Any] | None:
    """``method(*args)`` in one C call with a quarter of the time left at most, else ``None``.

    ``regex``'s timeout is CPU time: with at most a quarter of the wall time left, the
    call ends before the deadline even on a host loaded 4:1. A call that needs more
    (``None``) is scanned again in :func:`_pieces`, which reads the wall clock.
    """
    slice_ = FIRST_SLICE + len(string) * SLICE_PER_CHAR
    timeout, _ = _next_slice(budget, slice_)  # the stop flag; the deadline's own slice
    if budget.deadline is not None:
        remaining = budget.deadline - time.monotonic() - _MARGIN
        timeout = min(timeout, remaining / 4)
    try:
        done: list[Any] = method(*args, timeout=max(timeout, 0.0))
    except TimeoutError:
        pass
    else:
        return done
    pause = budget.pause
    if pause is not None:
        pause()
    return None


def _pieces(
    budget: _Budget, compiled: Any, string: Any, pos: int, endpos: int
) -> Iterator[list[Any]]:
    """The raw ``regex`` matches of ``string`` in lists of up to :data:`_PIECE`.

    Each scanner step has the slice's timeout; after one a fresh scanner starts where
    the last whole piece ended (its empty match there skipped), as ``finditer`` does.
    Between pieces the wall-clock deadline and the stop flag are checked
    (:func:`_next_slice`) and the piece's list slots charged to the memory budget.
    """
    slice_ = FIRST_SLICE + len(string) * SLICE_PER_CHAR
    skip: int | None = None
    while True:
        timeout, final = _next_slice(budget, slice_)
        scanner = compiled.finditer(string, pos, endpos, timeout=timeout)
        try:
            while True:
                piece = list(itertools.islice(scanner, _PIECE))
                if skip is not None and piece and piece[0].span() == (skip, skip):
                    del piece[0]
                skip = None
                if not piece:
                    return
                last = piece[-1]
                start, pos = last.span()
                skip = pos if start == pos else None
                charge_bytes(len(piece) * 8)
                yield piece
                _next_slice(budget, slice_)  # the wall clock and the stop flag
        except TimeoutError:
            _slice_ran_out(budget, final)
        slice_ *= 2


def _split(budget: _Budget, compiled: Any, string: Any, maxsplit: int) -> list[Any]:
    """``compiled.split(string, maxsplit)`` from :func:`_pieces` (``re.split``'s parts)."""
    parts: list[Any] = []
    last = 0
    left = maxsplit if maxsplit > 0 else -1
    if maxsplit < 0:
        return [string]
    for piece in _pieces(budget, compiled, string, 0, _MAXSIZE):
        for found in piece:
            start, end = found.span()
            parts.append(string[last:start])
            parts += found.groups()
            last = end
            left -= 1
            if left == 0:
                parts.append(string[last:])
                return parts
    parts.append(string[last:])
    return parts


def _literal(repl: Any, string: Any) -> bool:
    """Whether ``repl`` is a template without escapes or group references, of ``string``'s type."""
    if type(repl) is str:
        return type(string) is str and "\\" not in repl
    return type(repl) is bytes and type(string) is bytes and b"\\" not in repl


def _substituted(
    budget: _Budget, compiled: Any, repl: Any, string: Any, most: int, counting: bool
) -> Any:
    """``compiled.sub(repl, string, most)`` (``subn`` if ``counting``) from :func:`_pieces`.

    ``repl`` is literal (:func:`_literal`): each match is replaced by it as is.
    """
    out: list[Any] = []
    last = 0
    done = 0
    if most >= 0:
        for piece in _pieces(budget, compiled, string, 0, _MAXSIZE):
            for found in piece:
                start, end = found.span()
                out.append(string[last:start])
                out.append(repl)
                last = end
                done += 1
                if done == most:
                    break
            else:
                continue
            break
    out.append(string[last:])
    text = string[:0].join(out)
    return (text, done) if counting else text


def _check_template(template: Any, string: Any) -> None:
    # a replacement template can repeat the whole subject per match
    if (
        isinstance(template, (str, bytes))
        and base_len(template) > 1
        and (_subject_length(string) + 1) * base_len(template) > MAX_SEQUENCE
    ):
        _too_big("a regular expression replacement")


class Match:
    """A match, with exactly the surface of ``re.Match`` (wraps a ``regex`` match)."""

    __slots__ = ("_match", "_pattern")

    def __init__(self, match: Any, pattern: Pattern) -> None:
        self._match = match
        self._pattern = pattern

    def group(self, *groups: Any) -> Any:
        """One or more subgroups of the match (``re.Match.group``)."""
        return self._match.group(*groups)

    def __getitem__(self, group: Any) -> Any:
        return self._match[group]

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        """All subgroups (``re.Match.groups``)."""
        return tuple(self._match.groups(default))

    def groupdict(self, default: Any = None) -> dict[str, Any]:
        """The named subgroups (``re.Match.groupdict``)."""
        return dict(self._match.groupdict(default))

    def start(self, group: Any = 0) -> int:
        """Where ``group`` starts (``re.Match.start``)."""
        value: int = self._match.start(group)
        return value

    def end(self, group: Any = 0) -> int:
        """Where ``group`` ends (``re.Match.end``)."""
        value: int = self._match.end(group)
        return value

    def span(self, group: Any = 0) -> tuple[int, int]:
        """``(start, end)`` of ``group`` (``re.Match.span``)."""
        return tuple(self._match.span(group))

    def expand(self, template: Any) -> Any:
        """``template`` with group references substituted (``re.Match.expand``)."""
        if isinstance(template, (str, bytes)) and base_len(template) > 1:
            # every group reference starts with a backslash: '\\g<0>' * 1000 of a long match
            refs = template.count("\\") if isinstance(template, str) else template.count(b"\\")
            longest = max((end - start for start, end in self._match.regs if start >= 0), default=0)
            if base_len(template) + refs * longest > MAX_SEQUENCE:
                _too_big("an expanded match template")
        return self._match.expand(exact_copy(template))  # never cached as a subclass (B09)

    @property
    def string(self) -> Any:
        """The subject string."""
        return self._match.string

    @property
    def re(self) -> Pattern:
        """The pattern that produced the match."""
        return self._pattern

    @property
    def pos(self) -> int:
        """The ``pos`` the search started from."""
        value: int = self._match.pos
        return value

    @property
    def endpos(self) -> int:
        """The ``endpos`` of the search."""
        value: int = self._match.endpos
        return value

    @property
    def lastindex(self) -> int | None:
        """The index of the last matched group."""
        value: int | None = self._match.lastindex
        return value

    @property
    def lastgroup(self) -> str | None:
        """The name of the last matched group."""
        value: str | None = self._match.lastgroup
        return value

    @property
    def regs(self) -> tuple[tuple[int, int], ...]:
        """The spans of all groups."""
        return tuple(tuple(span) for span in self._match.regs)

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<re.Match object; span={self.span()!r}, match={self._match.group()!r}>"


class Pattern:
    """A compiled pattern, with exactly the surface of ``re.Pattern`` (see the module docstring)."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, compiled: Any, pattern: Any, flags: int) -> None:
        self._compiled = compiled
        self._pattern = pattern
        self._flags = flags

    @property
    def pattern(self) -> Any:
        """The pattern text."""
        return self._pattern

    @property
    def flags(self) -> int:
        """The flags (``re``'s values)."""
        return self._flags

    @property
    def groups(self) -> int:
        """The number of capturing groups."""
        value: int = self._compiled.groups
        return value

    @property
    def groupindex(self) -> types.MappingProxyType[str, int]:
        """Group names to numbers (read-only, as in ``re``)."""
        return types.MappingProxyType(dict(self._compiled.groupindex))

    def _wrap(self, match: Any) -> Match | None:
        return None if match is None else Match(match, self)

    def match(self, string: Any, pos: Any = 0, endpos: Any = _MAXSIZE) -> Match | None:
        """A match at the start of ``string`` (``re.Pattern.match``)."""
        args = (string, operator.index(pos), operator.index(endpos))
        found = _timed(_current_budget(), self._compiled.match, args, string)
        return None if found is None else Match(found, self)

    def fullmatch(self, string: Any, pos: Any = 0, endpos: Any = _MAXSIZE) -> Match | None:
        """A match of the whole ``string`` (``re.Pattern.fullmatch``)."""
        args = (string, operator.index(pos), operator.index(endpos))
        found = _timed(_current_budget(), self._compiled.fullmatch, args, string)
        return None if found is None else Match(found, self)

    def search(self, string: Any, pos: Any = 0, endpos: Any = _MAXSIZE) -> Match | None:
        """The first match anywhere in ``string`` (``re.Pattern.search``)."""
        args = (string, operator.index(pos), operator.index(endpos))
        found = _timed(_current_budget(), self._compiled.search, args, string)
        return None if found is None else Match(found, self)

    def findall(self, string: Any, pos: Any = 0, endpos: Any = _MAXSIZE) -> list[Any]:
        """Every match's text or groups (``re.Pattern.findall``)."""
        args = (string, operator.index(pos), operator.index(endpos))
        budget = _current_budget()
        if budget is not None and _pieced(string):
            first = _first_call(budget, self._compiled.findall, args, string)
            if first is not None:
                return first
            groups = self._compiled.groups
            found: list[Any] = []
            for piece in _pieces(budget, self._compiled, string, args[1], args[2]):
                if groups == 0:
                    found += map(_GROUP, piece)
                elif groups == 1:
                    found += map(_FIRST, map(_GROUPS, piece))
                else:
                    found += map(_GROUPS, piece)
            return found
        whole: list[Any] = _timed(budget, self._compiled.findall, args, string)
        return whole

    def split(self, string: Any, maxsplit: Any = 0) -> list[Any]:
        """``string`` split at the matches (``re.Pattern.split``)."""
        args = (string, operator.index(maxsplit))
        budget = _current_budget()
        if budget is not None and _pieced(string):
            first = _first_call(budget, self._compiled.split, args, string)
            return _split(budget, self._compiled, string, args[1]) if first is None else first
        parts: list[Any] = _timed(budget, self._compiled.split, args, string)
        return parts

    def _substitute(self, repl: Any, string: Any, count: Any, counting: bool) -> Any:
        method = self._compiled.subn if counting else self._compiled.sub
        most = operator.index(count)
        if callable(repl):
            wrapped = self._wrap

            def replace(match: Any) -> Any:
                return repl(wrapped(match))

            return _once(_current_budget(), method, (replace, string, most))
        # an exact copy: `regex` caches templates by value, a str subclass (and its class)
        # stayed in that process-wide cache after the run (findings18 B09)
        repl = exact_copy(repl)
        _check_template(repl, string)
        budget = _current_budget()
        if budget is not None and _pieced(string) and _literal(repl, string):
            first = _first_call(budget, method, (repl, string, most), string)
            if first is not None:
                return first
            return _substituted(budget, self._compiled, repl, string, most, counting)
        return _timed(budget, method, (repl, string, most), string)

    def sub(self, repl: Any, string: Any, count: Any = 0) -> Any:
        """``string`` with matches replaced (``re.Pattern.sub``)."""
        return self._substitute(repl, string, count, False)

    def subn(self, repl: Any, string: Any, count: Any = 0) -> tuple[Any, int]:
        """``(new string, number of replacements)`` (``re.Pattern.subn``)."""
        result: tuple[Any, int] = self._substitute(repl, string, count, True)
        return result

    def finditer(self, string: Any, pos: Any = 0, endpos: Any = _MAXSIZE) -> Iterator[Match]:
        """The matches, lazily (``re.Pattern.finditer``): charged per item to the calling run."""
        budget = _current_budget()
        items = self._iterate(budget, string, operator.index(pos), operator.index(endpos))
        hooks = None if budget is None else getattr(budget, "hooks", None)
        getiter = None if hooks is None else hooks.get("_getiter_")
        return items if getiter is None else getiter(items)  # one step per match

    def _iterate(
        self, budget: _Budget | None, string: Any, pos: int, endpos: int
    ) -> Iterator[Match]:
        compiled = self._compiled
        if budget is None:
            for found in compiled.finditer(string, pos, endpos):
                yield Match(found, self)
            return
        slice_ = FIRST_SLICE + _subject_length(string) * SLICE_PER_CHAR
        skip: int | None = None  # an empty match already yielded at this position
        while True:
            timeout, final = _next_slice(budget, slice_)
            try:
                # each step of a scanner has the timeout; after a timeout the scan
                # starts again where the last match ended (a fresh scanner there
                # yields what the old one would have, except an empty match at
                # that very position, which was yielded already)
                for found in compiled.finditer(string, pos, endpos, timeout=timeout):
                    start, end = found.span()
                    if skip is not None:
                        if start == end == skip:
                            skip = None
                            continue
                        skip = None
                    pos = end
                    skip = end if start == end else None
                    yield Match(found, self)
                return
            except TimeoutError:
                if final:
                    raise budget.trip("limit", budget.timeout_message()) from None
            pause = budget.pause
            if pause is not None:
                pause()
            slice_ *= 2

    def __eq__(self, other: object) -> bool:
        if type(other) is not Pattern:
            return NotImplemented
        return (type(self._pattern), self._pattern, self._flags) == (
            type(other._pattern),
            other._pattern,
            other._flags,
        )

    def __hash__(self) -> int:
        return hash((self._pattern, self._flags))

    def __repr__(self) -> str:
        text = repr(self._pattern)[:200]
        flags = self._flags
        if isinstance(self._pattern, str):
            flags &= ~int(re.U)
        if flags:
            return f"re.compile({text}, {SandboxFlag(flags)!r})"
        return f"re.compile({text})"


_cache: dict[tuple[type, Any, int], Pattern] = {}


def _compile(pattern: Any, flags: Any = 0) -> Pattern:
    if type(pattern) is Pattern:
        if flags:
            raise ValueError("cannot process flags argument with a compiled pattern")
        return pattern
    if not isinstance(pattern, (str, bytes)):
        raise TypeError("first argument must be string or compiled pattern")
    # an exact copy: the regex library keeps patterns in module-level caches, where a
    # script's str subclass would keep the run's class after the run (sixth attack, F06)
    pattern = exact_copy(pattern)
    flags = operator.index(flags)
    exact = type(pattern) is str or type(pattern) is bytes
    key = (type(pattern), pattern, flags)
    if exact:
        cached = _cache.get(key)
        if cached is not None:
            return cached
    import regex  # imported on a script's first `import re` (~0.1 s)

    if base_len(pattern) > MAX_PATTERN:
        _too_big(f"a regular expression of {base_len(pattern)} characters (at most {MAX_PATTERN})")
    text = pattern if isinstance(pattern, str) else pattern.decode("latin-1")
    units = repeat_units(text)
    if units > MAX_REPEAT_UNITS:
        _too_big("a regular expression's repetition counts")
    charge_bytes((units + base_len(pattern)) * _UNIT_BYTES)  # memguard: before compiling
    compiled = regex.compile(pattern, _to_regex_flags(flags), cache_pattern=False)
    if compiled.flags & _REGEX_V1:
        raise regex.error("VERSION1 patterns are not available in the sandbox")
    result = Pattern(compiled, pattern, _to_re_flags(compiled.flags, isinstance(pattern, bytes)))
    if exact and units <= _CACHE_UNITS and len(pattern) <= _CACHE_LENGTH:
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = result
    return result


def make_re() -> dict[str, Any]:
    """The members of the ``re`` stand-in (stateless: shared by every run)."""
    import regex

    def compile(pattern: Any, flags: Any = 0) -> Pattern:
        return _compile(pattern, flags)

    def match(pattern: Any, string: Any, flags: Any = 0) -> Match | None:
        return _compile(pattern, flags).match(string)

    def fullmatch(pattern: Any, string: Any, flags: Any = 0) -> Match | None:
        return _compile(pattern, flags).fullmatch(string)

    def search(pattern: Any, string: Any, flags: Any = 0) -> Match | None:
        return _compile(pattern, flags).search(string)

    def findall(pattern: Any, string: Any, flags: Any = 0) -> list[Any]:
        return _compile(pattern, flags).findall(string)

    def finditer(pattern: Any, string: Any, flags: Any = 0) -> Iterator[Match]:
        return _compile(pattern, flags).finditer(string)

    def split(pattern: Any, string: Any, maxsplit: Any = 0, flags: Any = 0) -> list[Any]:
        return _compile(pattern, flags).split(string, maxsplit)

    def sub(pattern: Any, repl: Any, string: Any, count: Any = 0, flags: Any = 0) -> Any:
        return _compile(pattern, flags).sub(repl, string, count)

    def subn(pattern: Any, repl: Any, string: Any, count: Any = 0, flags: Any = 0) -> Any:
        return _compile(pattern, flags).subn(repl, string, count)

    register_holdable((regex.error,))  # `except re.error as e: e.msg` (the allow-list)
    members: dict[str, Any] = {
        "compile": compile,
        "match": match,
        "fullmatch": fullmatch,
        "search": search,
        "findall": findall,
        "finditer": finditer,
        "split": split,
        "sub": sub,
        "subn": subn,
        "escape": re.escape,
        "error": regex.error,
    }
    for name in ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII", "I", "M", "S", "X", "A"):
        members[name] = SandboxFlag(int(getattr(re, name)))
    return members
