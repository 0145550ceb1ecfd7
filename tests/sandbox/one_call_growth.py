"""Harness: how much one C call grows the host, for every size-taking member (issue 13 §2).

Not a test module: :func:`measure` runs scripts in a fresh Python subprocess, each one
in-process through ``Sandbox.run_sync`` under a small memory budget, and reports per
script the peak of memory the host allocated during the run (``tracemalloc``: every
``PyMem``/``PyObject`` allocation, so a C call's buffer counts while it is alive) and how
the run ended. The child caps its address space (``RLIMIT_AS``) a little above the
budget, so an unbounded call fails with ``MemoryError`` (reported as such) instead of
taking the machine. Run it directly for the table: ``python tests/sandbox/one_call_growth.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BUDGET = 96 << 20
"""The in-process memory budget each measured run gets."""
CAP = 1536 << 20
"""Address space the child may grow by over its start (beyond it a call gets MemoryError)."""

_BIG_BYTES = "b = b'ab' * 4_000_000\n"
_BIG_STR = "s = 'ab' * 4_000_000\n"
_LONG_LINES = "import difflib\ns = 'x' * 10**6\nt = 'y' * 10**6\n"

ONE_CALL: dict[str, str] = {
    # int
    "int-to-bytes": "(1).to_bytes(10**9, 'big')",
    "int-to-bytes-unbound": "int.to_bytes(1, 10**9, 'big')",
    "int-to-bytes-getattr": "getattr(1, 'to_bytes')(10**9, 'little')",
    # random
    "random-sample": "import random\nrandom.sample(range(10**8), 10**8)",
    "random-sample-counts": "import random\nrandom.sample(['a'], 9_000_000, counts=[9_000_000])",
    "random-choices-k": "import random\nrandom.choices([1], k=10**7)",
    "random-Random-choices-k": "import random\nrandom.Random(1).choices([1], k=10**7)",
    "random-shuffle": "import random\nx = [0] * 10**7\nrandom.shuffle(x)",
    # statistics
    "statistics-quantiles-n": "import statistics\nstatistics.quantiles([1, 2], n=10**7)",
    # itertools
    "itertools-combinations-r": "import itertools\nitertools.combinations([], 10**9)",
    "itertools-combinations-wr-r": "import itertools\nitertools.combinations_with_replacement([], 10**9)",
    "itertools-permutations-r": "import itertools\nitertools.permutations([], 10**9)",
    "itertools-product-repeat": "import itertools\nitertools.product([1], repeat=10**9)",
    "itertools-product-many": "import itertools\nitertools.product(*([[1]] * 10**6), repeat=60)",
    "itertools-repeat-list": "import itertools\nlen(list(itertools.repeat(1, 10**8)))",
    "itertools-combinations-list": "import itertools\nlen(list(itertools.combinations(range(60), 5)))",
    "tuple-repeat": "import itertools\nlen(tuple(itertools.repeat(1, 10**8)))",
    "sorted-repeat": "import itertools\nlen(sorted(itertools.repeat(1, 10**8)))",
    # list() of a C iterator that never ticks (the run has no step limit here)
    "list-range": "len(list(range(10**8)))",
    "list-map": "len(list(map(abs, range(10**8))))",
    # list/tuple used as values: the stand-in classes read the iterator with a checked growth
    "list-as-value-range": "f = list\nlen(f(range(10**8)))",
    "list-in-a-list-range": "fs = [list]\nlen(fs[0](range(10**8)))",
    "tuple-as-value-range": "f = tuple\nlen(f(range(10**8)))",
    "map-list-range": "len(next(map(list, [range(10**8)])))",
    "list-generic-alias-range": "len(list[int](range(10**8)))",
    "list-subclass-range": "class L(list):\n    pass\nlen(L(range(10**8)))",
    "tuple-subclass-range": "class T(tuple):\n    pass\nlen(T(range(10**8)))",
    "list-subclass-own-iter": "import itertools\nclass L(list):\n    def __iter__(self):\n"
    "        return itertools.repeat(0, 10**8)\nlen(list(L()))",
    # difflib: each output line is as long as an input line
    "difflib-unified-long": _LONG_LINES + "len(list(difflib.unified_diff([s] * 500, [t] * 500)))",
    "difflib-context-long": _LONG_LINES + "len(list(difflib.context_diff([s] * 500, [t] * 500)))",
    # copies of a list subclass whose __len__ lies
    "lying-list-copies": "class L(list):\n    def __len__(self):\n        return 0\n"
    "import itertools\nx = L(itertools.repeat(0, 4_000_000))\nkeep = []\nfor _ in range(20):\n"
    "    keep.append(list(x))",
    # collections
    "deque-mul": "import collections\ncollections.deque([1]) * 10**9",
    "deque-imul": "import collections\nd = collections.deque([1])\nd *= 10**9",
    "deque-rmul": "import collections\n10**9 * collections.deque([1])",
    # bytes / bytearray
    "bytes-mul": "b'x' * 10**9",
    "bytearray-mul": "bytearray(b'x') * 10**9",
    "bytearray-imul": "x = bytearray(b'x')\nx *= 10**9",
    "bytes-center": "b'x'.center(10**9)",
    "bytes-ljust": "b'x'.ljust(10**9)",
    "bytes-rjust": "b'x'.rjust(10**9)",
    "bytes-zfill": "b'x'.zfill(10**9)",
    "bytearray-center": "bytearray(b'x').center(10**9)",
    "bytes-expandtabs": "(b'\\t' * 1000).expandtabs(10**6)",
    "bytes-replace": _BIG_BYTES + "b.replace(b'a', b'x' * 1000)",
    "bytearray-replace": _BIG_BYTES + "bytearray(b).replace(b'a', b'x' * 1000)",
    "bytes-join": _BIG_BYTES + "b''.join([b] * 200)",
    "bytearray-join": _BIG_BYTES + "bytearray().join([b] * 200)",
    "bytes-call": "bytes(10**9)",
    "bytearray-call": "bytearray(10**9)",
    "bytes-fromhex": "bytes.fromhex('00' * 9_000_000)",
    "bytes-hex-sep": _BIG_BYTES + "b.hex(':')",
    "bytes-split": "(b'ab ' * 3_000_000).split()",
    # str
    "str-join-lazy-map": _BIG_STR + "''.join(map(str.upper, [s] * 200))",
    "str-join-lazy-generator": _BIG_STR + "''.join(s for _ in range(200))",
    "str-center": "'x'.center(10**9)",
    "str-split": "('ab ' * 3_000_000).split()",
    "str-mul": "'x' * 10**9",
    "list-mul": "[0] * 10**9",
    "str-percent-width": "'%*d' % (10**9, 1)",
    "str-format-width": "'{:{}}'.format(1, 10**9)",
    "fstring-width": "w = 10**9\nf'{1:{w}}'",
    # typing forward references (each compiles its string)
    "typing-typeddict-forward": "import typing\ntyping.TypedDict('T', {'a': '1+' * 2_000_000 + '1'})",
    "typing-typevar-bound": "import typing\ntyping.TypeVar('T', bound='1+' * 2_000_000 + '1')",
    "typing-optional-forward": "import typing\ntyping.Optional['1+' * 2_000_000 + '1']",
    "typing-list-forward": "import typing\ntyping.List['1+' * 2_000_000 + '1']",
    "typing-union-forward": "import typing\ntyping.Union[int, '1+' * 2_000_000 + '1']",
    "typing-callable-forward": "import typing\ntyping.Callable[['1+' * 2_000_000 + '1'], int]",
    "typing-generic-forward": "import typing\nT = typing.TypeVar('T')\nclass G(typing.Generic[T]):\n    pass\nG['1+' * 2_000_000 + '1']",
    # other modules
    "textwrap-indent": "import textwrap\ntextwrap.indent('\\n' * 5_000_000, 'x' * 200)",
    "re-sub-expand": "import re\nre.sub('', 'x' * 1000, 'y' * 10**6)",
    "operator-mul": "import operator\noperator.mul('x', 10**9)",
    "operator-concat-reduce": _BIG_STR
    + "import functools, operator\nfunctools.reduce(operator.add, [s] * 200)",
    "accumulate-add": _BIG_STR
    + "import itertools\nfor _ in itertools.accumulate([s] * 200):\n    pass",
    "math-factorial": "import math\nmath.factorial(10**6)",
    "math-comb": "import math\nmath.comb(10**6, 5 * 10**5)",
    "base64-encode": _BIG_BYTES + "import base64\nbase64.b64encode(b)",
    "json-dumps-indent": "import json\njson.dumps([[]] * 10**6, indent=1000)",
    "copy-deepcopy": "import copy\nx = [[0] * 1000] * 10000\ncopy.deepcopy(x)",
    "heapq-nlargest": "import heapq\nheapq.nlargest(10**9, [1, 2])",
    "string-template": "import string\nstring.Template('$a' * 1000).substitute(a='x' * 100000)",
    "hashlib-hexdigest": "import hashlib\nhashlib.shake_256(b'x').hexdigest(10**9)",
    "hashlib-digest": "import hashlib\nhashlib.shake_128(b'x').digest(10**9)",
}
"""Scripts that each ask one C call (or one host call) for a large allocation."""


@dataclass(frozen=True)
class Growth:
    """How one script ended and the peak the host allocated while it ran."""

    id: str
    peak: int
    kind: str
    message: str


def _child(budget: int, cap: int, items: list[tuple[str, str]]) -> None:
    import resource
    import tracemalloc

    from scriptgate.sandbox.result import Limits
    from scriptgate.sandbox.sandbox import Sandbox

    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    start = pages * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (start + cap, start + cap))
    sandbox = Sandbox([], limits=Limits(timeout=10.0, memory_bytes=budget, max_result_bytes=1000))
    sandbox.run_sync("1")
    tracemalloc.start()
    for name, source in items:
        tracemalloc.clear_traces()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            result = sandbox.run_sync(source + "\nNone")
            kind = "ok" if result.ok else (result.error.kind if result.error else "?")
            message = "" if result.error is None else result.error.message.splitlines()[0][:120]
        except MemoryError:
            kind, message = "MemoryError", "host MemoryError at the address-space cap"
        peak = tracemalloc.get_traced_memory()[1] - base
        if "MemoryError" in message:
            kind = "MemoryError"
        print(json.dumps({"id": name, "peak": peak, "kind": kind, "message": message}), flush=True)


def _one(name: str, budget: int, timeout: float) -> Growth:
    try:
        done = subprocess.run(
            [
                sys.executable,
                str(Path(__file__)),
                "--child",
                str(budget),
                json.dumps([[name, ONE_CALL[name]]]),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Growth(name, -1, "hung", f"one host call still running after {timeout:.0f} s")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not rows:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return Growth(name, -1, "crashed", tail[:120])
    return Growth(**rows[0])


def measure(
    ids: list[str] | None = None, budget: int = BUDGET, timeout: float = 40.0
) -> list[Growth]:
    """Run each :data:`ONE_CALL` script named in ``ids`` (default all) in its own fresh subprocess."""
    return [_one(name, budget, timeout) for name in (ids or list(ONE_CALL))]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(int(sys.argv[2]), CAP, [tuple(x) for x in json.loads(sys.argv[3])])
    else:
        for name in sys.argv[1:] or list(ONE_CALL):
            row = _one(name, BUDGET, 15.0)
            flag = (
                "GREW"
                if row.peak > BUDGET or row.kind in ("ok", "MemoryError", "hung", "crashed")
                else "    "
            )
            print(
                f"{flag} {row.id:30} {row.peak / 2**20:9.1f} MiB  {row.kind:12} {row.message}",
                flush=True,
            )
