"""The ``io`` stand-in in both modes: in-memory files."""

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


def test_io_stringio_bytesio_match_cpython(sandbox: Sandbox) -> None:
    src = (
        "import io\ns = io.StringIO('one\\ntwo\\n')\nlines = s.readlines()\ns.write('three')\n"
        "s.seek(0)\nb = io.BytesIO()\nb.write(b'ab')\nb.seek(0)\n"
        "[lines, s.read(), b.read().decode(), b.getvalue().hex(), s.tell()]"
    )
    assert value(sandbox, src) == [["one\n", "two\n"], "one\ntwo\nthree", "ab", b"ab".hex(), 13]


def test_io_sizes_are_bounded(sandbox: Sandbox) -> None:
    refused(sandbox, "import io\ns = io.StringIO()\ns.seek(10**12)\ns.write('x')", "in-memory file")
    refused(
        sandbox,
        "import io\ns = io.StringIO()\nfor i in range(100):\n    s.write('x' * 10**6)",
        "in-memory file",
    )
