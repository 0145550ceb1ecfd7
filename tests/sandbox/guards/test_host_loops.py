"""Host loops observe the deadline (issue 13, findings7 F03/F04/F06/F07).

A C loop (``map``/``filter``, a ``key=`` of ``sorted``/``min``/``max``) or a host stdlib
routine written in Python (``heapq.nlargest``, ``statistics.variance``, ``pprint``) over
an item count the step budget already accepted ran items x per-item cost with no check.
Two kinds of proof:

- deterministic: the guard's charge hook raises at its third piece, and the host callable
  counts its calls: a ticked loop stops within a few pieces of :data:`TICK_EVERY` items;
  without the ticking every item runs (5,000 calls);
- end to end: the findings' scripts under a short deadline end ``timed out`` within a
  bounded wall time (unticked they ran 5-77 s under a 1 s deadline on a loaded machine).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from sandbox_support import ends_at_the_deadline

from scriptgate.sandbox.guards.attributes import Budget, make_guards
from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.guards.ticking import TICK_EVERY, TickedList, ticked, ticks_itself
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.builtins import make_builtins
from scriptgate.sandbox.world.modules import heapq as heapq_stand_in
from scriptgate.sandbox.world.modules.common import RunWorld

_ITEMS = 5000
_MOST = 4 * TICK_EVERY
"""Most host calls a ticked loop makes before a charge that raises at its third piece."""


class _Tripped(Exception):
    pass


def _tripping_charge(after: int = 2) -> Callable[[Any], Any]:
    seen = [0]

    def charge(obj: Any) -> Any:
        if type(obj) is range and len(obj) == TICK_EVERY:
            seen[0] += 1
            if seen[0] > after:
                raise _Tripped
        return obj

    return charge


class _Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, value: Any) -> Any:
        self.calls += 1
        return 0


def _builtins(charge: Callable[[Any], Any]) -> dict[str, Any]:
    return make_builtins(charge, getattr, hasattr, __import__)


def _stops_early(run: Callable[[_Counting, Callable[[Any], Any]], Any]) -> int:
    func = _Counting()
    with pytest.raises(_Tripped):
        run(func, _tripping_charge())
    assert func.calls <= _MOST, f"{func.calls} host calls ran unchecked"
    return func.calls


def test_host_loops_ticked_checks_every_piece() -> None:
    seen: list[int] = []

    def charge(obj: Any) -> Any:
        seen.append(len(obj))
        return obj

    assert list(ticked(range(100), charge)) == list(range(100))
    assert seen == [TICK_EVERY] * -(-100 // TICK_EVERY)


def test_host_loops_ticked_list_iterates_ticked() -> None:
    items = TickedList(range(_ITEMS), _tripping_charge())
    with pytest.raises(_Tripped):
        sum(items)
    assert list.__len__(items) == _ITEMS


def test_host_loops_c_loop_of_slow_calls_map_is_ticked() -> None:
    # F06: sum(map(s.find, ...)) — map over a host callable is no tick-free C loop
    _stops_early(lambda f, charge: sum(_builtins(charge)["map"](f, ["b"] * _ITEMS)))


def test_host_loops_c_loop_of_slow_calls_filter_is_ticked() -> None:
    # filter pulls until its predicate is true: one next() would run every item
    _stops_early(lambda f, charge: list(_builtins(charge)["filter"](f, ["b"] * _ITEMS)))


@pytest.mark.parametrize(
    ("consumer", "make"),
    [
        ("sum", map),
        ("all", lambda f, xs: zip(map(f, xs))),
        ("all", lambda f, xs: enumerate(map(f, xs))),
    ],
)
def test_host_loops_c_loop_of_slow_calls_lazy_builtins_are_ticked(consumer: str, make: Any) -> None:
    # a host-made map/filter/zip object handed to a C consumer is read in ticked pieces
    budget = Budget(Limits(max_steps=3 * TICK_EVERY, timeout=None))
    charge = make_guards(budget, print_fn=print)["__charge__"]
    func = _Counting()
    with pytest.raises(ScriptStop):
        _builtins(charge)[consumer](make(func, ["b"] * _ITEMS))
    assert func.calls <= _MOST, f"{func.calls} host calls ran unchecked"


def test_host_loops_max_key_is_ticked() -> None:
    _stops_early(lambda f, charge: _builtins(charge)["max"](["b"] * _ITEMS, key=f))


def test_host_loops_max_key_of_iterator_is_ticked() -> None:
    _stops_early(lambda f, charge: _builtins(charge)["min"](iter(["b"] * _ITEMS), key=f))


def test_host_loops_heapq_python_loop_is_ticked() -> None:
    # F03: the host's heapq.nlargest is pure Python; it reads ticked pieces
    def run(f: _Counting, charge: Callable[[Any], Any]) -> Any:
        members = heapq_stand_in.build(RunWorld(charge, lambda: None, None, None, None))  # type: ignore[arg-type]
        return members["nlargest"](3, ["b"] * _ITEMS, key=f)

    _stops_early(run)


_S = "s = 'a' * 10**7\n"
_FINDINGS = {
    "F06-sum-map-find": _S + "sum(map(s.find, map(str, range(5000))))",
    "F06-filter-count": _S + "len(list(filter(s.count, ['b'] * 5000)))",
    "F06-sorted-key": _S + "sorted(['b'] * 5000, key=s.count)",
    "F06-max-key": _S + "max(['b'] * 5000, key=s.count)",
    "F06-str-join-map": _S + "''.join(map(str, map(s.count, ['b'] * 5000)))",
    "F06-itertools-starmap": _S
    + "import itertools\nlist(itertools.starmap(s.count, [('b',)] * 5000))",
    "F03-heapq-nlargest": "import heapq\nheapq.nlargest(3, [0] * 10**7)",
    "F07-statistics-variance": "import statistics\nstatistics.variance([0.1] * 10**7)",
    "F04-pprint-pformat": "import pprint\npprint.pformat([[1] * 1000] * 2000)",
    "F04-pprint-saferepr": "import pprint\npprint.saferepr([[1] * 1000] * 3000)",
}


@pytest.mark.parametrize("name", sorted(_FINDINGS))
def test_host_loops_findings_end_at_the_deadline(name: str) -> None:
    ends_at_the_deadline(_FINDINGS[name], 3.0)


def test_host_loops_only_the_scripts_own_functions_tick_themselves() -> None:
    # an allow-list: a key or map function skips the ticked pieces only when it is the
    # script's own function (the compiler starts each with the budget's tick)
    box = Sandbox()
    kept = box.session()
    made = kept.run_sync(
        "def f(x):\n    return x\nclass C:\n    def m(self, x):\n        return x\n"
    )
    assert made.ok, made.error
    state = kept._state
    assert ticks_itself(state["f"])
    assert ticks_itself(state["C"]().m)
    assert not ticks_itself(len)
    assert not ticks_itself("abc".find)
    assert not ticks_itself(ticked)  # a host function
    assert not ticks_itself(state["C"]())  # an object with no __call__ of its own


@pytest.mark.parametrize(
    "call",
    [
        "sorted(range(10**5), key=lambda i: s.find('b'))",
        "max(range(10**5), key=lambda i: s.find('b'))",
        "sum(map(lambda i: s.find('b'), range(10**5)))",
    ],
)
def test_host_loops_script_key_stops_at_the_deadline_by_its_own_tick(call: str) -> None:
    # 10**5 calls of a ~5 ms C scan inside the script's own lambda: minutes with no check;
    # the lambda's tick (a check every chunk of calls) stops it near the deadline
    box = Sandbox(limits=Limits(timeout=0.5))
    started = time.monotonic()
    result = box.run_sync("s = 'a' * 10**7\n" + call)
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert time.monotonic() - started < 60
