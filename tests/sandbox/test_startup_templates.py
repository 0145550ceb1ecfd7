"""The start-up templates: shared by every run, copied per run, never handed to one (issue 14).

A run's hooks (``guards.make_guards``) and builtins (``world.builtins.make_builtins``)
start from module-level templates made once; each run gets new dicts with its own
functions written in. A script that writes to its globals, or rebinds a builtin's
name, changes only its own run.
"""

from __future__ import annotations

from typing import Any

import anyio

from scriptgate.sandbox.engine import _Run
from scriptgate.sandbox.guards import attributes
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import builtins as world_builtins


def _snapshot() -> list[dict[str, Any]]:
    return [
        dict(attributes._STATIC_GUARDS),
        dict(world_builtins._STATIC),
        *(dict(template) for template in world_builtins._TEMPLATES.values()),
    ]


def _same(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        assert old.keys() == new.keys()
        for key, value in old.items():
            assert new[key] is value, key


def _run_all(sources: list[str], limits: Limits | None = None) -> list[ScriptResult]:
    async def go() -> list[ScriptResult]:
        sandbox = Sandbox(limits=limits or Limits(timeout=10))
        return [await sandbox.run(source) for source in sources]

    return anyio.run(go)


def _namespace(**options: Any) -> dict[str, Any]:
    run = _Run(
        bridge=None,  # type: ignore[arg-type]  # an inline run never calls a tool
        tools=(),
        limits=Limits(),
        state=None,
        signal=None,
        call_id_prefix="t",
        is_async=False,
        inline=True,
        **options,
    )
    return run.build_namespace()


def test_startup_templates_are_not_changed_by_a_script_writing_its_names() -> None:
    _run_all(["x = 1"])  # the template of these limits exists
    before = _snapshot()
    writers = [
        "x = 1\nlen = lambda v: 0\nrange = 5\nsorted = None\nhash = str",
        "def f():\n    global len, sum\n    len = sum = abs\nf()\nlen",
        "exec('len = 7\\nrange = 8\\nsorted = 9')\nlen",
        "class A:\n    pass\nsum = A\nTrue",
    ]
    results = _run_all(writers)
    assert all(result.ok for result in results), [r.error for r in results]
    _same(before, _snapshot())
    after = _run_all(
        [
            "len([1, 2])",
            "list(range(3))",
            "sorted([2, 1])",
            "sum([1, 2, 3])",
            "x",
            "print('p')\nhash(1) == hash(1)",
        ]
    )
    assert [r.value for r in after[:4]] == [2, [0, 1, 2], [1, 2], 6]
    assert after[4].error is not None
    assert after[4].error.type == "NameError"
    assert after[5].ok
    assert (after[5].output, after[5].value) == ("p\n", True)


def test_startup_each_run_gets_its_own_namespace_and_builtins() -> None:
    first = _namespace(evaluates=False, charging=True)
    second = _namespace(evaluates=False, charging=True)
    assert first is not second
    assert first is not attributes._STATIC_GUARDS
    for name in ("_tick_", "_tk_", "_getiter_", "_copy_", "_check_", "__charge__", "__budget__"):
        assert first[name] is not second[name], name
    made = [first["__builtins__"], second["__builtins__"]]
    assert made[0] is not made[1]
    for table in made:
        assert all(table is not template for template in world_builtins._TEMPLATES.values())
        assert table is not world_builtins._STATIC
    for name in world_builtins.CHARGING_NAMES:
        assert made[0][name] is not made[1][name], name


def test_startup_charging_builtins_only_for_scripts_that_name_them() -> None:
    bare = _namespace(evaluates=False, charging=False)["__builtins__"]
    assert not world_builtins.CHARGING_NAMES & set(bare)
    assert {"len", "range", "str", "__import__", "getattr"} <= set(bare)
    full = _namespace(evaluates=True, charging=False)["__builtins__"]  # eval: all of them
    assert set(full) >= world_builtins.CHARGING_NAMES


def test_startup_named_builtins_still_charge_the_run() -> None:
    sources = ["sum([1] * 5000)", "f = sorted\nf([1] * 5000)", "x = [1] * 5000\nlen(x)"]
    results = _run_all(sources, Limits(timeout=10, max_steps=1000))
    assert [r.error.type if r.error else None for r in results] == [
        "LimitExceeded",
        "LimitExceeded",
        None,
    ]
    assert results[2].value == 5000
