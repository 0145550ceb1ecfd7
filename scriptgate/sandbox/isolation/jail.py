"""The OS-level jail around a process-mode worker (Linux): namespaces, seccomp, Landlock, rlimits.

This module owns the kernel side of ``isolation="process"``: it turns the
process that is about to start a worker into a jail and reports, layer by
layer, what it got. It assumes the interpreter inside is broken, i.e. that the
worker runs arbitrary native code; every layer holds on its own.

:func:`launch` is called in a *disposable* process (the zygote's per-worker
monitor, an ``spawn="exec"`` worker before it serves, the ``scriptgate jail
run`` launcher), never in the host. In that process it

1. opens every directory the jail will show (the Python runtime: stdlib,
   ``lib-dynload``, the environment's site-packages, this package, the
   directories of the shared libraries already loaded; the worker's own temp
   dir; ``/dev/null``, ``/dev/zero``, ``/dev/urandom``) as ``O_PATH``
   descriptors while it can still reach them;
2. ``uid``: when it runs as root, drops every group and becomes ``nobody``
   (65534) on the host; otherwise it keeps its own unprivileged uid;
3. ``namespaces``: ``unshare`` of user, mount, PID, network, IPC and UTS
   namespaces, maps its uid to itself (``nobody`` inside), builds a new root
   on a ``tmpfs`` holding read-only bind mounts of the runtime and a writable
   bind of the temp dir, ``pivot_root``\\ s into it and detaches the old root
   (no ``/proc``, no host files, no network but a down loopback); then drops
   every capability;
4. forks a tiny init (PID 1 of the new PID namespace, so a killed jail takes
   every process in it along), which forks the worker.

The worker (:func:`restrict`, run in the forked child before any untrusted
code) then sets ``rlimits`` (``NPROC``, ``AS``, ``DATA``, ``NOFILE``,
``CORE`` 0, ``FSIZE``), ``no_new_privs``, a Landlock domain (file rules:
read-only runtime, writable temp dir; ABI >= 4 TCP bind/connect denied; ABI
>= 6 signals and abstract Unix sockets scoped to the domain) and a seccomp
filter (``pyseccomp`` over libseccomp: no ``execve``, ``ptrace``, mounts,
namespaces, ``bpf``, io_uring, keyrings, sockets other than ``AF_UNIX``...),
and marks itself non-dumpable.

Every step is tried on its own; what failed is in the :class:`JailReport`
(``scriptgate jail check`` prints it; ``require_jail=True`` refuses to run
without every layer). It never raises into its caller for a missing kernel
facility. It imports only the standard library (``pyseccomp`` lazily), so the
worker can import it without the rest of the package. It must not import the
engine, the tools or the CLI.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import platform
import resource
import signal
import socket
import struct
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NoReturn

_PACKAGE_DIR = Path(__file__).resolve().parents[2]
"""The ``scriptgate`` package directory (this file is scriptgate/sandbox/isolation/jail.py)."""

__all__ = [
    "LAYERS",
    "JailReport",
    "JailSettings",
    "Layer",
    "check_main",
    "landlock_abi",
    "launch",
    "launcher_command",
    "launcher_main",
    "preload",
    "restrict",
    "run_main",
    "runtime_paths",
    "wait",
]

#: The layers a jail is made of, in the order they are reported.
LAYERS: tuple[str, ...] = ("uid", "namespaces", "no_new_privs", "rlimits", "landlock", "seccomp")
NOBODY = 65534

_CLONE_NEWNS = 0x00020000
_CLONE_NEWCGROUP = 0x02000000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_NAMESPACE_FLAGS = (
    _CLONE_NEWNS
    | _CLONE_NEWCGROUP
    | _CLONE_NEWUTS
    | _CLONE_NEWIPC
    | _CLONE_NEWUSER
    | _CLONE_NEWPID
    | _CLONE_NEWNET
)
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MNT_DETACH = 2
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_O_PATH = getattr(os, "O_PATH", 0o10000000)

# Syscall numbers glibc has no wrapper for (pivot_root; landlock is the same everywhere).
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
_SECCOMP_FILTER_FLAG_SPEC_ALLOW = 4
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446

# Landlock access rights (linux/landlock.h), by the ABI that introduced them.
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP = 1 << 0
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1
_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_READ_ONLY = _FS_READ_FILE | _FS_READ_DIR
_WRITABLE = (
    _FS_READ_FILE
    | _FS_READ_DIR
    | _FS_WRITE_FILE
    | _FS_REMOVE_DIR
    | _FS_REMOVE_FILE
    | _FS_MAKE_DIR
    | _FS_MAKE_REG
    | _FS_MAKE_SYM
    | _FS_TRUNCATE
)
_DEVICES = (("/dev/null", True), ("/dev/zero", False), ("/dev/urandom", False))

# Denied with EPERM by the seccomp filter: running programs, debugging other
# processes, changing the mount or namespace view, and kernel interfaces a
# worker never needs (each a common source of privilege escalations).
_DENIED_SYSCALLS: tuple[str, ...] = (
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "fanotify_init",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "reboot",
    "acct",
    "quotactl",
    "syslog",
    "personality",
    "iopl",
    "ioperm",
    "uselib",
    "vhangup",
    "landlock_create_ruleset",
)
_AF_UNIX = 1
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_TIOCCONS = 0x541D
_TIOCSCTTY = 0x540E
_TIOCSETD = 0x5423
# Requests that act on a terminal beyond this process: push input (TIOCSTI), the
# console's selection/paste (TIOCLINUX), redirect the console (TIOCCONS), take a
# controlling tty (TIOCSCTTY), switch line discipline (TIOCSETD).
_DENIED_IOCTLS = (_TIOCSTI, _TIOCLINUX, _TIOCCONS, _TIOCSCTTY, _TIOCSETD)


@dataclass(frozen=True)
class Layer:
    """One layer of the jail: whether it is ``active`` and what it did (or why it is not)."""

    name: str
    active: bool
    detail: str


@dataclass(frozen=True)
class JailReport:
    """What a worker's jail got, layer by layer (the order of :data:`LAYERS`)."""

    layers: tuple[Layer, ...]

    @property
    def complete(self) -> bool:
        """True when every layer of :data:`LAYERS` is active."""
        active = {layer.name for layer in self.layers if layer.active}
        return all(name in active for name in LAYERS)

    @property
    def missing(self) -> tuple[str, ...]:
        """The layers that are not active, each with the reason (``"seccomp (…)"``)."""
        by_name = {layer.name: layer for layer in self.layers}
        out: list[str] = []
        for name in LAYERS:
            layer = by_name.get(name)
            if layer is None:
                out.append(f"{name} (not attempted)")
            elif not layer.active:
                out.append(f"{name} ({layer.detail})")
        return tuple(out)

    @property
    def level(self) -> Literal["full", "partial", "none"]:
        """``"full"`` (every layer), ``"none"`` (no layer) or ``"partial"``."""
        if self.complete:
            return "full"
        return "partial" if any(layer.active for layer in self.layers) else "none"

    def to_json(self) -> list[list[Any]]:
        """``[[name, active, detail], ...]`` (the worker's ``ready`` message carries it)."""
        return [[layer.name, layer.active, layer.detail] for layer in self.layers]

    @classmethod
    def from_json(cls, data: object) -> JailReport:
        """The report in :meth:`to_json`'s shape; anything malformed reads as no layer at all."""
        layers: list[Layer] = []
        if isinstance(data, list):
            for item in data[: 4 * len(LAYERS)]:
                if (
                    isinstance(item, list)
                    and len(item) == 3
                    and item[0] in LAYERS
                    and isinstance(item[1], bool)
                    and isinstance(item[2], str)
                ):
                    layers.append(Layer(item[0], item[1], item[2][:500]))
        return cls(tuple(layers))

    @classmethod
    def unavailable(cls, reason: str) -> JailReport:
        """A report in which every layer is unavailable for the same ``reason``."""
        return cls(tuple(Layer(name, False, reason) for name in LAYERS))

    def lines(self) -> list[str]:
        """One line per layer: ``name: active|unavailable — detail``."""
        by_name = {layer.name: layer for layer in self.layers}
        out = []
        for name in LAYERS:
            layer = by_name.get(name, Layer(name, False, "not attempted"))
            state = "active" if layer.active else "unavailable"
            out.append(f"{name:<13} {state:<11} {layer.detail}")
        return out


@dataclass
class JailSettings:
    """What the jail is built from: the worker's temp dir and the rlimits.

    ``tmpdir`` is the only writable directory (it must exist and be empty);
    ``memory_bytes`` becomes ``RLIMIT_AS`` and ``RLIMIT_DATA``; ``nproc`` the
    processes the jail's uid may have; ``fsize`` the largest file it may write;
    ``nofile`` its descriptors. ``new_session``: the worker starts a session (and
    process group) of its own, so the caller can kill it with ``killpg(worker_pid)``.
    ``extra_read_only``: more directories shown read-only (beside the runtime).
    ``tmp_bytes`` / ``tmp_inodes``: with a mount namespace the temp dir is a fresh
    ``tmpfs`` of at most that many bytes and entries (files, directories, links), so
    jailed code cannot grow the host's disk or inode table through it.
    """

    tmpdir: str
    memory_bytes: int | None = 1 << 30
    nproc: int = 16
    nofile: int = 64
    fsize: int = 0
    new_session: bool = False
    extra_read_only: tuple[str, ...] = ()
    tmp_bytes: int = 16 << 20
    tmp_inodes: int = 1024


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    if not _LIBC:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _LIBC.append(libc)
    return _LIBC[0]


def _fail(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _syscall(number: int, *args: Any) -> int:
    return int(_libc().syscall(ctypes.c_long(number), *args))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: not available)."""
    if sys.platform != "linux":
        return 0
    result = _syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(result, 0)


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


# -- step 1-3: the launching process ------------------------------------------------------
class _Prepared:
    """The launching process's side of the jail: layers so far and the paths to rule on."""

    def __init__(self) -> None:
        self.layers: dict[str, Layer] = {}
        self.read_only: list[str] = []
        self.devices: list[tuple[str, bool]] = []
        self.tmpdir = ""
        self.tmp_bytes = 16 << 20
        self.tmp_inodes = 1024
        self.namespaces = False
        self.seccomp_bpf: bytes | None = None
        self.seccomp_detail = ""
        self.seccomp_error = ""


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
        f"{len(prepared.read_only)} read-only runtime dirs, the temp dir (tmpfs), "
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


def _prepare(settings: JailSettings) -> _Prepared:
    prepared = _Prepared()
    layers = prepared.layers
    if sys.platform != "linux":
        reason = f"not Linux ({sys.platform})"
        for name in LAYERS:
            layers[name] = Layer(name, False, reason)
        return prepared
    preloaded = preload()
    prepared.seccomp_bpf, prepared.seccomp_detail, prepared.seccomp_error = preloaded.seccomp
    prepared.tmpdir = os.path.realpath(settings.tmpdir)
    prepared.tmp_bytes, prepared.tmp_inodes = settings.tmp_bytes, settings.tmp_inodes
    prepared.read_only = list(preloaded.paths) + [
        os.path.realpath(path) for path in settings.extra_read_only if os.path.isdir(path)
    ]
    prepared.devices = [(path, writable) for path, writable in _DEVICES if os.path.exists(path)]
    try:
        detail = _enter_namespaces(prepared, settings, _mount_point(prepared))
        prepared.namespaces = True
        layers["namespaces"] = Layer("namespaces", True, detail)
    except OSError as exc:
        layers["namespaces"] = Layer("namespaces", False, str(exc))
    if "uid" not in layers:
        _become_unprivileged(prepared)
    return prepared


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


# -- step 4: init and worker -----------------------------------------------------------------
def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _init(child: Callable[[], NoReturn]) -> NoReturn:
    """PID 1 of the jail: fork the worker, wait for it, exit with its status (128 + signal)."""
    try:
        pid = os.fork()
    except OSError:
        os._exit(125)
    if pid == 0:
        child()
    os.closerange(0, 1 << 16)

    # PID 1 receives from outside only the signals it handles (and SIGKILL): pass
    # every other one on, so a signal sent to the jail reaches the worker.
    def forward(number: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(pid, number)

    for number in signal.valid_signals():
        if number not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            with contextlib.suppress(OSError, ValueError):
                signal.signal(number, forward)
    while True:
        try:
            reaped, status = os.wait()
        except ChildProcessError:
            os._exit(125)
        except InterruptedError:
            continue
        if reaped == pid:
            os._exit(_exit_code(status))


def launch(settings: JailSettings, body: Callable[[JailReport], None]) -> tuple[int, int]:
    """Turn this (disposable) process into the jail's outside and start ``body`` inside it.

    Returns ``(jail_pid, worker_pid)`` as seen here: :func:`wait` the first (the
    jail's init, or the worker itself without a PID namespace); the second is the
    process that runs ``body`` (with ``settings.new_session`` the leader of its own
    process group, so ``killpg(worker_pid)`` kills it and everything it forked).
    ``body`` runs in the jailed worker with the :class:`JailReport`; when it
    returns the worker exits with status 0.
    """
    prepared = _prepare(settings)
    # The worker says hello with its credentials: the kernel gives us its pid as seen here.
    hello_ours, hello_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    passcred = getattr(socket, "SO_PASSCRED", None)  # Linux only
    if passcred is not None:
        hello_ours.setsockopt(socket.SOL_SOCKET, passcred, 1)

    def worker() -> NoReturn:
        code = 0
        try:
            hello_ours.close()
            if settings.new_session:
                os.setsid()
            if passcred is not None:
                creds = struct.pack("3i", os.getpid(), os.getuid(), os.getgid())
                credentials = [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)]
                hello_theirs.sendmsg([b"."], credentials)
            else:
                hello_theirs.send(b".")
            hello_theirs.close()
            report = restrict(prepared, settings)
            body(report)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            code = 1
            with contextlib.suppress(Exception):
                import traceback

                traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
        os._exit(code)

    pid = os.fork()
    if pid == 0:
        if prepared.namespaces:
            _init(worker)
        worker()
    hello_theirs.close()
    worker_pid = pid
    try:
        _data, ancillary, _flags, _address = hello_ours.recvmsg(1, socket.CMSG_SPACE(12))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == getattr(socket, "SCM_CREDENTIALS", None):
                worker_pid = struct.unpack("3i", payload[:12])[0]
    except OSError:
        pass
    finally:
        hello_ours.close()
    return pid, worker_pid


def wait(pid: int) -> int:
    """Wait for the jail started by :func:`launch`; its exit status (negative: a signal)."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        code = os.waitstatus_to_exitcode(status)
        # The init reports a worker killed by signal N as 128 + N; the init itself
        # killed from outside (SIGKILL) comes back as a signal directly.
        return -(code - 128) if 128 < code < 128 + 65 else code


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


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _landlock(prepared: _Prepared) -> str:
    abi = landlock_abi()
    if abi <= 0:
        raise OSError(errno.ENOSYS, "the kernel has no Landlock (or it is disabled)")
    handled = _FS_BY_ABI[max(level for level in _FS_BY_ABI if level <= abi)]
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    notes = [f"ABI {abi}: files"]
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 16
        notes.append("TCP bind/connect denied")
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size = 24
        notes.append("signals and abstract sockets scoped")
    ruleset = _syscall(
        _SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        raise _fail("landlock_create_ruleset")
    try:
        rules: list[tuple[str, int]] = [(path, _READ_ONLY) for path in prepared.read_only]
        rules += [
            (path, _FS_READ_FILE | (_FS_WRITE_FILE if writable else 0))
            for path, writable in prepared.devices
        ]
        rules.append((prepared.tmpdir, _WRITABLE))
        for path, access in rules:
            try:
                fd = os.open(path, _O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= _FILE_RIGHTS
                rule = _PathBeneath(access & handled, fd)
                if (
                    _syscall(
                        _SYS_LANDLOCK_ADD_RULE,
                        ctypes.c_int(ruleset),
                        ctypes.c_int(1),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    )
                    != 0
                ):
                    raise _fail(f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if _syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return ", ".join(notes) + "; read-only runtime, writable temp dir"


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _build_seccomp() -> tuple[bytes, str]:
    """The filter as a BPF program (libseccomp through pyseccomp), and what it denies."""
    import pyseccomp  # type: ignore[import-untyped]

    module: Any = pyseccomp
    eperm = module.ERRNO(errno.EPERM)
    syscall_filter = module.SyscallFilter(module.ALLOW)
    denied = 0
    for name in _DENIED_SYSCALLS:
        try:
            syscall_filter.add_rule(eperm, name)
            denied += 1
        except (OSError, ValueError, RuntimeError):
            continue  # not a syscall on this architecture
    for flag in (
        _CLONE_NEWNS,
        _CLONE_NEWCGROUP,
        _CLONE_NEWUTS,
        _CLONE_NEWIPC,
        _CLONE_NEWUSER,
        _CLONE_NEWPID,
        _CLONE_NEWNET,
    ):
        syscall_filter.add_rule(eperm, "clone", module.Arg(0, module.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc use clone.
    syscall_filter.add_rule(module.ERRNO(errno.ENOSYS), "clone3")
    syscall_filter.add_rule(
        module.ERRNO(errno.EAFNOSUPPORT), "socket", module.Arg(0, module.NE, _AF_UNIX)
    )
    # The kernel reads ioctl's request as 32 bits: compare only those, or
    # ioctl(fd, 0x1_0000_5412) is TIOCSTI to the kernel and passes the rule.
    for request in _DENIED_IOCTLS:
        syscall_filter.add_rule(
            eperm, "ioctl", module.Arg(1, module.MASKED_EQ, 0xFFFFFFFF, request)
        )
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as sink:
            syscall_filter.export_bpf(sink)
        chunks = []
        while chunk := os.read(read, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read)
    program = b"".join(chunks)
    if not program or len(program) % 8:
        raise OSError(errno.EINVAL, "libseccomp exported no BPF program")
    detail = (
        f"libseccomp via pyseccomp ({len(program) // 8} BPF instructions): {denied} syscalls "
        "denied (execve, ptrace, mount, namespaces, bpf, io_uring, keyrings...), sockets "
        "AF_UNIX only"
    )
    return program, detail


@dataclass(frozen=True)
class _Preloaded:
    paths: tuple[str, ...]
    seccomp: tuple[bytes | None, str, str]


_PRELOADED: list[_Preloaded] = []


def preload() -> _Preloaded:
    """Work every jail shares, done once per process: the runtime paths, the seccomp program.

    The zygote calls it before it forks workers (importing ``pyseccomp`` runs
    ``ldconfig``, and building the filter takes milliseconds); later calls are free.
    """
    if not _PRELOADED:
        seccomp: tuple[bytes | None, str, str]
        if sys.platform != "linux":
            seccomp = (None, "", "not Linux")
        else:
            try:
                program, detail = _build_seccomp()
                seccomp = (program, detail, "")
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}".split("\n")[0]
                seccomp = (None, "", f"pyseccomp/libseccomp not usable: {message}")
        paths = tuple(runtime_paths()) if sys.platform == "linux" else ()
        _PRELOADED.append(_Preloaded(paths, seccomp))
    return _PRELOADED[0]


def _seccomp(prepared: _Prepared) -> str:
    program = prepared.seccomp_bpf
    if program is None:
        raise OSError(errno.ENOSYS, prepared.seccomp_error or "pyseccomp is not installed")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p).value)
    # SPEC_ALLOW: a filter would otherwise also switch on the speculative-store-bypass
    # mitigation, which slows every Python instruction and protects nothing here (the
    # worker holds no secret of anyone else's; other processes keep their own setting).
    number = _SYS_SECCOMP.get(platform.machine())
    flags = _SECCOMP_FILTER_FLAG_SPEC_ALLOW
    loaded = number is not None and (
        _syscall(number, ctypes.c_uint(1), ctypes.c_uint(flags), ctypes.byref(fprog)) == 0
    )
    if not loaded and _libc().prctl(
        _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0
    ):
        raise _fail("prctl(PR_SET_SECCOMP)")
    return prepared.seccomp_detail


def restrict(prepared: _Prepared, settings: JailSettings) -> JailReport:
    """In the worker, before untrusted code: rlimits, no_new_privs, Landlock, seccomp.

    Returns the whole :class:`JailReport` (the launching process's layers too).
    """
    layers = dict(prepared.layers)
    if sys.platform != "linux":
        return JailReport(tuple(layers[name] for name in LAYERS))
    try:
        layers["rlimits"] = Layer("rlimits", True, _set_rlimits(settings))
    except (OSError, ValueError) as exc:
        layers["rlimits"] = Layer("rlimits", False, str(exc))
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        layers["no_new_privs"] = Layer("no_new_privs", True, "prctl(PR_SET_NO_NEW_PRIVS)")
    else:
        layers["no_new_privs"] = Layer("no_new_privs", False, str(_fail("prctl")))
    try:
        layers["landlock"] = Layer("landlock", True, _landlock(prepared))
    except OSError as exc:
        layers["landlock"] = Layer("landlock", False, exc.strerror or str(exc))
    try:
        layers["seccomp"] = Layer("seccomp", True, _seccomp(prepared))
    except OSError as exc:
        layers["seccomp"] = Layer("seccomp", False, exc.strerror or str(exc))
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    for name in LAYERS:
        layers.setdefault(name, Layer(name, False, "not attempted"))
    return JailReport(tuple(layers[name] for name in LAYERS))


# -- scriptgate jail run / check (the launcher, a fresh interpreter) -----------------------
def _close_fds(keep: Sequence[int]) -> None:
    top = 1 << 16
    start = 3
    for fd in sorted(k for k in keep if k >= 3):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, top)


def _jail_process(settings: JailSettings, body: Callable[[JailReport], None]) -> NoReturn:
    pid, _worker_pid = launch(settings, body)
    code = wait(pid)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


# A fresh interpreter that imports only this module (the package ``__init__``\ s
# re-export the whole library): ``argv`` is [package parent, mode, args...].
_BOOTSTRAP = (
    "import sys, types\n"
    "for name in ('scriptgate', 'scriptgate.sandbox'):\n"
    "    package = types.ModuleType(name)\n"
    "    package.__path__ = [sys.argv[1] + '/' + name.replace('.', '/')]\n"
    "    sys.modules[name] = package\n"
    "from scriptgate.sandbox.isolation.jail import launcher_main\n"
    "launcher_main(sys.argv[2:])\n"
)


def launcher_command(mode: Literal["run", "check"], *args: str) -> list[str]:
    """The command line of a launcher (``mode`` ``"run"``: file, tmpdir, memory bytes;
    ``"check"``: tmpdir). Start it with an empty environment."""
    parent = str(_PACKAGE_DIR.parent)
    return [sys.executable, "-I", "-B", "-c", _BOOTSTRAP, parent, mode, *args]


def launcher_main(argv: Sequence[str]) -> NoReturn:
    """Entry point of :func:`launcher_command`'s interpreter."""
    if argv and argv[0] == "run":
        run_main(argv[1:])
    check_main(argv[1:])


def run_main(argv: Sequence[str]) -> NoReturn:
    """Launcher for ``scriptgate jail run``: ``[file, tmpdir, memory_bytes]``; runs the file jailed.

    The file's text is read here, before the jail closes; stdin, stdout and stderr
    are passed through (``scriptgate jail run`` makes them pipes it relays, so the
    jail never holds the caller's terminal), every other descriptor is closed, the
    environment is empty, and the worker starts a session of its own (no
    controlling terminal).
    """
    path, tmpdir, memory = argv[0], argv[1], int(argv[2])
    with open(path, "rb") as handle:
        source = handle.read()
    _close_fds(())
    os.environ.clear()
    os.chdir(tmpdir)
    settings = JailSettings(
        tmpdir=tmpdir,
        memory_bytes=memory or None,
        fsize=64 << 20,
        new_session=True,
        tmp_bytes=64 << 20,
        tmp_inodes=4096,
    )

    def body(report: JailReport) -> None:
        code = compile(source, path, "exec")
        sys.argv = [path]
        os.chdir(tmpdir)
        namespace: dict[str, Any] = {"__name__": "__main__", "__file__": path}
        exec(code, namespace)

    _jail_process(settings, body)


def check_main(argv: Sequence[str]) -> NoReturn:
    """Launcher for ``scriptgate jail check``: ``[tmpdir]``; prints the report as JSON."""
    tmpdir = argv[0]
    _close_fds((1,))
    os.environ.clear()

    def body(report: JailReport) -> None:
        os.write(1, json.dumps(report.to_json()).encode())

    _jail_process(JailSettings(tmpdir=tmpdir, fsize=1 << 20), body)
