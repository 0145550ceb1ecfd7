"""The run's budget: steps, wall-clock deadline, pauses and the memory meter of one run.

Owns :class:`Budget` (one per run, made by :func:`~.attributes.make_guards`): the tick
that charges steps in chunks, the deadline and stop checks, the recursion-depth probe.
Sits at the bottom of ``guards/`` with the constants and errors; it must not import the
attribute guard, the world or anything above ``guards/``.
"""

from __future__ import annotations

import itertools
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from scriptgate.sandbox.guards.constants import (
    ENTRY,
    FILENAME,
)
from scriptgate.sandbox.guards.constants import TICK_CHUNK as _TICK_CHUNK
from scriptgate.sandbox.guards.errors import RunEnded, ScriptStop
from scriptgate.sandbox.guards.memory import (
    MemoryMeter,
)
from scriptgate.sandbox.result import Limits

__all__ = ["PAUSE_INTERVAL", "Budget"]

PAUSE_INTERVAL = 0.01
_CO_OPTIMIZED = 0x1


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


class _TimeMark:
    """A mark inside a long ``_tk_`` chunk, one every :data:`TICK_CHUNK` ticks.

    A long chunk (:data:`_LONG_CHUNK`, after a quick one) must not stretch the time between
    two deadline checks: quick ticks can turn slow mid-chunk (each tick a 9 ms C call), and
    1,024 of them ran 4× past a deadline that 256 had kept (eighth attack, F03). Dropping
    this mark checks what depends on the clock — the deadline, an abort, the memory meter's
    poll — and trips the budget (the next tick raises); the chunk's own end still does the
    full check (steps, depth, refill).
    """

    __slots__ = ("_budget",)

    _budget: Budget

    def __del__(self) -> None:
        budget = self._budget
        if budget.hooks is None or budget.stop is not None:
            return
        try:
            signal = budget.signal
            if signal is not None and signal.pending is not None:
                budget.trip("aborted", str(signal.pending) or "Execution aborted")
                return
            now = time.monotonic()
            if budget.deadline is not None and now > budget.deadline:
                budget.trip("limit", budget.timeout_message())
                return
            memory = budget.memory
            if memory is not None and now >= memory.next_poll:
                memory.poll()
        except BaseException:  # a finalizer cannot raise: the next tick's check does
            hooks = budget.hooks
            if hooks is not None and budget.stop is None:
                hooks["_tk_"] = budget.tick_check


_new_mark = object.__new__
_NONES: dict[int, tuple[None, ...]] = {}
"""Tuples of ``None`` by length: the filling of the ``_tk_`` ticker's chunks."""
_DEPTH_PROBE = 32
"""Script depth the budget check tests first: ``sys._getframe(n)`` walks frames in C."""
_BACK_STEPS = _DEPTH_PROBE
"""Most ``f_back`` steps the depth probe takes from one probe to the next."""
_LONG_CHUNK = 4 * _TICK_CHUNK
"""The longest ``_tk_`` chunk: taken only after a chunk that ended within :data:`_QUICK`."""
_QUICK = 0.001
"""A ``_tk_`` chunk that took less than this (s) lets the next one be :data:`_LONG_CHUNK`
ticks (still capped by the depth headroom and the steps left): cheap ticks (recursion,
short ``while`` bodies) pay a quarter of the checks, while a chunk of slow ticks falls
back to :data:`TICK_CHUNK`, so the time between two checks stays about what it was."""
_BASE = (None,) * (2 * _LONG_CHUNK)
"""Items the ticker's list keeps under its chunk, so popping never shrinks its allocation."""


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
        self.deadline_message: str | None = None
        """Set when the deadline was brought forward (the run's cleanup grace): its text."""
        self.signal: Any = None
        """The run's abort signal (set by the engine): its ``pending`` reason is polled at
        every real check, so an abort requested from a signal handler or another
        thread stops a busy script even while the event loop cannot run."""
        self.hooks: dict[str, Any] | None = None
        """The script's globals: on a trip the tick hooks there are replaced."""
        self.memory = MemoryMeter.create(limits.memory_bytes, self)
        """The in-process memory budget (``None``: no limit or no ``/proc``); see memguard."""
        self.fixed_floor = False
        """Set by the engine for sync scripts: the frames under ``__script__`` never change."""
        self._floor: frozenset[types.FrameType] | None = None
        self._floor_frames: list[types.FrameType] = []
        self._probes: tuple[int, ...] = ()
        self._ticks: list[Any] = []
        self._pop = self._ticks.pop
        self._chunk = 0
        """Ticks of the current chunk not charged yet."""
        self._cap = _TICK_CHUNK
        """The longest next ``_tk_`` chunk (:data:`_LONG_CHUNK` after a quick chunk)."""
        self._checked = self.started
        """When the last real check of ``_tk_`` ran."""
        self.tick_check: Callable[[], None] = self._tick_check
        """What ``_tk_`` is when the next tick must check and may raise (a bound method made once)."""

    def first_tick(self) -> Callable[[], Any]:
        """The ``_tk_`` hook a run starts with: its first chunk (the script starts at depth 0)."""
        return self._fill(self.limits.max_recursion)

    def close(self) -> None:
        """End the run for good: forget its globals, frames and ticker (breaks cycles).

        Its stop becomes :class:`RunEnded` (when no other stop came first) and its tick hooks
        raise it, so code of this run that something resumes later stops at its first check
        or tick (a generator's ``finally`` starts with ``_check_()``).
        """
        if self.stop is None:
            self.stop = RunEnded()
        hooks = self.hooks
        if hooks is not None and hooks.get("_tk_") is not None:
            hooks["_tick_"] = self._raise_stop
            hooks["_tk_"] = self._raise_stop
        self.hooks = None
        self.pause = None
        self._floor = None
        self._floor_frames = []
        self._ticks.clear()

    def trip(self, kind: str, message: str) -> ScriptStop:
        """Set the stop flag (first reason wins) and return the exception to raise."""
        if self.stop is None:
            self.stop = ScriptStop(
                "aborted" if kind == "aborted" else "sandbox" if kind == "sandbox" else "limit",
                message,
            )
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
        if self.deadline_message is not None:
            return self.deadline_message
        return f"Script timed out after {self.limits.timeout:g} s"

    def _poll_signal(self) -> None:
        reason = self.signal.pending
        if reason is not None:
            raise self.trip("aborted", str(reason) or "Execution aborted")

    def spend(self, steps: int) -> None:
        """Charge ``steps``; check the step limit, the deadline, the abort and the stop flag."""
        if self.stop is not None:
            raise self.stop
        if self.signal is not None:
            self._poll_signal()
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
                        self._floor = frozenset(floor)
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
            # one `sys._getframe` (an audited call: the process's audit hooks run), then
            # a few `f_back` from there to the next probe (each makes the frame object of
            # a frame that had none, so a long way up is another `sys._getframe`); frames
            # are tested by identity, not through `id()` (audited too)
            frame: types.FrameType | None = None
            last = 0
            for probe in self._probes:
                if last == 0 or probe - last > _BACK_STEPS:
                    try:
                        frame = sys._getframe(offset + probe)
                    except ValueError:  # the whole stack is shorter: so is the script's part
                        return limit - probe
                else:
                    for _ in range(probe - last):
                        frame = frame.f_back if frame is not None else None
                    if frame is None:
                        return limit - probe
                if frame in floor:
                    return limit - probe
                last = probe
        depth = self._walk(offset + 1)
        if depth > limit:
            raise self.trip("limit", f"Script exceeded the recursion limit ({limit} nested calls)")
        return limit - depth

    def _fill(self, room: int) -> Callable[[], Any]:
        # the next chunk: at most `room` ticks (and the steps left) before the
        # next check; returns what `_tk_` must be from now on
        if room > self._cap:
            room = self._cap
        if self.max_steps is not None and room > self.max_steps - self.used:
            room = self.max_steps - self.used
        if room <= 0:
            return self.tick_check
        if room > 64:
            room &= -32  # a few lengths only: `_NONES` keeps one tuple per length
        ticks = self._ticks
        if not ticks and self.used:
            ticks.extend(_BASE)  # from the second chunk on (a short run never pays it)
        mark = _new_mark(_ChunkEnd)
        mark._budget = self
        ticks.append(mark)
        left = room - 1  # ticks above the chunk's end mark
        if left > _TICK_CHUNK:
            # a long chunk: a time mark every TICK_CHUNK ticks (see _TimeMark)
            gap = _NONES.get(_TICK_CHUNK - 1)
            if gap is None:
                gap = _NONES[_TICK_CHUNK - 1] = (None,) * (_TICK_CHUNK - 1)
            while left > _TICK_CHUNK:
                ticks.extend(gap)
                timer = _new_mark(_TimeMark)
                timer._budget = self
                ticks.append(timer)
                left -= _TICK_CHUNK
        if left > 0:
            nones = _NONES.get(left)
            if nones is None:
                nones = _NONES[left] = (None,) * left
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
        if self.signal is not None:
            self._poll_signal()
        self.used += self._chunk
        self._chunk = 0
        if self.max_steps is not None and self.used > self.max_steps:
            raise self.trip("limit", f"Script exceeded the step limit ({self.max_steps} steps)")
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            raise self.trip("limit", self.timeout_message())
        self._cap = _LONG_CHUNK if now - self._checked < _QUICK else _TICK_CHUNK
        self._checked = now
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
            self._checked = time.monotonic()  # the loop's turn is not the script's time
            self.next_pause = self._checked + PAUSE_INTERVAL
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
