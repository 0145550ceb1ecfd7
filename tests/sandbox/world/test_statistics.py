"""``statistics`` of two series (``correlation``, ``covariance``, ``linear_regression``), both modes.

Each feature script must give what plain CPython gives; the attacks on these members are in
``tests/sandbox/attacks_extra.py`` (``x-statistics-pair-*``).
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox

FEATURES = {
    "correlation": "import statistics\nx = [1, 2, 3, 4, 5, 6]\ny = [2.1, 3.9, 6.2, 7.8, 10.1, 12.2]\n"
    "[round(statistics.correlation(x, y), 6), round(statistics.correlation(x, x[::-1]), 6)]",
    "covariance": "from statistics import covariance\n"
    "[covariance([1, 2, 3, 4], [1, 3, 2, 5]), covariance(range(5), [x * x for x in range(5)])]",
    "linear-regression": "import statistics\nlr = statistics.linear_regression([1, 2, 3, 4], [3, 5, 7, 9.5])\n"
    "slope, intercept = lr\n[round(slope, 6), round(intercept, 6), round(lr.slope, 6), lr[1] == lr.intercept,"
    " type(lr).__name__, round(statistics.linear_regression([1, 2], [2, 4], proportional=True).slope, 6)]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_statistics_pairs_match_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


ERRORS = {
    "lengths": ("import statistics\nstatistics.correlation([1, 2], [1])", "same number of data"),
    "too-few": ("import statistics\nstatistics.covariance([1], [1])", "at least two"),
    "constant": ("import statistics\nstatistics.correlation([1, 1], [1, 2])", "constant"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_statistics_pairs_errors_are_cpythons(sandbox: Sandbox, name: str) -> None:
    source, words = ERRORS[name]
    refused(sandbox, source, "runtime", words)
