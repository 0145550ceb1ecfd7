"""``scriptgate jail check`` and ``scriptgate jail run``: the worker's OS jail, made visible.

This module owns the two subcommands' arguments and bodies (``cli.py`` only
registers them). Both start a fresh launcher interpreter
(:func:`scriptgate.sandbox.isolation.jail.launcher.launcher_command`) with an empty environment and
no inherited descriptors but stdin/stdout/stderr (for ``jail run`` pipes this
process relays, never the caller's terminal), which builds the same jail a
process-mode worker gets (:mod:`scriptgate.sandbox.isolation.jail`). It must not build a
jail itself (this process is the host) nor touch the worker protocol.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

import anyio

from scriptgate._terminal import escape_output
from scriptgate.sandbox.isolation.jail.bwrap import (
    bwrap_command,
    bwrap_path,
    host_uid,
    launch_as,
    seccomp_for_bwrap,
)
from scriptgate.sandbox.isolation.jail.landlock import landlock_abi
from scriptgate.sandbox.isolation.jail.launcher import launcher_command
from scriptgate.sandbox.isolation.jail.report import JailReport

__all__ = ["add_parser", "command"]


class _HasStreams(Protocol):
    stdout: TextIO
    stderr: TextIO


def add_parser(sub: Any) -> None:
    """Register ``jail check`` and ``jail run`` on the ``scriptgate`` subparsers ``sub``."""
    jail = sub.add_parser(
        "jail",
        help="check or use the OS jail of process-mode workers (Linux)",
        description="The OS jail around isolation='process' workers: namespaces, seccomp, "
        "Landlock, an unprivileged uid and rlimits.",
    )
    actions = jail.add_subparsers(dest="jail_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="print each layer as active or unavailable (exit 0 only if all are active)",
        description="Build a worker's jail on this machine and print what each layer got.",
    )
    run = actions.add_parser(
        "run",
        help="run an ordinary (unrestricted) Python file inside a worker's jail",
        description="Run FILE.py, unrestricted, inside the same jail as a process-mode worker: "
        "stdin/stdout/stderr are passed through and its exit status is returned.",
    )
    run.add_argument("file", metavar="FILE.py", help="the Python file to run")
    run.add_argument(
        "--memory",
        type=int,
        default=1024,
        metavar="MIB",
        help="address-space limit in MiB (1024, the default Limits.memory_bytes)",
    )
    for parser in (check, run):
        parser.add_argument(
            "--launcher",
            choices=("builtin", "bwrap"),
            default="builtin",
            help="who builds the namespaces: scriptgate itself (default) or bubblewrap; "
            "the rlimits, Landlock and seccomp layers are scriptgate's either way",
        )


async def command(args: argparse.Namespace, io: _HasStreams) -> int:
    """Run ``scriptgate jail check|run``; return the exit code."""
    if args.launcher == "bwrap" and bwrap_path() is None:
        io.stderr.write(
            "scriptgate: error: --launcher bwrap: bubblewrap (bwrap) is not installed\n"
        )
        return 2
    if args.jail_command == "check":
        return await anyio.to_thread.run_sync(_check, io, args.launcher)
    return await anyio.to_thread.run_sync(_run, args.file, args.memory, io, args.launcher)


def _temp_dir() -> str:
    return tempfile.mkdtemp(prefix="scriptgate-jail-")


def _bwrap(mode: Literal["run", "check"], file: str, tmpdir: str, memory: int) -> Any:
    """``(command, uid to run it as or None)`` of a launcher under bubblewrap."""
    extra = (file,) if file else ()
    seccomp = seccomp_for_bwrap()
    inner_mode: Literal["run-bwrap", "check-bwrap"] = f"{mode}-bwrap"  # type: ignore[assignment]
    # the uid is decided from the bound paths; the inner command needs it first: two passes
    _probe, bound = bwrap_command(["true"], tmpdir, tmp_bytes=64 << 20, extra_read_only=extra)
    uid = host_uid(bound)
    inner = launcher_command(inner_mode, file, tmpdir, str(memory), *seccomp, str(uid))
    command, bound = bwrap_command(inner, tmpdir, tmp_bytes=64 << 20, extra_read_only=extra)
    return launch_as(command, bound)  # as nobody: directly, or through the jail's shim


def probe(launcher: str = "builtin") -> JailReport:
    """Build a worker's jail in a launcher and return what it got."""
    tmpdir = _temp_dir()
    try:
        command, user = (
            _bwrap("check", "", tmpdir, 0)
            if launcher == "bwrap"
            else (launcher_command("check", tmpdir), None)
        )
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={},
            close_fds=True,
            timeout=60,
            check=False,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
        )
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    try:
        return JailReport.from_json(json.loads(done.stdout))
    except ValueError:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return JailReport.unavailable(f"the launcher failed (status {done.returncode}) {tail[0]}")


def _check(io: _HasStreams, launcher: str = "builtin") -> int:
    report = probe(launcher)
    for line in report.lines():
        io.stdout.write(line + "\n")
    bwrap = bwrap_path()
    if bwrap is None:
        alternative = "not installed (optional: --launcher bwrap)"
    elif launcher == "bwrap":
        alternative = f"{bwrap} (the launcher of this check)"
    else:
        other = probe("bwrap")
        missing = "; ".join(other.missing)
        alternative = f"{bwrap}: --launcher bwrap gives jail {other.level}" + (
            f" (unavailable: {missing})" if missing else ""
        )
    io.stdout.write(
        f"launcher: {launcher}; kernel: Landlock ABI {landlock_abi()}; "
        f"python {sys.version.split()[0]}\nbubblewrap: {alternative}\n"
    )
    io.stdout.write(f"jail: {report.level}\n")
    io.stdout.flush()
    return 0 if report.complete else 1


def _run(file: str, memory_mib: int, io: _HasStreams, launcher: str = "builtin") -> int:
    path = Path(file)
    if not path.is_file():
        io.stderr.write(f"scriptgate: error: no such file: {file}\n")
        return 2
    tmpdir = _temp_dir()
    io.stdout.flush()
    io.stderr.flush()
    try:
        # Pipes, not our descriptors: the jail must never hold the caller's terminal
        # (TIOCSTI and friends act on a tty through any fd of it). We relay.
        memory = max(0, memory_mib) << 20
        command, user = (
            _bwrap("run", str(path.resolve()), tmpdir, memory)
            if launcher == "bwrap"
            else (launcher_command("run", str(path.resolve()), tmpdir, str(memory)), None)
        )
        process = subprocess.Popen(
            command,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
            env={},
            close_fds=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _relay(process, io)
        finally:
            if process.poll() is None:
                process.kill()
            code = process.wait()
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 128 - code if code < 0 else code


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _sink(stream: TextIO) -> Callable[[bytes], None]:
    """Write the jail's bytes to ``stream``: unchanged, or escaped when it is a terminal.

    findings14 B08: jailed code never holds the caller's terminal, but its output reached
    it raw: escape sequences set the title, wrote the clipboard (OSC 52), made the
    terminal answer queries into the caller's stdin. On a terminal every control
    character but newline, tab and carriage return is shown as an escape (``\\x1b``);
    pipes and files get the bytes exactly (programs and tests read them).
    """
    if _isatty(stream):
        decode = codecs.getincrementaldecoder("utf-8")("backslashreplace").decode

        def write_escaped(data: bytes) -> None:
            stream.write(escape_output(decode(data)))
            stream.flush()

        return write_escaped
    binary = getattr(stream, "buffer", None)
    if binary is not None:

        def write_binary(data: bytes) -> None:
            binary.write(data)
            binary.flush()

        return write_binary

    def write_text(data: bytes) -> None:
        stream.write(data.decode("utf-8", "replace"))
        stream.flush()

    return write_text


def _relay(process: subprocess.Popen[bytes], io: _HasStreams) -> None:
    """Copy our stdin to the jail's and its stdout/stderr to ours until both close."""
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    selector = selectors.DefaultSelector()
    sinks = {process.stdout.fileno(): _sink(io.stdout), process.stderr.fileno(): _sink(io.stderr)}
    for fd in sinks:
        selector.register(fd, selectors.EVENT_READ)
    child_in = process.stdin.fileno()
    try:
        os.fstat(0)
        selector.register(0, selectors.EVENT_READ)
    except (OSError, ValueError, PermissionError):
        process.stdin.close()
    try:
        while sinks:
            for key, _events in selector.select():
                fd = int(key.fd)
                if fd == 0:
                    data = os.read(0, 1 << 16)
                    try:
                        if not data:
                            raise BrokenPipeError
                        os.write(child_in, data)
                    except OSError:
                        selector.unregister(0)
                        process.stdin.close()
                    continue
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    sinks[fd](chunk)
                else:
                    selector.unregister(fd)
                    del sinks[fd]
    finally:
        selector.close()
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()
