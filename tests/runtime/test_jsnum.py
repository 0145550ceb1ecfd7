"""JavaScript number semantics (pi-reference §2.9): ``Number(str)`` and ``String(number)``."""

from __future__ import annotations

import math

import pytest

from scriptgate.runtime._jsnum import js_json, js_number_to_string, js_to_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param(" \t\n", 0, id="whitespace"),
        pytest.param("\u00a0 7 \ufeff", 7, id="unicode-whitespace-trimmed"),
        pytest.param("42", 42, id="int"),
        pytest.param("-42", -42, id="negative"),
        pytest.param("+5", 5, id="plus"),
        pytest.param("3.5", 3.5, id="fraction"),
        pytest.param(".5", 0.5, id="leading-dot"),
        pytest.param("5.", 5, id="trailing-dot"),
        pytest.param("1e3", 1000, id="exp"),
        pytest.param("1E-7", 1e-7, id="neg-exp"),
        pytest.param("0x1F", 31, id="hex"),
        pytest.param("0X1f", 31, id="hex-upper"),
        pytest.param("0b101", 5, id="binary"),
        pytest.param("0o17", 15, id="octal"),
        pytest.param("007", 7, id="leading-zeros-decimal"),
        pytest.param("Infinity", math.inf, id="Infinity"),
        pytest.param("-Infinity", -math.inf, id="neg-Infinity"),
    ],
)
def test_jsnum_to_number_accepts(text: str, expected: float) -> None:
    assert js_to_number(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("NaN", id="NaN"),
        pytest.param("inf", id="python-inf"),
        pytest.param("nan", id="python-nan"),
        pytest.param("infinity", id="lowercase-infinity"),
        pytest.param("1_000", id="underscore"),
        pytest.param("-0x10", id="signed-hex"),
        pytest.param("0x", id="bare-prefix"),
        pytest.param("0b102", id="bad-binary"),
        pytest.param("1e", id="dangling-exp"),
        pytest.param(".", id="dot"),
        pytest.param("12n", id="bigint-suffix"),
        pytest.param("١٢", id="non-ascii-digits"),
        pytest.param("1 2", id="inner-space"),
    ],
)
def test_jsnum_to_number_rejects(text: str) -> None:
    assert math.isnan(js_to_number(text))


def test_jsnum_integral_results_are_int() -> None:
    assert type(js_to_number("42.0")) is int
    assert type(js_to_number("0x10")) is int
    assert type(js_to_number("3.5")) is float


@pytest.mark.parametrize(
    ("number", "text"),
    [
        pytest.param(0, "0", id="zero"),
        pytest.param(-0.0, "0", id="negative-zero"),
        pytest.param(1.0, "1", id="integral-float"),
        pytest.param(3.5, "3.5", id="fraction"),
        pytest.param(0.1, "0.1", id="0.1"),
        pytest.param(0.1 + 0.2, "0.30000000000000004", id="shortest-round-trip"),
        pytest.param(1e21, "1e+21", id="1e21"),
        pytest.param(1e20, "100000000000000000000", id="1e20"),
        pytest.param(123456789012345680000.0, "123456789012345680000", id="21-digits"),
        pytest.param(1e-7, "1e-7", id="1e-7"),
        pytest.param(1.5e-7, "1.5e-7", id="1.5e-7"),
        pytest.param(0.000001, "0.000001", id="1e-6"),
        pytest.param(-2.5e30, "-2.5e+30", id="negative-exp"),
        pytest.param(10**21, "1e+21", id="big-int"),
        pytest.param(12345, "12345", id="int"),
        pytest.param(math.inf, "Infinity", id="inf"),
        pytest.param(-math.inf, "-Infinity", id="neg-inf"),
        pytest.param(math.nan, "NaN", id="nan"),
        pytest.param(5e-324, "5e-324", id="denormal"),
        pytest.param(1.7976931348623157e308, "1.7976931348623157e+308", id="max"),
    ],
)
def test_jsnum_number_to_string(number: float, text: str) -> None:
    assert js_number_to_string(number) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param({"a": [1, 2.0, None, True]}, '{"a":[1,2,null,true]}', id="compact"),
        pytest.param("\u2028\ud800", '"\u2028\\ud800"', id="lone-surrogate-escaped"),
        pytest.param("\x01", '"\\u0001"', id="control-char"),
        pytest.param((1, 2), "[1,2]", id="tuple-as-array"),
    ],
)
def test_jsnum_js_json(value: object, text: str) -> None:
    assert js_json(value) == text
