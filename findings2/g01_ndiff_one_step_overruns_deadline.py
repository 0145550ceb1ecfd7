"""G01 (in-process; process mode is bounded by the parent's hard kill): `difflib.ndiff` spends
minutes of host CPU inside one `next()`, far past `Limits.timeout`.

Mechanism: world/modules/difflib.py bounds ndiff by `_chars(a) * _chars(b) <= 100 * MAX_WORK`
(2.5e9) and ticks once per line *yielded*. CPython's `Differ._fancy_replace` scores every pair
of lines of a replaced block with a char-level `SequenceMatcher.ratio()` before it yields the
first line; when every line has the same character multiset (`quick_ratio() == 1`) every pair
runs the full ratio. All of that is host Python code: no tick, no deadline check.
Shown: 120 + 120 lines of 100 shuffled chars over "abcd" (product 1.4e8, 6 % of the allowed
2.5e9) against timeout=1 s. Measured here under load: the first `next()` alone takes ~20 s
(60 lines: 5.8 s; cost grows with lines**2, so 500 lines -- still inside the bound -- is
~400 s in one call).
Expected: the run stops at ~1 s (README: timeout is the run's wall clock). Actual: it returns
only after the whole first line is computed, ok=False "timed out" reported ~20x late.
Run: uv run python findings2/g01_ndiff_one_step_overruns_deadline.py
"""

from __future__ import annotations

import time

from scriptgate import Limits, Sandbox

SCRIPT = """
import difflib, random
random.seed(1)
def line():
    s = list("abcd" * 25)
    random.shuffle(s)
    return "".join(s)
a = [line() for i in range(120)]
b = [line() for i in range(120)]
first = next(difflib.ndiff(a, b))
first[:10]
"""

sandbox = Sandbox([], limits=Limits(timeout=1.0))
sandbox.run_sync("1")
start = time.monotonic()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "error", result.error)
print(f"returned after {time.monotonic() - start:.1f} s against a 1 s timeout")
