"""G03 (in-process HIGH): one `csv.writer(...).writerow(row)` call grows the host by GBs
against a 200 MiB memory budget (and overruns the deadline).

Mechanism: world/modules/csv.py hands the script the real C `_csv.writer`; `writerow` joins
every field of the row into one line inside C before it calls the file's `write`. A row of
N references to one 1 MB string costs the script N list slots, while the C writer builds an
N MB line (its buffer is UCS4, so ~4x N MB plus the final str). No size guard sees it
(`str.join` is charged, the csv writer is not); the memory meter only polls between steps.
Measured here (under load): N=600 -> host peak RSS +2861 MB, the run returned after 43 s
against timeout=10 s, reported as a timeout; the default N=150 below -> several hundred MB.
Expected: refused before the call (README Limits: a single call does not grow the host past
memory_bytes). Actual: the host allocates it.
Run: (ulimit -v 6000000; uv run python findings2/g03_csv_writerow_one_call_memory.py [N])
"""

from __future__ import annotations

import sys
import time

from scriptgate import Limits, Sandbox

N = int(sys.argv[1]) if len(sys.argv) > 1 else 150
SCRIPT = f"""
import csv
s = "x" * 1_000_000
row = [s] * {N}
class Sink:
    def write(self, line):
        return len(line)
csv.writer(Sink()).writerow(row)
"""


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


sandbox = Sandbox([], limits=Limits(timeout=10, memory_bytes=200 * 2**20))
sandbox.run_sync("1")
before, start = peak_mb(), time.monotonic()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "value", result.value, "error", result.error)
print(f"host peak RSS +{peak_mb() - before} MB (budget 200 MiB), {time.monotonic() - start:.1f} s")
