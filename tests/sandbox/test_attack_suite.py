"""Every attack script — ``attacks.py``, ``attacks_extra.py``, ``attacks_render.py``,
``attacks_modules.py``, ``attacks_onecall.py``, ``attacks_boundary.py`` — in both modes.

In-process, every escape is rejected and every resource attack is refused or stopped
(``error.kind == "limit"`` or a guard's refusal). In process isolation the same
scripts give the same results; the attacks that run until a deadline or a memory
budget stops them (``DEADLINE_ATTACKS``: catastrophic regexes, loops of large copies)
run in both modes under short limits. The attacks no in-process guard can refuse
(real interpreter crashes and straight-line C work past the deadline:
``PROCESS_ONLY_ATTACKS``) are contained: the worker dies or is killed at the deadline,
the host reports it, the pool carries on. One sandbox per mode and limits serves the
whole module (the process pool is loop-agnostic).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from sandbox_support import load

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Isolation, Sandbox

extra = load("attacks_extra.py")
attacks = extra.base()
render = load("attacks_render.py")  # render-size, sum() and C-consumption attacks (sizeguard)
stand_ins = load("attacks_modules.py")  # the issue-14 stand-ins
onecall = load("attacks_onecall.py")  # one-call allocations and lying subclasses (issue 13 §2)
boundary = load("attacks_boundary.py")  # issue 13's fresh-eyes findings
BOTH_MODES: list[Any] = [
    *attacks.ATTACKS,
    *extra.EXTRA_ATTACKS,
    *render.RENDER_ATTACKS,
    *stand_ins.MODULE_ATTACKS,
    *onecall.ONE_CALL_ATTACKS,
    *onecall.RENDER_SCOPE_ATTACKS,
    *onecall.QUADRATIC_INT_ATTACKS,
    *boundary.BOUNDARY_ATTACKS,
]
_ONLY_THE_DEADLINE_ENDS = {
    "time-sleep",
    "m-sleep-past-deadline",
    "m-asyncio-sleep-past-deadline",
    "b-eval-sleep-loop-past-deadline",
    "b-eval-cpu-loop-past-deadline",
    "hash-flood-loop",
    "x-hash-flood-set-add",
    "x-hash-flood-dict",
    "x-async-endless-gather",
}
"""Attacks of the lists above that nothing but the deadline ends: run under the short one."""
_ONLY_THE_MEMORY_BUDGET_ENDS = {"x-memory-growth-append"}
"""Attacks of the lists above that only the memory budget ends: run under the small one."""
DEADLINE: list[Any] = [
    *extra.DEADLINE_ATTACKS,
    *stand_ins.MODULE_DEADLINE_ATTACKS,
    *onecall.HOST_LOOP_DEADLINE_ATTACKS,
    *(a for a in BOTH_MODES if a.id in _ONLY_THE_DEADLINE_ENDS),
]
MEMORY: list[Any] = [
    *extra.MEMORY_ATTACKS,
    *stand_ins.MODULE_MEMORY_ATTACKS,
    *onecall.ONE_CALL_MEMORY_ATTACKS,
    *(a for a in BOTH_MODES if a.id in _ONLY_THE_MEMORY_BUDGET_ENDS),
]
BOTH_MODES = [
    a
    for a in BOTH_MODES
    if a.id not in _ONLY_THE_DEADLINE_ENDS and a.id not in _ONLY_THE_MEMORY_BUDGET_ENDS
]
PROCESS_ONLY: list[Any] = list(extra.PROCESS_ONLY_ATTACKS)
# Process-only attacks run to a deadline or a memory cap: keep both small.
PROCESS_ONLY_LIMITS = replace(attacks.ATTACK_LIMITS, timeout=2.0, memory_bytes=384 << 20)


def _attack_sandbox(limits: Limits, isolation: Isolation = "in_process") -> Iterator[Sandbox]:
    sandbox = Sandbox(attacks.attack_tools(), limits=limits, isolation=isolation)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def in_process() -> Iterator[Sandbox]:
    yield from _attack_sandbox(attacks.ATTACK_LIMITS)


@pytest.fixture(scope="module")
def process() -> Iterator[Sandbox]:
    yield from _attack_sandbox(attacks.ATTACK_LIMITS, "process")


@pytest.fixture(scope="module")
def in_process_deadline() -> Iterator[Sandbox]:
    yield from _attack_sandbox(extra.DEADLINE_LIMITS)


@pytest.fixture(scope="module")
def process_deadline() -> Iterator[Sandbox]:
    yield from _attack_sandbox(extra.DEADLINE_LIMITS, "process")


@pytest.fixture(scope="module")
def in_process_memory() -> Iterator[Sandbox]:
    yield from _attack_sandbox(extra.MEMORY_LIMITS)


@pytest.fixture(scope="module")
def process_memory() -> Iterator[Sandbox]:
    yield from _attack_sandbox(extra.MEMORY_LIMITS, "process")


@pytest.fixture(scope="module")
def process_short() -> Iterator[Sandbox]:
    yield from _attack_sandbox(PROCESS_ONLY_LIMITS, "process")


def _check(attack: Any, result: ScriptResult) -> None:
    if attack.expect == "ok":
        assert result.ok, result.error
        if attack.has_value:
            assert result.value == attack.value
    else:
        assert not result.ok, f"attack ran: value={result.value!r}"
        assert result.error is not None
        assert result.error.kind == attack.expect, result.error
        if attack.message:
            assert attack.message in result.error.message, result.error
    assert isinstance(result.to_json(), dict)


def _run(sandbox: Sandbox, attack: Any) -> None:
    before = repr(attacks.HOST_CONFIG)
    _check(attack, sandbox.run_sync(attack.source))
    assert repr(attacks.HOST_CONFIG) == before


def test_attack_suite_covers_every_category_with_enough_scripts() -> None:
    everything = [*BOTH_MODES, *DEADLINE, *MEMORY, *PROCESS_ONLY]
    assert len(everything) >= 150
    assert len({a.id for a in everything}) == len(everything)
    categories = {a.category.split("-")[0] for a in everything}
    assert {"6", "7.1", "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8"} <= categories
    assert {a.category for a in PROCESS_ONLY} == {"7.1-crash", "8-cpu"}
    assert {a.category for a in DEADLINE} == {"8-cpu"}
    assert {a.category for a in MEMORY} == {"8-memory"}


@pytest.mark.parametrize("attack", BOTH_MODES, ids=lambda a: a.id)
def test_attack_suite_in_process(in_process: Sandbox, attack: Any) -> None:
    _run(in_process, attack)


@pytest.mark.parametrize("attack", BOTH_MODES, ids=lambda a: a.id)
def test_attack_suite_process_isolation(process: Sandbox, attack: Any) -> None:
    _run(process, attack)


@pytest.mark.parametrize("attack", DEADLINE, ids=lambda a: a.id)
def test_attack_suite_deadline_in_process(in_process_deadline: Sandbox, attack: Any) -> None:
    _run(in_process_deadline, attack)


@pytest.mark.parametrize("attack", DEADLINE, ids=lambda a: a.id)
def test_attack_suite_deadline_process_isolation(process_deadline: Sandbox, attack: Any) -> None:
    _run(process_deadline, attack)
    # stopped by the worker's own budget: the pool carries on
    assert process_deadline.run_sync("sum([1, 2, 3])").value == 6


@pytest.mark.parametrize("attack", MEMORY, ids=lambda a: a.id)
def test_attack_suite_memory_in_process(in_process_memory: Sandbox, attack: Any) -> None:
    _run(in_process_memory, attack)


@pytest.mark.parametrize(
    "attack", [a for a in MEMORY if a.id not in onecall.IN_PROCESS_ONLY], ids=lambda a: a.id
)
def test_attack_suite_memory_process_isolation(process_memory: Sandbox, attack: Any) -> None:
    _run(process_memory, attack)
    assert process_memory.run_sync("sum([1, 2, 3])").value == 6


@pytest.mark.parametrize("attack", PROCESS_ONLY, ids=lambda a: a.id)
def test_attack_suite_process_isolation_contains(process_short: Sandbox, attack: Any) -> None:
    _run(process_short, attack)
    # the pool survived: the next script runs normally
    assert process_short.run_sync("sum([1, 2, 3])").value == 6


def test_attack_suite_process_pool_survived_everything(process: Sandbox) -> None:
    result = process.run_sync("print('still here')\n40 + 2")
    assert (result.ok, result.value, result.output) == (True, 42, "still here\n")
