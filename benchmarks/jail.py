"""What the OS jail of process-mode workers costs (measured, never asserted).

Run with ``uv run python benchmarks/jail.py`` (Linux; about half a minute).

- each layer on its own, timed inside a disposable process the way a worker
  builds it (``_prepare``: uid, namespaces and the new root; then rlimits,
  ``no_new_privs``, Landlock, seccomp in the worker), median of ``LAYER_RUNS``;
- a new worker's start-up (forked by the zygote, until its ``ready``), a warm
  pooled run of ``x = 1 + 2`` and one tool-call round trip (a 200-call script
  minus an empty one, per call), each with the jail and without it
  (``ProcessRunner(jail=False)``), with one run per worker (the default) and with
  ``reuse_workers=True``, alternating in the same minutes; "ready worker" runs wait
  until the replacement is ready (and warmed up) and the refill thread is idle, "new
  text" runs a different source each time (no compile-cache hit, as a model's scripts),
  "back to back" runs do not wait (one run per worker: they wait for the replacement),
  with their throughput; the ratio is the default against no jail with reuse (the
  fastest; for runs per second, higher is better);
- ``--pool N``: the pool size (default 1);
- with ``--bwrap``, the same under ``launcher="bwrap"`` (one round; each worker is an
  interpreter start, so this part takes minutes on a loaded machine).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits

LIMITS = Limits(timeout=30.0, max_steps=None, max_tool_calls=100_000)
LAYER_RUNS = 5
WARM_RUNS = 40
CALLS = 200
ROUNDS = 1

_LAYERS = r"""
import json, os, sys, tempfile, time
from scriptgate.sandbox.isolation.jail import kernel, landlock, launch, privileges, report, seccomp
tmp = tempfile.mkdtemp()
settings = report.JailSettings(tmpdir=tmp)
s = time.perf_counter()
launch.preload()
preload = time.perf_counter() - s
t0 = time.perf_counter()
prepared = launch._prepare(settings)
t1 = time.perf_counter()
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    out = {}
    s = time.perf_counter(); privileges._set_rlimits(settings); out["rlimits"] = time.perf_counter() - s
    s = time.perf_counter(); kernel._libc().prctl(38, 1, 0, 0, 0); out["no_new_privs"] = time.perf_counter() - s
    s = time.perf_counter(); landlock._landlock(prepared); out["landlock"] = time.perf_counter() - s
    s = time.perf_counter(); seccomp._seccomp(prepared); out["seccomp"] = time.perf_counter() - s
    os.write(write, json.dumps(out).encode())
    os._exit(0)
os.close(write)
child = json.loads(os.read(read, 4096))
os.waitpid(pid, 0)
child["uid + namespaces + new root (launching process)"] = t1 - t0
child["preload (once per zygote: import pyseccomp, build the BPF)"] = preload
print(json.dumps(child))
"""


def _layers() -> dict[str, float]:
    runs: list[dict[str, float]] = []
    for _ in range(LAYER_RUNS):
        done = subprocess.run(
            [sys.executable, "-c", _LAYERS], capture_output=True, text=True, check=True
        )
        runs.append(json.loads(done.stdout))
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


async def _ping(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent("pong"),))


PING = AgentTool(name="ping", description="ping", execute=_ping)


async def _settled(runner: ProcessRunner) -> None:
    """Wait until the pool holds a ready worker again and the refill thread is idle."""
    while True:
        with runner._lock:
            idle = list(runner._idle)
        if idle and not getattr(runner, "_refilling", False):
            await runner._wait_ready(idle[0])
            return
        await anyio.sleep(0.001)


POOL = int(sys.argv[sys.argv.index("--pool") + 1]) if "--pool" in sys.argv else 1


async def _pool(jail: bool, reuse: bool, launcher: Any = "builtin") -> dict[str, float]:
    figures: dict[str, float] = {}
    async with ProcessRunner(
        LIMITS, pool_size=POOL, jail=jail, reuse_workers=reuse, launcher=launcher
    ) as runner:
        await runner.start()

        async def run(source: str) -> float:
            bridge = HostToolBridge([PING])
            start = time.perf_counter()
            result = await runner.run(source, bridge=bridge, tools=tool_specs([PING]))
            assert result.ok, result.error
            return time.perf_counter() - start

        starts = []
        for _ in range(3 if launcher == "bwrap" else 10):
            start = time.perf_counter()
            worker = await anyio.to_thread.run_sync(runner._spawn)
            await runner._wait_ready(worker)
            starts.append(time.perf_counter() - start)
            await runner._discard(worker)
        figures["worker start-up"] = statistics.median(starts)
        spaced = []
        for _ in range(WARM_RUNS // 4):
            await _settled(runner)
            spaced.append(await run("x = 1 + 2"))
        figures["warm run (ready worker)"] = statistics.median(spaced)
        fresh_text = []
        for i in range(WARM_RUNS // 4):
            await _settled(runner)
            fresh_text.append(await run(f"x = 1 + {i}"))
        figures["warm run, new text (ready)"] = statistics.median(fresh_text)
        if launcher != "bwrap":
            start = time.perf_counter()
            back = [await run("x = 1 + 2") for _ in range(WARM_RUNS)]
            figures["warm run (back to back)"] = statistics.median(back)
            figures["back to back: runs per s"] = WARM_RUNS / (time.perf_counter() - start)
        calls = f"for i in range({CALLS}):\n    ping()\n"
        empty = f"for i in range({CALLS}):\n    pass\n"
        per_call = []
        for _ in range(5):
            await _settled(runner)
            with_calls = await run(calls)
            await _settled(runner)
            per_call.append((with_calls - await run(empty)) / CALLS)
        figures["tool round trip"] = min(per_call)
        figures["tool round trip (median)"] = statistics.median(per_call)
    return figures


def _fmt(seconds: float, key: str = "") -> str:
    if "per s" in key:
        return f"{seconds:.0f}/s"
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def main() -> None:
    """Print the figures."""
    print("layers (median of", LAYER_RUNS, "jails built)")
    for key, value in _layers().items():
        print(f"  {key:<50} {_fmt(value)}")
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    configs = [(True, False), (False, False), (True, True), (False, True)]
    rounds: dict[tuple[bool, bool], list[dict[str, float]]] = {c: [] for c in configs}
    for _ in range(ROUNDS):
        for jail, reuse in configs:
            rounds[(jail, reuse)].append(anyio.run(_pool, jail, reuse))
    names = ["jail, 1 run/worker", "no jail, 1 run", "jail, reuse", "no jail, reuse"]
    print(f"process mode (pool_size={POOL}, best of {ROUNDS} rounds)   " + " / ".join(names))
    for key in rounds[configs[0]][0]:
        best = max if "per s" in key else min
        cells = [_fmt(best(r[key] for r in rounds[c]), key) for c in configs]
        base = best(r[key] for r in rounds[configs[0]])
        ratio = base / best(r[key] for r in rounds[configs[3]])
        print(f"  {key:<28} " + " / ".join(f"{c:>9}" for c in cells) + f"   (x{ratio:.2f})")
    if shutil.which("bwrap") and "--bwrap" in sys.argv:
        bwrap = anyio.run(_pool, True, False, "bwrap")
        print("launcher='bwrap' (one round, 1 run/worker)")
        for key, value in bwrap.items():
            print(f"  {key:<28} {_fmt(value, key):>9}")
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory():
        pass


if __name__ == "__main__":
    main()
