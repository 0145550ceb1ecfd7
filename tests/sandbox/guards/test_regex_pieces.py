"""Long regex scans in pieces (``scriptgate/sandbox/guards/regex.py``, findings10 F07).

``re.findall('', 'a' * 10**7)`` is one C call of ten million matches; ``regex`` counts its
timeout in CPU time, so on a loaded host it ran 2.3 s under a 1 s deadline. A long
subject gets one call of at most a quarter of the time left, then is scanned in pieces of
matches with the wall clock read between them. These pin the pieces' results (those of
``finditer``/``split``/``sub``) and the bound, under a clock that runs twice as fast as the
process's CPU time (a host loaded 2:1, made deterministic).
"""

from __future__ import annotations

import random
import re
import time
import types
from typing import Any

import pytest
import regex

from scriptgate.sandbox.guards import regex as regex_guard
from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


class _Stopped(Exception):
    pass


class _Budget:
    def __init__(self, seconds: float) -> None:
        self.stop: BaseException | None = None
        self.pause = None
        self.deadline: float | None = regex_guard.time.monotonic() + seconds

    def trip(self, kind: str, message: str) -> BaseException:
        return _Stopped(kind, message)

    def timeout_message(self) -> str:
        return "timed out"


_PATTERNS = [
    "",
    "x*",
    "a|b",
    "(a)|(b)",
    "(a)(b)?",
    r"\b",
    "(?<=a)",
    "ab*",
    "^",
    "$",
    r"\w+",
    "a(?=b)",
]


@pytest.mark.parametrize("piece", [1, 2, 4096])
def test_regex_pieces_give_finditer_s_matches_split_s_parts_and_sub_s_text(
    piece: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(regex_guard, "_PIECE", piece)
    rng = random.Random(7)
    for _ in range(150):
        subject = "".join(rng.choice("abx ") for _ in range(rng.randint(0, 25)))
        for pattern in _PATTERNS:
            compiled = regex.compile(pattern)
            budget: Any = _Budget(60)
            spans = [
                found.span()
                for part in regex_guard._pieces(budget, compiled, subject, 0, regex_guard._MAXSIZE)
                for found in part
            ]
            assert spans == [found.span() for found in compiled.finditer(subject)], pattern
            for most in (0, 1, 2, -1):
                expected = compiled.split(subject, most)
                assert regex_guard._split(budget, compiled, subject, most) == expected
                for repl in ("", "-", "ab"):
                    replaced = regex_guard._substituted(budget, compiled, repl, subject, most, True)
                    assert replaced == compiled.subn(repl, subject, most), (pattern, repl)


def test_regex_pieces_findall_and_split_results_are_re_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regex_guard, "PIECED_FROM", 0)
    monkeypatch.setattr(regex_guard, "_first_call", lambda *args: None)  # always in pieces
    subject = "ab x" * 3000 + "zz"
    source = (
        f"import re\ns = {subject!r}\n"
        "[re.findall('(a)(b)?', s)[-2:], re.findall(r'\\w+', s)[:3], re.findall('(x)', s)[:2],"
        " len(re.findall('', s)), re.split('(x)|(y)', s, 2), re.split('z', s)[-2:],"
        " re.findall(b'a', s.encode())[:2]]"
    )
    result = Sandbox([], limits=Limits(timeout=30)).run_sync(source)
    assert result.ok, result.error
    expected = [
        re.findall("(a)(b)?", subject)[-2:],
        re.findall(r"\w+", subject)[:3],
        re.findall("(x)", subject)[:2],
        len(re.findall("", subject)),
        re.split("(x)|(y)", subject, maxsplit=2),
        re.split("z", subject)[-2:],
        ["a", "a"],  # bytes come back through the result's JSON as text
    ]
    assert result.value == [list(map(list, x)) if i == 0 else x for i, x in enumerate(expected)]


@pytest.mark.parametrize("call", ["p.findall(s)", "p.split(s)", "p.sub('', s)", "p.subn('', s)"])
def test_regex_pieces_many_matches_end_near_a_wall_clock_deadline(
    call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the wall clock runs at twice the CPU time regex's timeout counts: a loaded host
    start = time.process_time()
    fake = types.SimpleNamespace(monotonic=lambda: 2 * (time.process_time() - start))
    monkeypatch.setattr(regex_guard, "time", fake)
    budget = _Budget(1.0)
    pattern = regex_guard.make_re()["compile"]("")
    code = compile(call, FILENAME, "eval")
    with pytest.raises(_Stopped):
        eval(code, {regex_guard.BUDGET_NAME: budget, "p": pattern, "s": "a" * 10_000_000})
    assert budget.deadline is not None
    late = fake.monotonic() - budget.deadline
    assert late < 0.3, f"{late:.2f} s past the deadline on the 2:1 clock"
