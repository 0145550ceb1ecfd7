"""The README's short example is examples/readme_example.py, and it runs as the README says."""

from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_example_matches_the_example_file() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(from typing_extensions.*?)```", readme, re.S)
    assert block is not None
    example = (ROOT / "examples" / "readme_example.py").read_text(encoding="utf-8")
    assert block.group(1) in example


def test_readme_example_prints_what_the_readme_says(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(ROOT / "examples" / "readme_example.py"), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Paris"
    assert out[1] == "not sent: Denied by policy: no emails in this run"
    assert out[-1] == "[('weather', 'ok'), ('weather', 'ok'), ('send_email', 'blocked')]"


def test_readme_test_command_is_the_ci_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "uv run pytest -q" in readme
    assert "uv run pytest -q" in ci


def test_readme_main_job_runs_as_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"uv run --no-dev (scriptgate run [^\n`]+)", readme)
    assert command is not None
    args = command.group(1).split()[1:]
    proc = subprocess.run(
        [sys.executable, "-m", "scriptgate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"decision": "deny"' in proc.stderr  # the audit trail shows the denied write
    assert '"report_written": false' in proc.stdout


def test_readme_lists_exactly_the_curated_builtins_and_modules() -> None:
    from scriptgate.sandbox.world.builtins import SAFE_BUILTIN_NAMES
    from scriptgate.sandbox.world.modules import MODULE_NAMES

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    builtins_block = re.search(r"\*\*Builtins\*\*: `([^`]*)`", readme, re.S)
    assert builtins_block is not None
    listed = set(builtins_block.group(1).split())
    functions = {name for name in SAFE_BUILTIN_NAMES if name[0].islower()}
    assert listed == functions
    imports_block = re.search(r"\*\*Imports\*\*.*?only.*?:\n(.*?)\(the exact", readme, re.S)
    assert imports_block is not None
    modules = set(re.findall(r"`(\w+(?:\.\w+)*)`", imports_block.group(1)))
    assert modules == set(MODULE_NAMES)


def test_readme_main_job_installs_only_the_runtime(tmp_path: Path) -> None:
    """The main job, in a fresh environment (offline, from uv's cache): about a dozen packages."""
    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is not installed")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"uv (run --no-dev scriptgate run [^\n`]+)", readme)
    assert command is not None
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(tmp_path / "venv")}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(
        [uv, "--offline", *command.group(1).split()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    if proc.returncode != 0 and "offline" in proc.stderr.lower():
        pytest.skip("uv's cache cannot build the environment offline")
    assert proc.returncode == 0, proc.stderr
    installed = list((tmp_path / "venv").glob("lib/python*/site-packages/*.dist-info"))
    names = sorted(p.name.split("-")[0].lower() for p in installed)
    assert len(names) <= 14, names
    assert not {"pytest", "mypy", "ruff", "ipykernel"} & set(names)
