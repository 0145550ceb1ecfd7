"""Putting the layers together: :func:`preload`, :func:`launch` (outside), :func:`restrict` (inside).

Owns the order of the layers, the jail's init (PID 1 of its PID namespace) and the hello
that tells the launcher the worker's pid. Each layer lives in its own module; this one only
calls them and records what each got. It must not import the engine, the tools or the CLI.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from scriptgate.sandbox.isolation.jail.kernel import (
    _PR_SET_DUMPABLE,
    _PR_SET_NO_NEW_PRIVS,
    _fail,
    _libc,
)
from scriptgate.sandbox.isolation.jail.landlock import _landlock
from scriptgate.sandbox.isolation.jail.mounts import (
    _DEVICES,
    _enter_namespaces,
    _mount_point,
    runtime_paths,
)
from scriptgate.sandbox.isolation.jail.privileges import _become_unprivileged, _set_rlimits
from scriptgate.sandbox.isolation.jail.report import (
    LAYERS,
    JailReport,
    JailSettings,
    Layer,
    _Prepared,
)
from scriptgate.sandbox.isolation.jail.seccomp import _build_seccomp, _seccomp


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
