"""Shared test configuration: async tests run on both anyio backends; the end-to-end
files that start MCP servers, ``scriptgate serve`` or a Jupyter kernel in subprocesses are
the ``slow`` group (left out of the default run, run by CI with ``-m slow``)."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import pytest

SLOW_FILES = (
    "test_serve*.py",
    "test_mcp_cli*.py",
    "test_mcp_http*.py",
    "test_mcp_servers*.py",
    "test_mcp.py",
    "test_mcp_policy.py",
    "test_notebooks.py",
    "test_jupyter_kernel.py",
)
"""The test files of the ``slow`` group: each test starts real subprocesses (an MCP server,
``scriptgate serve``, a kernel) and together they are a third of the suite's time."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of a :data:`SLOW_FILES` file ``slow`` (each file matched once)."""
    slow: dict[str, bool] = {}
    for item in items:
        name = Path(str(item.fspath)).name
        if name not in slow:
            slow[name] = any(fnmatch(name, pattern) for pattern in SLOW_FILES)
        if slow[name]:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``@pytest.mark.anyio`` test runs once on asyncio and once on trio."""
    return str(request.param)
