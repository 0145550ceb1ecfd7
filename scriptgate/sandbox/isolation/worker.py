"""The worker process of ``isolation="process"``: runs untrusted scripts, one job at a time.

The worker side of ``isolation/``: imports the engine and the bridge; must not import
:mod:`.parent` or the model-facing text.

The parent (:mod:`scriptgate.sandbox.isolation.parent`) starts a *zygote* (fork server)::

    python -I -B -c "<bootstrap>" <package parent dir> <config json with "mode": "zygote">

with an empty environment, a ``SOCK_SEQPACKET`` control socket as ``stdin``,
``stderr`` piped (read only if it dies before it is ready), an empty temporary
working directory and a session of its own. The bootstrap registers bare
``scriptgate``/``scriptgate.runtime``/``scriptgate.sandbox`` package objects, so
only the engine's own modules are imported, not the whole library. The zygote
imports and warms up the engine once, then forks a fresh worker (through a small
monitor process that reports the worker's exit status) whenever the parent asks:
a new worker costs milliseconds instead of an interpreter start. With
``spawn="exec"`` the parent starts each worker directly with the same command
(without the zygote mode) and the socket as ``stdin``/``stdout``.

Before it runs anything it did not write itself, the worker

1. (forked workers) starts a session and process group of its own and moves to
   its own empty temporary directory;
2. keeps the channel on a private descriptor and points 0/1/2 at ``/dev/null``
   (a stray write can never corrupt the framing), closes every other inherited
   descriptor, clears the environment (the engine is already imported: nothing
   else is imported on behalf of a script later, stand-in modules are part of it);
3. lowers the recursion limit and applies the resource limits: ``RLIMIT_CORE``
   0, ``RLIMIT_FSIZE`` 0, a small ``RLIMIT_NOFILE``, ``RLIMIT_AS`` from
   :attr:`Limits.memory_bytes` and a lifetime ``RLIMIT_CPU`` hard limit; before
   each job the soft CPU limit is set to "used so far + this job's budget", so
   a job that burns CPU past its budget gets ``SIGXCPU``.

Then it loops: read a job, run :func:`scriptgate.sandbox.engine.run_script` with
a :class:`PipeToolBridge`, send the :class:`ScriptResult` back. A tool call with
no other call pending waits for its reply on the socket itself (``poll(2)``, the
event loop blocked for at most :data:`DIRECT_WAIT`), so a fast tool's round trip
costs no event-loop wake-ups here; a slower reply, and every call made while
another is pending, is awaited on the event loop. Messages are
length-prefixed JSON (4-byte big-endian length, UTF-8 JSON); nothing is ever
pickled. The protocol, worker → parent: ``{"op": "ready"}``, ``{"op": "call",
"id", "tool", "args"}``, ``{"op": "cancel", "id"}`` (a pending call the script
no longer waits for), ``{"op": "result", "result", "cpu", "retire"}`` (the
result's call records as ``[id, tool, arguments, status, duration_ms, error]``
arrays, or as the id alone of a call the parent answered whose record says
what the reply said: the parent builds that record itself); parent →
worker: ``{"op": "run", ...}``, ``{"op": "reply", "id", "reply"}``,
``{"op": "abort", "reason"}``.

Layout: :mod:`.worker_channel` (the frames), :mod:`.worker_bridge` (tool calls),
:mod:`.worker_jobs` (the job loop), :mod:`.zygote` (the fork server); this module is the entry
point.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from scriptgate.sandbox.isolation.jail.bwrap import restrict_under_bwrap
from scriptgate.sandbox.isolation.jail.launch import launch, wait
from scriptgate.sandbox.isolation.jail.report import JailReport
from scriptgate.sandbox.isolation.worker_bridge import PipeToolBridge
from scriptgate.sandbox.isolation.worker_jobs import _become_worker
from scriptgate.sandbox.isolation.zygote import _jail_settings, _zygote

__all__ = ["PipeToolBridge", "main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: a worker serving jobs on fd 0, or (``"mode": "zygote"``) the fork server."""
    args = list(sys.argv[1:] if argv is None else argv)
    config: dict[str, Any] = {}
    if args:
        loaded = json.loads(args[-1])
        if isinstance(loaded, dict):
            config = loaded
    if config.get("mode") == "zygote":
        _zygote(config)
    elif config.get("jail") == "bwrap":  # --- OS jail: bubblewrap built the namespaces ---
        seccomp = config.get("bwrap_seccomp")
        parts = seccomp if isinstance(seccomp, list) and len(seccomp) == 3 else ["", "", ""]
        uid = config.get("bwrap_uid")
        report = restrict_under_bwrap(
            _jail_settings(config, os.getcwd(), new_session=False),
            (str(parts[0]), str(parts[1]), str(parts[2])),
            uid if isinstance(uid, int) else os.geteuid(),
        )
        _become_worker(os.dup(0), config, warm_up=True, jail_report=report.to_json())
    elif config.get("jail"):  # --- OS jail: this process becomes the jail's outside ---
        tmpdir = os.getcwd()

        def body(report: JailReport) -> None:
            os.chdir(tmpdir)
            _become_worker(os.dup(0), config, warm_up=True, jail_report=report.to_json())

        jail_pid, _pid = launch(_jail_settings(config, tmpdir, new_session=False), body)
        code = wait(jail_pid)
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)
    else:
        _become_worker(os.dup(0), config, warm_up=True)


if __name__ == "__main__":
    main()
