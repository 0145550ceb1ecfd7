"""The Landlock layer: file rules (read-only runtime, writable temp dir), TCP and scope rules.

Owns the Landlock ABI probe (:func:`landlock_abi`) and :func:`_landlock`, run in the worker
before untrusted code. It must not touch namespaces, seccomp or rlimits.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

from scriptgate.sandbox.isolation.jail.kernel import _O_PATH, _fail, _syscall
from scriptgate.sandbox.isolation.jail.report import _Prepared

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


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: not available)."""
    if sys.platform != "linux":
        return 0
    result = _syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(result, 0)


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
