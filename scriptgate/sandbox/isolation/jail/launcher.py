"""``scriptgate jail run`` / ``jail check`` inside: a fresh interpreter that jails itself.

Owns :func:`launcher_command` (the command line, which imports only the jail package) and
the entry points it runs. It must not import the engine, the tools or the CLI.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, NoReturn

from scriptgate.sandbox.isolation.jail.kernel import _PACKAGE_DIR
from scriptgate.sandbox.isolation.jail.launch import launch, wait
from scriptgate.sandbox.isolation.jail.report import JailReport, JailSettings


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
    "from scriptgate.sandbox.isolation.jail.launcher import launcher_main\n"
    "launcher_main(sys.argv[2:])\n"
)


def launcher_command(
    mode: Literal["run", "check", "run-bwrap", "check-bwrap"], *args: str
) -> list[str]:
    """The command line of a launcher (``mode`` ``"run"``: file, tmpdir, memory bytes;
    ``"check"``: tmpdir; the ``-bwrap`` modes: :func:`bwrap_main`). Start it with an
    empty environment."""
    parent = str(_PACKAGE_DIR.parent)
    return [sys.executable, "-I", "-B", "-c", _BOOTSTRAP, parent, mode, *args]


def launcher_main(argv: Sequence[str]) -> NoReturn:
    """Entry point of :func:`launcher_command`'s interpreter."""
    if argv and argv[0] == "run":
        run_main(argv[1:])
    if argv and argv[0] in ("run-bwrap", "check-bwrap"):
        bwrap_main(argv[0], argv[1:])
    check_main(argv[1:])


def bwrap_main(mode: str, argv: Sequence[str]) -> NoReturn:
    """Launcher inside ``bwrap`` (``scriptgate jail run/check --launcher bwrap``).

    ``argv``: ``[file, tmpdir, memory_bytes, seccomp hex, seccomp detail, seccomp error,
    host uid]`` (``check-bwrap``: file and memory empty). bubblewrap built the
    namespaces; this process adds the rest of the jail and runs the file (or prints
    the report) itself.
    """
    from scriptgate.sandbox.isolation.jail.bwrap import restrict_under_bwrap

    path, tmpdir, memory = argv[0], argv[1], int(argv[2] or 0)
    seccomp = (argv[3], argv[4], argv[5])
    source = b""
    if mode == "run-bwrap":
        with open(path, "rb") as handle:
            source = handle.read()
    _close_fds(() if mode == "run-bwrap" else (1,))
    os.environ.clear()
    os.chdir(tmpdir)
    # check-bwrap reports the limits run-bwrap applies (bubblewrap sized the tmpfs: 64 MiB)
    settings = JailSettings(
        tmpdir=tmpdir,
        memory_bytes=memory or None,
        fsize=RUN_FSIZE,
        tmp_bytes=RUN_TMP_BYTES,
        tmp_inodes=RUN_TMP_INODES,
    )
    report = restrict_under_bwrap(settings, seccomp, int(argv[6]))
    if mode == "check-bwrap":
        os.write(1, json.dumps(report.to_json()).encode())
        os._exit(0)
    code = 0
    try:
        sys.argv = [path]
        exec(compile(source, path, "exec"), {"__name__": "__main__", "__file__": path})
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


RUN_FSIZE = 64 << 20
"""``RLIMIT_FSIZE`` of ``scriptgate jail run`` (and what ``jail check`` reports)."""
RUN_TMP_BYTES = 64 << 20
"""The size of the temp dir's ``tmpfs`` under ``scriptgate jail run``."""
RUN_TMP_INODES = 4096
"""The entries the temp dir's ``tmpfs`` may hold under ``scriptgate jail run``."""


def run_settings(tmpdir: str, memory_bytes: int | None = 1 << 30) -> JailSettings:
    """The jail ``scriptgate jail run`` applies; ``jail check`` builds and reports the same
    (findings2: check reported FSIZE 1 MiB while run gave 64 MiB)."""
    return JailSettings(
        tmpdir=tmpdir,
        memory_bytes=memory_bytes,
        fsize=RUN_FSIZE,
        new_session=True,
        tmp_bytes=RUN_TMP_BYTES,
        tmp_inodes=RUN_TMP_INODES,
    )


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
    settings = run_settings(tmpdir, memory or None)

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

    _jail_process(replace(run_settings(tmpdir), new_session=False), body)
