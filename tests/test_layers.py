"""DESIGN.md: imports point one way; only one private module imports RestrictedPython."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scriptgate"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _modules(subdir: str) -> list[Path]:
    return sorted((PACKAGE / subdir).rglob("*.py"))


def _hits(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.name} imports {name}"
        for path in paths
        for name in sorted(_imports(path))
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def test_layers_runtime_imports_no_upper_layer() -> None:
    forbidden = (
        "scriptgate.sandbox",
        "scriptgate.tools",
        "scriptgate.cli",
        "scriptgate.jupyter",
        "RestrictedPython",
    )
    assert _hits(_modules("runtime"), forbidden) == []


def test_layers_tools_and_sandbox_do_not_import_each_other() -> None:
    assert _hits(_modules("tools"), ("scriptgate.sandbox", "scriptgate.cli")) == []
    assert _hits(_modules("sandbox"), ("scriptgate.tools", "scriptgate.cli")) == []


def test_layers_only_one_private_module_imports_restrictedpython() -> None:
    importers = [
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(n == "RestrictedPython" or n.startswith("RestrictedPython.") for n in _imports(path))
    ]
    assert len(importers) <= 1, importers
    assert all(Path(p).name.startswith("_") for p in importers), importers


@pytest.mark.parametrize("bad", ["scriptgate.sandbox", "scriptgate.tools.files", "scriptgate.cli"])
def test_layers_checker_catches_a_forbidden_import(tmp_path: Path, bad: str) -> None:
    module = tmp_path / "m.py"
    module.write_text(f"from {bad} import x\n", encoding="utf-8")
    assert _hits([module], ("scriptgate.sandbox", "scriptgate.tools", "scriptgate.cli")) == [
        f"m.py imports {bad}",
        f"m.py imports {bad}.x",
    ]
