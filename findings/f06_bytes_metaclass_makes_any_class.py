"""F06 (in-process CRITICAL for the guard layer; process mode: same inside the jail):
`type(bytes)` hands the script a holdable metaclass, whose 3-argument call builds classes with
any dunder the compiler refuses; `__index__` then walks past every size guard.

Mechanism: world/builtins.py `_sized_bytes` builds the `bytes`/`bytearray` stand-ins with a
metaclass `bytes_type` whose class dict carries `HOLDABLE_MARK = True` (so its class
methods are readable). `type(bytes)` -> `type_of` -> `check_value(bytes_type)` ->
`holdable_class` -> `_marked(bytes_type)` is True, so the metaclass itself crosses. Calling it
with three arguments is `type.__new__`: `M("X", (object,), {"__index__": f})` makes a class
with a namespace the compile policy never saw (`__index__`, `__del__`, `__getattr__`,
`__get__`, `__await__`, `__format__`, `__class__`...). Its instances are holdable too
(`_marked` finds the mark through the metaclass).
Shown: an object whose `__index__` returns 300,000,000 makes `"ab" * x` (the `_mul_` guard
only measures real ints) allocate 600 MB in one C call against a 200 MiB budget, ok=True;
the same with `10**10` is a 20 GB request (MemoryError under `ulimit -v`, an OOM kill without).
Also measured with `__index__` -> 200,000,000, all ok=True: `[0] * x` (a 1.6 GB list),
`b"y" * x`, `"x".ljust(x)`, `"1".zfill(x)`, `"1".center(x)` (the str width wrappers check
ints only). Held: M-made instances are not writable (`d.me = d` refused), a `__del__` run after
the run dies on the cleared globals (NameError `_tk_`), `M.mro` is refused.
Expected: `type(bytes)` refused (README: `type` gives the type a value has, when the script may
hold it) and size guards hold. Actual: both broken.
Run: uv run python findings/f06_bytes_metaclass_makes_any_class.py
"""

from __future__ import annotations

import subprocess
import sys

from scriptgate import Limits, Sandbox

SCRIPT = """
M = type(bytes)
def size(self):
    return 300_000_000
Big = M("Big", (object,), {"__index__": size})
x = Big()
s = "ab" * x
[repr(M), repr(Big), len(s)]
"""


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) // 1024
    return 0


if len(sys.argv) > 1:
    iso = sys.argv[1]
    before = peak_mb()
    limits = Limits(memory_bytes=200 * 2**20)
    result = Sandbox([], isolation=iso, limits=limits).run_sync(SCRIPT)  # type: ignore[arg-type]
    print(iso, "ok", result.ok, "value", result.value, "error", result.error)
    print(iso, "host peak RSS +", peak_mb() - before, "MB (budget 200 MiB)")
else:
    for mode in ("in_process", "process"):
        subprocess.run([sys.executable, __file__, mode], check=False, timeout=120)
