"""C consumers that read many input items per result observe the deadline (findings15 E01).

``itertools.dropwhile``/``filterfalse`` skipping, ``compress`` over false selectors,
``islice`` skipping to its start, ``batched`` filling a batch, ``deque(x, maxlen=0)``,
``all``/``any``, ``math.fsum`` and a script generator's ``yield from`` over a C iterator
read their whole input in one C call: the stand-in ticked only the iterator it returned,
and the up-front charge of a range spends its length (one deadline check with no step
limit). ``next(dropwhile(str, range(3*10**7)))`` ran 27 s under a 2 s deadline.

Three kinds of proof: the findings' scripts under a 0.3 s deadline end ``timed out``
within a bounded wall time (in-process: the process mode kills its worker on time); the
pieces themselves (:func:`read_ticked`, :func:`ticked`) read exactly what plain
iteration reads, charged per piece; and ordinary code gives plain Python's results in
both isolation modes, lazily (an endless input still works).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_support import MODES, ends_at_the_deadline, same_as_python, value

from scriptgate.sandbox.guards.ticking import (
    READ_EVERY,
    TICK_EVERY,
    TICK_STEPS,
    read_ticked,
    ticked,
)
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox
from scriptgate.sandbox.world.modules import itertools as itertools_stand_in
from scriptgate.sandbox.world.modules.common import RunWorld

_ATTACKS = {
    "dropwhile-str": "import itertools\nnext(itertools.dropwhile(str, range(1, 3*10**7)), None)",
    "filterfalse-str": "import itertools\nnext(itertools.filterfalse(str, range(1, 3*10**7)), None)",
    "dropwhile-bool": "import itertools\nnext(itertools.dropwhile(bool, range(1, 10**8)), None)",
    "dropwhile-partial-max": "import itertools, functools\n"
    "next(itertools.dropwhile(functools.partial(max, 1), range(1, 10**7)), None)",
    "filterfalse-none": "import itertools\nnext(itertools.filterfalse(None, range(1, 10**8)), None)",
    "islice-start": "import itertools\nnext(itertools.islice(range(10**8), 10**8 - 1, None), None)",
    "deque-maxlen-0": "import collections\ncollections.deque(range(10**8), maxlen=0)",
    "deque-maxlen-1-iterator": "import collections\ncollections.deque(iter(range(10**8)), 1)",
    "all-range": "all(range(1, 10**8))",
    "all-range-iterator": "all(iter(range(1, 10**8)))",
    "math-fsum-range": "import math\nmath.fsum(range(10**8))",
    "yield-from-range": "def g():\n    yield from range(1, 10**8)\nall(g())",
}


@pytest.mark.parametrize("name", sorted(_ATTACKS))
def test_many_reads_attack_ends_at_the_deadline(name: str) -> None:
    # unticked: 2-47 s under a 1 s deadline on a loaded machine
    ends_at_the_deadline(_ATTACKS[name], 2.0)


def test_many_reads_attack_batched_whole_range_is_stopped() -> None:
    # one batch of 10**8 items: a tuple filled in C with no check (14 s under 1 s, and
    # the host grew unseen); read in pieces, the memory poll or the deadline ends it
    box = Sandbox(limits=Limits(timeout=0.3, max_steps=None, memory_bytes=256 << 20))
    try:
        started = time.monotonic()
        result = box.run_sync("import itertools\nnext(itertools.batched(range(10**8), 10**8))")
        elapsed = time.monotonic() - started
    finally:
        box.close()
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert elapsed < 2.0, f"{elapsed:.1f} s under a 0.3 s deadline"


# -- the pieces -----------------------------------------------------------------------------


class _Counted:
    def __init__(self) -> None:
        self.pieces = 0

    def __call__(self, obj: Any) -> Any:
        if obj is TICK_STEPS:
            self.pieces += 1
        return obj


class _Tripped(Exception):
    pass


def test_many_reads_attack_compress_false_selectors_read_in_pieces() -> None:
    # false selectors are bounded by memory in a real run (a list), so the proof is the
    # charge: the selectors are read in pieces, each charged, before C skips them
    def charge(obj: Any) -> Any:
        if obj is TICK_STEPS:
            raise _Tripped
        return obj

    members = itertools_stand_in.build(RunWorld(charge, lambda: None, None, None, None))  # type: ignore[arg-type]
    with pytest.raises(_Tripped):
        next(members["compress"](range(10**6), [0] * 10**5), None)


def test_many_reads_read_ticked_charges_a_range_per_piece() -> None:
    charge = _Counted()
    n = 10 * READ_EVERY + 3
    assert all(read_ticked(range(1, n + 1), charge))
    assert charge.pieces == 11


@pytest.mark.parametrize(
    "make",
    [list, tuple, lambda r: iter(list(r)), lambda r: iter(r), lambda r: (x for x in list(r))],
)
def test_many_reads_ticked_reads_what_plain_iteration_reads(make: Any) -> None:
    charge = _Counted()
    assert list(ticked(make(range(1000)), charge, 7)) == list(range(1000))
    assert charge.pieces == -(-1000 // 7)


def test_many_reads_ticked_list_read_live_as_it_shrinks_and_grows() -> None:
    # a list changed while it is read: the pieces see every change plain iteration sees
    for every in (TICK_EVERY, 3):
        shrinking = list(range(100))
        seen = []
        for x in ticked(shrinking, _Counted(), every):
            seen.append(x)
            if x == 10:
                del shrinking[50:]
        assert seen == list(range(50))
        growing = [0]
        seen = []
        for x in ticked(growing, _Counted(), every):
            seen.append(x)
            if len(growing) < 40:
                growing.append(len(growing))
        assert seen == list(range(40))


def test_many_reads_shared_iterator_read_no_further_than_asked() -> None:
    it = iter(range(10))
    piece = ticked(it, _Counted(), 4)
    assert [next(piece), next(piece)] == [0, 1]
    assert next(it) == 2  # nothing read ahead


# -- ordinary code ---------------------------------------------------------------------------


@pytest.fixture(scope="module", params=MODES)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    mode: Isolation = request.param
    sandbox = Sandbox(isolation=mode, limits=Limits(timeout=20))
    yield sandbox
    sandbox.close()


_OK = {
    "dropwhile": "import itertools\nlist(itertools.dropwhile(lambda x: x < 5, range(2000)))[:3]",
    "dropwhile-host": "import itertools\nlist(itertools.dropwhile(bool, [3, 2, 0, 4, 0]))",
    "filterfalse": "import itertools\nlist(itertools.filterfalse(lambda x: x % 3, range(3000)))[-3:]",
    "filterfalse-none": "import itertools\nlist(itertools.filterfalse(None, [0, 1, '', 'a', None]))",
    "compress": "import itertools\nlist(itertools.compress('abcdef' * 200, [1, 0, 1] * 400))[:9]",
    "islice": "import itertools\nlist(itertools.islice(range(5000), 10, 4000, 997))",
    "islice-shared": "import itertools\nit = iter(range(2000))\n"
    "a = list(itertools.islice(it, 3))\nb = list(itertools.islice(it, 600, 602))\n(a, b, next(it))",
    "islice-endless": "import itertools\nlist(itertools.islice(itertools.count(), 10**4, 10**4 + 3))",
    "dropwhile-endless": "import itertools\nnext(itertools.dropwhile(bool, itertools.cycle([1, 1, 0])))",
    "compress-endless": "import itertools\n"
    "list(itertools.islice(itertools.compress(itertools.count(), itertools.cycle([0, 1])), 4))",
    "deque-maxlen": "import collections\nlist(collections.deque(range(3000), maxlen=3))",
    "deque-maxlen-0": "import collections\nit = iter(range(3000))\n"
    "collections.deque(it, maxlen=0)\nnext(it, 'done')",
    "all-any": "(all(range(1, 3000)), any(range(0, 3000)), all(range(3000)), any([0] * 3000),"
    " all(iter([1] * 3000)), any(x > 2998 for x in range(3000)), all([]), any(()))",
    "all-dict-set-text": "(all({i: 0 for i in range(1, 900)}), any(set(range(900))), all('ab' * 600))",
    "fsum": "import math\n(math.fsum(range(3000)), math.fsum([0.1] * 1000))",
    "yield-from": "def g(x):\n    r = yield from x\n    yield r\n"
    "(list(g(range(1500)))[-2:], list(g([1, 2])), list(g('abc')))",
    "yield-from-return-value": "class C:\n    def __iter__(self):\n        return self\n"
    "    def __next__(self):\n        raise StopIteration(5)\n"
    "def g():\n    r = yield from C()\n    yield r\nlist(g())",
}


@pytest.mark.parametrize("name", sorted(_OK))
def test_many_reads_ok_gives_plain_pythons_results(box: Sandbox, name: str) -> None:
    same_as_python(box, _OK[name])


def test_many_reads_ok_batched_gives_the_batches(box: Sandbox) -> None:
    # Python 3.11 has no itertools.batched: the sandbox's own, read in pieces
    got = value(box, "import itertools\n[b[-2:] for b in itertools.batched(range(2000), 700)]")
    assert got == [[698, 699], [1398, 1399], [1998, 1999]]
    got = value(
        box, "import itertools\nlist(itertools.islice(itertools.batched(itertools.count(), 3), 2))"
    )
    assert got == [[0, 1, 2], [3, 4, 5]]
