"""The hook functions the policy's rewritten code calls, and the run's budget.

Each guard says which escape it blocks and which test proves it (tests live in
``tests/sandbox/test_guards.py``; attack scripts in ``tests/sandbox/attacks.py``).

Guards are built per run by :func:`make_guards` around a :class:`Budget`, so no
mutable state is shared between runs. Size refusals (``'x' * 10**12``, huge
ints, widths, ``str`` methods…) go through
:func:`scriptgate.sandbox.guards.errors.refuse_size`: they trip the run's budget (bound
in the script's globals as ``STOP_NAME``), so they are final ``"limit"`` errors.

C calls that compare or hash script values outside the compiled operators are
bounded here too (issue 5, :mod:`scriptgate.sandbox.guards.comparisons`): the attribute
guard hands out checking wrappers for the container methods that compare or
hash their argument (``lst.index(x)``, ``d.get(k)``, ``s.add(x)``,
``lst.sort()``…), and every hash feed checks what it hashes, chunk by chunk
(sections "hash feeding" and "comparing and hashing calls" below; tests in
``tests/sandbox/test_compare_calls.py``).
"""

from __future__ import annotations

import builtins as _builtins
import collections
import functools
import itertools
import operator
import re
import string
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

from scriptgate.sandbox.compile.shared import (
    INSPECT_ATTRIBUTES,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
)
from scriptgate.sandbox.guards import comparisons as dagguard
from scriptgate.sandbox.guards.constants import (
    COMPARING_NAMES as _COMPARING_NAMES,
)
from scriptgate.sandbox.guards.constants import (
    DENIED_NAMES as _DENIED_NAMES,
)
from scriptgate.sandbox.guards.constants import (
    ENTRY,
    FAST_RECEIVER_SLOW_NAMES,
    FILENAME,
    MAX_FORMAT_WIDTH,
    format_spec_too_wide,
)
from scriptgate.sandbox.guards.constants import (
    HASHING_METHODS as _HASHING_METHODS,
)
from scriptgate.sandbox.guards.errors import STOP_NAME, ScriptStop, refuse_size
from scriptgate.sandbox.guards.memory import (
    CHECK_FROM,
    METER_NAME,
    MemoryMeter,
    charge_copy,
    charge_sequence,
    check_field,
    guarded_add,
    guarded_extend,
    guarded_iadd,
    guarded_star,
    is_extendable,
)
from scriptgate.sandbox.guards.regex import BUDGET_NAME
from scriptgate.sandbox.guards.sizes import (
    CHECKED_METHOD_TYPES,
    FLAT_TYPES,
    check_render,
    checked_method,
    guarded_print,
    safe_ascii,
    safe_repr,
)
from scriptgate.sandbox.result import Limits

__all__ = [
    "MAX_INT_BITS",
    "MAX_RANGE",
    "MAX_SEQUENCE",
    "Budget",
    "CheckedFeed",
    "OpaqueNamespace",
    "check_value",
    "checked_sort",
    "fed",
    "hash_bounded",
    "hashed_ok",
    "hashed_whole",
    "make_guards",
    "needs_feed",
    "safe_str_format",
]

MAX_SEQUENCE = 10_000_000
"""Longest str/list/tuple a single ``*``, ``%``, format or string method may build."""

MAX_INT_BITS = 1_000_000
"""Largest int (in bits) ``*``, ``**`` and ``<<`` may build."""

MAX_MODPOW_WORK = 100_000_000
"""``pow(a, b, m)``: the most bits(b) x digits(m)**2 allowed (about 0.1-0.3 s of C here)."""

MAX_RANGE = 100_000_000
"""Longest ``range`` a script may create."""

_TICK_CHUNK = 256
PAUSE_INTERVAL = 0.01
"""Seconds a sync script runs before a budget check lets the event loop run."""
_SMALL = 1024
_chain_from_iterable = itertools.chain.from_iterable
_CO_OPTIMIZED = 0x1
SCRIPT_CLASS_MARK = "__scriptgate_script_class__"
"""Class attribute marking classes a script defined (scripts cannot read or write it)."""
_SIZED = frozenset({list, tuple, dict, str, set, frozenset, range, bytes, bytearray})
_SIZED_VIEWS = frozenset({type({}.keys()), type({}.values()), type({}.items())})
_LAZY_SAFE = frozenset(
    {
        types.GeneratorType,
        map,
        filter,
        zip,
        enumerate,
        reversed,
        type(iter([])),
        type(iter(())),
        type(iter("")),
        type(iter(range(0))),
        type(iter({})),
        type(iter({}.values())),
        type(iter({}.items())),
        type(iter(set())),
        type(reversed([])),
    }
)

# ----------------------------------------------------------------------------- budget


class _ChunkEnd:
    """The first item of a chunk of the ``_tk_`` ticker, so the last one popped.

    The tick statement pops it and drops it at once (``_tk_()``); dropping it
    runs its finalizer, which charges the chunk, checks the limits and refills
    the list (:meth:`Budget._chunk_end`). Dropping an object is the only thing
    that can run code when ``list.pop`` reaches a mark, and that costs nothing
    per tick. A finalizer cannot raise: a breached limit trips the budget, whose
    raising hook the next tick calls, and a pause that is due (or anything
    unexpected) makes ``_tk_`` the budget's raising check for the next tick.
    """

    __slots__ = ("_budget",)

    _budget: Budget

    def __del__(self) -> None:
        budget = self._budget
        hooks = budget.hooks
        if hooks is None or budget.stop is not None:
            return
        try:
            hook = budget._chunk_end(False)
        except BaseException:  # a finalizer cannot raise: the next tick's check does
            hook = budget.tick_check
        if budget.stop is None and hook is not budget._pop:
            hooks["_tk_"] = hook


_new_mark = object.__new__
_NONES: dict[int, tuple[None, ...]] = {}
"""Tuples of ``None`` by length: the filling of the ``_tk_`` ticker's chunks."""
_BASE = (None,) * (3 * _TICK_CHUNK)
"""Items the ticker's list keeps under its chunk, so popping never shrinks its allocation."""
_DEPTH_PROBE = 32
"""Script depth the budget check tests first: ``sys._getframe(n)`` walks frames in C."""


class Budget:
    """Steps, wall time, call depth and the stop flag of one run.

    ``stop`` is set once (by a breached limit, the deadline, or an abort) and is
    final: every later check raises it again.

    Every function entry and ``while`` iteration of the script runs the tick
    statement ``_tk_()``. Between two real checks ``_tk_`` is ``pop`` of a list
    of ``None`` (a specialised builtin call, no Python frame: the cheapest
    counting step we measured), the chunk, whose first item is a :class:`_ChunkEnd`: when that one is popped and
    dropped, its finalizer charges the chunk, checks the limits and refills the
    list. A chunk is never longer than the number of calls that could still nest
    without passing ``max_recursion``, nor than the steps left: so the call that
    would pass either limit always meets :meth:`tick_check`, the raising form of
    the same check, at its first tick.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.max_steps = limits.max_steps
        self.used = 0
        self.started = time.monotonic()
        self.deadline = None if limits.timeout is None else self.started + limits.timeout
        self.ticker: Iterator[None] = iter(())
        """The iterator behind ``_tick_`` (set by :meth:`make_tick`)."""
        self.pause: Callable[[], None] | None = None
        """Set by the engine for sync scripts in a greenlet: lets the event loop run."""
        self.next_pause = self.started + PAUSE_INTERVAL
        self.stop: ScriptStop | None = None
        self.hooks: dict[str, Any] | None = None
        """The script's globals: on a trip the tick hooks there are replaced."""
        self.memory = MemoryMeter.create(limits.memory_bytes, self)
        """The in-process memory budget (``None``: no limit or no ``/proc``); see memguard."""
        self.fixed_floor = False
        """Set by the engine for sync scripts: the frames under ``__script__`` never change."""
        self._floor: frozenset[int] | None = None
        self._floor_frames: list[types.FrameType] = []
        self._probes: tuple[int, ...] = ()
        self._ticks: list[Any] = []
        self._pop = self._ticks.pop
        self._chunk = 0
        """Ticks of the current chunk not charged yet."""
        self.tick_check: Callable[[], None] = self._tick_check
        """What ``_tk_`` is when the next tick must check and may raise (a bound method made once)."""

    def first_tick(self) -> Callable[[], Any]:
        """The ``_tk_`` hook a run starts with: its first chunk (the script starts at depth 0)."""
        return self._fill(self.limits.max_recursion)

    def close(self) -> None:
        """Forget the globals, the frames and the ticker of a finished run (breaks cycles)."""
        self.hooks = None
        self.pause = None
        self._floor = None
        self._floor_frames = []
        self._ticks.clear()

    def trip(self, kind: str, message: str) -> ScriptStop:
        """Set the stop flag (first reason wins) and return the exception to raise."""
        if self.stop is None:
            self.stop = ScriptStop("aborted" if kind == "aborted" else "limit", message)
            hooks = self.hooks
            if hooks is not None:
                hooks["_tick_"] = self._raise_stop
                hooks["_tk_"] = self._raise_stop
        return self.stop

    def check(self) -> None:
        """Raise the stop exception if the run was stopped."""
        if self.stop is not None:
            raise self.stop

    def timeout_message(self) -> str:
        """The text of a timeout stop."""
        return f"Script timed out after {self.limits.timeout:g} s"

    def spend(self, steps: int) -> None:
        """Charge ``steps``; check the step limit, the deadline and the stop flag."""
        if self.stop is not None:
            raise self.stop
        self.used += steps
        if self.max_steps is not None and self.used > self.max_steps:
            raise self.trip("limit", f"Script exceeded the step limit ({self.max_steps} steps)")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self.trip("limit", self.timeout_message())

    def _raise_stop(self, *args: Any) -> NoReturn:
        assert self.stop is not None
        raise self.stop

    def script_depth(self) -> int:
        """How many script function calls are on the current stack (``__script__`` excluded)."""
        return self._walk(2)

    def _walk(self, offset: int) -> int:
        # the exact count, from the frame `offset` above this one down to
        # `__script__`; a sync script's frames from `__script__` down are kept
        # as the floor `_room` tests against
        depth = 0
        frame: types.FrameType | None = sys._getframe(offset)
        while frame is not None:
            code = frame.f_code
            if code.co_filename == FILENAME and code.co_flags & _CO_OPTIMIZED:
                name = code.co_name
                if name == ENTRY:  # the bottom of the script's own stack
                    if self.fixed_floor and self._floor is None:
                        floor: list[types.FrameType] = []
                        while frame is not None:
                            floor.append(frame)
                            frame = frame.f_back
                        self._floor_frames = floor
                        self._floor = frozenset(map(id, floor))
                        # probe depths: the floor's height less one first (the frame
                        # that far up always exists), then _DEPTH_PROBE
                        most = self.limits.max_recursion // 2
                        self._probes = tuple(
                            sorted({p for p in (len(floor) - 1, _DEPTH_PROBE) if 0 < p <= most})
                        )
                    return depth
                if name[0] != "<" or name == "<lambda>":
                    depth += 1
            frame = frame.f_back
        return depth

    def _room(self, offset: int) -> int:
        """How many more calls may nest before the limit (trips the budget past it).

        ``offset``: how far up the stack (from this frame) the script's frames may
        start. The common case costs one or two ``sys._getframe`` (a walk in C):
        when the frame ``n`` frames further up is ``__script__`` or under it, at
        most ``n`` frames are script calls. Otherwise the frames are counted.
        """
        limit = self.limits.max_recursion
        floor = self._floor
        if floor is not None:
            for probe in self._probes:
                try:
                    frame = sys._getframe(offset + probe)
                except ValueError:  # the whole stack is shorter: so is the script's part
                    return limit - probe
                if id(frame) in floor:
                    return limit - probe
        depth = self._walk(offset + 1)
        if depth > limit:
            raise self.trip("limit", f"Script exceeded the recursion limit ({limit} nested calls)")
        return limit - depth

    def _fill(self, room: int) -> Callable[[], Any]:
        # the next chunk: at most `room` ticks (and the steps left) before the
        # next check; returns what `_tk_` must be from now on
        if room > _TICK_CHUNK:
            room = _TICK_CHUNK
        if self.max_steps is not None and room > self.max_steps - self.used:
            room = self.max_steps - self.used
        if room <= 0:
            return self.tick_check
        ticks = self._ticks
        if not ticks and self.used:
            ticks.extend(_BASE)  # from the second chunk on (a short run never pays it)
        mark = _new_mark(_ChunkEnd)
        mark._budget = self
        ticks.append(mark)
        if room > 1:
            nones = _NONES.get(room - 1)
            if nones is None:
                nones = _NONES[room - 1] = (None,) * (room - 1)
            ticks.extend(nones)
        self._chunk = room
        return self._pop

    def _chunk_end(self, pausing: bool) -> Callable[[], Any]:
        """Charge the ticks not charged yet, check the limits, refill: the next ``_tk_``.

        Raises the stop of a breached limit. ``pausing``: whether the loop may
        get its turn here (not in a finalizer: then the next tick pauses).
        """
        if self.stop is not None:
            raise self.stop
        self.used += self._chunk
        self._chunk = 0
        if self.max_steps is not None and self.used > self.max_steps:
            raise self.trip("limit", f"Script exceeded the step limit ({self.max_steps} steps)")
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            raise self.trip("limit", self.timeout_message())
        memory = self.memory
        if memory is not None and now >= memory.next_poll:
            memory.poll()  # reads /proc/self/statm at most every few ms
        pause = self.pause
        if pause is not None and now >= self.next_pause:
            if not pausing:
                return self.tick_check
            # a sync script on the loop's thread gives the loop a turn every
            # PAUSE_INTERVAL s (aborts, other runs, the watchdog); see engine
            pause()
            self.next_pause = time.monotonic() + PAUSE_INTERVAL
        # frames up from `_room`: _room, this, __del__ or tick_check, the script
        return self._fill(self._room(3))

    def _tick_check(self) -> None:
        """``_tk_()`` when the next tick must check: charge it, check, and start a chunk."""
        self._chunk += 1
        hook = self._chunk_end(True)
        hooks = self.hooks
        if hooks is not None and self.stop is None:
            hooks["_tk_"] = hook

    def _check_chunk(self, steps: int) -> int:
        """The slow path of ``_tick_`` and of iteration: charge, check, size the next chunk.

        The next check comes at most ``limit + 1 - depth`` ticks later: every
        function entry ticks, so the depth cannot pass the limit unseen.
        """
        self.spend(steps)
        if self.memory is not None:
            self.memory.poll()  # at most every few ms: reads /proc/self/statm
        pause = self.pause
        if pause is not None and time.monotonic() >= self.next_pause:
            pause()
            self.next_pause = time.monotonic() + PAUSE_INTERVAL
        return max(1, min(_TICK_CHUNK, self._room(2) + 1))  # the check comes at the next tick

    def make_tick(self) -> Callable[[], None]:
        """``_tick_``: the per-item check of ``async for`` and the guards, in C between checks.

        The real check (steps, deadline, stop flag, call depth) runs every few
        hundred ticks. When the budget trips, :meth:`trip` replaces the hook in
        the script's globals by one that raises at once, so a tripped budget is
        seen by the very next tick.
        """
        check = self._check_chunk
        repeat = itertools.repeat

        def chunks() -> Iterator[Iterator[None]]:
            # C-level between checks: each tick is `next()` on an itertools.repeat
            # inside an itertools.chain; Python runs only once per chunk.
            interval = 1
            while True:
                # runs on the tick that exhausted the previous chunk, whose
                # `interval` steps it charges; that tick takes this chunk's first item
                interval = check(interval)
                yield repeat(None, interval)

        self.ticker = itertools.chain.from_iterable(chunks())
        return self.ticker.__next__


# ----------------------------------------------------------------------------- value checks

_FORBIDDEN_TYPES: tuple[type, ...] = (
    types.ModuleType,
    types.FrameType,
    types.TracebackType,
    types.CodeType,
    types.CellType,
    functools.partial,
    string.Formatter,
    types.MappingProxyType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)
_FORBIDDEN_VALUES = frozenset(
    id(v)
    for v in (
        type,
        object,
        super,
        property,
        classmethod,
        staticmethod,
        _builtins,
        sys,
        string.Formatter,
        types.FunctionType,
        types.CodeType,
    )
)
_SAFE_BUILTIN_FUNCTION_NAMES = frozenset(
    {
        "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "hex", "isinstance",
        "issubclass", "len", "max", "min", "next", "oct", "ord", "repr", "round", "sorted", "sum",
    }
)  # fmt: skip
_REAL_BUILTINS = frozenset(
    id(v)
    for name, v in vars(_builtins).items()
    if isinstance(v, types.BuiltinFunctionType) and name not in _SAFE_BUILTIN_FUNCTION_NAMES
)
_FUNCTION_MODULES = frozenset({"math", "time", "_functools", "_random", "itertools", "_json"})
"""Modules whose C functions a script may hold (those the stand-in modules expose)."""
_PLAIN = frozenset(
    {str, int, float, bool, type(None), list, dict, tuple, set, frozenset, complex, range, slice}
)
_WRITABLE = frozenset(
    {collections.Counter, collections.defaultdict, collections.OrderedDict, collections.deque}
)
_FAST_RECEIVERS = frozenset(
    {list, dict, tuple, set, frozenset, int, float, bool, complex, type(None), range, slice}
)
"""Exact types whose public attributes never need :func:`check_value` (``str`` has wrappers)."""
_SLOW_NAMES = FAST_RECEIVER_SLOW_NAMES
_SLICE_COPIES = frozenset({str, list, tuple, bytes, bytearray})
_COPYING_STR_METHODS = frozenset(
    {
        "upper", "lower", "casefold", "swapcase", "title", "capitalize", "strip", "lstrip",
        "rstrip", "split", "rsplit", "splitlines", "encode", "removeprefix", "removesuffix",
    }
)  # fmt: skip
"""str methods whose result is about as long as the receiver (charged for large receivers)."""


def _refuse(what: str) -> NoReturn:
    raise TypeError(f"{what} is not available in the sandbox")


def check_value(value: Any) -> Any:
    """Return ``value`` unless it is something a script must never hold.

    Blocks (test_guards_value_check_*): modules (``datetime.sys``), frames,
    tracebacks, code objects, cells, ``functools.partial`` internals, the
    ``string.Formatter`` machinery, ``type``/``object``/``super`` and other
    class-building tools, descriptors and slot wrappers, and real builtins
    outside the curated set (``eval``, ``open``, ``getattr``…).
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if id(value) in _FORBIDDEN_VALUES:
        _refuse(f"{getattr(value, '__name__', kind.__name__)!r}")
    if isinstance(value, _FORBIDDEN_TYPES):
        _refuse(f"a {kind.__name__} object")
    if isinstance(value, type) and issubclass(value, string.Formatter):
        _refuse("string.Formatter")
    if kind is types.BuiltinFunctionType:
        owner = getattr(value, "__self__", None)
        if id(value) in _REAL_BUILTINS:
            _refuse(f"the builtin {value.__name__!r}")
        if (
            isinstance(owner, types.ModuleType)
            and owner is not _builtins
            and owner.__name__ not in _FUNCTION_MODULES
        ):
            _refuse(f"{owner.__name__}.{value.__name__}")
        if isinstance(owner, str) and value.__name__ in ("format", "format_map"):
            _refuse("str.format on a bound method")
        if value.__name__ == "finditer":
            return checked_method(value, MAX_SEQUENCE)  # sizeguard: Pattern.finditer
    elif kind in CHECKED_METHOD_TYPES:
        return checked_method(value, MAX_SEQUENCE)  # sizeguard: Counter.elements, finditer
    return value


# ----------------------------------------------------------------------------- formatting

_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")
_FORMATTER_PARSE = string.Formatter().parse


def _check_printf(template: str | bytes) -> None:
    text = template if isinstance(template, str) else template.decode("latin-1")
    if "%" not in text:
        return
    for match in _PRINTF.finditer(text):
        for part in match.groups():
            if part == "*":
                raise ValueError("'*' widths in % formatting are not supported in the sandbox")
            if part is not None and (len(part) > 5 or int(part) > MAX_FORMAT_WIDTH):
                refuse_size(f"% format width above {MAX_FORMAT_WIDTH} refused")


def safe_format(value: Any, spec: str = "") -> str:
    """``format(value, spec)`` refusing huge widths (blocks ``format(1, '>10000000000')``)."""
    if type(spec) is not str:
        raise TypeError("format spec must be a str")
    if format_spec_too_wide(spec):
        refuse_size(f"format width above {MAX_FORMAT_WIDTH} refused")
    if type(value) not in FLAT_TYPES:
        check_render(value, "format() of this value")  # sizeguard: no 300 MB renderings
    return _builtins.format(value, spec)


def safe_str_format(
    template: str, args: tuple[Any, ...], kwargs: dict[str, Any], _auto: list[int] | None = None
) -> str:
    """``template.format(*args, **kwargs)`` without attribute or index traversal.

    Fields may be positions or names only (``{0.__class__}`` and ``{x[key]}``
    are refused — CVE-2023-41039), widths are capped and so is the result size.
    """
    out: list[str] = []
    total = 0
    auto = _auto if _auto is not None else [0]
    for literal, field, spec, conversion in _FORMATTER_PARSE(template):
        out.append(literal)
        total += len(literal)
        if field is None:
            continue
        if field == "":
            field = str(auto[0])
            auto[0] += 1
        if field.isdigit():
            value = args[int(field)]
        elif field.isidentifier():
            value = kwargs[field]
        else:
            raise ValueError(
                f"format field {field!r}: only positions and names are allowed in the sandbox"
            )
        if conversion == "r":
            value = safe_repr(value)
        elif conversion == "s":
            check_render(value, "str() of this value")
            value = str(value)
        elif conversion == "a":
            value = safe_ascii(value)
        if spec and "{" in spec:
            spec = safe_str_format(spec, args, kwargs, auto)
        piece = safe_format(value, spec or "")
        total += len(piece)
        if total > MAX_SEQUENCE:
            refuse_size(f"formatted string longer than {MAX_SEQUENCE} characters")
        out.append(piece)
    return "".join(out)


def _bound_str_format(template: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        return safe_str_format(template, args, kwargs)

    return format


def _bound_str_format_map(template: str) -> Callable[[dict[str, Any]], str]:
    def format_map(mapping: dict[str, Any]) -> str:
        return safe_str_format(template, (), dict(mapping))

    return format_map


# ----------------------------------------------------------------------------- size checks


def _too_big(what: str) -> NoReturn:
    refuse_size(f"{what} would be too large for the sandbox")  # a limit: ends the script


def _seq_len(value: Any) -> int | None:
    if isinstance(value, (str, bytes, bytearray, list, tuple)):
        return len(value)
    return None


def guarded_mul(a: Any, b: Any) -> Any:
    """``a * b`` refusing huge results (blocks ``'x' * 10**10``, ``[0] * 10**10``, repeated squaring)."""
    if type(a) is int is type(b) and -0x7FFFFFFF < a < 0x7FFFFFFF > b > -0x7FFFFFFF:
        return a * b  # the common case first: small ints
    ta = type(a)
    tb = type(b)
    if ta is float or tb is float:
        return a * b
    if ta is int and tb is int:
        if a.bit_length() + b.bit_length() > MAX_INT_BITS:
            _too_big("an int product")
        return a * b
    length = _seq_len(a)
    if length is not None and isinstance(b, int) and length * b > MAX_SEQUENCE:
        _too_big("a repeated sequence")
    if length is not None and isinstance(b, int) and length * b > CHECK_FROM:
        charge_sequence(a, length * b)
    length = _seq_len(b)
    if length is not None and isinstance(a, int) and length * a > MAX_SEQUENCE:
        _too_big("a repeated sequence")
    if length is not None and isinstance(a, int) and length * a > CHECK_FROM:
        charge_sequence(b, length * a)
    if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        _too_big("an int product")
    return a * b


def guarded_pow(a: Any, b: Any, mod: Any = None) -> Any:
    """``a ** b`` / ``pow(a, b[, mod])`` refusing huge ints (blocks ``10 ** 10**9``, ``pow(7, 10**9)``).

    A modular power's result is small, but its work is one squaring and one
    quadratic reduction per bit of the exponent: ``pow(3, 10**5000, 10**5000)``
    is one C call of seconds, and the allowed int sizes reach hours. It is
    refused when bits(exponent) x digits(modulus)**2 exceeds
    :data:`MAX_MODPOW_WORK` (a 4096-bit RSA-style power passes).
    """
    if mod is not None:
        if isinstance(b, int) and isinstance(mod, int):
            digits = (abs(mod).bit_length() + 29) // 30  # CPython's 30-bit digits
            if max(abs(b).bit_length(), 1) * digits * digits > MAX_MODPOW_WORK:
                refuse_size("a modular power would take too long for the sandbox")
        return _builtins.pow(a, b, mod)
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and b > 0
        and a not in (0, 1, -1)
        and (b > MAX_INT_BITS or (a.bit_length() - 1) * b > MAX_INT_BITS)
    ):
        _too_big("an int power")
    return a**b


def guarded_lshift(a: Any, b: Any) -> Any:
    """``a << b`` refusing huge ints (blocks ``1 << 10**11``)."""
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and a
        and b > 0
        and a.bit_length() + b > MAX_INT_BITS
    ):
        _too_big("an int shift")
    return a << b


def guarded_mod(a: Any, b: Any) -> Any:
    """``a % b``; for strings, printf widths are capped (blocks ``'%*d' % (10**10, 1)``)."""
    if type(a) is int:
        return a % b
    if isinstance(a, (str, bytes)):
        _check_printf(a)
        if type(b) not in FLAT_TYPES:
            check_render(b, "% formatting of this value")
        result = a % b
        return result
    return a % b


def guarded_ior(a: Any, b: Any) -> Any:
    """``a |= b``; a dict's ``|=`` of an iterable of pairs is fed in chunks (hash flooding).

    ``s |= t`` on sets needs a set ``t`` (its hashes are stored), ints are ints.
    """
    if isinstance(a, dict):
        b = fed(b, "dict")
    a |= b
    return a


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {}


def _build_inplace() -> None:
    import operator

    _INPLACE.update(
        {
            "+=": guarded_iadd,
            "-=": guarded_set_operator(operator.isub),
            "*=": guarded_mul,
            "/=": operator.itruediv,
            "%=": guarded_mod,
            "**=": guarded_pow,
            "<<=": guarded_lshift,
            ">>=": operator.irshift,
            "|=": guarded_set_operator(guarded_ior),
            "^=": guarded_set_operator(operator.ixor),
            "&=": guarded_set_operator(operator.iand),
            "//=": operator.ifloordiv,
            "@=": operator.imatmul,
        }
    )


_HASH_CONTAINERS: tuple[type[Any], ...] = (
    set,
    frozenset,
    dict,
    type({}.keys()),
    type({}.items()),
)


def _checked_elements(value: Any) -> None:
    """Refuse (a size limit) unless hashing and comparing the elements of ``value`` is bounded."""
    _elements_ok(list(dict.keys(value) if isinstance(value, dict) else value))


def guarded_set_operator(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``a op b`` for ``&``, ``|``, ``^``, ``-`` (and ``&=``…), bounded when sets are involved.

    Set operators hash the elements of one side into the other and compare the
    elements whose hashes match; a dict view's operator first builds a set from
    any iterable. A comparison costs at most either element's expansion, so one
    side's elements are checked (:func:`_elements_ok`): the smaller of two sets
    or dicts (their hashes are stored), or else the side that gets hashed, an
    iterable, materialised once. ``{F} & {G}`` of equal frozensets built from
    each other compares in 2**60 steps; ``d.keys() & [t]`` hashes a
    shared-reference tuple. Numbers pay one type test in the compiled code and
    never get here.
    """

    def guarded(a: Any, b: Any) -> Any:
        left = isinstance(a, _HASH_CONTAINERS)
        right = isinstance(b, _HASH_CONTAINERS)
        if left and right:
            _checked_elements(a if len(a) <= len(b) else b)
        elif left or right:
            other = b if left else a
            kind = type(other)
            if kind not in _SCALARS and kind is not str and hasattr(kind, "__iter__"):
                items = list(other)  # hashed into a set by the operator: read once, here
                _elements_ok(items)
                return op(a, items) if left else op(items, b)
        return op(a, b)

    guarded.__name__ = op.__name__
    return guarded


_build_inplace()


def guarded_inplace(op: str, a: Any, b: Any) -> Any:
    """``x op= y`` for the operators that need a size check (and the item/attribute forms)."""
    return _INPLACE[op](a, b)


# string methods that allocate: width/count checks before the C call
def _width_method(s: Any, name: str) -> Callable[..., Any]:
    method = getattr(s, name)

    def wrapper(width: int, *args: Any) -> Any:
        if isinstance(width, int) and width > MAX_SEQUENCE:
            _too_big(f"str.{name}({width})")
        return method(width, *args)

    return wrapper


def _expandtabs(s: Any) -> Callable[..., Any]:
    def expandtabs(tabsize: int = 8) -> Any:
        if (
            isinstance(tabsize, int)
            and tabsize > 0
            and (s.count("\t") + 1) * tabsize + len(s) > MAX_SEQUENCE
        ):
            _too_big("str.expandtabs")
        return s.expandtabs(tabsize)

    return expandtabs


def _replace(s: Any) -> Callable[..., Any]:
    def replace(old: Any, new: Any, count: int = -1) -> Any:
        if isinstance(old, (str, bytes)) and isinstance(new, (str, bytes)) and len(new) > len(old):
            hits = s.count(old) if old else len(s) + 1
            if 0 <= count < hits:
                hits = count
            if len(s) + hits * (len(new) - len(old)) > MAX_SEQUENCE:
                _too_big("str.replace")
        return s.replace(old, new, count)

    return replace


def _translate(s: Any) -> Callable[..., Any]:
    def translate(table: Any) -> Any:
        if isinstance(table, dict):
            longest = max((len(v) for v in table.values() if isinstance(v, str)), default=1)
            if len(s) * longest > MAX_SEQUENCE:
                _too_big("str.translate")
        return s.translate(table)

    return translate


def _join(s: Any) -> Callable[..., Any]:
    # x-join-huge (tests/sandbox/attacks_extra.py): "-".join(["x" * 10**6] * 10**4) builds a
    # 10 GB string in one C call; refuse a join whose result would exceed MAX_SEQUENCE.
    def join(iterable: Any) -> Any:
        items = iterable if type(iterable) in (list, tuple) else list(iterable)
        try:
            total = sum(map(len, items)) + len(s) * max(len(items) - 1, 0)
        except TypeError:
            return s.join(items)  # raises str.join's own error
        if total > MAX_SEQUENCE:
            _too_big("str.join")
        if total > CHECK_FROM:
            charge_sequence(s, total)  # memguard: charged before the string is built
        return s.join(items)

    return join


_STR_METHODS: dict[str, Callable[[Any], Callable[..., Any]]] = {
    "format": _bound_str_format,
    "format_map": _bound_str_format_map,
    "center": lambda s: _width_method(s, "center"),
    "ljust": lambda s: _width_method(s, "ljust"),
    "rjust": lambda s: _width_method(s, "rjust"),
    "zfill": lambda s: _width_method(s, "zfill"),
    "expandtabs": _expandtabs,
    "replace": _replace,
    "translate": _translate,
    "join": _join,
}


# ----------------------------------------------------------------------------- namespaces


class OpaqueNamespace:
    """An immutable bag of named members (stand-in modules, ``tools``).

    The attribute guard resolves members from the private mapping; nothing else
    about the object is reachable, and it cannot be written to.
    """

    __slots__ = ("_kind", "_members", "_missing", "_name")

    def __init__(
        self,
        name: str,
        members: dict[str, Any],
        *,
        kind: str = "module",
        missing: Callable[[str], Exception] | None = None,
    ) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", dict(members))
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_missing", missing)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise TypeError(f"{self._name} is read-only")

    def __delattr__(self, name: str) -> NoReturn:
        raise TypeError(f"{self._name} is read-only")

    def __getitem__(self, name: object) -> Any:
        """``tools["raw-name"]``: the member by its key (the compiled item read lands here)."""
        if type(name) is not str:
            raise TypeError("namespace keys are strings")
        return self.member(name)

    def member(self, name: str) -> Any:
        """The member ``name`` or the namespace's missing-member error."""
        try:
            return self._members[name]
        except KeyError:
            if self._missing is not None:
                raise self._missing(name) from None
            raise AttributeError(f"{self._kind} {self._name!r} has no attribute {name!r}") from None

    def members(self) -> dict[str, Any]:
        """A copy of the members (host-side use)."""
        return dict(self._members)

    def __getattr__(self, name: str) -> Any:
        # Only reached by `from X import name` (IMPORT_FROM does a real getattr);
        # the import guard has already checked `name` against the member list.
        if name.startswith("_"):
            raise AttributeError(name)
        return self.member(name)

    def __repr__(self) -> str:
        return f"<{self._kind} {self._name!r}>"


# ----------------------------------------------------------------------------- guards


# Guards that need no per-run state: built once, shared by every run (function
# objects a script cannot modify: the write guard refuses them).


def _guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
    # test_guards_getattr_*: blocks dunder/private names, generator/frame
    # internals (CVE-2023-37271), the str.format family (CVE-2023-41039),
    # `mro`, any attribute of functools.partial/module objects, and checks
    # the value it returns (no modules, frames, code, type/object…).
    if type(name) is not str:
        raise TypeError("attribute name must be a str")
    kind = type(obj)
    calls = _RECEIVER_CALLS.get(name)
    if calls is not None:
        call = calls.get(kind, _NO_CALL)
        if call is not _NO_CALL:
            # d.get(k), s.add(x), lst.index(x), lst.sort()… on exact builtin types (public
            # names): the real bound method, or a wrapper bounding what it compares or
            # hashes (test_compare_calls); first, as these reads are frequent
            if call is None:
                return getattr(obj, name)
            return _METHOD(call, getattr(obj, name))
    if name.startswith("_"):
        raise AttributeError(f'"{name}" is an invalid attribute name because it starts with "_"')
    if name in INSPECT_ATTRIBUTES:
        raise AttributeError(
            f'"{name}" is a restricted name, that is forbidden to access in RestrictedPython.'
        )
    if kind in _FAST_RECEIVERS:
        if name not in _SLOW_NAMES:
            # exact builtin data types: every public attribute passes check_value
            # (test_guards_fast_receivers_match_check_value), so skip it
            return getattr(obj, name, *default)
        into = _HASHED_RECEIVERS.get(kind)
        if into is not None and name in _HASHING_METHODS:
            # s.update(x), d.update(pairs), {}.fromkeys(x)… (test_hash_feed_*)
            value = getattr(obj, name, *default)
            return _METHOD((_FED_SET_CALLS if into == "set" else _FED_DICT_CALLS)[name], value)
    if kind is OpaqueNamespace:
        if default:
            try:
                return obj.member(name)
            except (AttributeError, TypeError):
                return default[0]
        return obj.member(name)
    if name in _STR_METHODS and isinstance(obj, str):
        return _STR_METHODS[name](obj)
    if (name == "extend" or name == "extendleft") and is_extendable(obj):
        return guarded_extend(obj, name)  # x.extend(x) doubling (memguard)
    if name == "copy" or (name in _COPYING_STR_METHODS and kind is str):
        charge_copy(obj)  # memguard: y.append(x.copy()), s.upper() of large values
    if name in _HASHING_METHODS:
        into = _hashing_target(obj, name)
        if into is not None:
            # s.update(x), d.update(pairs), dict.fromkeys(x), Counter(x).update(x),
            # Counter.update(c, x)… (test_hash_feed_*)
            value = getattr(obj, name, *default)
            if type(value) is types.FunctionType:
                if value.__module__ == "collections":
                    return _METHOD(_FED_UNBOUND_CALLS[name], value)  # Counter.update(c, xs)
                return value
            if callable(value) and not isinstance(value, type):
                return _hashing_method(value, into, name)
            return value
    if name in _DENIED_NAMES:
        raise AttributeError(f'"{name}" is not available in the sandbox')
    if isinstance(obj, _FORBIDDEN_TYPES) or id(obj) in _FORBIDDEN_VALUES:
        raise AttributeError(
            f"attributes of {kind.__name__} objects are not available in the sandbox"
        )
    value = getattr(obj, name, *default)
    if type(value) in _PLAIN:
        return value
    if name in _CHECKED_CALL_NAMES:
        call = _checked_call(obj, name, value)
        if call is not None:
            return _METHOD(call, value)  # deque.index(x), Counter.most_common()… (bounded)
    return check_value(value)


def _guarded_hasattr(obj: Any, name: str) -> bool:
    try:
        _guarded_getattr(obj, name)
    except (AttributeError, TypeError):
        return False
    return True


def _guarded_getitem(obj: Any, key: Any) -> Any:
    # test_guards_getitem_checks_value: item access returns checked values
    # and resolves tools["raw-name"].
    if type(key) is slice and type(obj) in _SLICE_COPIES and len(obj) > CHECK_FROM:
        _charge_slice(obj, key)  # memguard: y.append(x[:]) copies charged before the copy
    value = obj[key]  # OpaqueNamespace.__getitem__ resolves tools["raw-name"]
    if type(value) in _PLAIN:
        return value
    return check_value(value)


def _charge_slice(obj: Any, key: slice) -> None:
    # test_memory_guard_large_copies_*: a slice of a large str/list/tuple/bytes
    # copies its items; charge them to the memory budget before the copy is made
    try:
        length = len(range(*key.indices(len(obj))))
    except (TypeError, ValueError):
        return  # the subscript itself raises the error
    if length > CHECK_FROM:
        charge_copy(obj, length=length)


def _guarded_write(obj: Any) -> Any:
    # test_guards_write_*: item/attribute writes only on the script's own
    # dicts and lists (every host value arrives as a JSON copy) and on
    # instances (and classes) of classes the script defined; modules,
    # functions, namespaces, builtins and host classes refuse.
    kind = type(obj)
    if kind is dict or kind is list or kind in _WRITABLE:
        return obj
    if getattr(kind, SCRIPT_CLASS_MARK, False):
        return obj
    if isinstance(obj, type) and getattr(obj, SCRIPT_CLASS_MARK, False):
        return obj
    if kind is OpaqueNamespace:
        raise TypeError(f"{obj!r} is read-only")
    raise TypeError(f"{kind.__name__} objects cannot be modified in the sandbox")


def _guarded_aug_item(obj: Any, key: Any, op: str, value: Any) -> None:
    target = _guarded_write(obj)
    target[key] = guarded_inplace(op, _guarded_getitem(obj, key), value)


def _guarded_aug_attr(obj: Any, name: str, op: str, value: Any) -> None:
    target = _guarded_write(obj)
    setattr(target, name, guarded_inplace(op, _guarded_getattr(obj, name), value))


def _guarded_apply(func: Any, *args: Any, **kwargs: Any) -> Any:
    # test_guards_apply_refuses_private_keywords: f(**{"_trusted": True}).
    for key in kwargs:
        if key.startswith("_"):
            raise TypeError(f'keyword argument "{key}" is not allowed because it starts with "_"')
    return func(*args, **kwargs)


_CHECKED_SPECS: set[str] = set()
"""f-string format specs that passed the width check (the fast path skips it)."""


def _guarded_fmtv(value: Any, conversion: int, spec: str) -> str:
    # test_guards_fstring_dynamic_width: f'{1:>{10**10}}'; every f-string field
    # (the policy wraps them all) is render-size checked (test_render_guard_fstring).
    if type(value) in FLAT_TYPES and conversion != 97 and (not spec or spec in _CHECKED_SPECS):
        # scalars: nothing to walk, and the spec's width was checked before
        if conversion == 114:
            value = repr(value)
        text = _builtins.format(value, spec) if spec else str(value)
    else:
        if conversion == 115:
            check_render(value, "str() of this value")
            value = str(value)
        elif conversion == 114:
            value = safe_repr(value)
        elif conversion == 97:
            value = safe_ascii(value)
        text = safe_format(value, spec)
        if spec and len(_CHECKED_SPECS) < 4096:
            _CHECKED_SPECS.add(spec)
    if len(text) > CHECK_FROM:
        check_field(text)  # f'{s}{s}' doubling (memguard)
    return text


def _script_metaclass(name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
    # Classes the script defines are recorded so `self.x = 1` works on their
    # instances only (test_language_class_attribute_writes).
    for base in bases:
        if not isinstance(base, type) or id(base) in _FORBIDDEN_VALUES or base is OpaqueNamespace:
            raise TypeError(f"cannot subclass {base!r} in the sandbox")
    cls = type(name, bases, namespace)
    setattr(cls, SCRIPT_CLASS_MARK, True)
    return cls


def _stop_types() -> tuple[type[BaseException], ...]:
    import asyncio

    # GeneratorExit is deliberately absent: it is how close() (and a `break` out
    # of a for loop over a generator) runs the generator's `finally` blocks, which
    # must run as in Python (test_language_generator_finally_runs_on_close).
    types_: tuple[type[BaseException], ...] = (
        ScriptStop,
        asyncio.CancelledError,
        KeyboardInterrupt,
        SystemExit,
    )
    trio = sys.modules.get("trio")
    if trio is not None:
        types_ = (*types_, trio.Cancelled)
    return types_


_STOP_TYPES: list[tuple[type[BaseException], ...]] = []


def make_guards(
    budget: Budget,
    *,
    print_fn: Callable[..., None],
) -> dict[str, Any]:
    """The hook functions for one run, keyed by the names the compiled code uses."""
    tick = budget.make_tick()
    trio = sys.modules.get("trio")
    if not _STOP_TYPES or (trio is not None and trio.Cancelled not in _STOP_TYPES[0]):
        _STOP_TYPES[:] = [_stop_types()]  # trio's Cancelled once trio is imported
    stop_types = _STOP_TYPES[0]

    def check() -> None:
        # test_guards_bare_except_cannot_swallow_limit: a bare `except:` (or
        # `except BaseException` if it were reachable) re-raises limits, aborts
        # and cancellations at the top of the handler.
        exc = sys.exception()
        if budget.stop is not None:
            raise budget.stop
        if isinstance(exc, stop_types):
            raise exc

    def charge(obj: Any) -> Any:
        # Iteration that happens in C (for loops, comprehensions, sum/sorted/…)
        # is charged to the step budget up front for sized containers; unknown
        # iterables tick per item. Blocks `sum(range(10**12))`-style C loops
        # (test_guards_iteration_charges_steps).
        kind = type(obj)
        if kind in _SIZED or kind in _SIZED_VIEWS:
            budget.spend(len(obj))
            return obj
        if kind in _LAZY_SAFE:
            return obj
        return _ticking(iter(obj))

    def _ticking(it: Iterator[Any]) -> Iterator[Any]:
        for item in it:
            tick()
            yield item

    check_chunk = budget._check_chunk

    islice = itertools.islice
    chain = itertools.chain
    end = object()

    def _chunks(it: Iterator[Any]) -> Iterator[Iterator[Any]]:
        # pieces of 256 items of the same live iterator; Python runs once per piece
        while True:
            first = next(it, end)
            if first is end:
                return
            check_chunk(_TICK_CHUNK)
            yield chain((first,), islice(it, _TICK_CHUNK - 1))

    def _counted(iterable: Any) -> Iterator[Any]:
        # one step per item, the real check every 256 items, C speed in between
        return _chain_from_iterable(_chunks(iter(iterable)))

    def _range_chunks(r: range) -> Iterator[range]:
        step = r.step * _TICK_CHUNK
        stop = r.stop
        for start in range(r.start, stop, step):
            check_chunk(_TICK_CHUNK)
            end = start + step
            yield range(start, min(end, stop) if step > 0 else max(end, stop), r.step)

    def getiter(obj: Any) -> Any:
        # `for` loops and comprehensions (they have no tick of their own).
        # Ranges: C-speed chunks of 256 with a check between chunks; small
        # containers: charged up front (the call checks the deadline); large
        # containers and every other iterable: one step per item, so the deadline
        # and abort flag are checked inside long loops and comprehensions
        # (test_guards_comprehension_ticks).
        kind = type(obj)
        if kind is range:
            if len(obj) <= _TICK_CHUNK:
                budget.spend(len(obj))
                return obj
            return _chain_from_iterable(_range_chunks(obj))
        if (kind in _SIZED or kind in _SIZED_VIEWS) and len(obj) <= _SMALL:
            budget.spend(len(obj))
            return obj
        return _counted(obj)

    def copy(value: Any, into: str | None = None) -> Any:
        # list(x), set(x), dict(x)…: a large copy is charged to the memory budget
        # first (memguard.charge_copy). Building a set or dict hashes every item in
        # one C call, quadratic when the items' hashes collide (a set() of 200k ints
        # n * (2**61 - 1) runs for minutes): a large list or tuple is fed to it in
        # chunks of 256, with the deadline and abort checked between chunks
        # (test_guards_hash_flood_constructor_is_stopped).
        # Every item hashed must also hash in bounded time (a tuple built from shared
        # references stands for 2**50 items): small inputs are checked whole, fed ones
        # chunk by chunk (hashed_ok; test_compare_calls_shared_reference_values_are_refused).
        charge_copy(value, into)
        if into in _HASHING_COPIES:
            return hashed_input(value, into)
        return value

    scalars_only = _SCALARS.issuperset

    def hashed_input(value: Any, into: str) -> Any:
        kind = type(value)
        if kind is list or kind is tuple:
            if len(value) <= _FEED_FROM:
                if into != "dict" and scalars_only(map(type, value)):
                    return value  # the common case: scalars hash in bounded time
                return hashed_ok(value, into)
        elif kind in _NO_FEED or kind is _KEYS_VIEW or kind is CheckedFeed:
            return value  # stored hashes, keys hashed when inserted, or checked already
        elif not needs_feed(value, into):
            return hashed_whole(value, into)
        return CheckedFeed.from_iterable(_hashed_chunks(iter(value), into))

    def _hashed_chunks(it: Iterator[Any], into: str) -> Iterator[list[Any] | tuple[Any, ...]]:
        # chunks of 256 items of the same live iterator, each checked before C hashes
        # it; an error from the iterator comes after the items it produced (as when
        # C drains the iterator itself: `s.update(gen)` keeps the items before it)
        while True:
            chunk: list[Any] = []
            try:
                chunk.extend(islice(it, _TICK_CHUNK))
            except Exception:
                if chunk:
                    yield hashed_ok(chunk, into)
                raise
            if not chunk:
                return
            check_chunk(_TICK_CHUNK)
            yield hashed_ok(chunk, into)
            if len(chunk) < _TICK_CHUNK:
                return

    def hashed_star(value: Any) -> Any:
        # `{*x}`: a set display hashes every item of x in one C call
        # (test_hash_feed_large_input_is_charged_in_chunks[set-display-star])
        return hashed_input(guarded_star(value), "set")

    guards = dict(_STATIC_GUARDS)
    if budget.hooks is None:
        budget.hooks = guards  # until the engine binds the script's own globals
    guards["_getiter_"] = getiter
    guards["_copy_"] = copy
    guards["_hstar_"] = hashed_star
    guards["_tick_"] = tick
    guards["_tk_"] = budget.first_tick()  # the tick statement's hook (see Budget)
    guards["_check_"] = check
    guards["_print_"] = guarded_print(print_fn, budget.limits.max_output_chars, budget.trip)
    guards["__charge__"] = charge  # a helper the curated builtins use
    guards[STOP_NAME] = budget.trip  # found by errors.refuse_size through the globals
    guards[METER_NAME] = budget.memory  # found by memguard.charge_bytes through the globals
    guards[BUDGET_NAME] = budget  # found by the re stand-in (regexguard) through the globals
    return guards


_STATIC_GUARDS: dict[str, Any] = {
    "_getattr_": _guarded_getattr,
    "_getitem_": _guarded_getitem,
    "_write_": _guarded_write,
    "_apply_": _guarded_apply,
    "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
    "_unpack_sequence_": guarded_unpack_sequence,
    "_mul_": guarded_mul,
    "_add_": guarded_add,
    "_iadd_": guarded_iadd,
    "_star_": guarded_star,
    "_pow_": guarded_pow,
    "_lshift_": guarded_lshift,
    "_mod_": guarded_mod,
    "_inplace_": guarded_inplace,
    "_aug_item_": _guarded_aug_item,
    "_aug_attr_": _guarded_aug_attr,
    "_fmtv_": _guarded_fmtv,
    "_slice_": slice,
    # the inline fast paths of the compiled code (_restricted.ScriptPolicy._inline_*)
    "_type_": type,
    "_int_": int,
    "_float_": float,
    "_imin_": -(1 << 31),
    "_imax_": 1 << 31,
    "_numfast_": frozenset({int, float}),
    "_plain_": _PLAIN,
    "_fastrecv_": _FAST_RECEIVERS,
    "_checkv_": check_value,
    "_str_": str,
    # the shared-reference bounds of comparisons and hashing (dagguard; compiled sites)
    "_scalar_": dagguard.SCALARS,
    "_haystack_": dagguard.HAYSTACKS,
    "_and_": guarded_set_operator(operator.and_),
    "_or_": guarded_set_operator(operator.or_),
    "_xor_": guarded_set_operator(operator.xor),
    "_sub_": guarded_set_operator(operator.sub),
    "_cmpok_": dagguard.compare_ok,
    "_inok_": dagguard.contains_ok,
    "_hkey_": dagguard.hash_ok,
    "_cval_": dagguard.operand_ok,
    "__metaclass__": _script_metaclass,
    "__name__": "__script__",
    "__hasattr__": _guarded_hasattr,  # a helper the curated builtins use
}


class CheckedFeed(itertools.chain[Any]):
    """The chunked, checked feed ``_copy_`` makes of a large input (iterated in C).

    Only the guards make these (a script cannot name or build one), so a feed
    handed on — ``set(x)`` compiles to ``set(_copy_(x, "set"))`` and the ``set``
    a script sees checks its argument too — is not fed and checked twice.
    """

    __slots__ = ()


_HASHING_COPIES = frozenset({"set", "frozenset", "dict", "counter"})
"""What ``_copy_`` feeds and checks: builtins (and ``"counter"``: ``Counter(x)``,
``c.update(x)``) that hash every item of their argument (``"dict"``: the key of every
pair, or a mapping's keys)."""

# ----------------------------------------------------------------------------- hash feeding
#
# Building or updating a set or dict hashes every item of the input in one C
# call; when the items' hashes collide (ints n * (2**61 - 1) all hash to 0) the
# call is quadratic: 60,000 items run for minutes with no budget check. Every
# entry point that hashes a whole input (set()/frozenset()/dict() through
# `_copy_`, `{*x}` through `_hstar_`, the set/dict/Counter methods below through
# the attribute guard, the collections constructors through the stand-in
# module) feeds a large or unsized input in chunks of _TICK_CHUNK items with a
# budget check between chunks, so the deadline and an abort stop it. Every input
# (small ones whole, fed ones per chunk) is also checked before C hashes it:
# what is hashed of the items (`hashed_ok`: the items, or each pair's key for a
# dict) must hash in bounded time, all the chunk's items together — a tuple
# built from shared references, or a chunk repeating one large tuple, is refused
# with a size limit (see "comparing and hashing calls").

_FEED_FROM = _TICK_CHUNK
"""Inputs longer than this are fed in chunks: a single chunk's worst case is small."""
_NO_FEED = frozenset({set, frozenset, dict, str, bytes, bytearray})
"""Inputs passed through whole: sets and dicts reuse their stored hashes (their own
building was fed in chunks), strings and bytes have few distinct items."""
_FEED_SIZED = frozenset({range, collections.deque, *_SIZED_VIEWS})


def needs_feed(value: Any, into: str) -> bool:
    """Whether hashing ``value`` whole into a ``into`` (``"set"``/``"dict"``…) needs the chunked feed.

    Lists and tuples of up to :data:`_FEED_FROM` items (and sets, dicts, strings)
    pay one type check and a ``len``; iterators and generators are always fed
    (``yield from xs`` or ``map(f, xs)`` drain a list in C).
    """
    kind = type(value)
    if kind is list or kind is tuple:
        return len(value) > _FEED_FROM
    if kind in _NO_FEED:
        return False
    if kind in _FEED_SIZED:
        return len(value) > _FEED_FROM
    if isinstance(value, (dict, set, frozenset, str, bytes, OpaqueNamespace)):
        return False
    if into == "dict" and hasattr(value, "keys"):
        return False  # the mapping protocol: dict() reads keys() and items, not pairs
    if isinstance(value, (list, tuple)):
        return len(value) > _FEED_FROM  # namedtuples and other subclasses
    # iterators, generators, script iterables; not None or numbers (`Counter(None)` is
    # valid, `set(5)` keeps its own error)
    return hasattr(kind, "__iter__") or hasattr(kind, "__getitem__")


def _hashing_target(obj: Any, name: str) -> str | None:
    """``"set"``/``"dict"`` when ``obj.name`` is a host method that hashes its argument."""
    if isinstance(obj, (set, frozenset)):
        return "set"
    if isinstance(obj, dict):
        return "dict"
    if isinstance(obj, type) and issubclass(obj, dict):
        return "dict"  # dict.fromkeys(x), Counter.update(c, x)
    return None


def fed(value: Any, into: str) -> Any:
    """``value``, or the running script's chunked feed of it when hashing it whole needs one.

    For host code a script calls (the collections stand-ins): the feed is the
    run's ``_copy_`` (found through the innermost script frame's globals). Either
    way what ``into`` hashes of the items is checked first (:func:`hashed_ok`):
    ``"set"`` (and ``"counter"``, ``fromkeys``) the items, ``"dict"`` each pair's key.
    """
    kind = type(value)
    if (kind is list or kind is tuple) and len(value) <= _FEED_FROM:
        return hashed_ok(value, into)  # the common case: checked here, no run needed
    if kind in _NO_FEED or kind is CheckedFeed:
        return value
    copy = _run_copy()
    if copy is not None:
        return copy(value, into)  # fed in chunks and checked (or checked whole)
    return hashed_whole(value, into) if not needs_feed(value, into) else value


def _run_copy() -> Callable[[Any, str], Any] | None:
    """The ``_copy_`` hook of the innermost script frame's run (None: no script on the stack)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            hook = frame.f_globals.get("_copy_")
            return hook if callable(hook) else None
        frame = frame.f_back
    return None


def _hashing_method(method: Callable[..., Any], into: str, name: str) -> Callable[..., Any]:
    """``method`` whose hashed positional arguments go through the run's ``_copy_``.

    A set method hashes every positional argument (``s.update(a, b)``); a dict's
    (``update``, ``fromkeys``, ``Counter.subtract``…) only the first.
    ``_copy_`` charges a large input to the memory budget and feeds it in chunks
    with a budget check between them (see :func:`needs_feed`), after checking
    that what is hashed of its items hashes in bounded time (:func:`hashed_ok`);
    a script's own override (a plain function of a script class) is returned unchanged.
    """
    if isinstance(method, types.MethodType) and getattr(
        method.__func__, "__module__", None
    ) not in ("collections", "builtins"):
        return method  # a script class's own method: it ticks by itself
    if into == "set":
        return _METHOD(_FED_SET_CALLS[name], method)
    owner = getattr(method, "__self__", None)
    if name != "fromkeys" and (
        isinstance(owner, collections.Counter)
        or (isinstance(owner, type) and issubclass(owner, collections.Counter))
    ):
        return _METHOD(_FED_COUNTER_CALLS[name], method)  # c.update(xs) hashes the items
    return _METHOD(_FED_DICT_CALLS[name], method)


def _fed_set_call(method: Callable[..., Any], *args: Any) -> Any:
    # every positional argument is hashed: s.union(a, b), s.update(a)
    for arg in args:
        if type(arg) not in _NO_FEED:
            return method(*[fed(arg, "set") for arg in args])
    return method(*args)  # sets, dicts, strings: stored hashes or scalars


def _fed_dict_call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # the first positional argument's pairs (or a mapping's keys) are hashed: d.update(pairs, **kw)
    if args and type(args[0]) not in _NO_FEED:
        return method(fed(args[0], "dict"), *args[1:], **kwargs)
    return method(*args, **kwargs)


def _fed_keys_call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # the first positional argument's items are hashed: d.fromkeys(keys, value)
    if args and type(args[0]) not in _NO_FEED:
        return method(fed(args[0], "set"), *args[1:], **kwargs)
    return method(*args, **kwargs)


def _fed_counter_call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # Counter's update/subtract hash the items of an iterable (a mapping's keys were hashed)
    if args and type(args[0]) not in _NO_FEED:
        return method(fed(args[0], "counter"), *args[1:], **kwargs)
    return method(*args, **kwargs)


def _fed_unbound_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # a class's plain function: Counter.update(counter, xs), the input comes second
    if len(args) > 1 and type(args[1]) not in _NO_FEED:
        return function(args[0], fed(args[1], "counter"), *args[2:], **kwargs)
    return function(*args, **kwargs)


def _named(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A copy of ``function`` called ``name`` (the wrapper of ``s.update`` is named ``update``)."""
    assert isinstance(function, types.FunctionType)
    copy = types.FunctionType(function.__code__, function.__globals__, name, function.__defaults__)
    copy.__qualname__ = name
    return copy


_HASHED_RECEIVERS: dict[type, str] = {set: "set", frozenset: "set", dict: "dict"}
_METHOD = types.MethodType
"""The wrappers are bound methods of the feeding calls (made in C: cheaper than a closure)."""
_FED_SET_CALLS = {name: _named(_fed_set_call, name) for name in _HASHING_METHODS}
_FED_DICT_CALLS = {
    name: _named(_fed_keys_call if name == "fromkeys" else _fed_dict_call, name)
    for name in _HASHING_METHODS
}
_FED_COUNTER_CALLS = {name: _named(_fed_counter_call, name) for name in _HASHING_METHODS}
_FED_UNBOUND_CALLS = {name: _named(_fed_unbound_call, name) for name in _HASHING_METHODS}


def charged(guards: dict[str, Any], iterable: Iterable[Any]) -> Any:
    """Run ``iterable`` through the run's charging wrapper (used by curated builtins)."""
    return guards["__charge__"](iterable)


# ----------------------------------------------------------------------------- comparing and hashing calls
#
# Comparing two lists or hashing a tuple is one C call whose work is the value's
# size expanded as a tree: a value built from shared references stands for 2**50
# items in a few kilobytes, and the call never returns (dagguard). The compiled
# operators (`==`, `in`, displays, subscripts) are bounded by the policy; the C
# calls a script reaches through builtins, methods and stand-in modules are
# bounded here and in builtins/modules, each checking with dagguard, before the
# real call, exactly what that call compares or hashes:
#
# - methods of builtin containers, handed out by the attribute guard as wrappers
#   around the real bound method (`_RECEIVER_CALLS` for the exact types, whose
#   `o.name` reads the policy leaves to the guard because the names are in
#   `_SLOW_NAMES`; `_checked_call` for subclasses, deques, Counter, OrderedDict,
#   namedtuples and dict views): `lst.index(x)`, `count`, `remove` compare `x`
#   with each item (dagguard.contains_ok), `d.get(k)`, `setdefault`, `pop`,
#   `s.add(x)`, `discard`, `remove`, `od.move_to_end(k)` hash their first argument
#   (dagguard.hash_ok), `lst.sort()` compares the items or the keys
#   (dagguard.items_ok, :func:`checked_sort`), `Counter.most_common` sorts the
#   counts, a view's `isdisjoint(x)` hashes (and, for items, compares) x's items.
#   A scalar first argument costs one inline type test before the real call.
# - every hash feed (set()/frozenset()/dict(), `{*x}`, the set/dict/Counter
#   methods that hash a whole input, the collections constructors): what is hashed
#   of the items, checked together per chunk of 256 (:func:`hashed_ok`), so a
#   chunk repeating one large tuple is refused as well as one amplified tuple.

_SCALARS = dagguard.SCALARS
_TUPLE_OR_SCALAR = _SCALARS | {tuple}
_KEYS_VIEW: type[Any] = type({}.keys())
_ITEMS_VIEW: type[Any] = type({}.items())
_first = operator.itemgetter(0)
_PAIR_TYPES = frozenset({tuple, list})
_STORED = (set, frozenset, dict)
"""Containers whose items were hashed when they were stored (hashing them again is bounded)."""


def hash_bounded(key: Any) -> Any:
    """``key``, once hashing it and comparing it with a stored key of the same hash are bounded.

    :func:`dagguard.hash_ok` bounds the hash (only tuples hash their items). A
    lookup whose hash matches a stored key also compares the two with ``==``,
    which recurses into frozensets too: two frozensets built level by level from
    each other (``F = frozenset({(F0, G0)})``, ``G = frozenset({(G0, F0)})``) are
    equal with equal hashes, cheap to hash and exponential to compare. So a key
    that is not a tuple or frozenset of scalars is also measured as a comparison
    operand.
    """
    dagguard.hash_ok(key)
    kind = type(key)
    if (kind is not tuple and kind is not frozenset) or not _SCALARS.issuperset(map(type, key)):
        dagguard.operand_ok(key)  # (a tuple or frozenset of scalars compares in its length)
    return key


def _elements_ok(items: list[Any] | tuple[Any, ...]) -> None:
    """Refuse (a size limit) unless hashing every item of ``items`` is bounded, all together.

    Only tuples hash their items (a frozenset hashes the hashes it stored, lists
    and dicts are unhashable) and only tuples and frozensets compare theirs when
    a stored key has the same hash (:func:`hash_bounded`), so items with neither
    pass after one C scan of their types; short tuples of scalars (``(row, col)``
    keys) pass after a second.
    """
    kinds = set(map(type, items))
    if kinds <= _SCALARS:
        return
    if kinds <= _TUPLE_OR_SCALAR:
        tuples = [item for item in items if type(item) is tuple] if kinds & _SCALARS else items
        if max(map(len, tuples), default=0) <= dagguard.SMALL and _SCALARS.issuperset(
            map(type, _chain_from_iterable(tuples))
        ):
            return
    elif not any(issubclass(kind, (tuple, frozenset)) for kind in kinds):
        return
    hash_bounded(tuple(items))  # measured as one tuple: shared items count once per path


def _converted_pairs(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    """``items`` with each pair dict() would turn into a sequence itself turned into a tuple.

    ``dict(pairs)`` takes the key of a pair that is not a tuple or list by iterating
    it (a generator, a script iterable); the copy lets the key be checked first and
    gives dict() the same pair. Subclasses of tuple and list give their stored items
    (as dict() reads them); anything not iterable is left for dict()'s own error.
    """
    converted = list(items)
    for index, pair in enumerate(converted):
        kind = type(pair)
        if kind in _PAIR_TYPES or kind in _SCALARS or kind in _NO_FEED:
            continue
        if isinstance(pair, tuple):
            converted[index] = tuple.__getitem__(pair, slice(None))
        elif isinstance(pair, list):
            converted[index] = tuple(list.copy(pair))
        elif not isinstance(pair, _STORED):
            try:
                source = iter(pair)
            except TypeError:
                continue  # dict() raises its own error for it
            converted[index] = tuple(source)
    return converted


def hashed_ok(items: list[Any] | tuple[Any, ...], into: str) -> list[Any] | tuple[Any, ...]:
    """``items`` (or an equal list), once hashing what ``into`` hashes of them is bounded.

    ``"dict"``: the key of each pair (a pair that is neither a tuple nor a list is
    turned into a tuple first, see :func:`_converted_pairs`); otherwise (``"set"``,
    ``"frozenset"``, ``"counter"``) the items themselves. Refuses with a size limit.
    """
    if into != "dict":
        _elements_ok(items)
        return items
    kinds = set(map(type, items))
    if kinds <= _SCALARS:
        return items  # strings of two characters, or dict()'s own error
    pairs = items
    if not kinds <= _PAIR_TYPES:
        items = _converted_pairs(items)
        pairs = [pair for pair in items if type(pair) in _PAIR_TYPES]  # dicts, sets: stored
    _elements_ok(list(map(_first, filter(None, pairs))))
    return items


def hashed_whole(value: Any, into: str) -> Any:
    """A small or stored input hashed whole: ``value``, or a checked copy of its items.

    Sets and dicts (their items were hashed when stored), strings and
    non-iterables (the real call raises its own error) pass; a mapping given to
    a dict (the mapping protocol: its ``keys()`` are hashed) becomes checked
    pairs; other small inputs (deques, dict views, namedtuples) become a checked list.
    """
    kind = type(value)
    if kind in _NO_FEED or kind in _SCALARS or kind is _KEYS_VIEW or kind is OpaqueNamespace:
        return value
    script = getattr(kind, SCRIPT_CLASS_MARK, False)
    if isinstance(value, _STORED) and (not script or isinstance(value, (set, frozenset))):
        return value
    if isinstance(value, dict):  # a script's dict subclass: its own keys() or __iter__
        if into == "dict":
            return value if kind.__iter__ is dict.__iter__ else _checked_pairs(value)
        if into == "counter":
            return dict(_checked_pairs(value))
        return hashed_ok(list(value), into)
    if into == "dict" and hasattr(value, "keys"):
        return _checked_pairs(value)
    if not (hasattr(kind, "__iter__") or hasattr(kind, "__getitem__")):
        return value
    return hashed_ok(list(value), into)


def _checked_pairs(mapping: Any) -> Iterator[tuple[Any, Any]]:
    """The pairs dict() reads from a mapping (``keys()``, then an item per key), keys checked."""
    keys = list(mapping.keys())
    _elements_ok(keys)
    return ((key, mapping[key]) for key in keys)


_NO_ARG: Any = object()
"""The default of the wrappers' first parameter: the call had no argument at all."""


def _compared_call(method: Any, item: Any = _NO_ARG, /, *rest: Any, **kwargs: Any) -> Any:
    # lst.index(x), lst.count(x), lst.remove(x), t.index(x), dq.count(x): x against each item
    if item is not _NO_ARG:
        # scalars too: a long string or big int is compared with every item, a memcmp each
        dagguard.contains_ok(item, method.__self__)
    if rest or kwargs:
        return method(*rest, **kwargs) if item is _NO_ARG else method(item, *rest, **kwargs)
    return method() if item is _NO_ARG else method(item)  # the common case: one argument


def _hashed_call(method: Any, key: Any = _NO_ARG, /, *rest: Any, **kwargs: Any) -> Any:
    # d.get(k), d.setdefault(k), d.pop(k), s.add(x), s.discard(x), od.move_to_end(k): hash x
    if type(key) not in _SCALARS and key is not _NO_ARG:
        hash_bounded(key)
    if rest or kwargs:
        return method(*rest, **kwargs) if key is _NO_ARG else method(key, *rest, **kwargs)
    return method() if key is _NO_ARG else method(key)  # the common case: one argument


_SORT_KEYWORDS = frozenset({"key", "reverse"})


class _KeyStopped(Exception):
    """A sort's key function raised StopIteration (which ``map`` takes for its end)."""


def checked_sort(items: list[Any], sort: Callable[..., None], options: dict[str, Any]) -> None:
    """``sort(**options)`` (``items.sort`` itself), once its comparisons are bounded.

    Without a key the items are checked (:func:`dagguard.items_ok`). With a key the
    real sort runs with a key that computes the script's key of each item in
    order, once, inside the sort (so the list looks empty to it and a change to
    it is reported, as in Python) — in C for every item but the last: ``next`` on
    ``map(key, items)`` through a ``tee`` that keeps the keys — and the last call
    checks all the keys before the sort compares any of them. Results, stability,
    ``reverse`` and exceptions are the real sort's; a key that raises
    StopIteration before the last item (``map`` ends there silently) is called
    once more for that item to raise it again.
    """
    key = options.get("key")
    count = len(items)
    if count < 2:
        sort(**options)
        return
    if key is None:
        dagguard.items_ok(items)
        sort(**options)
        return
    snapshot = list.copy(items)  # the same items, readable while the sort empties the list
    computed, kept = itertools.tee(map(key, itertools.islice(snapshot, count - 1)))

    def last() -> Iterator[Any]:
        keys = list(kept)
        if len(keys) < count - 1:
            raise _KeyStopped(len(keys))  # map() ended early: that item's key raised StopIteration
        try:
            value = key(snapshot[-1])
        except StopIteration as stop:
            raise _KeyStopped(stop) from None
        keys.append(value)
        dagguard.items_ok(keys)  # after the last key, before the first comparison
        yield value

    try:
        sort(**{**options, "key": functools.partial(next, itertools.chain(computed, last()))})
    except _KeyStopped as stopped:
        reason = stopped.args[0]
        if isinstance(reason, StopIteration):
            raise reason from None
        key(snapshot[reason])  # raises the StopIteration again, as the sort would have
        raise StopIteration from None


def _sort_call(method: Any, *args: Any, **kwargs: Any) -> Any:
    # lst.sort(key=…, reverse=…)
    if args or not kwargs.keys() <= _SORT_KEYWORDS:
        return method(*args, **kwargs)  # list.sort's own TypeError, before any comparison
    checked_sort(method.__self__, method, kwargs)
    return None


def _most_common_call(method: Any, *args: Any, **kwargs: Any) -> Any:
    # Counter.most_common() sorts the counts (heapq.nlargest with n): a script may store lists
    dagguard.items_ok(list(method.__self__.values()))
    return method(*args, **kwargs)


def _isdisjoint_call(method: Any, *args: Any) -> Any:
    # d.keys().isdisjoint(x) hashes x's items; d.items().isdisjoint(x) hashes each pair's key
    # and compares its value: fed like a set's input (hashed_ok measures the pairs whole)
    if len(args) != 1 or isinstance(args[0], (*_STORED, _KEYS_VIEW)):
        return method(*args)
    return method(fed(args[0], "set"))


_NO_CALL: Any = object()
_RECEIVER_CALLS: dict[str, dict[type, Callable[..., Any] | None]] = {
    "index": {list: _compared_call, tuple: _compared_call, range: None},
    "count": {list: _compared_call, tuple: _compared_call, range: None},
    "remove": {list: _compared_call, set: _hashed_call},
    "sort": {list: _sort_call},
    "get": {dict: _hashed_call},
    "setdefault": {dict: _hashed_call},
    "pop": {dict: _hashed_call, list: None, set: None},
    "add": {set: _hashed_call},
    "discard": {set: _hashed_call},
}
"""For ``o.name`` on an exact builtin type: the wrapper of the bound method (``None``:
the bound method itself, nothing compared or hashed: ``lst.pop()``, ``range.index``)."""
_RECEIVER_CALLS = {
    name: {kind: None if call is None else _named(call, name) for kind, call in calls.items()}
    for name, calls in _RECEIVER_CALLS.items()
}
_CHECKED_CALL_NAMES = _COMPARING_NAMES | {"move_to_end", "most_common", "isdisjoint"}
_COMPARED_BY: tuple[type, ...] = (list, tuple, collections.deque)
_HASHED_BY: dict[str, type | tuple[type, ...]] = {
    "get": dict, "setdefault": dict, "pop": dict, "move_to_end": dict,
    "add": (set, frozenset), "discard": (set, frozenset), "remove": (set, frozenset),
}  # fmt: skip
_BUILTIN_METHOD = types.BuiltinMethodType
_WRAPPERS = {
    name: _named(call, name)
    for call, names in (
        (_compared_call, ("index", "count", "remove")),
        (_hashed_call, tuple(_HASHED_BY)),
        (_sort_call, ("sort",)),
        (_most_common_call, ("most_common",)),
        (_isdisjoint_call, ("isdisjoint",)),
    )
    for name in names
    if name != "remove" or call is _compared_call
}
_HASHED_REMOVE = _named(_hashed_call, "remove")


def _checked_call(obj: Any, name: str, value: Any) -> Callable[..., Any] | None:
    """The checking wrapper for ``obj.name`` (``value``) off the fast path, or ``None``.

    Only the real methods are wrapped: a C method bound to ``obj`` itself (not a
    script's override, which is script code), or ``Counter.most_common``.
    """
    if type(value) is not _BUILTIN_METHOD or value.__self__ is not obj:
        if (
            name == "most_common"
            and isinstance(value, types.MethodType)
            and value.__func__ is collections.Counter.most_common
        ):
            return _WRAPPERS[name]
        return None
    if name == "isdisjoint":
        return _WRAPPERS[name] if isinstance(obj, (_KEYS_VIEW, _ITEMS_VIEW)) else None
    if name == "sort":
        return _WRAPPERS[name] if isinstance(obj, list) else None
    if name == "index" or name == "count":
        return _WRAPPERS[name] if isinstance(obj, _COMPARED_BY) else None
    if name == "remove":
        if isinstance(obj, _COMPARED_BY):
            return _WRAPPERS[name]
        return _HASHED_REMOVE if isinstance(obj, set) else None
    hashed_by = _HASHED_BY.get(name)
    if hashed_by is not None and isinstance(obj, hashed_by):
        return _WRAPPERS[name]  # get, setdefault, pop, move_to_end (dicts); add, discard (sets)
    return None
