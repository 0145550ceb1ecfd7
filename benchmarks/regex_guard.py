"""The ``re`` stand-in on the ``regex`` engine and the copy charges: what they cost (never asserted).

Run with ``uv run python benchmarks/regex_guard.py``.

Figures, each next to a baseline measured in the same run:

- per-call cost of ordinary ``re`` calls in a script (``match``, a compiled
  ``search``, ``findall``, ``sub``, ``finditer``), the regex-backed stand-in
  against the previous stand-in (the stdlib ``re`` functions, swapped in for the
  baseline), both minus an empty loop of the same length;
- the same operations on a 4.7 MB text;
- the item guard with a small slice and ``list(x)`` of a small list (the copy
  charges' fast path) against the guard and call without the charge.

Best of several runs: the machine is shared and noisy.
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards import regex as regex_guard
from scriptgate.sandbox.guards.attributes import (
    _PLAIN,
    OpaqueNamespace,
    _guarded_getitem,
    check_value,
)
from scriptgate.sandbox.guards.memory import charge_copy
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.modules import re as re_stand_in

N = 20_000
SMALL = {
    "re.match(r'(\\w+)@(\\w+)', ...)": "re.match(r'(\\w+)@(\\w+)', 'me@example')",
    "p.search('abc 123 def')": "p.search('abc 123 def')",
    "re.findall(r'\\d+', 'a1b22c333')": "re.findall(r'\\d+', 'a1b22c333')",
    "re.sub(r'\\s+', ' ', 'a  b   c')": "re.sub(r'\\s+', ' ', 'a  b   c')",
    "finditer, 2 matches, .group()": "[m.group() for m in re.finditer(r'\\d', 'a1b2')]",
}
TEXT = (
    "w = ['alpha', 'beta', 'gamma', 'delta', 'x1', 'foo_bar', '2024-01-02', 'a@b.com']\n"
    "text = ' '.join(w * 100000)\n"
)
LARGE = {
    "findall(r'\\w+') of 4.7 MB (800k matches)": "len(re.findall(r'\\w+', text))",
    "sub(r'\\s+', ' ') of 4.7 MB": "len(re.sub(r'\\s+', ' ', text))",
    "search('zzz') of 4.7 MB (no match)": "re.search('zzz', text)",
}


def _stdlib_re() -> dict[str, Any]:
    import re

    return {name: getattr(re, name) for name in re_stand_in.MEMBERS}


def _best(sandbox: Sandbox, source: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        result = sandbox.run_sync(source)
        assert result.ok, result.error
        best = min(best, result.wall_time)
    return best


def _both(source: str, runs: int) -> tuple[float, float]:
    """(regex stand-in, stdlib stand-in) best wall times of ``source``."""
    limits = Limits(timeout=120, max_steps=None)
    new = _best(Sandbox([], limits=limits), source, runs)
    original = regex_guard.make_re
    regex_guard.make_re = _stdlib_re  # the previous stand-in, for the baseline
    try:
        old = _best(Sandbox([], limits=limits), source, runs)
    finally:
        regex_guard.make_re = original
    return new, old


def _row(label: str, new: float, old: float, unit: str, scale: float) -> None:
    print(f"  {label:46} {new * scale:9.2f} {unit}  {old * scale:9.2f} {unit}  {new / old:5.2f}×")


def _old_getitem(obj: Any, key: Any) -> Any:
    # the item guard before the slice charge
    if type(obj) is OpaqueNamespace:
        return obj.member(key)
    value = obj[key]
    if type(value) in _PLAIN:
        return value
    return check_value(value)


def _timeit(fn: Callable[[], Any]) -> float:
    return min(timeit.repeat(fn, number=100_000, repeat=15)) / 100_000


def main() -> None:
    """Print every figure; never assert."""
    print(f"Python {sys.version.split()[0]}; best of 7 (small), 3 (large)\n")
    print(f"per call, in a script loop of {N:,} (minus the empty loop)")
    print(f"  {'':46} {'regex':>12}  {'stdlib re':>12}  ratio")
    empty, _ = _both(f"import re\np = re.compile(r'\\d+')\nfor i in range({N}):\n    pass", 7)
    for label, call in SMALL.items():
        source = f"import re\np = re.compile(r'\\d+')\nfor i in range({N}):\n    {call}"
        new, old = _both(source, 7)
        _row(label, (new - empty) / N, (old - empty) / N, "µs", 1e6)
    print("\nlarge text (the whole run)")
    for label, call in LARGE.items():
        new, old = _both("import re\n" + TEXT + call, 3)
        _row(label, new, old, "ms", 1e3)
    print("\ncopy charges' fast path (host-side timeit)")
    x = [1, 2, 3, 4]
    small = slice(None, 2)
    _row(
        "item guard x[:2]",
        _timeit(lambda: _guarded_getitem(x, small)),
        _timeit(lambda: _old_getitem(x, small)),
        "ns",
        1e9,
    )
    _row(
        "item guard x[1]",
        _timeit(lambda: _guarded_getitem(x, 1)),
        _timeit(lambda: _old_getitem(x, 1)),
        "ns",
        1e9,
    )
    _row(
        "list(x) of 4 items (list(_copy_(x, 'list')))",
        _timeit(lambda: list(charge_copy(x, "list"))),
        _timeit(lambda: list(x)),
        "ns",
        1e9,
    )


if __name__ == "__main__":
    main()
