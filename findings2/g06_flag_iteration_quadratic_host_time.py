"""G06 (in-process MEDIUM-HIGH; process mode bounded by the parent's hard kill): iterating one
script `enum.Flag` member runs quadratic host code inside a single `list(...)` call, ~18x
past the deadline.

Mechanism: world/modules/enum.py builds script Flag classes on the real EnumType and checks
member values only with `hash_bounded`; a member value may be any int the script can build
(2**200000 - 1 is 25 kB). `Flag.__iter__` is the real `_iter_member_by_value_`, which walks
`_iter_bits_lsb(value)`: one big-int `&`, `~`, `^` per set bit, O(bits**2) in total, in the
host's enum module (no tick); `list()` drains the generator in C, so the deadline is never
checked until it ends. 400,000 bits is ~4x longer, and so on.
Measured here (under load): `len(list(F.A))` with 200,000 bits, timeout=1 s -> returned
after 18.5 s.
Expected: the run stops at ~1 s, or the member value is bounded. Actual: ~18x overrun.
Run: uv run python findings2/g06_flag_iteration_quadratic_host_time.py
"""

from __future__ import annotations

import time

from scriptgate import Limits, Sandbox

SCRIPT = """
import enum
class F(enum.Flag):
    A = 2 ** 200_000 - 1
len(list(F.A))
"""

sandbox = Sandbox([], limits=Limits(timeout=1.0))
sandbox.run_sync("1")
start = time.monotonic()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "error", result.error)
print(f"returned after {time.monotonic() - start:.1f} s against a 1 s timeout")
