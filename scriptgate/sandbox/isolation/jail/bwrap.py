"""bubblewrap as the jail's launcher: ``bwrap`` builds the namespaces, the worker the rest.

Owns the ``bwrap`` command line (:func:`bwrap_command`: ``--unshare-all``, a new session,
``--die-with-parent``, only ``CAP_SYS_ADMIN`` in its own user namespace, an empty environment,
read-only binds of the Python runtime, ``/dev/null``, ``/dev/zero`` and ``/dev/urandom``, a size-capped ``tmpfs`` temp dir, no
``/proc``) and, inside, :func:`restrict_under_bwrap`, which first remounts the temp dir with an
inode cap and drops every capability, then applies this package's own rlimits, ``no_new_privs``,
Landlock and seccomp layers as a forked worker does. The seccomp program is built by the
launching side (:func:`seccomp_for_bwrap`; inside there is no ``ldconfig`` for ``pyseccomp``
to find libseccomp with) and handed in as hex. As root, :func:`launch_as` starts ``bwrap``
as ``nobody`` (through :mod:`.shim` when a runtime path is under a directory only root can
traverse). It must not import the engine, the tools or the CLI.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from scriptgate.sandbox.isolation.jail.kernel import NOBODY, _fail, _libc
from scriptgate.sandbox.isolation.jail.launch import preload, restrict
from scriptgate.sandbox.isolation.jail.mounts import _DEVICES, runtime_paths
from scriptgate.sandbox.isolation.jail.report import JailReport, JailSettings, Layer, _Prepared
from scriptgate.sandbox.isolation.jail.shim import shim_command, shim_plan

__all__ = [
    "bwrap_command",
    "bwrap_path",
    "host_uid",
    "launch_as",
    "restrict_under_bwrap",
    "run_as_nobody",
    "seccomp_for_bwrap",
    "uid_problem",
]

# CAP_SYS_ADMIN in bubblewrap's own user namespace only, and only until the worker has
# remounted its temp dir with an inode cap (bwrap's --tmpfs has --size but no nr_inodes;
# findings14 B06): :func:`_cap_temp_dir` then drops every capability, before any layer of
# its own and long before untrusted code.
_FLAGS = (
    "--unshare-all --new-session --die-with-parent --cap-drop ALL --cap-add CAP_SYS_ADMIN "
    "--clearenv"
)
_MS_NOSUID, _MS_NODEV, _MS_REMOUNT = 2, 4, 32
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_capabilities() -> bool:
    """Clear every capability set (the ambient set goes with the permitted one)."""
    libc = _libc()
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        return False
    check = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), check) != 0:
        return False
    return all(not (item.effective or item.permitted or item.inheritable) for item in check)


def _cap_temp_dir(tmpdir: str, size: int, inodes: int) -> str:
    """Remount bubblewrap's temp-dir tmpfs with an inode cap, then drop every capability.

    ``""`` when both worked, else what is missing (the caller reports it).
    """
    options = f"size={size},nr_inodes={inodes},mode=0700".encode()
    flags = _MS_REMOUNT | _MS_NOSUID | _MS_NODEV
    problem = ""
    libc = _libc()
    if libc.mount(b"none", os.fsencode(tmpdir), None, ctypes.c_ulong(flags), options) != 0:
        problem = f"no inode cap on the temp dir (remount: {_fail('mount')})"
    if not _drop_capabilities():
        problem = (problem + "; " if problem else "") + "capabilities not dropped"
    return problem


def bwrap_path() -> str | None:
    """The ``bwrap`` executable on ``PATH`` (None: bubblewrap is not installed)."""
    return shutil.which("bwrap") if sys.platform == "linux" else None


def _interpreter_paths() -> list[str]:
    """What ``exec`` of this interpreter needs beyond :func:`runtime_paths`: the real files
    of its binary and of the ELF loader, and the venv's ``pyvenv.cfg`` — files, never their
    directories (findings7 F05: binding ``/lib`` showed all of ``/usr/lib``, and the real
    interpreter's ``bin/`` every program installed beside it)."""
    paths = {_link_chain(sys.executable)[1]}
    venv = os.path.join(sys.prefix, "pyvenv.cfg")  # how the interpreter finds its venv
    if os.path.isfile(venv):
        paths.add(os.path.realpath(venv))
    for loader in _loaders():
        paths.add(_link_chain(loader)[1])
    return sorted(path for path in paths if os.path.isfile(path))


def _loaders() -> list[str]:
    """The ELF loaders (``ld-linux*.so*``) at the standard paths the interpreter names."""
    found: list[str] = []
    for directory in ("/lib64", "/lib", "/usr/lib64"):
        with contextlib.suppress(OSError):
            found += [
                os.path.join(directory, name)
                for name in sorted(os.listdir(directory))
                if name.startswith("ld-linux") and ".so" in name
            ]
    return found


def _link_chain(path: str) -> tuple[list[tuple[str, str]], str]:
    """``([(target, link), ...], real file)``: the symlinks ``exec`` of ``path`` follows."""
    links: list[tuple[str, str]] = []
    current = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    for _ in range(40):
        if not os.path.islink(current):
            break
        target = os.readlink(current)
        links.append((target, current))
        joined = os.path.join(os.path.dirname(current), target)
        current = os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))
    return links, os.path.realpath(current)


def _interpreter_links() -> list[tuple[str, str]]:
    """The symlinks to recreate inside ``bwrap`` so ``exec`` finds the interpreter and loader."""
    links: list[tuple[str, str]] = []
    for path in (sys.executable, *_loaders()):
        for link in _link_chain(path)[0]:
            if link not in links:
                links.append(link)
    return links


def _traversable_by_others(path: str) -> bool:
    """True when a user other than the owner can reach ``path`` (every ancestor ``o+x``;
    a directory itself ``o+x``, a file ``o+r``)."""
    current = Path(path)
    for part in (current, *current.parents):
        try:
            mode = os.stat(part).st_mode
        except OSError:
            return False
        wanted = stat.S_IROTH if part == current and not stat.S_ISDIR(mode) else stat.S_IXOTH
        if not mode & wanted:
            return False
    return True


def run_as_nobody(paths: Sequence[str]) -> bool:
    """Whether ``bwrap`` can start as ``nobody`` directly (root only): every bound path is
    reachable. (A runtime under ``/root``, mode 0700, is not: see :func:`launch_as`.
    Handing ``bwrap`` descriptors root opened does not help: ``bwrap`` resolves them
    through ``/proc/self/fd`` after it changed uid, and is refused.)"""
    return os.geteuid() == 0 and all(_traversable_by_others(path) for path in paths)


def launch_as(command: list[str], bound: Sequence[str]) -> tuple[list[str], int | None]:
    """``(command to start, uid to start it as or None)`` for a ``bwrap`` command line.

    Root whose bound paths ``nobody`` can reach starts ``bwrap`` as ``nobody``. Root with
    a path under a directory others cannot traverse (``/root``, 0700) starts it through
    :mod:`.shim` (run as root: it covers that directory in a private mount namespace,
    then becomes ``nobody`` and execs ``bwrap``). Otherwise (not root, or a bound path
    nobody may read at all) ``bwrap`` starts as the caller.
    """
    if run_as_nobody(bound):
        return command, NOBODY
    plan = shim_plan(bound)
    if plan.needed:
        return shim_command(plan, command), None
    return command, None


def uid_problem(bound: Sequence[str]) -> str:
    """Why ``bwrap`` started by root cannot run as ``nobody`` here (``""``: it can)."""
    if os.geteuid() != 0 or run_as_nobody(bound):
        return ""
    plan = shim_plan(bound)
    if plan.needed:
        return ""
    return plan.error or "a bound path is out of nobody's reach"


def bwrap_command(
    inner: Sequence[str],
    tmpdir: str,
    *,
    tmp_bytes: int,
    extra_read_only: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """``(command, bound paths)``: ``inner`` run under ``bwrap`` with ``tmpdir`` as its temp dir."""
    binary = bwrap_path()
    if binary is None:
        raise OSError("bubblewrap (bwrap) is not installed")
    bound: list[str] = []
    for path in [*preload().paths, *_interpreter_paths(), *extra_read_only]:
        real = os.path.realpath(path)
        if os.path.exists(real) and real not in bound:
            bound.append(real)
    # nobody inside (as root that cannot drop, nobody maps to host root: the uid layer says so)
    command = [
        binary,
        *_FLAGS.split(),
        "--unshare-user",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
    ]
    for path in bound:
        command += ["--ro-bind", path, path]
    for link, target in (("/lib64", "usr/lib64"), ("/lib", "usr/lib"), ("/bin", "usr/bin")):
        if os.path.islink(link) and os.readlink(link) == target:
            command += ["--symlink", target, link]
    for target, link in _interpreter_links():  # venv/bin/python -> ..., /lib64/ld-linux...
        if link not in bound:
            command += ["--symlink", target, link]
    # The jail's three devices, bound one by one: ``--dev`` also mounts a devpts, for which
    # unprivileged bwrap nests a second user namespace, and in that one the worker could not
    # remount its temp dir with an inode cap (findings14 B06).
    for device, _writable in _DEVICES:
        if os.path.exists(device):
            command += ["--dev-bind", device, device]
    command += ["--size", str(tmp_bytes), "--tmpfs", tmpdir, "--chdir", tmpdir]
    return [*command, "--", *inner], bound


def host_uid(bound: Sequence[str]) -> int:
    """The uid ``bwrap`` runs as on the host: ``nobody`` when root can drop to it (directly
    or through :mod:`.shim`), else ours."""
    return NOBODY if os.geteuid() == 0 and not uid_problem(bound) else os.geteuid()


def seccomp_for_bwrap() -> tuple[str, str, str]:
    """``(program as hex, detail, error)`` of the seccomp filter, built on the launching side."""
    program, detail, error = preload().seccomp
    return (program.hex() if program else "", detail, error)


def restrict_under_bwrap(
    settings: JailSettings, seccomp: tuple[str, str, str], host_uid: int
) -> JailReport:
    """Inside ``bwrap``: rlimits, ``no_new_privs``, Landlock, seccomp; the whole report.

    ``host_uid``: the uid ``bwrap`` ran as on the host (root maps the worker to host root:
    the ``uid`` layer is then unavailable, though no capability is left).
    """
    prepared = _Prepared()
    hex_program, prepared.seccomp_detail, prepared.seccomp_error = seccomp
    prepared.seccomp_bpf = bytes.fromhex(hex_program) if hex_program else None
    prepared.tmpdir = os.path.realpath(settings.tmpdir)
    prepared.read_only = runtime_paths() + _interpreter_paths()
    prepared.devices = [(path, writable) for path, writable in _DEVICES if os.path.exists(path)]
    problem = _cap_temp_dir(prepared.tmpdir, settings.tmp_bytes, settings.tmp_inodes)
    sealed = not os.path.exists("/proc/self")
    prepared.namespaces = sealed and not problem
    prepared.layers["namespaces"] = Layer(
        "namespaces",
        prepared.namespaces,
        "bubblewrap: user, mount, pid, net, ipc, uts, cgroup; read-only runtime, tmpfs temp "
        f"dir ({settings.tmp_bytes >> 20} MiB, {settings.tmp_inodes} entries), /dev null/zero/urandom, "
        "no /proc; no capabilities"
        if prepared.namespaces
        else problem or "bubblewrap left /proc visible",
    )
    if host_uid == 0:
        prepared.layers["uid"] = Layer(
            "uid",
            False,
            "bubblewrap ran as root: host uid 0 without capabilities (a bound runtime path "
            "is unreadable by other users: make it o+r, or use a runtime outside /root)",
        )
    else:
        prepared.layers["uid"] = Layer("uid", True, f"uid {host_uid} on the host, nobody inside")
    return restrict(prepared, settings)
