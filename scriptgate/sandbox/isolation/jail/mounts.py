"""The namespaces layer: user, mount, PID, network, IPC, UTS and cgroup namespaces, the new root.

Owns what the jail shows (:func:`runtime_paths`, the devices), the bind mounts and the
``tmpfs`` temp dir of the new root, ``pivot_root``, the uid maps and dropping every
capability. Runs in the launching process only. It must not touch seccomp, Landlock or
rlimits; the uid drop it needs as root is :mod:`.privileges`'.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import sysconfig

from scriptgate.sandbox.isolation.jail.kernel import (
    _CLONE_NEWNS,
    _MNT_DETACH,
    _MS_BIND,
    _MS_NODEV,
    _MS_NOEXEC,
    _MS_NOSUID,
    _MS_PRIVATE,
    _MS_RDONLY,
    _MS_REC,
    _MS_REMOUNT,
    _NAMESPACE_FLAGS,
    _PACKAGE_DIR,
    _SYS_PIVOT_ROOT,
    NOBODY,
    _fail,
    _libc,
    _syscall,
)
from scriptgate.sandbox.isolation.jail.privileges import _become_unprivileged
from scriptgate.sandbox.isolation.jail.report import JailSettings, _Prepared

_DEVICES = (("/dev/null", True), ("/dev/zero", False), ("/dev/urandom", False))


def runtime_paths() -> list[str]:
    """The directories the jail shows read-only: what this interpreter needs to run.

    The standard library (with ``lib-dynload``), the environment's site-packages,
    this package, and the directories of the shared libraries already loaded.
    """
    paths: set[str] = set()
    names = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if key in names:
            paths.add(names[key])
    paths.add(str(_PACKAGE_DIR))
    with (
        contextlib.suppress(OSError),
        open("/proc/self/maps", encoding="utf-8", errors="replace") as maps,
    ):
        for line in maps:
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                paths.add(os.path.dirname(parts[5].strip()))
    real = sorted({os.path.realpath(path) for path in paths if os.path.isdir(path)})
    # A directory inside another one is already shown with it.
    kept: list[str] = []
    for path in real:
        if not any(path == top or path.startswith(top.rstrip("/") + "/") for top in kept):
            kept.append(path)
    return kept


def _write(path: str, text: str, dir_fd: int | None = None) -> None:
    fd = os.open(path, os.O_WRONLY, dir_fd=dir_fd)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    libc = _libc()
    encoded = [
        None if value is None else value.encode() for value in (source, target, fstype, data)
    ]
    if libc.mount(encoded[0], encoded[1], encoded[2], ctypes.c_ulong(flags), encoded[3]) != 0:
        raise _fail(f"mount {target}")


def _locked_flags(path: str) -> int:
    """The flags of the mount ``path`` is on that a bind remount must keep (they are locked)."""
    flags = os.statvfs(path).f_flag
    out = 0
    for statvfs_bit, mount_bit in (
        (1, _MS_RDONLY),
        (2, _MS_NOSUID),
        (4, _MS_NODEV),
        (8, _MS_NOEXEC),
    ):
        if flags & statvfs_bit:
            out |= mount_bit
    return out


def _bind(source: str, target: str, *, writable: bool, is_file: bool) -> None:
    if is_file:
        parent = os.path.dirname(target)
        os.makedirs(parent, mode=0o755, exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    else:
        os.makedirs(target, mode=0o755, exist_ok=True)
    _mount(source, target, None, _MS_BIND | _MS_REC, None)
    flags = _MS_BIND | _MS_REMOUNT | _MS_NOSUID | _locked_flags(source)
    if not writable:
        flags |= _MS_RDONLY
    flags |= _MS_NOEXEC if is_file else _MS_NODEV
    _mount(None, target, None, flags, None)


def _drop_capabilities() -> None:
    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    libc = _libc()
    header = Header(0x20080522, 0)
    data = (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise _fail("capset")


def _build_root(prepared: _Prepared, new_root: str) -> None:
    """A private mount namespace's new root: read-only runtime, the temp dir, a few devices."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    _mount("scriptgate-jail", new_root, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1m")
    for path in prepared.read_only:
        _bind(path, new_root + path, writable=False, is_file=False)
    for path, writable in prepared.devices:
        _bind(path, new_root + path, writable=writable, is_file=True)
    # The temp dir: a bounded tmpfs of its own, not a bind of the host directory
    # (RLIMIT_FSIZE caps a file's length, not the number of entries).
    target = new_root + prepared.tmpdir
    os.makedirs(target, mode=0o755, exist_ok=True)
    owner = f",uid={NOBODY},gid={NOBODY}" if os.geteuid() == 0 else ""
    _mount(
        "scriptgate-tmp",
        target,
        "tmpfs",
        _MS_NOSUID | _MS_NODEV,
        f"mode=0700,size={prepared.tmp_bytes},nr_inodes={prepared.tmp_inodes}{owner}",
    )
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(errno.ENOSYS, f"pivot_root: unknown syscall number on {platform.machine()}")
    os.chdir(new_root)
    if _syscall(number, b".", b".") != 0:
        raise _fail("pivot_root")
    if _libc().umount2(b".", ctypes.c_int(_MNT_DETACH)) != 0:
        raise _fail("umount old root")
    os.chdir("/")
    _mount(None, "/", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, None)


def _unshare_user(uid: int, gid: int, proc_self: int) -> None:
    if _libc().unshare(ctypes.c_int(_NAMESPACE_FLAGS)) != 0:
        raise _fail("unshare(user, mount, pid, net, ipc, uts, cgroup)")
    _write("setgroups", "deny", proc_self)
    _write("uid_map", f"{NOBODY} {uid} 1\n", proc_self)
    _write("gid_map", f"{NOBODY} {gid} 1\n", proc_self)


def _enter_namespaces(prepared: _Prepared, settings: JailSettings, new_root: str) -> str:
    """The new root, the uid, the namespaces, no capabilities; returns a description.

    As root the new root is built first (root can read every runtime path, and the
    bind mounts must come from the namespace that does them), then root becomes
    ``nobody`` and unshares a user namespace (which locks those mounts). Without
    root, the user namespace comes first (it gives the rights to mount).
    """
    # /proc is not in the new root: the uid maps are written through this descriptor.
    proc_self = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if os.geteuid() == 0:
            os.chown(prepared.tmpdir, NOBODY, NOBODY)
            if _libc().unshare(ctypes.c_int(_CLONE_NEWNS)) != 0:
                raise _fail("unshare(mount)")
            _build_root(prepared, new_root)
            _become_unprivileged(prepared)
            if not prepared.layers["uid"].active:
                raise OSError(errno.EPERM, prepared.layers["uid"].detail)
            _unshare_user(NOBODY, NOBODY, proc_self)
        else:
            _become_unprivileged(prepared)
            _unshare_user(os.geteuid(), os.getegid(), proc_self)
            _build_root(prepared, new_root)
    finally:
        os.close(proc_self)
    _drop_capabilities()
    return (
        "user, mount, pid, net, ipc, uts, cgroup; new root: "
        f"{len(prepared.read_only)} read-only runtime dirs, the temp dir (tmpfs of "
        f"{prepared.tmp_bytes >> 20} MiB, {prepared.tmp_inodes} entries), "
        f"{len(prepared.devices)} devices; no /proc; no capabilities"
    )


def _mount_point(prepared: _Prepared) -> str:
    """An existing directory to build the new root on, above none of the paths bound into it."""
    sources = [*prepared.read_only, prepared.tmpdir, *(path for path, _ in prepared.devices)]
    for candidate in ("/mnt", "/srv", "/media", "/sys", "/opt"):
        inside = any(
            source == candidate or source.startswith(candidate + "/") for source in sources
        )
        if os.path.isdir(candidate) and not os.path.islink(candidate) and not inside:
            return candidate
    raise OSError(errno.ENOENT, "no directory to build the new root on (/mnt, /srv, ...)")
