"""The ``difflib`` stand-in: ``SequenceMatcher``, the diff generators, ``get_close_matches``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Matching is quadratic in the worst case, so the
inputs are bounded: a pair of sequences whose lengths multiply past :data:`MAX_WORK`
is refused (for ``ndiff``, whose inner character diffs are quadratic too, the total
characters as well), and the generators tick once per line they yield and charge its
characters to the memory budget (a diff of long lines makes new lines as long: 500 pairs
of 1 MB lines grew the host 240 MB in one ``list()``). Lines and the header arguments
must be ``str`` (a subclass is copied to a plain ``str`` through ``str``'s own method):
the diff formats each into its output, so a list there was rendered in one C call.
``SequenceMatcher`` is a subclass of the real class; its ``isjunk`` is the script's
own function. Every bound reads lengths through the builtin base type and the matcher
works on exact builtin copies (:mod:`scriptgate.sandbox.guards.lengths`), so a script
``class S(str)`` whose ``__len__`` lies neither passes a bound nor runs inside the
host's matching (fourth attacker's F02).

The bounds cap one matching, not the matching of every block: ``get_matching_blocks``
calls ``find_longest_match`` once per block, each up to the length product, in host
Python (``'a' * 5000`` against ``('a' * 50 + 'b') * 98`` ran 103 s past a 1 s deadline,
findings16 F03). The matchers here reimplement CPython 3.11's ``find_longest_match``
with its work charged to the run and the budget checked every :data:`CHECK_WORK` inner
steps, and the diff functions (``unified_diff``, ``context_diff``, ``ndiff``/``Differ``
and ``get_close_matches``) are a private copy of the real module's code whose
``SequenceMatcher`` is that ticking matcher, so every block of every diff ticks.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import base_len, builtin_base, exact_copy, exact_items
from scriptgate.sandbox.guards.memory import charge_sequence
from scriptgate.sandbox.guards.ticking import TICK_STEPS, run_charge
from scriptgate.sandbox.world.modules.common import RunWorld, own_methods

__all__ = ["HOLDABLE", "MAX_WORK", "MEMBERS", "NAME", "SequenceMatcher", "build"]

NAME = "difflib"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "SequenceMatcher", "unified_diff", "context_diff", "ndiff", "get_close_matches",
    "IS_LINE_JUNK", "IS_CHARACTER_JUNK",
)  # fmt: skip
"""The members a script may use."""
MAX_WORK = 25_000_000
"""The largest product of the two sequences' lengths the matcher takes."""
MAX_ITEMS = 1_000_000
"""The longest sequence (lines, characters, candidates) the difflib stand-in takes."""


def _exact(seq: Any) -> Any:
    """``seq`` as an exact builtin sequence the host can match without running script code.

    A ``str``/``bytes``/``list``/``tuple`` (or subclass) is copied by its base type, at most
    ``MAX_ITEMS + 1`` items (the items of a list or tuple are made exact too, so
    ``class S(str)`` lines become ``str``); any other iterable is read into a list.
    """
    base: Any = builtin_base(seq)
    if base in _SLICEABLE:
        head = base.__getitem__(seq, slice(0, MAX_ITEMS + 1))
        return exact_items(head) if base in (list, tuple) else exact_copy(head)
    try:
        return exact_items(list(itertools.islice(iter(seq), MAX_ITEMS + 1)))
    except TypeError:
        raise TypeError(f"difflib takes sequences, not {type(seq).__name__}") from None


_SLICEABLE = (str, bytes, bytearray, list, tuple)


def _length(seq: Any) -> int:
    n = base_len(seq, -1)
    if n < 0:
        raise TypeError(f"difflib takes sequences, not {type(seq).__name__}")
    if n > MAX_ITEMS:
        refuse_size(f"difflib of more than {MAX_ITEMS} items refused in the sandbox")
    return n


def _pair(a: Any, b: Any) -> None:
    if _length(a) * _length(b) > MAX_WORK:
        refuse_size(
            f"difflib of sequences whose lengths multiply past {MAX_WORK} refused in the "
            "sandbox (the matching is quadratic; diff smaller pieces)"
        )


def _chars(lines: Any) -> int:
    return sum(base_len(line) if isinstance(line, str) else 1 for line in lines)


CHECK_WORK = 1 << 14
"""Inner steps of ``find_longest_match`` (about 1-2 ms of host Python) between two checks."""

_Match = difflib.Match


class _TickingMatcher(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """The real matcher whose ``find_longest_match`` charges its work and sees the deadline.

    The diff functions' own matcher (their sequences are bounded and exact already);
    :class:`SequenceMatcher` adds the bounds for the matcher a script makes.
    """

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> Any:
        """Longest matching block in ``a[alo:ahi]`` and ``b[blo:bhi]`` (CPython 3.11's result)."""
        charge = run_charge()
        if charge is None:
            return super().find_longest_match(alo, ahi, blo, bhi)
        # findings16 F03: one call is up to len(a) * len(b) steps of host Python, and
        # get_matching_blocks makes one per block: the full check on every call, then
        # CPython 3.11's loop (same results, junk and popular elements alike) charging
        # its inner steps every CHECK_WORK of them
        charge(TICK_STEPS)
        me: Any = self  # the real class's attributes (set by its set_seq1/set_seq2)
        a, b, b2j, isbjunk = me.a, me.b, me.b2j, me.bjunk.__contains__
        if ahi is None:
            ahi = len(a)
        if bhi is None:
            bhi = len(b)
        besti, bestj, bestsize = alo, blo, 0
        j2len: dict[int, int] = {}
        nothing: list[int] = []
        work = 0
        b2jget = b2j.get
        for i in range(alo, ahi):
            j2lenget = j2len.get
            newj2len: dict[int, int] = {}
            positions = b2jget(a[i], nothing)
            for j in positions:
                if j < blo:
                    continue
                if j >= bhi:
                    break
                k = newj2len[j] = j2lenget(j - 1, 0) + 1
                if k > bestsize:
                    besti, bestj, bestsize = i - k + 1, j - k + 1, k
            j2len = newj2len
            work += len(positions) + 1
            if work >= CHECK_WORK:
                charge(range(work))  # the steps, to the step budget; it checks the deadline
                work = 0
        charge(range(work))
        while (
            besti > alo
            and bestj > blo
            and not isbjunk(b[bestj - 1])
            and a[besti - 1] == b[bestj - 1]
        ):
            besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
        while (
            besti + bestsize < ahi
            and bestj + bestsize < bhi
            and not isbjunk(b[bestj + bestsize])
            and a[besti + bestsize] == b[bestj + bestsize]
        ):
            bestsize += 1
        while (
            besti > alo and bestj > blo and isbjunk(b[bestj - 1]) and a[besti - 1] == b[bestj - 1]
        ):
            besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
        while (
            besti + bestsize < ahi
            and bestj + bestsize < bhi
            and isbjunk(b[bestj + bestsize])
            and a[besti + bestsize] == b[bestj + bestsize]
        ):
            bestsize = bestsize + 1
        return _Match(besti, bestj, bestsize)


def _private_difflib() -> Any:
    """A private copy of the real ``difflib`` module whose ``SequenceMatcher`` ticks.

    ``unified_diff``, ``context_diff``, ``Differ`` (``ndiff``) and ``get_close_matches``
    look ``SequenceMatcher`` up in their module's globals; rebinding it in the real module
    would change the host's difflib, so the stand-in runs a copy's code (findings16 F03).
    """
    origin = difflib.__file__
    copy_spec = (
        None
        if origin is None
        else importlib.util.spec_from_file_location("scriptgate_private_difflib", origin)
    )
    if copy_spec is None or copy_spec.loader is None:
        raise ImportError("the difflib stand-in needs the source of the real difflib")
    module = importlib.util.module_from_spec(copy_spec)
    copy_spec.loader.exec_module(module)
    module.SequenceMatcher = _TickingMatcher  # type: ignore[attr-defined]
    return module


_DIFFLIB = _private_difflib()


class SequenceMatcher(_TickingMatcher):
    """The real ``difflib.SequenceMatcher`` with bounded inputs."""

    def set_seq1(self, a: Any) -> None:
        """Set the first sequence (bounded against the second; matched as an exact copy)."""
        a = _exact(a)
        _pair(a, getattr(self, "b", ()) or ())
        super().set_seq1(a)

    def set_seq2(self, b: Any) -> None:
        """Set the second sequence (bounded against the first; matched as an exact copy)."""
        b = _exact(b)
        _pair(getattr(self, "a", ()) or (), b)
        super().set_seq2(b)


own_methods(
    SequenceMatcher,
    ("set_seqs", "find_longest_match", "get_matching_blocks", "get_opcodes",
     "get_grouped_opcodes", "ratio", "quick_ratio", "real_quick_ratio"),
)  # fmt: skip
HOLDABLE: tuple[type, ...] = (SequenceMatcher, difflib.Match)
"""Value types this stand-in hands to scripts (the matcher and its ``Match`` tuples)."""


def _lines(a: Any, b: Any) -> tuple[list[Any], list[Any]]:
    a, b = _exact_list(a), _exact_list(b)
    _pair(a, b)
    return _texts(a, "lines to compare"), _texts(b, "lines to compare")


def _text(value: Any, what: str) -> str:
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a plain copy: the subclass's methods never run
    raise TypeError(f"{what} must be str, not {type(value).__name__}")


def _texts(lines: list[Any], what: str) -> list[Any]:
    if all(type(line) is str for line in lines):
        return lines
    return [_text(line, what) for line in lines]


_HEADERS = ("fromfile", "tofile", "fromfiledate", "tofiledate")


def _exact_list(lines: Any) -> list[Any]:
    exact = _exact(lines)
    return exact if type(exact) is list else list(exact)


MAX_PAIR = 1_000_000
"""The largest product of the longest lines ``ndiff`` compares character by character."""


def _longest(lines: list[Any]) -> int:
    return max((base_len(line) if isinstance(line, str) else 1 for line in lines), default=0)


def _ticking_lines(lines: list[Any], tick: Callable[[], None]) -> list[Any]:
    """``lines`` as ``str`` subclasses whose ``len()`` ticks (finding G01).

    ``ndiff`` scores every pair of lines of a replaced block (``ratio()``) before it yields
    the block's first line; each score starts by reading both lengths, so a run's deadline
    and steps see every pair. The lines ``ndiff`` yields are new plain ``str``.
    """

    def length(self: str) -> int:
        tick()
        return str.__len__(self)

    line_type: type = type("line", (str,), {"__slots__": (), "__len__": length})
    return [line_type(line) if type(line) is str else line for line in lines]


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""

    def generator(real: Callable[..., Iterator[str]]) -> Callable[..., Iterator[str]]:
        def diff(a: Any, b: Any, *args: Any, **kwargs: Any) -> Iterator[str]:
            a, b = _lines(a, b)
            if real is _DIFFLIB.ndiff:
                if _chars(a) * _chars(b) > 100 * MAX_WORK:
                    refuse_size(
                        "ndiff of texts this long refused in the sandbox (use unified_diff)"
                    )
                if _longest(a) * _longest(b) > MAX_PAIR:
                    refuse_size(
                        f"ndiff of lines whose lengths multiply past {MAX_PAIR} refused in the"
                        " sandbox (each pair of lines is compared by characters; use unified_diff)"
                    )
                a, b = _ticking_lines(a, run.tick), _ticking_lines(b, run.tick)
            else:
                # the headers and the line terminator are formatted into the output
                names = (*_HEADERS, "n", "lineterm")
                for position, value in enumerate(args):
                    if position < len(names) and names[position] != "n":
                        args = (
                            *args[:position],
                            _text(value, names[position]),
                            *args[position + 1 :],
                        )
                for name in (*_HEADERS, "lineterm"):
                    if name in kwargs:
                        kwargs[name] = _text(kwargs[name], name)
            return charged(real(a, b, *args, **kwargs))

        diff.__name__ = real.__name__
        return diff

    def charged(lines: Iterator[str]) -> Iterator[str]:
        # each line the diff makes is new (as long as an input line): charged as it comes,
        # twice (the line just made, already resident, and the next one, not yet)
        tick = run.tick
        for line in lines:
            tick()
            charge_sequence(line, 2 * len(line))
            yield line

    def get_close_matches(word: Any, possibilities: Any, n: int = 3, cutoff: float = 0.6) -> Any:
        candidates = _exact_list(possibilities)
        word = _exact(word)
        _length(candidates)
        if (_length(word) + 1) * _chars(candidates) > 4 * MAX_WORK:
            refuse_size("get_close_matches of this many long words refused in the sandbox")
        return _DIFFLIB.get_close_matches(word, candidates, n, cutoff)

    return {
        "SequenceMatcher": SequenceMatcher,
        "unified_diff": generator(_DIFFLIB.unified_diff),
        "context_diff": generator(_DIFFLIB.context_diff),
        "ndiff": generator(_DIFFLIB.ndiff),
        "get_close_matches": get_close_matches,
        "IS_LINE_JUNK": difflib.IS_LINE_JUNK,
        "IS_CHARACTER_JUNK": difflib.IS_CHARACTER_JUNK,
    }
