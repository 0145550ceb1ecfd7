"""Compile time per KB of source, per shape, at 8, 32 and 128 KB: this tree against a baseline.

Run with ``uv run python benchmarks/compile_time.py [--before REV] [--budget S]``.

The baseline is ``REV`` (default ``main``) of this repository, unpacked with ``git archive``
into a temporary directory and measured in a subprocess in the same run. Each figure is
``compile_script(..., cache=False)`` time divided by the source's size (ms/KB); a linear
compile keeps it flat across the sizes. A size whose time, predicted from the smaller one,
passes ``--budget`` seconds is skipped (``-``; the old tree spends minutes on some). Figures
taken on a shared machine: compare the columns of one run, not runs with each other.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def _joined(head: str, item: str, sep: str, tail: str, size: int) -> str:
    count = max(1, (size - len(head) - len(tail)) // (len(item) + len(sep)))
    return head + sep.join([item] * count) + tail


SHAPES: dict[str, Callable[[int], str]] = {
    "subscript chain, 40 deep": lambda n: _repeat(
        "a" + "".join(f"[b{i}" for i in range(40)) + "]" * 40 + "\n", n
    ),
    "attribute chain, 90 deep": lambda n: _repeat("x" + ".y" * 90 + "\n", n),
    "call chain, 40 deep": lambda n: _repeat("f" + "(g" * 40 + ")" * 40 + "\n", n),
    "a+b+... lines, 90 deep": lambda n: _repeat("a" + "+b" * 90 + "\n", n),
    "and/or lines": lambda n: _repeat("v = " + " or ".join(["a and b"] * 30) + "\n", n),
    "one 'and' chain": lambda n: _joined("v = ", "a", " and ", "", n),
    "one '<' chain": lambda n: _joined("v = ", "a", " < ", "", n),
    "f-string lines": lambda n: _repeat('s = f"{a}{b!r}{c:>{w}}"\n', n),
    "literal list": lambda n: _joined("v = [", "1", ",", "]", n),
    "call arguments": lambda n: _joined("f(", "a", ",", ")", n),
    "def statements": lambda n: _repeat("def f(a, b=1):\n    return a[b] + b\n", n),
    "plain statements": lambda n: _repeat("x = y + 1\n", n),
}
SIZES = (8 * 1024, 32 * 1024, 127 * 1024)  # 127: under the 128,000-byte max_source_bytes


def _measure(budget: float) -> None:
    """In the tree on ``sys.path``: print one JSON line per shape."""
    from scriptgate.sandbox.compile.cache import CompileFailure, compile_script

    for name, build in SHAPES.items():
        row: list[float | None] = []
        rate: float | None = None
        for size in SIZES:
            if rate is not None and rate * size / 1024 / 1000 > budget:
                row.append(None)
                continue
            source = build(size)
            started = time.perf_counter()
            result = compile_script(source, cache=False)
            elapsed = time.perf_counter() - started
            if isinstance(result, CompileFailure):
                raise SystemExit(f"{name}: {result.message}")
            rate = elapsed * 1000 / (len(source) / 1024)
            row.append(rate)
        print(json.dumps([name, row]), flush=True)


def _run(tree: Path | None, budget: float) -> dict[str, list[float | None]]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    # the script's own directory is first on sys.path, then PYTHONPATH, then the venv's
    # editable install of this tree: the baseline's package wins when given
    done = subprocess.run(
        [sys.executable, __file__, "--measure", "--budget", str(budget)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),
    )
    return {name: row for name, row in map(json.loads, done.stdout.splitlines())}


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    """Measure the baseline and this tree, print a Markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="main")
    parser.add_argument("--budget", type=float, default=3.0)
    parser.add_argument("--measure", action="store_true")
    args = parser.parse_args()
    if args.measure:
        _measure(args.budget)
        return
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", args.before, "scriptgate"],
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as base:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(base, filter="data")
        before = _run(Path(base), args.budget)
    after = _run(None, args.budget)
    sizes = [f"{size // 1024} KB" for size in SIZES]
    print(f"ms per KB of source (before = {args.before}, after = this tree)\n")
    print("| shape | " + " | ".join(f"before {s} | after {s}" for s in sizes) + " |")
    print("|---|" + "---:|" * (2 * len(SIZES)))
    for name in SHAPES:
        cells = [f"{_cell(b)} | {_cell(a)}" for b, a in zip(before[name], after[name], strict=True)]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
