"""F03 (in-process, MEDIUM-HIGH): single bytes/int C calls allocate past the memory budget,
and the run reports ok.

Mechanism: the str width methods are wrapped (`_width_method`, `_expandtabs`, `_join` in
guards/attributes.py apply to `str` only); on `bytes`/`bytearray`, `center`, `ljust`,
`rjust`, `zfill`, `expandtabs`, `join` and `replace` are the raw C methods, and `int.to_bytes(length)`
is not bounded at all (issue 13 lists `int.to_bytes` and `bytes.join`). One call makes
a buffer of any size; nothing charges it.

Expected: limit refusal above the budget (memory_bytes=200 MiB here). Actual: each call below
grows the host by 284-475 MB (measured, each in its own child process) with ok=True. A larger size
(`(1).to_bytes(8_000_000_000)`) takes the host process to 8 GB or MemoryError.
Run: uv run python findings/f03_bytes_and_to_bytes_memory.py
"""

from __future__ import annotations

import subprocess
import sys

from scriptgate import Limits, Sandbox


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


CASES = (
    '(1).to_bytes(500_000_000, "big")',
    "int.to_bytes(1, 400_000_000)",
    'b"x".center(300_000_000)',
    'bytearray(b"x").ljust(300_000_000)',
    'b"x".zfill(300_000_000)',
    'b"\\t".expandtabs(300_000_000)',
    'b"-".join([b"a" * 1_000_000] * 300)',
    '(b"a" * 10_000).replace(b"", b"b" * 30_000)',
)


def child(expr: str) -> None:
    """Run one case in this process and print its figures."""
    before = peak_mb()
    result = Sandbox([], limits=Limits(memory_bytes=200 * 2**20)).run_sync(f"x = {expr}\nlen(x)")
    print(f"{expr}: peak RSS +{peak_mb() - before} MB, ok={result.ok} value={result.value}")


if len(sys.argv) > 1:
    child(CASES[int(sys.argv[1])])
else:
    for index in range(len(CASES)):
        subprocess.run([sys.executable, __file__, str(index)], check=False, timeout=120)
