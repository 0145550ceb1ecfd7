"""DESIGN.md: ``models`` sits on ``runtime`` only; ``runtime`` never imports ``models``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "scriptgate"


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_layers_models_import_only_runtime() -> None:
    bad = [
        f"{path.name}: {name}"
        for path in sorted((PACKAGE / "models").rglob("*.py"))
        for name in sorted(imports(path))
        if name.startswith("scriptgate.")
        and not name.startswith(("scriptgate.runtime", "scriptgate.models", "scriptgate.errors"))
    ]
    assert bad == []


def test_layers_runtime_does_not_import_models_or_agent() -> None:
    bad = [
        f"{path.name}: {name}"
        for path in sorted((PACKAGE / "runtime").rglob("*.py"))
        for name in sorted(imports(path))
        if name.startswith(("scriptgate.models", "scriptgate.agent"))
    ]
    assert bad == []
