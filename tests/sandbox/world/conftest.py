"""The ``sandbox`` fixture of the stand-in tests: one sandbox per isolation mode and module.

A test module sets ``SANDBOX_TIMEOUT`` (seconds, default 10) or ``SANDBOX_TOOLS`` to change
what its sandbox gets; the helpers the modules share are in ``tests/sandbox/sandbox_support.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_support import MODES, sandboxes

from scriptgate.sandbox.sandbox import Sandbox


@pytest.fixture(scope="module", params=MODES)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """One sandbox for the mode ``request.param``, shared by the module's tests."""
    module = request.module
    yield from sandboxes(
        request,
        timeout=getattr(module, "SANDBOX_TIMEOUT", 10),
        tools=getattr(module, "SANDBOX_TOOLS", ()),
    )
