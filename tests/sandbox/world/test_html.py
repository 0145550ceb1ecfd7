"""The ``html`` stand-in in both modes: escape and unescape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    box = Sandbox(limits=Limits(timeout=10), isolation=request.param)
    yield box
    box.close()


def value(box: Sandbox, source: str) -> Any:
    result: ScriptResult = box.run_sync(source)
    assert result.ok, result.error
    return result.value


def refused(box: Sandbox, source: str, words: str) -> None:
    result = box.run_sync(source)
    assert result.error is not None, result.value
    assert words in result.error.message, result.error.message


def test_html_matches_cpython(sandbox: Sandbox) -> None:
    import html

    src = "import html\n[html.escape('<a href=\"x\">&'), html.escape('\"', quote=False), html.unescape('&lt;&amp;&#39;&eacute;')]"
    assert value(sandbox, src) == [
        html.escape('<a href="x">&'),
        '"',
        html.unescape("&lt;&amp;&#39;&eacute;"),
    ]
