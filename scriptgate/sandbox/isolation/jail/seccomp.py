"""The seccomp layer: the BPF filter (libseccomp through ``pyseccomp``) and its loading.

Owns what the filter allows and denies (:func:`_build_seccomp`, built once per process by
:func:`~scriptgate.sandbox.isolation.jail.launch.preload`) and :func:`_seccomp`, which loads
it in the worker as the last layer. It must not touch namespaces, Landlock or rlimits.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from typing import Any

from scriptgate.sandbox.isolation.jail.kernel import (
    _CLONE_NEWCGROUP,
    _CLONE_NEWIPC,
    _CLONE_NEWNET,
    _CLONE_NEWNS,
    _CLONE_NEWPID,
    _CLONE_NEWUSER,
    _CLONE_NEWUTS,
    _PR_SET_SECCOMP,
    _SECCOMP_FILTER_FLAG_SPEC_ALLOW,
    _SECCOMP_MODE_FILTER,
    _SYS_SECCOMP,
    _fail,
    _libc,
    _syscall,
)
from scriptgate.sandbox.isolation.jail.report import _Prepared

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
