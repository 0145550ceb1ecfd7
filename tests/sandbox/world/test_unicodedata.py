"""The ``unicodedata`` stand-in in both modes: the Unicode database."""

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


def test_unicodedata_matches_cpython(sandbox: Sandbox) -> None:
    import unicodedata

    src = (
        "import unicodedata as u\n[u.name('\\xe9'), u.lookup('SNOWMAN'), u.normalize('NFD', '\\xe9'),"
        " u.category('A'), u.numeric('\\u00bd'), u.name('\\x00', 'none'), u.is_normalized('NFC', 'x')]"
    )
    assert value(sandbox, src) == [
        unicodedata.name("\xe9"),
        "\u2603",
        unicodedata.normalize("NFD", "\xe9"),
        "Lu",
        0.5,
        "none",
        True,
    ]
