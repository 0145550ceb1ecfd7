"""The ``sandbox`` fixture of the stand-in tests: one sandbox per isolation mode and settings.

A test module sets ``SANDBOX_TIMEOUT`` (seconds, default 10) or ``SANDBOX_TOOLS`` to change
what its sandbox gets; the helpers the modules share are in ``tests/sandbox/sandbox_support.py``.
Modules with the same mode, timeout and tools share one sandbox for the session (every run
has fresh globals, a process-mode run a fresh worker): a process-mode sandbox's first run
starts its zygote, a second or two under load, once per worker instead of once per module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_support import MODES

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


@pytest.fixture(scope="session")
def _shared_sandboxes() -> Iterator[dict[tuple[Any, ...], Sandbox]]:
    """The session's sandboxes by (mode, timeout, tools); closed at the session's end."""
    boxes: dict[tuple[Any, ...], Sandbox] = {}
    yield boxes
    for box in boxes.values():
        box.close()


@pytest.fixture(scope="module", params=MODES)
def sandbox(
    request: pytest.FixtureRequest, _shared_sandboxes: dict[tuple[Any, ...], Sandbox]
) -> Sandbox:
    """The sandbox for the mode ``request.param`` and the module's settings."""
    module = request.module
    timeout = getattr(module, "SANDBOX_TIMEOUT", 10)
    tools = list(getattr(module, "SANDBOX_TOOLS", ()))
    key = (request.param, timeout, *(id(tool) for tool in tools))
    if key not in _shared_sandboxes:
        _shared_sandboxes[key] = Sandbox(
            tools, limits=Limits(timeout=timeout), isolation=request.param
        )
    return _shared_sandboxes[key]
