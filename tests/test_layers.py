"""DESIGN.md "Layers": imports point one way, no import circles, RestrictedPython only in compile/.

The checker parses every module of ``scriptgate/`` with :mod:`ast` and collects every import,
at module level and inside functions alike (a function-level import is still an edge: it
only hides a circle until the function first runs). Imports under ``if TYPE_CHECKING:`` are
left out: they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scriptgate"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _imported_names(path: Path, name: str) -> set[str]:
    """Every dotted name ``path`` (module ``name``) imports, with relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            module = ".".join([*base, node.module] if node.module else base)
        else:
            module = node.module or ""
        # ``m.name`` falls back to ``m`` below when ``name`` is not a submodule
        names.update(
            module if alias.name == "*" else f"{module}.{alias.name}" for alias in node.names
        )
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (a ``from m import name`` counts
    as an import of ``m.name`` when that is a module, else of ``m``)."""
    paths = {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        targets: set[str] = set()
        for imported in _imported_names(path, name):
            while imported and imported not in paths and "." in imported:
                imported = imported.rpartition(".")[0]
            if imported in paths and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def external_imports(root: Path) -> dict[str, set[str]]:
    """Module -> every dotted name it imports (for the third-party rules)."""
    return {
        _module_name(path, root): _imported_names(path, _module_name(path, root))
        for path in sorted(root.rglob("*.py"))
    }


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    circles: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def _violations(graph: dict[str, set[str]], source: str, forbidden: tuple[str, ...]) -> list[str]:
    def under(name: str, prefix: str) -> bool:
        return name == prefix or name.startswith(prefix + ".")

    return [
        f"{module} imports {target}"
        for module in sorted(graph)
        if under(module, source)
        for target in sorted(graph[module])
        if any(under(target, f) for f in forbidden)
    ]


GRAPH = import_graph(PACKAGE)
SB = "scriptgate.sandbox"


def test_layers_no_import_circle_anywhere() -> None:
    assert import_circles(GRAPH) == []


def test_layers_runtime_imports_no_upper_layer() -> None:
    forbidden = ("scriptgate.sandbox", "scriptgate.tools", "scriptgate.cli", "scriptgate.jupyter")
    assert _violations(GRAPH, "scriptgate.runtime", forbidden) == []


def test_layers_tools_and_sandbox_do_not_import_each_other() -> None:
    assert _violations(GRAPH, "scriptgate.tools", ("scriptgate.sandbox", "scriptgate.cli")) == []
    assert _violations(GRAPH, SB, ("scriptgate.tools", "scriptgate.cli")) == []


@pytest.mark.parametrize(
    ("source", "forbidden"),
    [
        (f"{SB}.guards", ("engine", "isolation", "model", "world", "sandbox", "bridge")),
        (f"{SB}.compile", ("engine", "isolation", "model", "world", "bridge")),
        (f"{SB}.world", ("engine", "isolation", "model", "bridge")),
        (f"{SB}.engine", ("isolation", "model")),
        (f"{SB}.isolation", ("model",)),
    ],
)
def test_layers_sandbox_inner_layers_point_down(source: str, forbidden: tuple[str, ...]) -> None:
    assert _violations(GRAPH, source, tuple(f"{SB}.{f}" for f in forbidden)) == []


def test_layers_only_compile_imports_restrictedpython() -> None:
    importers = sorted(
        module
        for module, names in external_imports(PACKAGE).items()
        if any(n == "RestrictedPython" or n.startswith("RestrictedPython.") for n in names)
    )
    assert importers, "the policy no longer imports RestrictedPython?"
    assert [m for m in importers if not m.startswith(f"{SB}.compile.")] == []


def _plant(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_layers_checker_catches_a_planted_circle(tmp_path: Path) -> None:
    package = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "sub/__init__.py": "",
            # a function-level import closes the circle a -> b -> sub.c -> a
            "b.py": "from .sub.c import thing\n",
            "sub/c.py": "def thing():\n    from ..a import x\n    return x\n",
            "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
        },
    )
    graph = import_graph(package)
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == set()
    assert import_circles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]


def test_layers_checker_finds_no_circle_in_a_tree(tmp_path: Path) -> None:
    package = _plant(tmp_path, {"__init__.py": "", "a.py": "import pkg.b\n", "b.py": "x = 1\n"})
    assert import_circles(import_graph(package)) == []


@pytest.mark.parametrize(
    "statement", ["from pkg import engine", "from pkg.engine import x", "import pkg.engine"]
)
def test_layers_checker_catches_a_forbidden_import(tmp_path: Path, statement: str) -> None:
    package = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "engine.py": "x = 1\n",
            "guards/__init__.py": "",
            "guards/m.py": f"def f() -> None:\n    {statement}\n",
        },
    )
    assert _violations(import_graph(package), "pkg.guards", ("pkg.engine",)) == [
        "pkg.guards.m imports pkg.engine"
    ]


# --------------------------------------------------------------- the split packages and the CLI

COMMANDS = (
    "scriptgate.cli",
    "scriptgate.cli_run",
    "scriptgate.cli_check",
    "scriptgate.cli_support",
    "scriptgate.agent_cli",
    "scriptgate.jailcmd",
    "scriptgate.serve",
)
FILES = "scriptgate.tools.files"
POLICY = "scriptgate.runtime.policy"


@pytest.mark.parametrize("source", ["scriptgate.runtime", "scriptgate.tools"])
def test_layers_runtime_and_tools_import_no_command_module(source: str) -> None:
    assert _violations(GRAPH, source, COMMANDS) == []


def test_layers_file_tools_import_no_mcp_module() -> None:
    mcp = ("scriptgate.tools.mcp", "scriptgate.tools.mcp_paths", "scriptgate.tools.mcp_servers")
    assert _violations(GRAPH, FILES, mcp) == []


@pytest.mark.parametrize(
    ("source", "forbidden"),
    [
        (f"{FILES}._hostwork", ("root", "read", "write", "search", "toolset")),
        (f"{FILES}.root", ("read", "write", "search", "toolset")),
        (f"{FILES}.read", ("write", "search", "toolset")),
        (f"{FILES}.write", ("read", "search", "toolset")),
        (f"{FILES}.search", ("write", "toolset")),
    ],
)
def test_layers_file_tools_modules_point_down(source: str, forbidden: tuple[str, ...]) -> None:
    assert source in GRAPH  # a renamed module must not make the rule vacuous
    assert _violations(GRAPH, source, tuple(f"{FILES}.{f}" for f in forbidden)) == []


@pytest.mark.parametrize(
    ("source", "forbidden"),
    [
        (f"{POLICY}.matching", ("rules", "hook", "loading", "checking")),
        (f"{POLICY}.rules", ("hook", "loading", "checking")),
        (f"{POLICY}.loading", ("hook", "checking")),
        (f"{POLICY}.checking", ("hook", "loading")),
    ],
)
def test_layers_policy_modules_point_down(source: str, forbidden: tuple[str, ...]) -> None:
    assert source in GRAPH
    assert _violations(GRAPH, source, tuple(f"{POLICY}.{f}" for f in forbidden)) == []


@pytest.mark.parametrize("source", [m for m in COMMANDS if m != "scriptgate.cli"])
def test_layers_subcommand_modules_do_not_import_the_dispatcher(source: str) -> None:
    assert source in GRAPH
    assert _violations(GRAPH, source, ("scriptgate.cli",)) == []
