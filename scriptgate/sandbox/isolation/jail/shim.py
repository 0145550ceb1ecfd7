"""The uid layer under bubblewrap as root: reach the runtime, then start ``bwrap`` as ``nobody``.

Owns :func:`shim_plan` (which bound paths ``nobody`` cannot reach, and what opens them),
:func:`shim_command` (``bwrap`` wrapped in the shim) and :func:`shim_main` (the shim itself).
Runs in the launching process only, before any untrusted code; it must not import the
engine, the tools or the CLI, nor touch seccomp, Landlock or rlimits.

``bwrap`` maps the jail's uid to the host uid it was started as: started by root, the
worker is host root (without capabilities). Started as ``nobody`` it must itself reach
every path it binds, and a Python runtime under ``/root`` (mode 0700) is out of reach.
The shim, started as root, enters a private mount namespace, covers each such blocking
directory (``/root``) with a ``tmpfs`` of mode 0755 holding only bind mounts of the bound
paths under it (opened before the cover), becomes ``nobody`` (no groups) and ``exec``\\ s
``bwrap``, which then binds those paths read-only into the jail as before. Nothing else
of ``/root`` is visible, even to the shim after it dropped root; the host's mounts are
untouched (the namespace dies with the process). A bound path that is itself unreadable
by others (a 0700 directory, a 0600 file) cannot be shown this way: :func:`shim_plan`
says which, and the launcher keeps running ``bwrap`` as root (the uid layer unavailable).
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from scriptgate.sandbox.isolation.jail.kernel import (
    _CLONE_NEWNS,
    _MS_BIND,
    _MS_NODEV,
    _MS_NOSUID,
    _MS_PRIVATE,
    _MS_REC,
    _O_PATH,
    _PR_SET_DUMPABLE,
    NOBODY,
    _fail,
    _libc,
)

__all__ = ["ShimPlan", "shim_command", "shim_main", "shim_plan"]


@dataclass(frozen=True)
class ShimPlan:
    """What the shim covers: ``covers`` (blocking directory -> bound paths under it).

    ``error``: why the shim cannot help (a bound path others cannot read), else ``""``.
    An empty plan without error: every bound path is reachable already.
    """

    covers: dict[str, list[str]]
    error: str = ""

    @property
    def needed(self) -> bool:
        """Whether ``bwrap`` must be started through the shim (root, a blocked path)."""
        return bool(self.covers) and not self.error


def _readable_by_others(path: str) -> bool:
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        return bool(mode & stat.S_IXOTH and mode & stat.S_IROTH)
    return bool(mode & stat.S_IROTH)


def _blocking(path: str) -> str | None:
    """The topmost ancestor of ``path`` others cannot traverse (no ``o+x``), or None."""
    parts = path.strip("/").split("/")
    current = ""
    for part in parts[:-1]:
        current += "/" + part
        if not os.stat(current).st_mode & stat.S_IXOTH:
            return current
    return None


def shim_plan(bound: Sequence[str]) -> ShimPlan:
    """The shim's plan for the ``bwrap`` binds ``bound`` (empty when not root)."""
    if os.geteuid() != 0:
        return ShimPlan({})
    covers: dict[str, list[str]] = {}
    for path in bound:
        try:
            top = _blocking(path)
            readable = _readable_by_others(path)
        except OSError as exc:
            return ShimPlan({}, f"{path}: {exc.strerror or exc}")
        if top is None:
            continue
        if not readable:
            return ShimPlan(
                {},
                f"{path} is not readable by other users (mode "
                f"{stat.S_IMODE(os.stat(path).st_mode):04o})",
            )
        covers.setdefault(top, []).append(path)
    # a cover inside another one is made by the outer one
    for top in list(covers):
        outer = next((o for o in covers if o != top and top.startswith(o + "/")), None)
        if outer is not None:
            covers[outer] += covers.pop(top)
    return ShimPlan(covers)


# The shim imports only this module (as the jail launcher does): argv is
# [package parent, plan as JSON, bwrap command...].
_BOOTSTRAP = (
    "import sys, types\n"
    "for name in ('scriptgate', 'scriptgate.sandbox'):\n"
    "    package = types.ModuleType(name)\n"
    "    package.__path__ = [sys.argv[1] + '/' + name.replace('.', '/')]\n"
    "    sys.modules[name] = package\n"
    "from scriptgate.sandbox.isolation.jail.shim import shim_main\n"
    "shim_main(sys.argv[2:])\n"
)


def shim_command(plan: ShimPlan, bwrap: Sequence[str]) -> list[str]:
    """``bwrap`` (a full command line) started through the shim: run it as root."""
    from scriptgate.sandbox.isolation.jail.kernel import _PACKAGE_DIR

    parent = str(_PACKAGE_DIR.parent)
    return [sys.executable, "-I", "-B", "-c", _BOOTSTRAP, parent, json.dumps(plan.covers), *bwrap]


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    encoded = [None if v is None else v.encode() for v in (source, target, fstype, data)]
    if _libc().mount(encoded[0], encoded[1], encoded[2], ctypes.c_ulong(flags), encoded[3]) != 0:
        raise _fail(f"mount {target}")


def _cover(top: str, paths: Sequence[str]) -> None:
    opened = [(path, os.open(path, _O_PATH | os.O_CLOEXEC)) for path in paths]
    _mount("scriptgate-shim", top, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
    for path, fd in opened:
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(path, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC, None)
        os.close(fd)


def shim_main(argv: Sequence[str]) -> NoReturn:
    """The shim: ``[plan JSON, bwrap command...]``; covers, drops to ``nobody``, execs ``bwrap``."""
    try:
        covers: dict[str, list[str]] = json.loads(argv[0])
        command = list(argv[1:])
        os.umask(0o022)
        libc = _libc()
        if libc.unshare(ctypes.c_int(_CLONE_NEWNS)) != 0:
            raise _fail("unshare(mount)")
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
        for top in sorted(covers):
            _cover(top, covers[top])
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # bwrap writes its own /proc/self maps
        os.execv(command[0], command)
    except OSError as exc:
        os.write(2, f"scriptgate jail shim: {exc}\n".encode())
    os._exit(126)
