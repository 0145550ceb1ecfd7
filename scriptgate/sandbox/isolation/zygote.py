"""The fork server of process mode: import and warm up once, fork a fresh worker per request.

Owns :func:`_zygote` (the control socket and its ``fork`` requests), :func:`_monitor` (one per
worker: it becomes the OS jail's outside and reports the worker's pid and exit status) and
:func:`_jail_settings`. The job loop is :mod:`.worker_jobs`'; it must not import
:mod:`.parent`.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socket
from typing import Any

import anyio

from scriptgate.sandbox.isolation.jail.launch import launch, preload, wait
from scriptgate.sandbox.isolation.jail.report import JailReport, JailSettings
from scriptgate.sandbox.isolation.worker_jobs import _become_worker, _warm_up


def _packet(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _zygote(config: dict[str, Any]) -> None:
    """Fork server: import and warm up once, then fork a fresh worker per request.

    Requests arrive on a ``SOCK_SEQPACKET`` control socket (fd 0) as ``{"op":
    "fork", "tmpdir"}`` with two descriptors attached: the worker's channel and a
    status socket. For each request the zygote forks a *monitor*, which forks the
    worker (its own session and process group, so the parent can kill it with
    ``killpg``), reports ``{"op": "pid"}`` and later ``{"op": "exit", "status"}`` on
    the status socket, and exits. The zygote stays single-threaded (no event loop
    runs while it forks); monitors are reaped automatically (``SIGCHLD`` ignored).
    """
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    keep = control.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    os.environ.clear()
    if config.get("jail"):  # OS jail: what every worker's jail shares, built once here
        preload()
    anyio.run(_warm_up, backend="asyncio")
    # Every object made so far is shared with the workers: out of the collector's reach,
    # a worker's first collection does not walk (and so copy) the zygote's whole heap.
    gc.collect()
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    control.sendall(_packet({"op": "ready", "pid": os.getpid()}))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 2)
    os.close(devnull)
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 65536, 2)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        try:
            request = json.loads(data)
            tmpdir = request["tmpdir"]
            channel_fd, status_fd = fds
        except (ValueError, KeyError, TypeError):
            for fd in fds:
                os.close(fd)
            control.sendall(_packet({"op": "error", "message": "malformed fork request"}))
            continue
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(channel_fd)
            os.close(status_fd)
            control.sendall(_packet({"op": "error", "message": f"fork failed: {exc}"}))
            continue
        if pid == 0:  # the monitor
            try:
                _monitor(control, channel_fd, status_fd, tmpdir, config)
            finally:
                os._exit(0)
        os.close(channel_fd)
        os.close(status_fd)
        control.sendall(_packet({"op": "forked"}))


def _monitor(
    control: socket.socket, channel_fd: int, status_fd: int, tmpdir: str, config: dict[str, Any]
) -> None:
    control.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = socket.socket(fileno=status_fd)
    # --- OS jail (scriptgate.sandbox.isolation.jail): this monitor becomes the jail's outside ---
    if config.get("jail"):
        settings = _jail_settings(config, tmpdir, new_session=True)

        def body(report: JailReport) -> None:
            os.chdir(tmpdir)
            _become_worker(channel_fd, config, warm_up=True, jail_report=report.to_json())

        jail_pid, pid = launch(settings, body)
        os.close(channel_fd)
        with contextlib.suppress(OSError):
            status.sendall(_packet({"op": "pid", "pid": pid}))
        code = wait(jail_pid)
        with contextlib.suppress(OSError):
            status.sendall(_packet({"op": "exit", "status": code}))
        return
    # --- end OS jail ---
    pid = os.fork()
    if pid == 0:  # the worker
        try:
            status.close()
            os.setsid()
            os.chdir(tmpdir)
            _become_worker(channel_fd, config, warm_up=True)
        finally:
            os._exit(0)
    os.close(channel_fd)
    with contextlib.suppress(OSError):
        status.sendall(_packet({"op": "pid", "pid": pid}))
    _, code = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        status.sendall(_packet({"op": "exit", "status": os.waitstatus_to_exitcode(code)}))


def _jail_settings(config: dict[str, Any], tmpdir: str, *, new_session: bool) -> JailSettings:
    """The jail of a worker with this config (the same limits ``_apply_limits`` sets after)."""
    memory = config.get("memory_bytes")
    return JailSettings(
        tmpdir=tmpdir,
        memory_bytes=memory if isinstance(memory, int) and memory > 0 else None,
        nofile=int(config.get("nofile", 32)),
        nproc=int(config.get("nproc", 16)),
        fsize=0,
        new_session=new_session,
    )
