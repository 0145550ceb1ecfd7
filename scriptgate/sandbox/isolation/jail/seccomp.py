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
    _NAMESPACE_FLAGS,
    _PR_SET_SECCOMP,
    _SECCOMP_FILTER_FLAG_SPEC_ALLOW,
    _SECCOMP_MODE_FILTER,
    _SYS_SECCOMP,
    _fail,
    _libc,
    _syscall,
)
from scriptgate.sandbox.isolation.jail.report import _Prepared

# The filter is an allow-list: every syscall not named here fails with EPERM. The
# set is what the worker's Python (the engine, greenlet, regex, asyncio through
# anyio, the framing) and ordinary Python under ``scriptgate jail run`` were traced
# making (``strace -f`` over the isolation tests, the attack suite in process mode
# and a ``jail run`` of everyday Python), grouped by purpose. Which files and
# processes these reach is the other layers' business (the mount namespace and
# Landlock decide what ``openat`` finds, the PID namespace what ``kill`` reaches).
_ALLOWED_SYSCALLS: tuple[str, ...] = (
    # memory
    "brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync",
    # descriptors and files (what they reach: the new root and Landlock)
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
    "preadv2", "pwritev2", "open", "openat", "close", "close_range", "lseek", "stat",
    "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd", "chdir", "fchdir",
    "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
    "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "truncate",
    "ftruncate", "fsync", "fdatasync", "fallocate", "fadvise64", "utimensat", "umask",
    "flock", "fcntl", "dup", "dup2", "dup3", "pipe", "pipe2", "sendfile",
    "copy_file_range",
    # waiting for descriptors
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
    # sockets (``socket`` itself: AF_UNIX only, below)
    "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "recvfrom",
    "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown", "getsockname",
    "getpeername", "getsockopt",
    # threads and processes (``clone`` itself: without namespace flags, below)
    "exit", "exit_group", "wait4", "waitid", "getpid", "getppid", "gettid", "getuid",
    "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "getpgid",
    "getpgrp", "getsid", "set_tid_address", "set_robust_list", "rseq", "futex",
    "sched_yield", "sched_getaffinity", "arch_prctl",
    # signals (the PID namespace and Landlock scope where they reach)
    "kill", "tgkill", "tkill", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
    "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend", "sigaltstack", "restart_syscall",
    # time, limits, randomness, system facts
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday",
    "time", "setitimer", "getitimer", "alarm", "getrlimit", "setrlimit", "prlimit64",
    "getrusage", "times", "sysinfo", "uname", "getrandom",
)  # fmt: skip
# Named for the record and for the tests: never on the allow-list (each EPERM).
# Running programs, debugging other processes, changing the mount or namespace
# view, and kernel interfaces a worker never needs (each a common source of
# privilege escalations).
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
    # findings14 B01: no new processes once jailed (RLIMIT_AS is per process: every fork
    # was another memory_bytes); ``clone`` is allowed for threads only (below)
    "fork",
    "vfork",
)
# clone's flags as a thread has them (pthread_create: CLONE_VM | CLONE_THREAD | ...). A
# process (fork: SIGCHLD only; posix_spawn: CLONE_VM | CLONE_VFORK) lacks CLONE_THREAD.
_CLONE_VM = 0x00000100
_CLONE_THREAD = 0x00010000
# prctl (findings14 B07): the options a jailed worker was traced using (strace -f over
# process-mode runs of both launchers, and ``jail run``): only PR_SET_DUMPABLE 0, the
# jail's last step, and the harmless thread-name and read-only queries. Every other option
# (PR_SET_DUMPABLE 1, which would let a crash hand the worker's memory to the host's
# core-dump helper; PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_PTRACER, PR_SET_MM,
# PR_SET_VMA, seccomp stacking...) fails with EPERM.
_PR_GET_DUMPABLE = 3
_PR_SET_DUMPABLE = 4
_PR_SET_NAME = 15
_PR_GET_NAME = 16
_ALLOWED_PRCTLS = (_PR_GET_DUMPABLE, _PR_SET_NAME, _PR_GET_NAME)
# setsockopt (findings14 B11): socket buffers are kernel memory no rlimit charges, so no
# option that raises one (SO_SNDBUF 7, SO_RCVBUF 8, SO_SNDBUFFORCE 32, SO_RCVBUFFORCE 33)
# and no option of another level (every socket is AF_UNIX: only SOL_SOCKET has options).
# With the default buffers and RLIMIT_NOFILE the jail's queued bytes stay a few MiB.
_SOL_SOCKET = 1
_ALLOWED_SOCKOPTS = {
    "SO_REUSEADDR": 2,
    "SO_KEEPALIVE": 9,
    "SO_LINGER": 13,
    "SO_PASSCRED": 16,
    "SO_RCVLOWAT": 18,
    "SO_SNDLOWAT": 19,
    "SO_RCVTIMEO_OLD": 20,
    "SO_SNDTIMEO_OLD": 21,
    "SO_RCVTIMEO_NEW": 66,
    "SO_SNDTIMEO_NEW": 67,
}
_DENIED_SOCKOPTS = (7, 8, 32, 33)
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
# The ioctl requests allowed (every other one: EPERM): a terminal's attributes and
# size (``isatty``, ``os.get_terminal_size``), bytes waiting, non-blocking mode and
# close-on-exec (CPython sets a descriptor's inheritability with FIOCLEX/FIONCLEX).
_ALLOWED_IOCTLS = {
    "TCGETS": 0x5401,
    "TIOCGPGRP": 0x540F,
    "TIOCGWINSZ": 0x5413,
    "FIONREAD": 0x541B,
    "FIONBIO": 0x5421,
    "FIONCLEX": 0x5450,
    "FIOCLEX": 0x5451,
}


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _build_seccomp() -> tuple[bytes, str]:
    """The filter as a BPF program (libseccomp through pyseccomp), and what it allows."""
    import pyseccomp  # type: ignore[import-untyped]

    module: Any = pyseccomp
    eperm = module.ERRNO(errno.EPERM)
    syscall_filter = module.SyscallFilter(eperm)
    allowed = 0
    for name in _ALLOWED_SYSCALLS:
        try:
            syscall_filter.add_rule(module.ALLOW, name)
            allowed += 1
        except (OSError, ValueError, RuntimeError):
            continue  # not a syscall on this architecture (aarch64 has no open, stat...)
    # clone: threads only (CLONE_THREAD and CLONE_VM set), never a new namespace; a new
    # process (fork, vfork, posix_spawn) is refused, so RLIMIT_AS bounds the whole jail.
    thread = _CLONE_THREAD | _CLONE_VM
    syscall_filter.add_rule(
        module.ALLOW, "clone", module.Arg(0, module.MASKED_EQ, _NAMESPACE_FLAGS | thread, thread)
    )
    # prctl: the option is an int (the kernel reads 32 bits); PR_SET_DUMPABLE only to 0.
    syscall_filter.add_rule(
        module.ALLOW,
        "prctl",
        module.Arg(0, module.MASKED_EQ, 0xFFFFFFFF, _PR_SET_DUMPABLE),
        module.Arg(1, module.EQ, 0),
    )
    for option in _ALLOWED_PRCTLS:
        syscall_filter.add_rule(
            module.ALLOW, "prctl", module.Arg(0, module.MASKED_EQ, 0xFFFFFFFF, option)
        )
    # setsockopt: level and name are ints (32 bits compared); no option raising a buffer.
    for sockopt in _ALLOWED_SOCKOPTS.values():
        syscall_filter.add_rule(
            module.ALLOW,
            "setsockopt",
            module.Arg(1, module.MASKED_EQ, 0xFFFFFFFF, _SOL_SOCKET),
            module.Arg(2, module.MASKED_EQ, 0xFFFFFFFF, sockopt),
        )
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc use clone.
    syscall_filter.add_rule(module.ERRNO(errno.ENOSYS), "clone3")
    syscall_filter.add_rule(module.ALLOW, "socket", module.Arg(0, module.EQ, _AF_UNIX))
    syscall_filter.add_rule(
        module.ERRNO(errno.EAFNOSUPPORT), "socket", module.Arg(0, module.NE, _AF_UNIX)
    )
    # The kernel reads ioctl's request as 32 bits: compare only those, or
    # ioctl(fd, 0x1_0000_5412) would be judged as a request other than TIOCSTI.
    for request in _ALLOWED_IOCTLS.values():
        syscall_filter.add_rule(
            module.ALLOW, "ioctl", module.Arg(1, module.MASKED_EQ, 0xFFFFFFFF, request)
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
        f"libseccomp via pyseccomp ({len(program) // 8} BPF instructions): allow-list of "
        f"{allowed + 5} syscalls, every other one EPERM (execve, fork, ptrace, mount, "
        "namespaces, bpf, io_uring, keyrings...); clone for threads only (no new process: "
        "memory is bounded per jail, not per fork); sockets AF_UNIX only, no socket-buffer "
        f"options; prctl {len(_ALLOWED_PRCTLS) + 1} options (PR_SET_DUMPABLE 0 only); "
        f"{len(_ALLOWED_IOCTLS)} ioctl requests"
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


assert not set(_ALLOWED_SYSCALLS) & set(_DENIED_SYSCALLS), "a denied syscall is on the allow-list"
assert not set(_ALLOWED_IOCTLS.values()) & set(_DENIED_IOCTLS), "a denied ioctl is allowed"
assert not set(_ALLOWED_SOCKOPTS.values()) & set(_DENIED_SOCKOPTS), "a buffer option is allowed"
