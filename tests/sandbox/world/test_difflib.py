"""The ``difflib`` stand-in in both modes: bounded matching and diffs."""

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


def test_difflib_matches_cpython(sandbox: Sandbox) -> None:
    import difflib

    a, b = ["a\n", "b\n", "c\n"], ["a\n", "x\n", "c\n"]
    src = (
        f"import difflib\na, b = {a!r}, {b!r}\ns = difflib.SequenceMatcher(None, 'abcd', 'bcde')\n"
        "[s.ratio(), [list(o) for o in s.get_opcodes()], list(difflib.unified_diff(a, b)),"
        " list(difflib.context_diff(a, b)), list(difflib.ndiff(a, b)),"
        " difflib.get_close_matches('appel', ['ape', 'apple', 'peach'])]"
    )
    s = difflib.SequenceMatcher(None, "abcd", "bcde")
    assert value(sandbox, src) == [
        s.ratio(),
        [list(o) for o in s.get_opcodes()],
        list(difflib.unified_diff(a, b)),
        list(difflib.context_diff(a, b)),
        list(difflib.ndiff(a, b)),
        difflib.get_close_matches("appel", ["ape", "apple", "peach"]),
    ]


def test_difflib_quadratic_inputs_are_refused(sandbox: Sandbox) -> None:
    refused(
        sandbox,
        "import difflib\ndifflib.SequenceMatcher(None, 'a' * 10000, 'b' * 10000).ratio()",
        "quadratic",
    )
    refused(sandbox, "import difflib\nlist(difflib.ndiff(['x'] * 6000, ['y'] * 6000))", "quadratic")
