"""The jail under bubblewrap (``--launcher bwrap`` / ``ProcessRunner(launcher="bwrap")``).

The hostile raw-Python checks of ``test_jail.py`` run again, unchanged, with ``scriptgate
jail run --launcher bwrap``: bubblewrap builds the namespaces, and the worker still applies
this package's rlimits, Landlock and seccomp inside. Skipped where ``bwrap`` is not
installed or cannot create namespaces (then ``jail check --launcher bwrap`` says why).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.isolation.jail.bwrap import bwrap_command, host_uid, uid_problem
from scriptgate.sandbox.isolation.jail.shim import shim_plan
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits


def _load_base() -> ModuleType:
    """``test_jail.py`` under a name of its own (its attacks are run again here)."""
    name = "scriptgate_tests_isolation_test_jail"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("test_jail.py")
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


base = _load_base()
loopback_server = base.loopback_server  # the fixture an attack needs


def _bwrap_works() -> str:
    """Empty when ``bwrap`` can build a sandbox here, else the reason it cannot."""
    binary = shutil.which("bwrap")
    if sys.platform != "linux" or binary is None:
        return "bubblewrap (bwrap) is not installed"
    done = subprocess.run(
        [binary, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return "" if done.returncode == 0 else f"bwrap cannot create namespaces: {done.stderr[:200]}"


_REASON = _bwrap_works()
pytestmark = pytest.mark.skipif(bool(_REASON), reason=_REASON or "bwrap works")


def _as_host_root() -> bool:
    if _REASON:
        return False
    _command, bound = bwrap_command(["true"], "/", tmp_bytes=1 << 20)
    return os.geteuid() == 0 and host_uid(bound) == 0


_AS_HOST_ROOT = _as_host_root()
ATTACKS: list[Any] = [
    base.test_jail_refuses_reading_a_canary_file_outside,
    base.test_jail_refuses_connecting_to_a_loopback_server,
    base.test_jail_refuses_signalling_the_parent,
    base.test_jail_refuses_exec_of_a_shell,
    base.test_jail_refuses_reading_the_parents_environ,
    base.test_jail_has_no_parent_environment_argv_or_descriptors,
    base.test_jail_refuses_writing_outside_its_temp_dir,
    pytest.param(
        base.test_jail_bounds_a_fork_bomb,
        marks=pytest.mark.skipif(
            _AS_HOST_ROOT,
            reason="bwrap runs as host root here (the runtime is under a 0700 directory): "
            "RLIMIT_NPROC does not bound host root; the uid layer reports it unavailable",
        ),
    ),
    base.test_jail_refuses_allocating_past_the_memory_limit,
    base.test_jail_refuses_ptrace,
    base.test_jail_run_passes_output_and_the_exit_status_through,
    base.test_jail_tiocsti_filter_high_bits_refused_by_seccomp,
    base.test_jail_refuses_creating_processes,
    base.test_jail_refuses_raising_socket_buffers,
    base.test_jail_prctl_allows_only_what_a_worker_needs,
    base.test_jail_tmpdir_inode_growth_is_bounded,
]


@pytest.mark.parametrize(
    "attack", ATTACKS, ids=lambda f: getattr(f, "__name__", "attack").removeprefix("test_jail_")
)
def test_jail_bwrap_refuses_the_same_attacks(
    attack: Callable[..., None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    original = base._jail_run

    def under_bwrap(
        tmp: Path, source: str, *extra: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return original(tmp, source, "--launcher", "bwrap", *extra, env=env)

    monkeypatch.setattr(base, "_jail_run", under_bwrap)
    arguments: dict[str, Any] = {}
    for name in inspect.signature(attack).parameters:
        arguments[name] = tmp_path if name == "tmp_path" else request.getfixturevalue(name)
    attack(**arguments)


def test_jail_bwrap_check_reports_the_launcher() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scriptgate", "jail", "check", "--launcher", "bwrap"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert any(line.startswith("launcher: bwrap") for line in lines), done.stdout
    by_layer = {line.split()[0]: line for line in lines if line.split()}
    for layer in ("uid", "namespaces", "no_new_privs", "rlimits", "landlock", "seccomp"):
        assert " active " in by_layer[layer], by_layer[layer]
    assert "bubblewrap" in by_layer["namespaces"]
    assert done.returncode == 0, done.stdout  # every layer, the uid one too (issue 13)


async def _echo(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent(str(params.get("text"))),))


@pytest.mark.anyio
async def test_jail_bwrap_process_runner_runs_scripts_with_tools() -> None:
    echo = AgentTool(name="echo", description="echo", execute=_echo)
    async with ProcessRunner(Limits(timeout=60.0), pool_size=1, launcher="bwrap") as runner:
        result = await runner.run(
            "r = echo(text='hi')\nprint(r)\n[len(r)]",
            bridge=HostToolBridge([echo]),
            tools=tool_specs([echo]),
        )
        assert result.ok, result.error
        assert result.value == [2]
        assert runner.jail is not None
        layers = {layer.name: layer for layer in runner.jail.layers}
        for name in ("uid", "namespaces", "no_new_privs", "rlimits", "landlock", "seccomp"):
            assert layers[name].active, layers[name]
        assert "bubblewrap" in layers["namespaces"].detail


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (read from ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found += children
        frontier += children
    return found


def _uids(pid: int) -> set[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return {int(value) for value in line.split()[1:]}
    raise AssertionError(f"no Uid line for {pid}")


def _command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_jail_bwrap_worker_runs_unprivileged_on_the_host(tmp_path: Path) -> None:
    # as root with the runtime under /root (0700) bubblewrap ran as host root; the
    # shim covers the blocked directory and starts bwrap as nobody: every process of
    # the jail is host uid 65534 (not root: the caller's own uid)
    expected = 65534 if os.geteuid() == 0 else os.geteuid()
    script = tmp_path / "wait.py"
    script.write_text("import sys\nprint('ready', flush=True)\nsys.stdin.read(1)\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "scriptgate", "jail", "run", "--launcher", "bwrap", str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"  # the jailed file is running
        below = _descendants(process.pid)  # bwrap (or the shim that became it) and the jail
        assert below, "no process below the launcher"
        for pid in below:
            assert _uids(pid) == {expected}, (pid, _command_of(pid), _uids(pid))
    finally:
        _out, err = process.communicate("x", timeout=120)
    assert process.returncode == 0, err


def test_jail_bwrap_shim_covers_a_closed_directory_and_refuses_an_unreadable_file(
    tmp_path: Path,
) -> None:
    closed = tmp_path / "closed"
    (closed / "runtime").mkdir(parents=True)
    (closed / "runtime" / "lib.py").write_text("x = 1\n")
    secret = closed / "secret.py"
    secret.write_text("x = 2\n")
    secret.chmod(0o600)
    closed.chmod(0o700)
    runtime = str(closed / "runtime")
    plan = shim_plan([runtime, "/usr/lib"])
    unreadable = shim_plan([runtime, str(secret)])
    if os.geteuid() != 0:
        assert not plan.needed  # nothing to drop: bwrap runs as the caller
        assert not plan.covers
        return
    # the topmost directory others cannot traverse is covered, holding the bound path only
    top = [p for p in [closed, *closed.parents] if not p.stat().st_mode & 0o001][-1]
    assert plan.needed
    assert plan.covers == {str(top): [runtime]}
    assert not unreadable.needed
    assert "not readable by other users" in unreadable.error
    assert "0600" in unreadable.error
    assert uid_problem([str(secret)]) == unreadable.error


def _outside_the_runtime() -> list[str]:
    """Host files in ``/usr/lib`` and beside the real interpreter that the jail must hide."""
    from scriptgate.sandbox.isolation.jail.mounts import runtime_paths

    shown = [p.rstrip("/") + "/" for p in runtime_paths()]
    found: list[str] = []
    real_bin = os.path.dirname(os.path.realpath(sys.executable))
    for directory in ("/usr/lib", real_bin):
        for entry in sorted(os.listdir(directory)):
            path = os.path.join(directory, entry)
            real = os.path.realpath(path)
            if (
                os.path.isfile(real)
                and os.access(real, os.R_OK)
                and real != os.path.realpath(sys.executable)
                and not any(real.startswith(top) for top in shown)
            ):
                found.append(path)
                break
    return found


def test_jail_bwrap_reads_usr_lib_only_where_the_runtime_is(tmp_path: Path) -> None:
    # findings7 F05: binding /lib (a symlink to usr/lib) and the interpreter's bin/ showed
    # every file under /usr/lib and every program installed beside the interpreter
    hidden = _outside_the_runtime()
    assert hidden, "no host file outside the runtime to look for"
    source = f"""
        import os
        for path in {hidden!r} + ["/usr/lib", "/lib"]:
            try:
                if os.path.isdir(path):
                    print("readable", path, len(os.listdir(path)))
                else:
                    with open(path, "rb") as f:
                        print("readable", path, len(f.read(10)))
            except OSError as exc:
                print("refused", path, exc.errno)
        print("done")
    """
    done = base._jail_run(tmp_path, source, "--launcher", "bwrap")
    assert done.returncode == 0, done.stderr
    assert "done" in done.stdout
    assert "readable" not in done.stdout, done.stdout


def test_jail_bwrap_temp_dir_has_an_inode_cap_and_no_capability_is_left() -> None:
    """findings14 B06: bwrap's ``--tmpfs`` has no inode option; the worker remounts it with
    ``nr_inodes`` (CAP_SYS_ADMIN of bwrap's user namespace), then drops every capability
    (checked with capget before seccomp; the report says so, else the layer is missing)."""
    from scriptgate.jailcmd import probe

    layer = next(layer for layer in probe("bwrap").layers if layer.name == "namespaces")
    assert layer.active, layer.detail
    assert "4096 entries" in layer.detail
    assert "no capabilities" in layer.detail
