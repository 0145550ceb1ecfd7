"""The jail's thin layer over the kernel: libc through ctypes, raw syscalls, shared constants.

Owns :func:`_libc`, :func:`_syscall`, :func:`_fail` and the flag and syscall numbers more than
one layer uses (namespace flags, mount flags, ``prctl`` options). No policy here; it imports
only the standard library and must not import any other module of the jail.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

_PACKAGE_DIR = Path(__file__).resolve().parents[3]
"""The ``scriptgate`` package directory (this file is scriptgate/sandbox/isolation/jail/kernel.py)."""

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
