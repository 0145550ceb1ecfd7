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
filter (``pyseccomp`` over libseccomp: no ``execve``, no new process (``clone``
for threads only: ``RLIMIT_AS`` then bounds the whole jail), no ``ptrace``, mounts,
namespaces, ``bpf``, io_uring, keyrings, sockets other than ``AF_UNIX``, socket-buffer
options, ``prctl`` beyond what a worker uses...), and marks itself non-dumpable (for good:
``PR_SET_DUMPABLE`` 1 is refused).

Every step is tried on its own; what failed is in the :class:`JailReport`
(``scriptgate jail check`` prints it; ``require_jail=True`` refuses to run
without every layer). It never raises into its caller for a missing kernel
facility. It imports only the standard library (``pyseccomp`` lazily), so the
worker can import it without the rest of the package. It must not import the
engine, the tools or the CLI.

Layout (one module per layer): :mod:`.kernel` (libc, syscalls, constants), :mod:`.report`
(settings and the report), :mod:`.mounts` (namespaces and the new root), :mod:`.privileges`
(uid, rlimits), :mod:`.landlock`, :mod:`.seccomp`, :mod:`.launch` (the order of the layers),
:mod:`.launcher` (``scriptgate jail run/check``), :mod:`.bwrap` and :mod:`.shim` (bubblewrap as
the launcher, run as ``nobody`` when root starts it). This file stays empty (the
subpackages' rule), so importing one module loads only what it needs.
"""
