"""Host work of the file tools that must honour a run's deadline and abort.

The file tools run their searches and diffs on the host, for a script that may be
hostile. Everything here is bounded or stoppable:

- :func:`in_stoppable_thread` runs blocking work in a worker thread that the call's
  cancellation (a run's deadline, an abort, the caller) *abandons at once* and
  *stops* soon after: the work receives an :class:`AbortSignal` that fires when the
  call's own signal aborts or the call is cancelled, and checks it between steps.
- :class:`Search` is a ``grep`` pattern on the ``regex`` engine (no catastrophic
  backtracking for ``(a+)+$``). Each search of a line runs with a timeout in slices
  (50 ms, then doubling, releasing the GIL so the event loop runs), checking the stop
  signal between them; a line that keeps one search busy for more than
  :data:`LINE_SECONDS` fails the call with a clear message.
- :func:`compile_glob` matches globs (``*``, ``?``, ``[...]``, ``**``, ``{a,b}``) with
  a lazily built DFA over a Thompson NFA: linear in the path, whatever the pattern
  (``*a*a*a*a*…b`` included) — no backtracking engine is involved.
- :func:`bounded_diff` is the unified diff of an edit: common leading and trailing
  lines are trimmed in linear time, the rest is diffed by ``difflib`` only when it
  is small (otherwise shown as one replaced block), and the text is capped.

Imports only ``runtime.abort`` (tools sit on runtime); it knows nothing of paths.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import regex

from scriptgate.runtime.abort import AbortController, AbortError, AbortSignal

__all__ = [
    "LINE_SECONDS",
    "Glob",
    "Search",
    "SearchTimeout",
    "StoppedError",
    "bounded_diff",
    "compile_glob",
    "in_abandonable_thread",
    "in_stoppable_thread",
]

T = TypeVar("T")

LINE_SECONDS = 3.0
"""How long one pattern may search one line (in slices) before the call fails."""

_FIRST_SLICE = 0.05
MAX_GLOB_CHARS = 4096
_DFA_CACHE = 50_000
DIFF_MAX_LINES = 2_000
"""Changed regions up to this many lines (each side) get a line-by-line diff."""
DIFF_MAX_CHARS = 200_000
"""A diff longer than this is cut, with a note."""


class StoppedError(Exception):
    """The work was stopped: the call was cancelled or aborted."""


class SearchTimeout(Exception):
    """A pattern kept one search busy for longer than :data:`LINE_SECONDS`."""


async def in_stoppable_thread(fn: Callable[[AbortSignal], T], signal: AbortSignal | None) -> T:
    """``fn(stop)`` in a worker thread; a cancellation abandons the thread and fires ``stop``.

    ``stop`` also fires when ``signal`` aborts, and when this call returns, so an
    abandoned thread ends at its next check instead of running on. The thread is a
    *daemon* of its own (not one of anyio's pooled workers): one stuck in the kernel
    (an ``open`` that never returns) neither holds a pool slot nor keeps the
    interpreter from exiting.
    """
    controller = AbortController()
    remove = signal.add_listener(controller.abort) if signal is not None else None
    try:
        return await _in_daemon_thread(lambda: fn(controller.signal))
    finally:
        controller.abort(AbortError("The tool call ended"))
        if remove is not None:
            remove()


async def in_abandonable_thread(fn: Callable[[], T]) -> T:
    """``fn()`` in a daemon thread that a cancellation abandons at once.

    For bounded blocking work (a ``stat``, a write of known size) whose only risk
    is the kernel not returning: the caller does not wait for it past its deadline.
    """
    return await _in_daemon_thread(fn)


async def _in_daemon_thread(fn: Callable[[], T]) -> T:
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    box: list[tuple[bool, object]] = []

    def runner() -> None:
        try:
            box.append((True, fn()))
        except BaseException as exc:  # handed to the awaiting task
            box.append((False, exc))
        # the event loop may be gone: then nobody is waiting any more
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=runner, name="scriptgate host work", daemon=True).start()
    await done.wait()
    ok, value = box[0]
    if ok:
        return value  # type: ignore[return-value]
    assert isinstance(value, BaseException)
    raise value


# --------------------------------------------------------------------------- grep


class Search:
    """A compiled ``grep`` pattern whose every search is stoppable and time-bounded."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, *, ignore_case: bool = False, literal: bool = False) -> None:
        self.pattern = pattern
        flags = regex.IGNORECASE if ignore_case else 0
        source = regex.escape(pattern) if literal else pattern
        try:
            self._compiled = regex.compile(source, flags)
        except (regex.error, ValueError, OverflowError, RecursionError) as exc:
            raise ValueError(str(exc)) from exc

    def search(self, line: str, stop: AbortSignal | None) -> bool:
        """Whether the pattern occurs in ``line``.

        Raises :class:`StoppedError` once ``stop`` fires, :class:`SearchTimeout`
        when the line needs more than :data:`LINE_SECONDS`.
        """
        budget = _FIRST_SLICE
        spent = 0.0
        while True:
            if stop is not None and stop.aborted:
                raise StoppedError("stopped")
            started = time.monotonic()
            try:
                # the first slice keeps the GIL (cheaper); longer ones release it
                found = self._compiled.search(line, timeout=budget, concurrent=spent > 0)
                return found is not None
            except TimeoutError:
                spent += time.monotonic() - started
                if spent >= LINE_SECONDS:
                    raise SearchTimeout(
                        f"the pattern {self.pattern!r} ran for more than {LINE_SECONDS:g} s on "
                        "one line without finishing (it backtracks catastrophically); "
                        "simplify it or use literal=true"
                    ) from None
                budget = min(budget * 2, LINE_SECONDS - spent + _FIRST_SLICE)


# --------------------------------------------------------------------------- glob

_ANY = 0  # any character
_NOT_SLASH = 1  # any character but "/"
_CHAR = 2  # one literal character
_CLASS = 3  # a [...] class (a compiled one-character regex)
_SPLIT = 4  # epsilon to both targets
_MATCH = 5


class _Nfa:
    __slots__ = ("arg", "kind", "out1", "out2")

    def __init__(self) -> None:
        self.kind: list[int] = []
        self.arg: list[object] = []
        self.out1: list[int] = []
        self.out2: list[int] = []

    def add(self, kind: int, arg: object = None) -> int:
        self.kind.append(kind)
        self.arg.append(arg)
        self.out1.append(-1)
        self.out2.append(-1)
        return len(self.kind) - 1


class Glob:
    """A glob compiled for linear-time matching; :meth:`match` is a full match."""

    __slots__ = ("_cache", "_class_cache", "_nfa", "_start", "pattern")

    def __init__(self, pattern: str) -> None:
        if len(pattern) > MAX_GLOB_CHARS:
            raise ValueError(f"glob pattern is longer than {MAX_GLOB_CHARS} characters")
        self.pattern = pattern
        self._nfa = _Nfa()
        accept = self._nfa.add(_MATCH)
        self._start = self._closure({self._build(pattern, accept)})
        self._cache: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        self._class_cache: dict[tuple[int, str], bool] = {}

    # Fragments are built back to front: _build(pattern, next) returns the entry state
    # of an automaton for ``pattern`` that continues at ``next``.
    def _build(self, pattern: str, follow: int) -> int:
        pieces = _parse(pattern)
        state = follow
        nfa = self._nfa
        for piece in reversed(pieces):
            kind, arg = piece
            if kind == "char":
                state = self._step(_CHAR, arg, state)
            elif kind == "one":
                state = self._step(_NOT_SLASH, None, state)
            elif kind == "class":
                state = self._step(_CLASS, arg, state)
            elif kind in ("star", "globstar"):
                loop = nfa.add(_SPLIT)
                body = self._step(_NOT_SLASH if kind == "star" else _ANY, None, loop)
                nfa.out1[loop], nfa.out2[loop] = body, state
                state = loop
            elif kind == "globstar_slash":  # (?:.*/)?
                after = state
                inner = nfa.add(_SPLIT)
                anything = self._step(_ANY, None, inner)
                slash = self._step(_CHAR, "/", after)
                nfa.out1[inner], nfa.out2[inner] = anything, slash
                entry = nfa.add(_SPLIT)
                nfa.out1[entry], nfa.out2[entry] = after, inner
                state = entry
            else:  # alternatives
                assert isinstance(arg, list)
                entries = [self._build(option, state) for option in arg]
                head = entries[-1]
                for entry in reversed(entries[:-1]):
                    split = nfa.add(_SPLIT)
                    nfa.out1[split], nfa.out2[split] = entry, head
                    head = split
                state = head
        return state

    def _step(self, kind: int, arg: object, follow: int) -> int:
        state = self._nfa.add(kind, arg)
        self._nfa.out1[state] = follow
        return state

    def _closure(self, states: set[int]) -> frozenset[int]:
        nfa = self._nfa
        seen: set[int] = set()
        todo = list(states)
        while todo:
            state = todo.pop()
            if state in seen:
                continue
            seen.add(state)
            if nfa.kind[state] == _SPLIT:
                todo.append(nfa.out1[state])
                todo.append(nfa.out2[state])
        return frozenset(s for s in seen if nfa.kind[s] != _SPLIT)

    def _accepts(self, state: int, char: str) -> bool:
        kind = self._nfa.kind[state]
        if kind == _ANY:
            return True
        if kind == _NOT_SLASH:
            return char != "/"
        if kind == _CHAR:
            return self._nfa.arg[state] == char
        if kind == _CLASS:
            key = (state, char)
            hit = self._class_cache.get(key)
            if hit is None:
                compiled = self._nfa.arg[state]
                assert isinstance(compiled, re.Pattern)
                hit = compiled.fullmatch(char) is not None
                self._class_cache[key] = hit
            return hit
        return False

    def match(self, text: str) -> bool:
        """Whether ``text`` matches the whole glob."""
        current = self._start
        cache = self._cache
        out1 = self._nfa.out1
        for char in text:
            key = (current, char)
            following = cache.get(key)
            if following is None:
                following = self._closure({out1[s] for s in current if self._accepts(s, char)})
                if len(cache) >= _DFA_CACHE:
                    cache.clear()
                cache[key] = following
            current = following
            if not current:
                return False
        kinds = self._nfa.kind
        return any(kinds[s] == _MATCH for s in current)


def _parse(pattern: str) -> list[tuple[str, object]]:
    """Glob pieces, read as ``scriptgate.tools.files`` always has."""
    out: list[tuple[str, object]] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                while pattern.startswith("*", i):  # *** is **
                    i += 1
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append(("globstar_slash", None))
                else:
                    out.append(("globstar", None))
                continue
            if not (out and out[-1][0] == "star"):  # ** handled above; a*a*: collapse runs
                out.append(("star", None))
        elif c == "?":
            out.append(("one", None))
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j)
            if j == -1:
                out.append(("char", c))
            else:
                body = pattern[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                try:
                    compiled = re.compile(f"[{'^' if negate else ''}{body}]", re.DOTALL)
                except re.error as exc:
                    raise ValueError(f"bad character class [{body}]: {exc}") from exc
                out.append(("class", compiled))
                i = j + 1
                continue
        elif c == "{":
            j = pattern.find("}", i + 1)
            if j == -1:
                out.append(("char", c))
            else:
                out.append(("alternatives", pattern[i + 1 : j].split(",")))
                i = j + 1
                continue
        else:
            out.append(("char", c))
        i += 1
    return out


def compile_glob(pattern: str) -> Glob:
    """A :class:`Glob` for ``pattern``; raises ``ValueError`` for an unusable one."""
    return Glob(pattern)


# --------------------------------------------------------------------------- diff


def _format_range(start: int, stop: int) -> str:
    """difflib's unified range: ``start,length`` (1-based; ``start`` alone for one line)."""
    beginning = start + 1
    length = stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def bounded_diff(old: str, new: str, stop: AbortSignal | None = None) -> tuple[str, int | None]:
    """``(unified diff "before" → "after", first changed line of the new text or None)``."""
    a = old.split("\n")
    b = new.split("\n")
    prefix = 0
    limit = min(len(a), len(b))
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[len(a) - 1 - suffix] == b[len(b) - 1 - suffix]:
        suffix += 1
    if prefix == len(a) == len(b):
        return "", None
    context = 3
    if len(a) <= DIFF_MAX_LINES and len(b) <= DIFF_MAX_LINES:
        prefix = suffix = 0  # small files: difflib's own alignment of the whole text
    lo = max(0, prefix - context)
    a_hi = min(len(a), len(a) - suffix + context)
    b_hi = min(len(b), len(b) - suffix + context)
    sub_a, sub_b = a[lo:a_hi], b[lo:b_hi]
    if stop is not None and stop.aborted:
        raise StoppedError("stopped")
    lines = ["--- before", "+++ after"]
    if max(len(a) - suffix - prefix, len(b) - suffix - prefix) <= DIFF_MAX_LINES:
        groups = difflib.SequenceMatcher(None, sub_a, sub_b, autojunk=False).get_grouped_opcodes(
            context
        )
    else:  # one replaced block: linear, whatever the sizes
        mid = prefix - lo
        a_end, b_end = len(a) - suffix - lo, len(b) - suffix - lo
        groups = iter(
            [
                [
                    ("equal", 0, mid, 0, mid),
                    ("replace", mid, a_end, mid, b_end),
                    ("equal", a_end, len(sub_a), b_end, len(sub_b)),
                ]
            ]
        )
    size = 0
    first: int | None = None
    for group in groups:
        if stop is not None and stop.aborted:
            raise StoppedError("stopped")
        first_op, last_op = group[0], group[-1]
        lines.append(
            f"@@ -{_format_range(first_op[1] + lo, last_op[2] + lo)} "
            f"+{_format_range(first_op[3] + lo, last_op[4] + lo)} @@"
        )
        for tag, i1, i2, j1, j2 in group:
            if tag != "equal" and first is None:
                first = j1 + lo + 1
            if tag == "equal":
                chunk = [" " + line for line in sub_a[i1:i2]]
            else:
                chunk = ["-" + line for line in sub_a[i1:i2]]
                chunk += ["+" + line for line in sub_b[j1:j2]]
            for line in chunk:
                size += len(line) + 1
                if size > DIFF_MAX_CHARS:
                    lines.append(f"[diff cut at {DIFF_MAX_CHARS} characters]")
                    return "\n".join(lines), first if first is not None else prefix + 1
                lines.append(line)
    return "\n".join(lines), first if first is not None else prefix + 1
