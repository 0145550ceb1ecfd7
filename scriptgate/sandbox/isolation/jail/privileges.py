"""The uid and rlimits layers: root becomes ``nobody``; the worker's resource limits.

Owns :func:`_become_unprivileged` (launching process) and :func:`_set_rlimits` (worker).
``no_new_privs`` is one ``prctl`` in :func:`~scriptgate.sandbox.isolation.jail.launch.restrict`.
It must not touch namespaces, seccomp or Landlock.
"""

from __future__ import annotations

import os
import resource

from scriptgate.sandbox.isolation.jail.kernel import _PR_SET_DUMPABLE, NOBODY, _libc
from scriptgate.sandbox.isolation.jail.report import JailSettings, Layer, _Prepared


def _become_unprivileged(prepared: _Prepared) -> None:
    layers = prepared.layers
    if "uid" in layers:
        return
    if os.geteuid() != 0:
        layers["uid"] = Layer("uid", True, f"uid {os.getuid()} (not root), nobody inside")
        return
    try:
        os.chown(prepared.tmpdir, NOBODY, NOBODY)
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        # Changing the uid made the process non-dumpable: /proc/self/uid_map would be root's.
        _libc().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        layers["uid"] = Layer("uid", True, f"root dropped to uid {NOBODY} (nobody), no groups")
    except OSError as exc:
        layers["uid"] = Layer("uid", False, f"could not drop root: {exc}")


def _set_rlimits(settings: JailSettings) -> str:
    def set_limit(which: int, value: int) -> None:
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))

    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_NPROC, settings.nproc)
    set_limit(resource.RLIMIT_NOFILE, settings.nofile)
    set_limit(resource.RLIMIT_FSIZE, settings.fsize)
    parts = [f"NPROC {settings.nproc}", f"NOFILE {settings.nofile}", f"FSIZE {settings.fsize}"]
    if settings.memory_bytes:
        set_limit(resource.RLIMIT_AS, settings.memory_bytes)
        set_limit(resource.RLIMIT_DATA, settings.memory_bytes)
        parts.append(f"AS/DATA {settings.memory_bytes >> 20} MiB")
    parts.append("CORE 0")
    return ", ".join(parts)
