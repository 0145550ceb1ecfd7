"""The integrations package: public scriptgate names only, no framework import until used,
and README snippets that name what exists."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scriptgate import ConfigurationError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "scriptgate" / "integrations"
PUBLIC = ("scriptgate", "scriptgate.sandbox", "scriptgate.integrations")


def _scriptgate_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "scriptgate" or name.startswith("scriptgate.")}


def test_integrations_import_only_public_scriptgate_modules() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 4
    private = {
        f"{path.name}: {name}"
        for path in modules
        for name in _scriptgate_imports(path)
        if name not in PUBLIC and not name.startswith("scriptgate.integrations.")
    }
    assert private == set()


def test_integrations_package_imports_no_framework() -> None:
    code = (
        "import sys, scriptgate.integrations\n"
        "print(sorted(m for m in ('pydantic_ai', 'agents', 'langchain_core') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_integrations_readme_snippets_import_names_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Frameworks", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = importlib.import_module(node.module)
                missing = [a.name for a in node.names if not hasattr(module, a.name)]
                assert missing == [], (node.module, missing)


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
        ("openai_agents", "agents", "openai-agents"),
        ("langchain", "langchain_core", "langchain"),
    ],
)
def test_integrations_missing_framework_says_which_extra(
    module: str, framework: str, extra: str
) -> None:
    code = (
        f"import sys\nsys.modules[{framework!r}] = None\nimport scriptgate.integrations.{module}\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: scriptgate's")
    assert f"pip install 'scriptgate[{extra}]'" in last


@pytest.mark.parametrize("name", ["to_pydantic_ai", "to_openai_agents", "to_langchain"])
def test_integrations_reject_what_is_not_an_agent_tool(name: str) -> None:
    module = importlib.import_module("scriptgate.integrations." + name.removeprefix("to_"))
    with pytest.raises(ConfigurationError, match="needs an AgentTool"):
        getattr(module, name)(lambda: None)
