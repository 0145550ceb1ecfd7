"""The jail's seccomp layer is an allow-list: raw Python under ``scriptgate jail run``.

Every syscall that is not on the list fails with ``EPERM``, whatever its arguments; the
syscalls are made by number (through ``ctypes``), so no Python wrapper stands between the
script and the kernel. The same calls made outside the jail reach the kernel (a different
result), so the tests can fail. Ordinary Python (threads, asyncio, files in the temp dir)
still runs inside; ``fork`` does not (no new process once jailed, findings14 B01).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scriptgate.sandbox.isolation.jail import seccomp

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the OS jail is Linux-only")
pyseccomp = pytest.importorskip("pyseccomp")

# Not on the allow-list: each is a kernel interface a worker never needs. The arguments
# are such that, outside the jail, the kernel answers with something other than EPERM
# (a bad descriptor, a bad address, an unknown flag, or success).
UNLISTED: dict[str, tuple[int, ...]] = {
    "keyctl": (0, 0, 0),
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "io_uring_setup": (0, 0),
    "userfaultfd": (0xFFFF,),
    "bpf": (0xFFFF, 0, 0),
    "perf_event_open": (0, 0, -1, -1, 0),
    "mount": (0, 0, 0, 0, 0),
    "setns": (-1, 0),
    "unshare": (0,),
    "personality": (0xFFFFFFFF,),
    "memfd_create": (0, 0),
    "mknodat": (-1, 0, 0, 0),
    "fanotify_init": (0xFFFFFFFF, 0),
    "process_madvise": (-1, 0, 0, 0, 0),
    "kcmp": (0, 0, 0xFFFF, 0, 0),
}

PROBE = """
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = {}
for name, (number, args) in json.loads(sys.argv[1] if len(sys.argv) > 1 else CALLS).items():
    ctypes.set_errno(0)
    value = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    results[name] = "ok" if value >= 0 else ctypes.get_errno()
print(json.dumps(results))
"""


def _calls() -> dict[str, tuple[int, tuple[int, ...]]]:
    arch = pyseccomp.Arch.NATIVE
    out: dict[str, tuple[int, tuple[int, ...]]] = {}
    for name, args in UNLISTED.items():
        try:
            number = pyseccomp.resolve_syscall(arch, name)
        except (OSError, ValueError, RuntimeError):
            continue
        if number >= 0:
            out[name] = (number, args)
    return out


def _run(tmp_path: Path, source: str, *, jailed: bool) -> str:
    script = tmp_path / ("probe_in.py" if jailed else "probe_out.py")
    script.write_text(textwrap.dedent(source))
    command = [sys.executable, "-m", "scriptgate", "jail", "run", str(script)]
    done = subprocess.run(
        command if jailed else [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_jail_seccomp_refuses_every_unlisted_syscall_with_eperm(tmp_path: Path) -> None:
    calls = _calls()
    assert {"keyctl", "io_uring_setup", "bpf", "setns", "personality"} <= set(calls)
    source = f"CALLS = {json.dumps(json.dumps(calls))}\n" + PROBE
    outside = json.loads(_run(tmp_path, source, jailed=False))
    inside = json.loads(_run(tmp_path, source, jailed=True))
    eperm = 1
    assert inside == dict.fromkeys(calls, eperm)
    # Outside, the kernel itself answers (setns: EBADF; personality: the current persona).
    assert outside["setns"] != eperm
    assert outside["personality"] == "ok"
    assert sum(result != eperm for result in outside.values()) >= len(calls) // 2


def test_jail_seccomp_allows_ordinary_python(tmp_path: Path) -> None:
    source = """
    import asyncio, json, os, socket, tempfile, threading
    seen = []
    thread = threading.Thread(target=lambda: seen.append("thread"))
    thread.start(); thread.join()
    async def main():
        await asyncio.sleep(0)
        a, b = socket.socketpair(); a.send(b"x"); seen.append(b.recv(1).decode())
        a.close(); b.close()
    asyncio.run(main())
    path = tempfile.mkdtemp(dir=".") + "/f.txt"
    with open(path, "w") as handle:
        handle.write("file")
    seen.append(open(path).read())
    os.unlink(path)
    try:  # findings14 B01: no new process in the jail (threads only)
        pid = os.fork()
    except OSError as exc:
        seen.append(exc.errno)
    else:
        if pid == 0:
            os._exit(7)
        seen.append(os.waitpid(pid, 0)[1] >> 8)
    seen.append(os.isatty(0))
    print(json.dumps(seen))
    """
    assert json.loads(_run(tmp_path, source, jailed=True)) == ["thread", "x", "file", 1, False]


def test_jail_seccomp_lists_are_disjoint_and_name_the_dangerous_calls() -> None:
    allowed = set(seccomp._ALLOWED_SYSCALLS)
    for name in ("execve", "ptrace", "mount", "unshare", "setns", "bpf", "keyctl", "clone3"):
        assert name not in allowed
    assert not allowed & set(seccomp._DENIED_SYSCALLS)
    assert not set(seccomp._ALLOWED_IOCTLS.values()) & set(seccomp._DENIED_IOCTLS)
    assert not allowed & set(UNLISTED)
