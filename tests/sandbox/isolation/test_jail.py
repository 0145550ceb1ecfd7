"""The OS jail of process-mode workers (scriptgate.sandbox.isolation.jail), tried with hostile raw Python.

Each attack is an ordinary, unrestricted Python file run through ``scriptgate jail
run`` (the same jail a worker gets). Every attack is first run *outside* the jail
with the same interpreter, to show that it works there (so the test can fail),
then inside, where it must be refused. The last part treats a worker as hostile:
a real process speaking the worker protocol that lies, chatters or calls late.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.isolation.jail.report import LAYERS, JailReport
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the OS jail is Linux-only")


def _jail_run(
    tmp_path: Path, source: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "attack.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, "-m", "scriptgate", "jail", "run", *extra, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _plain_run(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "attack_outside.py"
    script.write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )


def _both(tmp_path: Path, source: str, *extra: str) -> tuple[str, str]:
    """(stdout outside the jail, stdout inside); each attack prints ESCAPED or REFUSED."""
    outside = _plain_run(tmp_path, source)
    inside = _jail_run(tmp_path, source, *extra)
    assert inside.returncode == 0, inside.stderr
    return outside.stdout, inside.stdout


_ATTEMPT = """
import errno, os, sys
def attempt(what, action):
    try:
        action()
    except (OSError, MemoryError) as exc:
        code = getattr(exc, "errno", None)
        print("REFUSED", what, errno.errorcode.get(code, type(exc).__name__))
    else:
        print("ESCAPED", what)
"""


def test_jail_refuses_reading_a_canary_file_outside(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("the canary sings")
    source = _ATTEMPT + f"attempt('read', lambda: print(open({str(canary)!r}).read()))\n"
    outside, inside = _both(tmp_path, source)
    assert "the canary sings" in outside
    assert "ESCAPED" in outside
    assert "the canary sings" not in inside
    assert "REFUSED read" in inside
    # nor the host's own files
    inside = _jail_run(tmp_path, _ATTEMPT + "attempt('passwd', lambda: open('/etc/passwd'))").stdout
    assert "REFUSED passwd" in inside


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def test_jail_refuses_connecting_to_a_loopback_server(tmp_path: Path, loopback_server: int) -> None:
    source = _ATTEMPT + textwrap.dedent(
        f"""
        import socket
        def connect():
            socket.create_connection(("127.0.0.1", {loopback_server}), timeout=5).close()
        def unix_abstract():
            s = socket.socket(socket.AF_UNIX)
            s.connect("\\0scriptgate-jail-test-nowhere")
        attempt("connect", connect)
        attempt("abstract", unix_abstract)
        """
    )
    outside, inside = _both(tmp_path, source)
    assert "ESCAPED connect" in outside
    assert "REFUSED connect" in inside
    assert "REFUSED abstract" in inside


def test_jail_refuses_signalling_the_parent(tmp_path: Path) -> None:
    source = _ATTEMPT + f"attempt('signal', lambda: os.kill({os.getpid()}, 0))\n"
    outside, inside = _both(tmp_path, source)
    assert "ESCAPED signal" in outside
    assert "REFUSED signal" in inside


def test_jail_refuses_exec_of_a_shell(tmp_path: Path) -> None:
    source = _ATTEMPT + textwrap.dedent(
        """
        import subprocess
        attempt("subprocess", lambda: subprocess.run(["/bin/sh", "-c", "echo SHELL RAN"]))
        attempt("execv", lambda: os.execv("/bin/sh", ["sh", "-c", "echo SHELL RAN"]))
        """
    )
    outside, inside = _both(tmp_path, source)
    assert "SHELL RAN" in outside
    assert "SHELL RAN" not in inside
    assert "REFUSED subprocess" in inside
    assert "REFUSED execv" in inside


def test_jail_refuses_reading_the_parents_environ(tmp_path: Path) -> None:
    source = _ATTEMPT + textwrap.dedent(
        f"""
        def read():
            data = open("/proc/{os.getpid()}/environ", "rb").read()
            print("environ bytes", len(data))
        attempt("environ", read)
        attempt("proc", lambda: os.listdir("/proc"))
        """
    )
    outside, inside = _both(tmp_path, source)
    assert "ESCAPED environ" in outside
    assert "REFUSED environ" in inside
    assert "REFUSED proc" in inside


def test_jail_has_no_parent_environment_argv_or_descriptors(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    with open(secret, "w") as leaked:
        os.set_inheritable(leaked.fileno(), True)
        source = textwrap.dedent(
            """
            import os, sys
            print("env", sorted(os.environ))
            print("argv", sys.argv)
            open_fds = []
            for fd in range(3, 256):
                try:
                    os.fstat(fd)
                except OSError:
                    continue
                open_fds.append(fd)
            print("fds", open_fds)
            """
        )
        env = {**os.environ, "SCRIPTGATE_JAIL_SECRET": "hunter2"}
        done = _jail_run(tmp_path, source, env=env)
    assert done.returncode == 0, done.stderr
    assert "SCRIPTGATE_JAIL_SECRET" not in done.stdout
    assert "env []" in done.stdout
    assert "argv ['" + str(tmp_path / "attack.py") + "']" in done.stdout
    assert "fds []" in done.stdout


def test_jail_refuses_writing_outside_its_temp_dir(tmp_path: Path) -> None:
    site = sysconfig.get_paths()["purelib"]
    targets = [str(tmp_path / "escaped.txt"), os.path.join(site, "escaped.txt"), "/escaped.txt"]
    source = _ATTEMPT + textwrap.dedent(
        f"""
        def write(path):
            with open(path, "w") as f:
                f.write("x")
        for n, path in enumerate({targets!r}):
            attempt(f"write{{n}}", lambda: write(path))
        attempt("own-temp-dir", lambda: write("inside.txt"))
        """
    )
    outside, inside = _both(tmp_path, source)
    assert "ESCAPED write0" in outside
    os.unlink(targets[0])
    for extra in targets[1:]:
        if os.path.exists(extra):
            os.unlink(extra)
    for n in range(len(targets)):
        assert f"REFUSED write{n}" in inside
    assert "ESCAPED own-temp-dir" in inside
    assert not os.path.exists(targets[0])
    assert not os.path.exists(targets[1])


def test_jail_bounds_a_fork_bomb(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """
        import os
        read, write = os.pipe()
        children = []
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                os.read(read, 1)
                os._exit(0)
            children.append(pid)
        os.write(write, b"x" * len(children))
        for pid in children:
            os.waitpid(pid, 0)
        print("forked", len(children))
        """
    )
    outside, inside = _both(tmp_path, source)
    assert "forked 100" in outside
    count = int(inside.split()[-1])
    assert count == 0  # findings14 B01: no new process at all once jailed


_PROCESSES = """
import ctypes, errno, json, os, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
def raw(name, number, *args):
    ctypes.set_errno(0)
    value = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if value == 0:
        os._exit(0)  # a child made it (outside the jail only): it leaves at once
    if value > 0:
        os.waitpid(value, 0)
    out[name] = "ok" if value >= 0 else errno.errorcode[ctypes.get_errno()]
def attempt(name, action):
    try:
        action()
        out[name] = "ok"
    except OSError as exc:
        out[name] = errno.errorcode[exc.errno]
def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
attempt("os.fork", fork)
raw("fork", 57)
if CHECK_ALL:  # (outside the jail these would run: a vfork child shares our stack)
    attempt("posix_spawn", lambda: os.waitpid(os.posix_spawn("/nonexistent", ["x"], {}), 0))
    raw("vfork", 58)
SIGCHLD, CLONE_VM, CLONE_VFORK, CLONE_THREAD = 17, 0x100, 0x4000, 0x10000
raw("clone-process", 56, SIGCHLD, 0, 0, 0, 0)
if CHECK_ALL:
    raw("clone-vm-vfork", 56, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0)
    raw("clone-thread-no-vm", 56, CLONE_THREAD | SIGCHLD, 0, 0, 0, 0)
seen = []
thread = threading.Thread(target=lambda: seen.append(1))
thread.start(); thread.join()
out["thread"] = "ok" if seen else "no"
print(json.dumps(out))
"""


def test_jail_refuses_creating_processes(tmp_path: Path) -> None:
    """findings14 B01: RLIMIT_AS is per process: a jail that forks holds a multiple of it.

    Once jailed, no new process at all (fork, vfork, clone without CLONE_THREAD, the
    CLONE_VM|CLONE_VFORK of posix_spawn): threads only, so ``memory_bytes`` bounds the jail.
    """
    outside = json.loads(_plain_run(tmp_path, "CHECK_ALL = False\n" + _PROCESSES).stdout)
    inside = _jail_run(tmp_path, "CHECK_ALL = True\n" + _PROCESSES)
    assert inside.returncode == 0, inside.stderr
    found = json.loads(inside.stdout)
    assert outside == {"os.fork": "ok", "fork": "ok", "clone-process": "ok", "thread": "ok"}
    assert found == {
        "os.fork": "EPERM",
        "posix_spawn": "EPERM",
        "fork": "EPERM",
        "vfork": "EPERM",
        "clone-process": "EPERM",
        "clone-vm-vfork": "EPERM",
        "clone-thread-no-vm": "EPERM",
        "thread": "ok",
    }


_SOCKET_BUFFERS = """
import ctypes, errno, json, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
def setsockopt(label, level, option):
    value = ctypes.c_int(1 << 24)
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(54), ctypes.c_long(a.fileno()), ctypes.c_long(level),
                          ctypes.c_long(option), ctypes.byref(value), ctypes.c_long(4))
    out[label] = "ok" if result == 0 else errno.errorcode[ctypes.get_errno()]
for name, option in (("SO_SNDBUF", 7), ("SO_RCVBUF", 8), ("SO_SNDBUFFORCE", 32),
                     ("SO_RCVBUFFORCE", 33)):
    setsockopt(name, 1, option)
    setsockopt(name + "-high-bits", 1 | 1 << 32, option | 1 << 32)
a.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
out["SO_PASSCRED"] = "ok"
"""
_SOCKET_FLOOD = """
pairs, queued = [], 0
while True:  # as many pairs as RLIMIT_NOFILE allows, each buffer full
    try:
        x, y = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError:
        break
    x.setblocking(False)
    try:
        while True:
            queued += x.send(bytes(65000))
    except OSError:
        pass
    pairs.append((x, y))
out["queued_mib"] = queued >> 20
"""
_PRINT_OUT = "print(json.dumps(out))\n"


def test_jail_refuses_raising_socket_buffers(tmp_path: Path) -> None:
    """findings14 B11: socket buffers are kernel memory no rlimit charges.

    No option that raises one (also with the high bits the kernel ignores set), so a jail
    queues a few MiB at most (default buffers, RLIMIT_NOFILE sockets, one process).
    """
    inside = _jail_run(tmp_path, _SOCKET_BUFFERS + _SOCKET_FLOOD + _PRINT_OUT)
    assert inside.returncode == 0, inside.stderr
    found = json.loads(inside.stdout)
    # outside, the options only: the flood would fill the host's RLIMIT_NOFILE of sockets
    outside = json.loads(_plain_run(tmp_path, _SOCKET_BUFFERS + _PRINT_OUT).stdout)
    assert outside["SO_SNDBUF"] == "ok"
    for name in ("SO_SNDBUF", "SO_RCVBUF", "SO_SNDBUFFORCE", "SO_RCVBUFFORCE"):
        assert found[name] == "EPERM", found
        assert found[name + "-high-bits"] == "EPERM", found
    assert found["SO_PASSCRED"] == "ok"
    assert found["queued_mib"] <= 32, found


_PRCTL = """
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
def prctl(label, option, arg=0):
    ctypes.set_errno(0)
    value = libc.syscall(ctypes.c_long(157), ctypes.c_long(option), ctypes.c_long(arg),
                         ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    out[label] = "ok" if value >= 0 else errno.errorcode[ctypes.get_errno()]
name = ctypes.create_string_buffer(16)
prctl("SET_DUMPABLE-1", 4, 1)
prctl("SET_DUMPABLE-1-high-bits", (1 << 32) | 4, 1)
prctl("SET_PDEATHSIG", 1, 9)
prctl("SET_CHILD_SUBREAPER", 36, 1)
prctl("SET_PTRACER", 0x59616D61, 0)
prctl("SET_DUMPABLE-0", 4, 0)
prctl("GET_DUMPABLE", 3)
prctl("GET_NAME", 16, ctypes.addressof(name))
print(json.dumps(out))
"""


def test_jail_prctl_allows_only_what_a_worker_needs(tmp_path: Path) -> None:
    """findings14 B07: PR_SET_DUMPABLE 1 would undo the non-dumpable layer (a crash handed
    to the host's core-dump helper); every option a worker does not use is refused."""
    outside = json.loads(_plain_run(tmp_path, _PRCTL).stdout)
    assert outside["SET_DUMPABLE-1"] == "ok"
    assert outside["SET_PDEATHSIG"] == "ok"
    inside = _jail_run(tmp_path, _PRCTL)
    assert inside.returncode == 0, inside.stderr
    assert json.loads(inside.stdout) == {
        "SET_DUMPABLE-1": "EPERM",
        "SET_DUMPABLE-1-high-bits": "EPERM",
        "SET_PDEATHSIG": "EPERM",
        "SET_CHILD_SUBREAPER": "EPERM",
        "SET_PTRACER": "EPERM",
        "SET_DUMPABLE-0": "ok",
        "GET_DUMPABLE": "ok",
        "GET_NAME": "ok",
    }


def test_jail_refuses_allocating_past_the_memory_limit(tmp_path: Path) -> None:
    source = _ATTEMPT + "attempt('allocate', lambda: bytearray(600 << 20))\n"
    outside, inside = _both(tmp_path, source, "--memory", "256")
    assert "ESCAPED allocate" in outside
    assert "REFUSED allocate MemoryError" in inside


def test_jail_refuses_ptrace(tmp_path: Path) -> None:
    target = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        source = _ATTEMPT + textwrap.dedent(
            f"""
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
            def seize(pid):
                if libc.ptrace(0x4206, pid, None, None) != 0:  # PTRACE_SEIZE: does not stop it
                    raise OSError(ctypes.get_errno(), "ptrace")
            attempt("ptrace-other", lambda: seize({target.pid}))
            def child():
                pid = os.fork()
                if pid == 0:
                    os.read(0, 1) if False else __import__("time").sleep(5)
                    os._exit(0)
                try:
                    seize(pid)
                finally:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
            attempt("ptrace-own-child", child)
            """
        )
        outside, inside = _both(tmp_path, source)
    finally:
        target.kill()
        target.wait()
    assert "ESCAPED ptrace-other" in outside
    assert "REFUSED ptrace-other" in inside
    assert "REFUSED ptrace-own-child" in inside


def test_jail_run_passes_output_and_the_exit_status_through(tmp_path: Path) -> None:
    done = _jail_run(
        tmp_path,
        """
        import os, sys
        print("out", os.getuid())
        print("err", file=sys.stderr)
        sys.exit(7)
        """,
    )
    assert done.returncode == 7
    assert done.stdout == "out 65534\n"
    assert done.stderr == "err\n"


def test_jail_check_reports_every_layer_active() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scriptgate", "jail", "check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.splitlines()
    for name in LAYERS:
        [line] = [line for line in lines if line.split()[:1] == [name]]
        assert line.split()[1] == "active", line
    assert "jail: full" in lines
    assert done.returncode == 0


def test_jail_report_names_what_is_missing() -> None:
    report = JailReport.from_json(
        [
            ["uid", True, "nobody"],
            ["seccomp", False, "pyseccomp is not installed"],
            ["bogus", True, "x"],
        ]
    )
    assert report.level == "partial"
    assert not report.complete
    assert "seccomp (pyseccomp is not installed)" in report.missing
    assert "landlock (not attempted)" in report.missing
    assert JailReport.from_json("garbage").level == "none"


# ------------------------------------------------------------------------- process mode


async def _echo(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent(str(params.get("text", "")) + "!"),))


ECHO = AgentTool(
    name="echo",
    description="echo",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    execute=_echo,
)
LIMITS = Limits(timeout=10.0, memory_bytes=512 << 20)


@pytest.mark.anyio
async def test_jail_sandbox_reports_the_jail_level_it_got() -> None:
    sandbox = Sandbox([ECHO], isolation="process", require_jail=True, limits=LIMITS)
    try:
        assert sandbox.jail is None
        result = await sandbox.run("print(echo(text='hi'))")
        assert result.ok, result.error
        assert result.output == "hi!\n"
        assert sandbox.jail is not None
        assert sandbox.jail.level == "full"
    finally:
        sandbox.close()


@pytest.mark.anyio
async def test_jail_require_jail_refuses_a_worker_without_every_layer() -> None:
    async with ProcessRunner(LIMITS, pool_size=0, jail=False, require_jail=True) as runner:
        bridge = HostToolBridge([ECHO])
        result = await runner.run("print('ran')", bridge=bridge, tools=tool_specs([ECHO]))
    assert result.error is not None
    assert result.error.kind == "sandbox"
    assert "require_jail" in result.error.message
    assert "seccomp (disabled" in result.error.message
    assert result.output == ""


def test_jail_require_jail_needs_process_isolation() -> None:
    with pytest.raises(ConfigurationError, match="require_jail"):
        Sandbox([ECHO], require_jail=True)


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


@pytest.mark.anyio
@pytest.mark.parametrize("spawn", ["fork", "exec"])
async def test_jail_worker_runs_as_nobody_in_its_own_namespaces(spawn: str) -> None:
    async with ProcessRunner(LIMITS, pool_size=1, spawn=spawn) as runner:  # type: ignore[arg-type]
        await runner.start()
        [pid] = runner.worker_pids()
        if spawn == "exec":  # the parent's child is the jail's outside; its grandchild works
            for _ in range(2):
                [pid] = map(int, _read(f"/proc/{pid}/task/{pid}/children").split())
        status = _read(f"/proc/{pid}/status")
        assert "\nUid:\t65534\t65534\t65534\t65534\n" in status
        assert "\nNoNewPrivs:\t1\n" in status
        assert "\nSeccomp:\t2\n" in status
        for kind in ("user", "pid", "net", "mnt", "ipc"):
            assert os.readlink(f"/proc/{pid}/ns/{kind}") != os.readlink(f"/proc/self/ns/{kind}")
        assert runner.jail is not None
        assert runner.jail.complete, runner.jail.missing


# ---------------------------------------------------------------------- a hostile worker

_HOSTILE = r"""
import json, os, socket, sys
sock = socket.socket(fileno=0)
def send(*messages):
    frames = b""
    for message in messages:
        data = json.dumps(message).encode()
        frames += len(data).to_bytes(4, "big") + data
    sock.sendall(frames)
buf = b""
def recv():
    global buf
    while True:
        if len(buf) >= 4:
            size = int.from_bytes(buf[:4], "big")
            if len(buf) >= 4 + size:
                message, buf = json.loads(buf[4:4 + size]), buf[4 + size:]
                return message
        chunk = sock.recv(65536)
        if not chunk:
            sys.exit(0)
        buf += chunk
MODE = sys.argv[-1]
send({"op": "ready", "pid": os.getpid(), "jail": []})
runs = 0
while True:
    message = recv()
    if message.get("op") != "run":
        continue
    runs += 1
    send({"op": "call", "id": "s/1", "tool": "echo", "args": {"text": "first"}})
    reply = recv()
    calls = ["s/1"]
    if MODE == "forge":
        calls.append(["s/2", "echo", {"text": "never ran"}, "ok", 1, None])
    if MODE == "chatter":
        send({"op": "hello", "text": "unexpected"})
        continue
    result = {"op": "result", "result": {"ok": True, "output": f"run {runs}\n", "calls": calls,
                                         "wall_time": 0.0}}
    if MODE == "late":  # the call right behind the result, in the same write
        send(result, {"op": "call", "id": "s/9", "tool": "echo", "args": {"text": "late"}})
    else:
        send(result)
"""


class _HostileRunner(ProcessRunner):
    """A runner whose workers are a real process that speaks the protocol but lies."""

    def __init__(self, mode: str, tmp: Path) -> None:
        super().__init__(LIMITS, pool_size=1, spawn="exec", jail=False)
        self.mode = mode
        self.program = tmp / "hostile_worker.py"
        self.program.write_text(_HOSTILE)

    def _popen(self, config: dict[str, Any], stdin: int, stdout: int, cwd: str) -> Any:
        return subprocess.Popen(
            [sys.executable, str(self.program), self.mode],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={},
            start_new_session=True,
        )


class _Counted:
    def __init__(self) -> None:
        self.texts: list[str] = []

    async def execute(self, call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        self.texts.append(str(params.get("text")))
        return AgentToolResult(content=(TextContent("ok"),))


async def _hostile(mode: str, tmp_path: Path, runs: int = 1) -> tuple[list[Any], _Counted]:
    counted = _Counted()
    tool = AgentTool(name="echo", description="echo", execute=counted.execute)
    results = []
    async with _HostileRunner(mode, tmp_path) as runner:
        for _ in range(runs):
            bridge = HostToolBridge([tool])
            results.append(await runner.run("x = 1", bridge=bridge, tools=tool_specs([tool])))
    return results, counted


@pytest.mark.anyio
async def test_jail_parent_refuses_a_call_record_the_worker_forged(tmp_path: Path) -> None:
    [result], counted = await _hostile("forge", tmp_path)
    assert result.error is not None
    assert result.error.kind == "sandbox"
    assert "never ran" in result.error.message
    assert counted.texts == ["first"]
    assert [call.arguments for call in result.calls] == [{"text": "first"}]


@pytest.mark.anyio
async def test_jail_parent_kills_a_worker_that_sends_something_unexpected(tmp_path: Path) -> None:
    [result], counted = await _hostile("chatter", tmp_path)
    assert result.error is not None
    assert result.error.kind == "sandbox"
    assert "misbehaved" in result.error.message
    assert counted.texts == ["first"]


def _jail_run_on_a_pty(script: Path) -> tuple[bytes, int]:
    """``scriptgate jail run script`` with a terminal as its output: (what it wrote, wait status)."""
    import pty
    import select

    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child execs
        os.execv(sys.executable, [sys.executable, "-m", "scriptgate", "jail", "run", str(script)])
    output = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        assert ready, output
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's last user is gone
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    os.close(master)
    return output, status


@pytest.mark.anyio
async def test_jail_parent_refuses_late_calls_and_never_reuses_that_worker(tmp_path: Path) -> None:
    results, counted = await _hostile("late", tmp_path, runs=2)
    assert [result.ok for result in results] == [True, True]
    # each run made exactly its own call; the late one never ran
    assert counted.texts == ["first", "first"]
    assert "late" not in counted.texts
    # the chatty worker was discarded after its run: the second run got a fresh one
    # (a reused worker would have answered "run 2")
    assert results[0].output == "run 1\n"
    assert results[1].output == "run 1\n"


def test_jail_run_tiocsti_escape_refused_in_a_real_terminal(tmp_path: Path) -> None:
    """TIOCSTI (with and without bits above 32) from `jail run` in a pty injects nothing."""

    script = tmp_path / "inject.py"
    script.write_text(
        textwrap.dedent(
            """
            import ctypes, os
            libc = ctypes.CDLL(None, use_errno=True)
            print("TTY", os.isatty(0), os.isatty(1), os.isatty(2), flush=True)
            for request in (0x5412, 0x1_0000_5412, 0x541C, 0x1_0000_541C):
                for fd in (0, 1, 2):
                    c = ctypes.c_char(b"Z")
                    ctypes.set_errno(0)
                    r = libc.ioctl(fd, ctypes.c_ulong(request), ctypes.byref(c))
                    print("IOCTL", hex(request), fd, r, ctypes.get_errno(), flush=True)
            """
        )
    )
    output, status = _jail_run_on_a_pty(script)
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "TTY False False False" in text
    lines = [line.split() for line in text.splitlines() if line.startswith("IOCTL")]
    assert len(lines) == 12, text
    assert all(line[3] == "-1" for line in lines), text
    # Every request was refused and nothing came back through the terminal: no 'Z' typed.
    assert "Z" not in text.replace("IOCTL", "")


def test_jail_tiocsti_filter_high_bits_refused_by_seccomp(tmp_path: Path) -> None:
    """The seccomp ioctl rules compare the low 32 bits: 0x1_0000_5412 is EPERM too."""
    inside = _jail_run(
        tmp_path,
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for request in (0x5412, 0x1_0000_5412, 0x541C, 0x1_0000_541C, 0xFFFF_FFFF_0000_541D):
            ctypes.set_errno(0)
            libc.ioctl(0, ctypes.c_ulong(request), ctypes.c_char_p(b"x"))
            print(hex(request), ctypes.get_errno())
        """,
    )
    assert inside.returncode == 0, inside.stderr
    import errno as errno_module

    lines = inside.stdout.split("\n")[:-1]
    assert len(lines) == 5, inside.stdout
    assert all(line.split()[1] == str(errno_module.EPERM) for line in lines), inside.stdout


def test_jail_tmpdir_inode_growth_is_bounded(tmp_path: Path) -> None:
    """Empty files (which RLIMIT_FSIZE does not count) stop at the temp dir's inode cap."""
    source = """
        import os
        made = 0
        try:
            for n in range(20000):
                os.close(os.open(f"f{n}", os.O_CREAT | os.O_WRONLY, 0o600))
                made += 1
            print("ESCAPED", made)
        except OSError as exc:
            print("REFUSED", made, exc.errno)
        """
    outside = _plain_run(tmp_path, source)
    assert outside.stdout.startswith("ESCAPED 20000"), outside.stdout
    inside = _jail_run(tmp_path, source)
    assert inside.returncode == 0, inside.stderr
    import errno as errno_module

    verdict, made, code = inside.stdout.split()
    assert (verdict, code) == ("REFUSED", str(errno_module.ENOSPC)), inside.stdout
    assert int(made) < 5000


def test_jail_check_reports_the_limits_jail_run_applies(tmp_path: Path) -> None:
    """findings2: ``jail check`` said FSIZE 1 MiB while ``jail run`` gave 64 MiB."""
    checked = subprocess.run(
        [sys.executable, "-m", "scriptgate", "jail", "check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    probe = tmp_path / "limits.py"
    probe.write_text(
        "import os, resource\n"
        "print(resource.getrlimit(resource.RLIMIT_FSIZE)[0])\n"
        "st = os.statvfs('.')\n"
        "print(st.f_blocks * st.f_frsize >> 20, st.f_files)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-m", "scriptgate", "jail", "run", str(probe)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    fsize, tmp = ran.stdout.splitlines()
    mib, entries = tmp.split()
    assert f"FSIZE {fsize}," in checked
    assert f"tmpfs of {mib} MiB, {entries} entries" in checked


_ESCAPES = (
    "import os\n"
    "os.write(1, b'\\x1b]0;title\\x07\\x1b]52;c;Y3VybCBldmlsIHwgc2gK\\x07\\x1b[6n\\x1b[2J'"
    " + b'\\x9b2J\\xc2\\x9b2J progress\\r100%\\tdone\\n')\n"
)
_ESCAPED_BYTES = b"\x1b]0;title\x07\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07\x1b[6n\x1b[2J"


def test_jail_run_escapes_terminal_controls_only_on_a_terminal(tmp_path: Path) -> None:
    """findings14 B08: on a terminal, jailed output cannot set the title, write the
    clipboard (OSC 52), make the terminal answer queries or clear the screen; a pipe
    gets the bytes exactly."""

    script = tmp_path / "escapes.py"
    script.write_text(_ESCAPES)
    done = subprocess.run(
        [sys.executable, "-m", "scriptgate", "jail", "run", str(script)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.stdout == _ESCAPED_BYTES + b"\x9b2J\xc2\x9b2J progress\r100%\tdone\n"
    output, status = _jail_run_on_a_pty(script)
    assert os.waitstatus_to_exitcode(status) == 0, output
    assert b"\x1b" not in output
    assert b"\x07" not in output
    assert b"\x9b" not in output.replace(b"\\x9b", b"")
    assert b"\\x1b]0;title\\x07\\x1b]52;c;" in output
    assert b"\\x1b[6n\\x1b[2J" in output
    assert b"progress\r100%\tdone" in output  # (the pty adds \r before \n)
