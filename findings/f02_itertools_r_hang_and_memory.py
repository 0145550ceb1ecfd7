"""F02 (in-process, HIGH): one itertools call with a huge `r` runs past the deadline and
grows the host by gigabytes.

Mechanism: the itertools stand-in wraps `combinations`, `permutations` and
`combinations_with_replacement` with `run.lazy_first` (charges the iterable only); `r` is
passed to CPython unchecked, and CPython allocates and fills an index array of `r` machine
words (and for permutations a `cycles` array too) in the constructor, before the first item,
even when r > len(pool). Issue 13 asks for `itertools r` to be bounded.

Expected: a limit refusal, host growth <= memory_bytes (200 MiB here), finished by the deadline
(3 s). Actual (this machine, under load): combinations r=3e8 -> 5-12 s against a 3 s deadline, +2.3 GB peak RSS;
permutations / combinations_with_replacement r=1.5e8 -> +1.1 GB each, the run reports ok=True.
Run: uv run python findings/f02_itertools_r_hang_and_memory.py   (needs ~3 GB free memory)
"""

from __future__ import annotations

import subprocess
import sys
import time

from scriptgate import Limits, Sandbox


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


CASES = (
    "itertools.permutations(range(3), r=150_000_000)",
    "itertools.combinations_with_replacement([], r=150_000_000)",
    "itertools.combinations(range(10), r=300_000_000)",
)


def child(call: str) -> None:
    """Run one case in this process and print its figures."""
    before, start = peak_mb(), time.monotonic()
    result = Sandbox([], limits=Limits(timeout=3.0, memory_bytes=200 * 2**20)).run_sync(
        f"import itertools\nx = {call}\n'done'"
    )
    print(
        f"{call}: {time.monotonic() - start:5.1f}s, peak RSS +{peak_mb() - before} MB, "
        f"ok={result.ok} error={result.error}"
    )


if len(sys.argv) > 1:
    child(CASES[int(sys.argv[1])])
else:
    for index in range(len(CASES)):
        subprocess.run([sys.executable, __file__, str(index)], check=False, timeout=120)
