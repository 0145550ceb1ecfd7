"""Shared test configuration: async tests run on both anyio backends; the end-to-end
files that start MCP servers, ``scriptgate serve`` or a Jupyter kernel in subprocesses are
the ``slow`` group (left out of the default run, run by CI with ``-m slow``)."""

from __future__ import annotations

import gc
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


_LIBRARIES = frozenset({"hypothesis", "anyio", "xdist", "platformdirs", "langsmith"})
"""Packages pytest marks for assertion rewriting because they ship a pytest plugin."""


def pytest_configure(config: pytest.Config) -> None:
    """Rewrite the asserts of the suite's own modules only, not of the plugin libraries.

    pytest rewrites every module of a distribution that registers a plugin, so each worker of a
    fresh checkout (no rewritten bytecode cached yet: CI's) parsed and rewrote all of hypothesis
    it imports, over a megabyte of library source, for asserts no test reads. The marks are a
    private set of the rewrite hook; if a pytest version lacks it, nothing changes.
    """
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set):
        marked.difference_update(_LIBRARIES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of a :data:`SLOW_FILES` file ``slow`` (each file matched once)."""
    slow: dict[str, bool] = {}
    for item in items:
        name = Path(str(item.fspath)).name
        if name not in slow:
            slow[name] = any(fnmatch(name, pattern) for pattern in SLOW_FILES)
        if slow[name]:
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything collection made (every module, item, attack list: ~450k objects) out of
    the collector's reach (``gc.freeze``).

    A full collection walks every tracked object: in a worker that has collected the suite one
    took 0.2-0.8 s, and the tests that check what a run left behind call ``gc.collect()``
    (``sandbox_support.EchoTool.unrecorded``, the generator and cross-run tests) dozens of
    times, on top of the interpreter's own full collections. Objects made later (every run's)
    are collected as before; only collection's garbage cycles, if any, are kept.
    """
    gc.collect()
    gc.freeze()


_FULL_COLLECTIONS_BETWEEN_FREEZES = 4
"""How many of the interpreter's own full collections may walk what the tests made since the
last freeze before the next test boundary collects and freezes again."""
_full_collections_at_freeze = [0]


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Between two tests (the last one's fixtures torn down), now and then: collect, then freeze
    what survived.

    The tests' own long-lived objects (module fixtures, caches, hypothesis's state) grow the
    heap a full collection walks again: with only collection's objects frozen a worker still
    spent 18-24 s in 80-140 full collections. A collection just before the freeze leaves no
    garbage to freeze; a test's own objects are all made after the last freeze, so every
    ``gc.collect()`` a test calls still collects its runs' garbage (and runs their finalizers).
    """
    full = gc.get_stats()[2]["collections"]
    if full - _full_collections_at_freeze[0] >= _FULL_COLLECTIONS_BETWEEN_FREEZES:
        gc.collect()
        gc.freeze()
        _full_collections_at_freeze[0] = gc.get_stats()[2]["collections"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``@pytest.mark.anyio`` test runs once on asyncio and once on trio."""
    return str(request.param)
