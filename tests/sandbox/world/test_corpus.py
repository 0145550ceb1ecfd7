"""A corpus of short scripts in the styles models write, run in the sandbox AND plain Python.

Each script's last line is an expression; the sandbox's value must equal plain
CPython's (made JSON-like the way the sandbox renders it). Scripts that need
the class parts (dunder methods, ``super()``, ``type(x)``) are xfail(strict):
they come with the ``boundary`` branch.
"""

from __future__ import annotations

import datetime
from typing import Any

import anyio
import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

BOUNDARY = "dataclasses is not a stand-in yet (issue 14)"

CORPUS: dict[str, str] = {
    # -- data wrangling ---------------------------------------------------------------------
    "group-by-key": "from collections import defaultdict\nrows = [('a', 1), ('b', 2), ('a', 3)]\n"
    "g = defaultdict(list)\nfor k, v in rows:\n    g[k].append(v)\ndict(g)",
    "counter-top": "from collections import Counter\nwords = 'a b a c b a'.split()\n"
    "Counter(words).most_common(2)",
    "sort-multi-key": "people = [{'n': 'x', 'age': 30}, {'n': 'y', 'age': 25}, {'n': 'z', 'age': 30}]\n"
    "[p['n'] for p in sorted(people, key=lambda p: (-p['age'], p['n']))]",
    "itemgetter-sort": "from operator import itemgetter\nrows = [(1, 'b'), (0, 'c'), (1, 'a')]\n"
    "sorted(rows, key=itemgetter(0, 1))",
    "json-roundtrip": "import json\nd = {'a': [1, 2, {'b': None}]}\njson.loads(json.dumps(d, indent=2))",
    "dict-merge": "a = {'x': 1, 'y': 2}\nb = {'y': 3, 'z': 4}\n{**a, **b} | {'w': 0}",
    "zip-dict": "keys = ['a', 'b', 'c']\nvals = [1, 2, 3]\ndict(zip(keys, vals))",
    "nested-comprehension": "m = [[i * j for j in range(4)] for i in range(3)]\n"
    "[sum(r) for r in m], [list(c) for c in zip(*m)]",
    "heap-top-k": "import heapq\nscores = {'a': 5, 'b': 9, 'c': 1, 'd': 7}\n"
    "heapq.nlargest(2, scores, key=scores.get)",
    "bisect-grades": "import bisect\ndef grade(s, bps=[60, 70, 80, 90], g='FDCBA'):\n"
    "    return g[bisect.bisect(bps, s)]\n[grade(s) for s in [33, 99, 77, 70, 89, 90, 100]]",
    "running-total": "from itertools import accumulate\nlist(accumulate([3, 1, 4, 1, 5]))",
    "chunks": "from itertools import islice\nit = iter(range(10))\n"
    "out = []\nwhile chunk := list(islice(it, 3)):\n    out.append(chunk)\nout",
    "stats": "import statistics as st\nxs = [2, 4, 4, 4, 5, 5, 7, 9]\n"
    "[st.mean(xs), st.median(xs), st.pstdev(xs), st.mode(xs)]",
    "deepcopy-edit": "import copy\ncfg = {'a': {'b': [1]}}\nnew = copy.deepcopy(cfg)\n"
    "new['a']['b'].append(2)\n[cfg, new]",
    "set-ops-last": "a = {1, 2, 3}\nb = {2, 3, 4}\na & b",
    "dates": "from datetime import date, timedelta\nd = date(2024, 2, 27)\n"
    "[(d + timedelta(days=i)).isoformat() for i in range(4)]",
    "strptime": "from datetime import datetime\n"
    "[datetime.strptime(s, '%Y-%m-%d').weekday() for s in ['2024-01-01', '2024-12-25']]",
    "date-last-value": "import datetime\ndatetime.date(2024, 5, 6)",
    "percent-format": "rows = [('a', 1.5), ('bb', 22.25)]\n['%-3s|%6.2f' % (n, v) for n, v in rows]",
    "format-mix": "n = 7\n[f'{n:03d}', '{:>4}'.format(n), '%x' % 255, str(n) + '!']",
    # -- text processing --------------------------------------------------------------------
    "word-freq": "import re\ntext = 'The cat and the hat. The end!'\n"
    "words = re.findall(r'[a-z]+', text.lower())\nsorted(set(words))",
    "title-case": "import string\n[string.capwords('hello   world'), 'ab cd'.title()]",
    "wrap-text": "import textwrap\ntextwrap.wrap('lorem ipsum dolor sit amet consectetur', 12)",
    "dedent-block": "import textwrap\ntextwrap.dedent('    a\\n      b\\n    c')",
    "csv-like-split": "data = 'name,age\\nann,30\\nbob,25'\nlines = data.splitlines()\n"
    "hdr = lines[0].split(',')\n[dict(zip(hdr, l.split(','))) for l in lines[1:]]",
    "palindromes": "ws = ['level', 'hello', 'Racecar']\n[w for w in ws if w.lower() == w.lower()[::-1]]",
    "caesar": "def enc(s, k):\n    return ''.join(chr((ord(c) - 97 + k) % 26 + 97) if c.isalpha() else c for c in s)\n"
    "enc('hello world', 3)",
    "hash-id": "import hashlib\nhashlib.sha256('abc'.encode()).hexdigest()[:12]",
    "b64": "import base64\nbase64.b64decode(base64.b64encode('héllo'.encode())).decode()",
    "bytes-ops": "b = 'abc'.encode()\n[list(b), bytes(reversed(b)).decode(), bytearray(b).upper().decode()]",
    "slice-obj": "s = slice(1, None, 2)\n'abcdefg'[s]",
    # -- recursion -----------------------------------------------------------------------------
    "fib-memo": "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef fib(n):\n"
    "    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(80)",
    "deep-recursion": "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\ndepth(800)",
    "flatten": "def flat(x):\n    return [y for i in x for y in (flat(i) if isinstance(i, list) else [i])]\n"
    "flat([1, [2, [3, [4]], 5]])",
    "permutations": "from itertools import permutations\n[''.join(p) for p in permutations('abc')]",
    "hanoi": "def h(n, a='A', b='B', c='C'):\n    return [] if n == 0 else h(n-1, a, c, b) + [(a, c)] + h(n-1, b, a, c)\n"
    "len(h(10))",
    "partial-apply": "from functools import partial, reduce\nimport operator\n"
    "add3 = partial(operator.add, 3)\n[add3(4), reduce(operator.mul, range(1, 6))]",
    # -- errors ---------------------------------------------------------------------------------
    "optional-import": "try:\n    import fancy_fastlib as np\nexcept ImportError:\n    np = None\nnp is None",
    "key-error-default": "d = {}\ntry:\n    d['x']\nexcept LookupError as e:\n    r = 'missing'\nr",
    "oserror-family": "try:\n    raise FileNotFoundError('nope')\nexcept OSError as e:\n    r = str(e)\nr",
    "exception-group": "eg = ExceptionGroup('many', [ValueError('a'), TypeError('b')])\n"
    "[len(eg.exceptions), str(eg.exceptions[0])]",
    # -- small classes (plain ones work today) -------------------------------------------------
    "class-plain": "class Acc:\n    def add(self, x):\n        self.total = getattr(self, 'total', 0) + x\n"
    "        return self\na = Acc()\na.add(2).add(3).total",
    "namedtuple": "from collections import namedtuple\nP = namedtuple('P', 'x y')\np = P(1, 2)\n"
    "[p.x + p.y, p]",
    "instance-last-value": "class Thing:\n    pass\nlen([Thing(), Thing()])",
    # -- more glue ----------------------------------------------------------------------------
    "enumerate-start": "[f'{i}. {w}' for i, w in enumerate(['a', 'b'], start=1)]",
    "any-all": "xs = [2, 4, 7]\n[any(x % 2 for x in xs), all(x > 0 for x in xs)]",
    "min-max-key": "d = {'a': 3, 'b': 1, 'c': 2}\n[min(d, key=d.get), max(d.items(), key=lambda kv: kv[1])]",
    "divmod-time": "secs = 3725\nh, rem = divmod(secs, 3600)\nm, s = divmod(rem, 60)\nf'{h:02d}:{m:02d}:{s:02d}'",
    "walrus-filter": "data = [1, 5, 12, 7, 30]\n[y for x in data if (y := x * 2) > 10]",
    "star-unpack": "first, *mid, last = range(6)\n[first, mid, last]",
    "match-case": "def kind(x):\n    match x:\n        case {'type': 'a', 'v': v}:\n            return v\n"
    "        case [a, b]:\n            return a + b\n        case _:\n            return None\n"
    "[kind({'type': 'a', 'v': 1}), kind([2, 3]), kind('z')]",
    "reversed-sorted": "list(reversed(sorted('banana')))",
    "string-methods": "s = '  Hello, World  '\n[s.strip().lower(), s.split(','), s.count('l'), s.strip().startswith('He')]",
    "join-map": "', '.join(map(str, [1, 2, 3]))",
    "round-floats": "[round(2.675, 2), round(7.5), round(-0.5), 10 / 4, 10 // 4]",
    "int-parse": "[int('ff', 16), int('0b101', 0), float('1e3'), hex(255), bin(5)]",
    "sum-of-squares": "sum(i * i for i in range(1, 101))",
    "transpose": "m = [[1, 2, 3], [4, 5, 6]]\n[list(r) for r in zip(*m)]",
    "dict-get-setdefault": "d = {}\nfor w in 'abcab':\n    d.setdefault(w, 0)\n    d[w] += 1\n[d, d.get('z', 0)]",
    "ordered-dict": "from collections import OrderedDict\nod = OrderedDict()\nod['b'] = 1\nod['a'] = 2\n"
    "od.move_to_end('b')\nlist(od)",
    "deque-rotate": "from collections import deque\nq = deque([1, 2, 3, 4])\nq.rotate(1)\nq.appendleft(0)\nlist(q)",
    "groupby-runs": "from itertools import groupby\n[(k, len(list(g))) for k, g in groupby('aaabccdd')]",
    "product-grid": "from itertools import product\n[a + b for a, b in product('xy', '12')]",
    "combinations-sum": "from itertools import combinations\n[c for c in combinations([1, 2, 3, 4], 2) if sum(c) == 5]",
    "math-funcs": "import math\n[math.gcd(12, 18), math.isqrt(17), round(math.hypot(3, 4)), math.comb(5, 2)]",
    "regex-sub": "import re\nre.sub(r'(\\d+)', lambda m: str(int(m.group(1)) * 2), 'a1 b22 c3')",
    "regex-groups": "import re\nm = re.match(r'(?P<user>\\w+)@(?P<host>[\\w.]+)', 'ann@example.com')\n"
    "[m.group('user'), m.groupdict()]",
    "json-sorted": "import json\njson.dumps({'b': 1, 'a': [1, 2]}, sort_keys=True)",
    "cmp-to-key": "from functools import cmp_to_key\n"
    "sorted(['10', '9', '2'], key=cmp_to_key(lambda a, b: int(a) - int(b)))",
    "generator-pipeline": "def evens(n):\n    for i in range(n):\n        if i % 2 == 0:\n            yield i\n"
    "sum(x * x for x in evens(10))",
    "closure-counter": "def make():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n"
    "        return n\n    return inc\nc = make()\n[c(), c(), c()]",
    "binary-search": "def bs(a, x):\n    lo, hi = 0, len(a)\n    while lo < hi:\n        mid = (lo + hi) // 2\n"
    "        if a[mid] < x:\n            lo = mid + 1\n        else:\n            hi = mid\n    return lo\n"
    "[bs([1, 3, 5, 7], 5), bs([1, 3, 5, 7], 8)]",
    "primes-sieve": "n = 50\nsieve = [True] * (n + 1)\nfor i in range(2, int(n ** 0.5) + 1):\n"
    "    if sieve[i]:\n        for j in range(i * i, n + 1, i):\n            sieve[j] = False\n"
    "[i for i in range(2, n + 1) if sieve[i]]",
    "memo-dict": "memo = {}\ndef ways(n):\n    if n <= 1:\n        return 1\n    if n not in memo:\n"
    "        memo[n] = ways(n - 1) + ways(n - 2)\n    return memo[n]\nways(60)",
    "exception-chain": "def parse(s):\n    try:\n        return int(s)\n    except ValueError as e:\n"
    "        raise RuntimeError('bad') from e\ntry:\n    parse('x')\nexcept RuntimeError as e:\n"
    "    r = [str(e), 'chained']\nr",
    "finally-order": "log = []\ntry:\n    log.append(1)\n    raise KeyError('k')\nexcept KeyError:\n"
    "    log.append(2)\nfinally:\n    log.append(3)\nlog",
    "timedelta-math": "from datetime import datetime, timedelta\nd = datetime(2024, 1, 31, 12)\n"
    "[(d + timedelta(days=1)).month, (d - datetime(2024, 1, 1)).days]",
    "tuple-last-value": "(1, 'a', (2, 3))",
    "frozenset-last-value": "frozenset('cab')",
    # -- class parts (boundary branch) --------------------------------------------------------
    "class-init-super": "class A:\n    def __init__(self, x):\n        self.x = x\n"
    "class B(A):\n    def __init__(self, x):\n        super().__init__(x * 2)\nB(2).x",
    "dataclass-basic": "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n"
    "    y: int = 0\nP(1).x",
    "type-name": "type(3).__name__",
    "main-guard": "r = 0\nif __name__ == '__main__':\n    r = 1\nr",
}

NEEDS_BOUNDARY: frozenset[str] = frozenset()  # (dataclasses is a stand-in now)


def _jsonish(value: Any) -> Any:
    """Plain Python's value as the sandbox renders a last value."""
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _jsonish(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        items = list(value)
        if all(isinstance(v, (int, float)) for v in items) or all(
            isinstance(v, str) for v in items
        ):
            items.sort()
        return [_jsonish(v) for v in items]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


def plain(source: str) -> Any:
    *body, last = source.rstrip().split("\n")
    scope: dict[str, Any] = {"__name__": "__main__"}
    exec("\n".join(body), scope)
    return _jsonish(eval(last, scope))


def sandboxed(source: str) -> ScriptResult:
    async def go() -> ScriptResult:
        return await Sandbox(limits=Limits(timeout=20)).run(source)

    return anyio.run(go)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=BOUNDARY))
        if n in NEEDS_BOUNDARY
        else n
        for n in sorted(CORPUS)
    ],
)
def test_corpus_script_matches_plain_python(name: str) -> None:
    source = CORPUS[name]
    expected = plain(source)
    result = sandboxed(source)
    assert result.ok, result.error
    assert result.value == expected
