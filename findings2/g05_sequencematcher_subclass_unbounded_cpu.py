"""G05 (in-process HIGH; process mode bounded by the parent's hard kill): a script subclass
of `difflib.SequenceMatcher` sets `a`, `b` and `b2j` directly, so the MAX_WORK bound is never
consulted and one `find_longest_match` call runs host Python for as long as the script likes.

Mechanism: world/modules/difflib.py checks sizes only in `set_seq1`/`set_seq2`. Instances of
a script subclass are writable (guards/attributes.py `_guarded_write`: the class carries the
script mark), and `a`, `b`, `b2j` are public attribute names. The real
`find_longest_match` loops `for i in range(alo, ahi): for j in b2j[a[i]]` in host code: no
tick, no deadline check.
Shown: a = 3000 items, b2j = {0: range(20000)} (6e7 inner iterations) against timeout=1 s:
returned after 25 s here (under load). Sizes are the script's choice (1e5 x 1e6 = hours).
Expected: the run stops at ~1 s. Actual: the host thread is held ~25x past the deadline.
Run: uv run python findings2/g05_sequencematcher_subclass_unbounded_cpu.py
"""

from __future__ import annotations

import time

from scriptgate import Limits, Sandbox

SCRIPT = """
import difflib
class S(difflib.SequenceMatcher):
    pass
s = S(None, "ab", "ab")
s.a = [0] * 3000
s.b = [0] * 20000
s.b2j = {0: list(range(20000))}
s.find_longest_match(0, 3000, 0, 20000)
"""

sandbox = Sandbox([], limits=Limits(timeout=1.0))
sandbox.run_sync("1")
start = time.monotonic()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "error", result.error)
print(f"returned after {time.monotonic() - start:.1f} s against a 1 s timeout")
