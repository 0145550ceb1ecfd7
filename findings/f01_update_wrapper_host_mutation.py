"""F01 (in-process, HIGH): functools.update_wrapper writes onto host-global objects.

Mechanism: the functools stand-in passes `update_wrapper(wrapper, wrapped)` straight to the
real `functools.update_wrapper`, which `setattr`s `__module__/__name__/__qualname__/__doc__/
__annotations__/__wrapped__` on `wrapper` and `wrapper.__dict__.update(wrapped.__dict__)`.
`wrapper` may be any value the script holds: the host's own `ToolError` class, the world's
module-global builtins (`type`, `pow`, `format`, `slice`), `collections.Counter`... None of those
writes go through the write guard (`_guarded_write` refuses `ToolError.x = 1`).

Shown here, with two SEPARATE Sandbox objects in one host process (two tenants):
  1. run A renames the host's ToolError class (every later ToolError `error.type` and
     `type(e).__name__` in every sandbox of the process reads "LimitExceeded"),
     and plants a mutable list on the host's `type` builtin function (`type.box`).
  2. run B (a fresh Sandbox) reads `type.box` -> the very list run A left: a cross-run,
     cross-sandbox shared channel, and sees ToolError renamed.
Expected: a script cannot write to host objects; nothing survives a run. Actual: both happen.
Process mode (`... process`): separate Sandboxes get separate workers, but within one
Sandbox a pooled worker keeps `type.box` for a later run it serves (seen in the 2nd of 3 runs).
Run: uv run python findings/f01_update_wrapper_host_mutation.py [process]
"""

from __future__ import annotations

import sys

from scriptgate import Sandbox, tool
from scriptgate.sandbox.guards.errors import ToolError


@tool
def fail(x: str) -> str:
    """Always fails."""
    raise RuntimeError("boom")


RUN_A = """
import functools, typing
class Carrier:
    pass
c = Carrier()
c.box = ["secret of tenant A"]
functools.update_wrapper(type, c)            # type_of.__dict__ gets `box`
T = typing.TypeVar("LimitExceeded")
def spoof():
    pass
functools.update_wrapper(spoof, T)           # spoof.__name__ = "LimitExceeded"
try:
    functools.update_wrapper(ToolError, spoof)   # host ToolError.__name__ = "LimitExceeded"
except AttributeError:
    pass  # the class __dict__ update fails, after the setattrs are done
"planted"
"""

RUN_B = """
got = type.box           # run A's list, read in another Sandbox
got.append("tenant B was here")
try:
    fail(x="1")
except ToolError as e:
    name = type(e).__name__
[got, name, ToolError.__name__]
"""

iso = sys.argv[1] if len(sys.argv) > 1 else "in_process"
a = Sandbox([fail], isolation=iso).run_sync(RUN_A)
print("run A:", a.ok, a.value, a.error)
b = Sandbox([fail], isolation=iso).run_sync(RUN_B)
print("run B:", b.ok, b.value, b.error)
print("host ToolError class is now named:", ToolError.__name__, "module", ToolError.__module__)
c = Sandbox([fail]).run_sync("fail(x='1')")
print("an unrelated later run's error.type:", c.error.type if c.error else None)
