"""Issue 14's names: the standard exceptions, ``bytes``/``bytearray``/``slice``, ImportError."""

from __future__ import annotations

import anyio
import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.builtins import SAFE_BUILTIN_NAMES


def run(source: str, **limits: float) -> ScriptResult:
    async def go() -> ScriptResult:
        return await Sandbox(limits=Limits(**{"timeout": 10, **limits})).run(source)

    return anyio.run(go)


def test_names_import_outside_the_list_is_catchable() -> None:
    result = run("try:\n    import numpy\nexcept ImportError as e:\n    r = str(e)\nr")
    assert result.ok, result.error
    assert "numpy" in result.value
    assert "json" in result.value
    assert "heapq" in result.value


def test_names_import_error_is_module_not_found() -> None:
    source = "try:\n    import pandas as pd\nexcept ModuleNotFoundError:\n    pd = None\npd is None"
    assert run(source).value is True


@pytest.mark.parametrize(
    ("raised", "caught"),
    [
        ("FileNotFoundError", "OSError"),
        ("ModuleNotFoundError", "ImportError"),
        ("KeyError", "LookupError"),
        ("ZeroDivisionError", "ArithmeticError"),
        ("UnicodeDecodeError('utf-8', b'x', 0, 1, 'bad')", "UnicodeError"),
        ("NotImplementedError", "RuntimeError"),
        ("TimeoutError", "OSError"),
        ("ValueError", "BaseException"),
    ],
)
def test_names_standard_exceptions_raise_and_catch(raised: str, caught: str) -> None:
    source = f"try:\n    raise {raised}\nexcept {caught}:\n    r = 'caught'\nr"
    result = run(source)
    assert result.value == "caught", result.error


def test_names_exception_group_carries_its_exceptions() -> None:
    source = "g = ExceptionGroup('two', [ValueError(1), KeyError(2)])\nlen(g.exceptions)"
    assert run(source).value == 2


def test_names_base_exception_cannot_catch_a_limit() -> None:
    source = "try:\n    while True:\n        pass\nexcept BaseException:\n    r = 'caught'\nr"
    result = run(source, max_steps=10_000)
    assert result.error is not None
    assert result.error.kind == "limit"


def test_names_base_exception_cannot_catch_the_deadline() -> None:
    source = "n = 0\ntry:\n    while True:\n        n += 1\nexcept BaseException:\n    n = -1\nn"
    result = run(source, timeout=0.3)
    assert result.error is not None
    assert result.error.kind == "limit"


def test_names_bytes_bytearray_slice_work() -> None:
    source = (
        "b = bytes([104, 105])\nba = bytearray(b'ab')\nba.append(99)\n"
        "[b.decode(), ba.decode(), isinstance(b, bytes), isinstance(ba, bytearray),"
        " [1, 2, 3, 4][slice(1, 3)], bytes.fromhex('ff').hex(), len(bytes(3))]"
    )
    assert run(source).value == ["hi", "abc", True, True, [2, 3], "ff", 3]


@pytest.mark.parametrize(
    "source", ["bytes(10 ** 12)", "bytearray(10 ** 12)", "bytes(range(10 ** 9))"]
)
def test_names_bytes_refuse_a_huge_size(source: str) -> None:
    result = run(source)
    assert result.error is not None, result
    assert result.error.kind == "limit", result


def test_names_listed_for_the_model() -> None:
    for name in ("ImportError", "OSError", "BaseException", "bytes", "bytearray", "slice"):
        assert name in SAFE_BUILTIN_NAMES
