"""G07 (in-process HIGH): `unicodedata.normalize("NFKD", text)` of an allowed 10M-character
text grows the host by ~1 GB in one C call against a 200 MiB budget; ok=True.

Mechanism: world/modules/unicodedata.py bounds the *input* (`MAX_TEXT` = 10,000,000 chars,
"a form may grow it a few times"), but compatibility decompositions expand up to 18x:
U+FDFA (ARABIC LIGATURE SALLALLAHOU ALAYHE WASALLAM) decomposes to 18 characters. CPython
builds the result in a UCS4 buffer (180M x 4 bytes) before making the str. No size guard
sees the output; the memory meter only polls between steps.
Measured here (under load): host peak RSS +1048 MB, 8 s, ok=True, len(result)=180,000,000.
Expected: refused before the call (README Limits: one call does not grow the host past
memory_bytes). Actual: allowed.
Run: (ulimit -v 8000000; uv run python findings2/g07_unicodedata_normalize_expands_18x.py)
"""

from __future__ import annotations

from scriptgate import Limits, Sandbox

SCRIPT = """
import unicodedata
s = "\\ufdfa" * 10_000_000
len(unicodedata.normalize("NFKD", s))
"""


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


sandbox = Sandbox([], limits=Limits(timeout=30, memory_bytes=200 * 2**20))
sandbox.run_sync("1")
before = peak_mb()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "value", result.value, "error", result.error)
print(f"host peak RSS +{peak_mb() - before} MB (budget 200 MiB)")
