"""One-call allocation and lying-subclass attacks (data only; run in both isolation modes).

Each script asks a single C call (or one host call of a stand-in) for an allocation the
size argument alone decides — ``int.to_bytes``, the bytes/bytearray padding and
``replace``/``join`` methods, ``itertools`` tuple widths, ``random`` draws, ``typing``
forward references, ``accumulate`` of strings — or hands a size or render guard a
``list``/``dict``/``str`` subclass whose ``__len__``/``__iter__``/``keys`` lie (issue 13 §2).
Same :class:`Attack` records as ``attacks.py``, under its :data:`ATTACK_LIMITS`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from sandbox_support import load

__all__ = [
    "HOST_LOOP_DEADLINE_ATTACKS",
    "IN_PROCESS_ONLY",
    "ONE_CALL_ATTACKS",
    "ONE_CALL_MEMORY_ATTACKS",
    "QUADRATIC_INT_ATTACKS",
    "RENDER_SCOPE_ATTACKS",
]


def _base() -> ModuleType:
    return load("attacks.py")


Attack = _base().Attack
_UNSET: Any = _base()._UNSET


def _a(
    id: str,
    category: str,
    source: str,
    expect: str,
    message: str | None = None,
    value: Any = _UNSET,
) -> Any:
    return Attack(id, category, source, expect, message, value)


_TOO = "too large"
_BYTES = "b = b'ab' * 4_000_000\n"
_LYING_LIST = (
    "class L(list):\n    def __len__(self):\n        return 0\n"
    "    def __iter__(self):\n        return iter([])\n"
    "    def __getitem__(self, i):\n        return 0\n"
    "    def __repr__(self):\n        return 'L'\n"
    "x = L(['y' * 1000] * 10000)\n"
)
_LYING_DICT = (
    "class D(dict):\n    def keys(self):\n        return []\n"
    "    def items(self):\n        return []\n"
    "    def __iter__(self):\n        return iter([])\n"
    "    def __len__(self):\n        return 0\n"
    "d = D({i: 'y' * 1000 for i in range(10000)})\n"
)
_SUBCLASS_L = "class L(list):\n    pass\nx = L([0] * 1000)\n"
_LYING_LEN_L = "class L(list):\n    def __len__(self):\n        return 0\nx = L([0] * 1000)\n"
_LYING_STR = "class S(str):\n    def __len__(self):\n        return 1\ns = S('y' * 1000000)\n"

ONE_CALL_ATTACKS: list[Any] = [
    # -- one C call sized by its argument ---------------------------------------------------------
    _a("int-to-bytes-huge", "8-memory", "(1).to_bytes(10**9, 'big')", "limit", "int.to_bytes"),
    _a("int-to-bytes-unbound", "8-memory", "int.to_bytes(1, 10**9, 'big')", "limit", "int.to_bytes"),
    _a("int-to-bytes-getattr", "8-memory", "getattr(7, 'to_bytes')(10**9)", "limit", "int.to_bytes"),
    _a("int-to-bytes-ok", "8-memory", "len((255).to_bytes(4, 'little')) + len(int.to_bytes(1, 2, 'big'))", "ok", value=6),
    _a("bytes-center-huge", "8-memory", "b'x'.center(10**9)", "limit", "bytes.center"),
    _a("bytes-ljust-huge", "8-memory", "b'x'.ljust(10**9)", "limit", "bytes.ljust"),
    _a("bytes-rjust-huge", "8-memory", "b'x'.rjust(10**9)", "limit", "bytes.rjust"),
    _a("bytes-zfill-huge", "8-memory", "b'1'.zfill(10**9)", "limit", "bytes.zfill"),
    _a("bytearray-center-huge", "8-memory", "bytearray(b'x').center(10**9)", "limit", "bytearray.center"),
    _a("bytes-center-unbound", "8-memory", "bytes.center(b'x', 10**9)", "limit", "bytes.center"),
    _a("bytes-expandtabs-huge", "8-memory", "(b'\\t' * 1000).expandtabs(10**6)", "limit", "bytes.expandtabs"),
    _a("bytes-replace-huge", "8-memory", _BYTES + "b.replace(b'a', b'x' * 1000)", "limit", "bytes.replace"),
    _a("bytearray-replace-huge", "8-memory", _BYTES + "bytearray(b).replace(b'a', b'x' * 1000)", "limit", "bytearray.replace"),
    _a("bytes-join-huge", "8-memory", _BYTES + "b''.join([b] * 200)", "limit", "bytes.join"),
    _a("bytearray-join-huge", "8-memory", _BYTES + "bytearray().join([b] * 200)", "limit", "bytearray.join"),
    _a("bytes-join-lazy", "8-memory", _BYTES + "b'-'.join(b for _ in range(200))", "limit", "bytes.join"),
    _a("bytes-methods-ok", "8-memory", "[b'x'.center(3), b'1'.zfill(3), b'a\\tb'.expandtabs(2), b'ab'.replace(b'a', b'xy'), b'-'.join([b'a', bytearray(b'b')])] == [b' x ', b'001', b'a b', b'xyb', b'a-b']", "ok", value=True),
    _a("str-join-lazy-generator", "8-memory", "s = 'ab' * 4_000_000\n''.join(s for _ in range(200))", "limit", "str.join"),
    _a("str-join-lazy-map", "8-memory", "s = 'ab' * 1_000_000\n''.join(map(str.upper, [s] * 200))", "limit"),
    _a("str-join-lazy-ok", "8-memory", "'-'.join(str(i) for i in range(3)) + ''.join(map(str.upper, ['a', 'b']))", "ok", value="0-1-2AB"),
    _a("itertools-combinations-wide", "8-memory", "import itertools\nitertools.combinations([], 10**9)", "limit", "itertools.combinations"),
    _a("itertools-combinations-wr-wide", "8-memory", "import itertools\nitertools.combinations_with_replacement([], 10**9)", "limit", "itertools.combinations_with_replacement"),
    _a("itertools-permutations-wide", "8-memory", "import itertools\nitertools.permutations([], 10**9)", "limit", "itertools.permutations"),
    _a("itertools-product-many-pools", "8-memory", "import itertools\nitertools.product(*([[1]] * 10**5), repeat=60)", "limit", "itertools.product"),
    _a("itertools-widths-ok", "8-memory", "import itertools\n[len(list(itertools.combinations(range(5), 2))), len(list(itertools.permutations(range(4)))), len(list(itertools.combinations_with_replacement('ab', 2))), len(list(itertools.product('ab', repeat=3)))]", "ok", value=[10, 24, 3, 8]),
    _a("itertools-accumulate-strings", "8-memory", "s = 'ab' * 4_000_000\nimport itertools\nfor _ in itertools.accumulate([s] * 200):\n    pass", "limit", _TOO),
    _a("itertools-accumulate-ok", "8-memory", "import itertools\nlist(itertools.accumulate([1, 2, 3], initial=10)) + list(itertools.accumulate([3, 1, 2], max))", "ok", value=[10, 11, 13, 16, 3, 3, 3]),
    _a("random-sample-huge", "8-memory", "import random\nrandom.sample(range(100), 5 * 10**6)", "limit", "random.sample"),
    _a("random-choices-k-huge", "8-memory", "import random\nrandom.choices([1], k=10**7)", "limit", "random.choices"),
    _a("random-shuffle-huge", "8-cpu", "import random\nrandom.shuffle([0] * 10**7)", "limit", "random.shuffle"),
    _a("random-draws-ok", "8-memory", "import random\nrandom.seed(3)\nx = list(range(10))\nrandom.shuffle(x)\n[sorted(x), len(random.sample(range(100), 5)), len(random.choices('ab', k=7))]", "ok", value=[list(range(10)), 5, 7]),
    _a("typing-optional-forward-long", "8-cpu", "import typing\ntyping.Optional['1+' * 2_000_000 + '1']", "limit", "forward reference"),
    _a("typing-typevar-bound-long", "8-cpu", "import typing\ntyping.TypeVar('T', bound='1+' * 2_000_000 + '1')", "limit", "forward reference"),
    # the TypedDict stand-in keeps annotations as given (no forward reference is compiled)
    _a("typing-typeddict-forward-long", "8-cpu", "import typing\nT = typing.TypedDict('T', {'a': '1+' * 2_000_000 + '1'})\n1", "ok", value=1),
    _a("typing-list-forward-long", "8-cpu", "import typing\ntyping.List['1+' * 2_000_000 + '1']", "limit", "forward reference"),
    _a("typing-forward-short-ok", "8-cpu", "import typing\nx = typing.Optional['int']\ny = typing.TypedDict('T', {'a': 'int'})\n1", "ok", value=1),
    # -- lying subclasses: sizes and renderings measure through the base type --------------------
    _a("lying-list-repeat", "8-memory", _LYING_LIST + "x * 10**4", "limit", _TOO),
    _a("lying-list-repr-of-many", "8-render", _LYING_LIST + "repr([x] * 2000)", "limit", _TOO),
    _a("lying-list-str-join", "8-render", _LYING_LIST + "'-'.join([str([x])] * 2000)", "limit", _TOO),
    _a("lying-list-json", "8-render", _LYING_LIST + "import json\njson.dumps([x] * 2000)", "limit", _TOO),
    _a("lying-list-print", "8-render", _LYING_LIST + "print([x] * 2000)", "limit", "output"),
    _a("lying-list-value", "8-render", _LYING_LIST + "[x] * 2000", "limit", "more than the limit"),
    _a("lying-dict-repr-of-many", "8-render", _LYING_DICT + "repr([d] * 2000)", "limit", _TOO),
    _a("lying-dict-json", "8-render", _LYING_DICT + "import json\njson.dumps([d] * 2000)", "limit", _TOO),
    _a("lying-dict-value", "8-render", _LYING_DICT + "[d] * 2000", "limit", "more than the limit"),
    _a("lying-str-repeat", "8-memory", _LYING_STR + "s * 10**4", "limit", _TOO),
    _a("lying-str-join", "8-memory", _LYING_STR + "''.join([s] * 100)", "limit", "str.join"),
    _a("lying-str-repr-of-many", "8-render", _LYING_STR + "repr([s] * 100)", "limit", _TOO),
    _a("lying-str-expandtabs", "8-memory", "class S(str):\n    def __len__(self):\n        return 1\n    def count(self, x):\n        return 0\ns = S('\\t' * 1000)\ns.expandtabs(10**6)", "limit", "str.expandtabs"),
    _a("bytearray-repr-of-many", "8-render", "b = bytearray(10**6)\nrepr([b] * 100)", "limit", _TOO),
    # -- lying subclasses met by the other size guards (base-type lengths, issue 13 §2) -------------
    _a("lying-list-star-doubling", "8-memory", "class L(list):\n    def __len__(self):\n        return 0\nx = L([0] * 10**6)\nfor _ in range(5):\n    x = L([*x, *x])", "limit", "unpacked sequence"),
    _a("lying-list-extend", "8-memory", "class L(list):\n    def __len__(self):\n        return 0\nx = L([0] * 6_000_000)\nz = []\nz.extend(x)\nz.extend(x)\nlen(z)", "limit", "list.extend"),
    _a("lying-str-replace-new", "8-memory", "class T(str):\n    def __len__(self):\n        return 0\n('a' * 10**6).replace(T('a'), T('x' * 1000))", "limit", "str.replace"),
    _a("lying-str-replace-plain-old", "8-memory", "class T(str):\n    def __len__(self):\n        return 0\n('a' * 10**6).replace('a', T('x' * 1000))", "limit", "str.replace"),
    _a("lying-str-regex-pattern", "8-memory", "import re\nclass S(str):\n    def __len__(self):\n        return 1\nre.compile(S('a' * 200_000))", "limit", "regular expression of"),
    _a("lying-list-difflib-matcher", "8-cpu", "import difflib\nclass L(list):\n    def __len__(self):\n        return 0\ndifflib.SequenceMatcher(None, L(range(20000)), L(range(1, 20001))).ratio()", "limit", "multiply past"),
    _a("lying-str-difflib-ndiff", "8-cpu", "import difflib\nclass S(str):\n    def __len__(self):\n        return 1\nlist(difflib.ndiff([S('ab' * 2000)], [S('ba' * 2000)]))", "limit", "ndiff of lines"),
    # -- difflib formats every line and header into its output: str only ---------------------------
    _a("difflib-line-not-str", "8-render", "import difflib\nlist(difflib.unified_diff(['a', [1, 2]], ['b']))", "runtime", "must be str"),
    _a("difflib-context-line-not-str", "8-render", "import difflib\nlist(difflib.context_diff(['a'], ['b', {'k': 1}]))", "runtime", "must be str"),
    _a("difflib-header-not-str", "8-render", "import difflib\nlist(difflib.unified_diff(['a'], ['b'], fromfile=[1, 2]))", "runtime", "fromfile must be str"),
    _a("difflib-lineterm-not-str", "8-render", "import difflib\nlist(difflib.unified_diff(['a'], ['b'], 'x', 'y', '', '', 3, [0]))", "runtime", "lineterm must be str"),
    _a("difflib-str-lines-ok", "8-render", "import difflib\nclass S(str):\n    def __len__(self):\n        return 0\n[list(difflib.unified_diff([S('a\\n')], ['b\\n'], 'x', 'y')), list(difflib.context_diff(['a'], ['a'], lineterm=''))]", "ok", value=[["--- x\n", "+++ y\n", "@@ -1 +1 @@\n", "-a\n", "+b\n"], []]),
    _a("lying-subclass-value-ok", "8-render", _LYING_LIST.replace("* 10000", "* 2") + "class T(str):\n    def __len__(self):\n        return 0\n[x, T('t'), {'k': x}]", "ok", value=[["y" * 1000] * 2, "t", {"k": ["y" * 1000] * 2}]),
    # -- fourth attacker's F03: list subclasses double past the growth guards ----------------------
    _a("f03-list-subclass-iadd-doubling", "8-memory", _SUBCLASS_L + "for n in range(14):\n    x += x\nlen(x)", "limit", _TOO),
    _a("f03-list-subclass-add-doubling", "8-memory", _SUBCLASS_L + "for n in range(14):\n    x = L(x + x)\nlen(x)", "limit", _TOO),
    _a("f03-list-subclass-extend-lying-len", "8-memory", _LYING_LEN_L + "for n in range(14):\n    x.extend(x)\n'done'", "limit", "L.extend"),
    _a("f03-list-subclass-growth-ok", "8-memory", _LYING_LEN_L + "x += x\nx.extend(L([1]))\ny = L(x + x)\n[len(x), len([*x]), len([*y]), type(y).__name__]", "ok", value=[0, 2001, 4002, "L"]),
    # str.translate looks each character up once: a dict subclass's __getitem__ or a list of
    # long strings allocated without bound; the table is read once into an exact dict
    _a("onecall-translate-dict-subclass-getitem", "8-memory", "class D(dict):\n    def __getitem__(self, k):\n        return BIG\nBIG = 'x' * 1_000_000\nlen(('a' * 100_000).translate(D({97: 'y'})))", "ok", value=100_000),
    _a("onecall-translate-list-table", "8-memory", "BIG = 'x' * 1_000_000\nlen(('a' * 100_000).translate([BIG] * 128))", "limit", "str.translate"),
    _a("onecall-translate-object-table", "8-memory", "class T:\n    def __getitem__(self, k):\n        return 'z' * 1_000_000\n('a' * 100_000).translate(T())", "runtime", "str.maketrans"),
    # -- findings14 A13: textwrap.indent counts every line boundary str.splitlines knows ---------
    *[_a(f"f14-textwrap-indent-{name}", "8-memory", f"import textwrap\nlen(textwrap.indent({text!r} * 3000, ' ' * 100_000))", "limit", "textwrap.indent result too large")
      for name, text in (("cr", "a\r"), ("vt", "a\x0b"), ("ff", "a\x0c"), ("fs", "a\x1c"), ("nel", "a\x85"), ("ls", "a\u2028"), ("ps", "a\u2029"))],
    _a("f14-textwrap-indent-ok", "8-memory", "import textwrap\n[textwrap.indent('a\\r\\nb\\rc\\n\\nd', '> '), textwrap.indent('x\\u2028y', '  '), len(textwrap.indent('a\\n' * 1000, ' ' * 900))]", "ok", value=["> a\r\n> b\r> c\n\n> d", "  x\u2028  y", 902_000]),
    # -- findings14 A08: the parser's own overflow gets a reason the model can act on ---------------
    _a("f14-parse-too-complex-has-a-reason", "8-cpu", "x = 1\ny = " + "-" * 7000 + "x", "rejected", "too complex to parse: an expression is nested or chained too deeply"),
    _a("f14-parse-too-complex-not-chain", "8-cpu", "x = 1\n" + "not " * 7000 + "x", "rejected", "nested or chained too deeply"),
    # -- findings14 A17: a deep or self-sharing tuple dict key in the last value is bounded ---------
    _a("f14-last-value-deep-tuple-key", "8-render", "t = ()\nfor i in range(5000):\n    t = (t,)\n{t: 1}", "ok", value={"<tuple key too large>": 1}),
    _a("f14-last-value-wide-tuple-key", "8-render", "{tuple(range(5000)): 1}", "ok", value={"<tuple key too large>": 1}),
    _a("f14-last-value-tuple-keys-ok", "8-render", "t = ()\nfor i in range(3):\n    t = (t, 1)\n{t: 1, (1, ('a', None)): 2, (1.5, True): 3}", "ok", value={"((((), 1), 1), 1)": 1, "(1, ('a', None))": 2, "(1.5, True)": 3}),
    _a("f14-parse-deep-but-fine-ok", "8-cpu", "x = 1\ny = " + "-" * 50 + "x\ny", "ok", value=1),
]  # fmt: skip
"""Attacks that run in both isolation modes (registered in test_attack_suite.py)."""

_MEMORY = "memory limit"
_F9_PAIRS = "zip(range(3 * 10**7), range(3 * 10**7))"
_CJK = "s = '\\u4e00' * 3_000_000\n"
"""6 MB of text whose 3 M characters would be 240 MB of new one-character objects."""
ONE_CALL_MEMORY_ATTACKS = [
    # -- list/tuple used as values: one C call copied an iterator past the budget (issue 13) ------
    _a("onecall-list-as-value-range", "8-memory", "f = list\nx = f(range(10**8))\nlen(x)", "limit", _MEMORY),
    _a("onecall-list-in-a-list-range", "8-memory", "fs = [list]\nlen(fs[0](range(10**8)))", "limit", _MEMORY),
    _a("onecall-tuple-as-value-range", "8-memory", "f = tuple\nlen(f(range(10**8)))", "limit", _MEMORY),
    _a("onecall-map-list-range", "8-memory", "len(next(map(list, [range(10**8)])))", "limit", _MEMORY),
    _a("onecall-list-subclass-range", "8-memory", "class L(list):\n    pass\nlen(L(range(10**8)))", "limit", _MEMORY),
    # -- findings14 C03/C05: copies of large tables and bytes charged before C makes them -------------
    _a("f14-copies-set-or", "8-memory", "s = set(range(1_000_000))\nout = [s | s for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-set-operator-or", "8-memory", "import operator\ns = set(range(1_000_000))\nout = [operator.or_(s, s) for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-set-union", "8-memory", "s = set(range(1_000_000))\nout = [s.union(s) for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-set-intersection", "8-memory", "s = set(range(1_000_000))\nout = [s.intersection(s) for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-dict-or", "8-memory", "d = dict.fromkeys(range(1_000_000), 0)\nout = [d | d for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-dict-star", "8-memory", "d = dict.fromkeys(range(1_000_000), 0)\nout = [{**d} for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-dict-fromkeys", "8-memory", "s = set(range(1_000_000))\nout = [dict.fromkeys(s) for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-keys-or", "8-memory", "d = dict.fromkeys(range(1_000_000), 0)\nout = [d.keys() | d.keys() for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-counter-add", "8-memory", "import collections\nc = collections.Counter(range(1_000_000))\nout = [c + c for _ in range(30)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-bytes-upper", "8-memory", "b = b'ab' * 4_000_000\nout = [b.upper() for _ in range(100)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-bytes-of-bytearray", "8-memory", "b = b'ab' * 4_000_000\na = bytearray(b)\nout = [bytes(a) for _ in range(100)]\nlen(out)", "limit", _MEMORY),
    _a("f14-copies-str-translate", "8-memory", "s = 'ab' * 4_000_000\nout = [s.translate({}) for _ in range(100)]\nlen(out)", "limit", _MEMORY),
    _a("f14-bytes-hex-too-long", "8-memory", "b = b'ab' * 2_000_000\nlen(b.hex(':'))", "limit", "bytes.hex would be too large"),
    _a("f14-copies-ok", "8-memory", "import collections, operator\ns = {1, 2}\nd = {'a': 1}\n[sorted(s | {3}), sorted(operator.or_(s, {4})), {**d, 'b': 2}, sorted(d.keys() | {'c'}), dict(collections.Counter('ab') + collections.Counter('a')), b'ab'.upper(), b'ab'.hex(':'), bytes(bytearray(b'x')), 'ab'.translate({97: 'x'}), sorted(dict.fromkeys(s))]", "ok", value=[[1, 2, 3], [1, 2, 4], {"a": 1, "b": 2}, ["a", "c"], {"a": 2, "b": 1}, "AB", "61:62", "x", "xb", [1, 2]]),
    _a("onecall-defaultdict-list-ok", "8-memory", "from collections import defaultdict\nd = defaultdict(list)\nfor i in range(5):\n    d[i % 2].append(i)\n[d[0], d[1], type(d[0]) is list]", "ok", value=[[0, 2, 4], [1, 3], True]),
    # -- findings7 F02/F08/F09/F10: host copies of a script iterator read growth-checked ----------
    _a("f7-deque-one-call", "8-memory", "import collections\nlen(collections.deque(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-deque-one-call-keyword", "8-memory", "import collections\nlen(collections.deque(maxlen=None, iterable=iter(range(6 * 10**7))))", "limit", _MEMORY),
    _a("f7-min-max-materialize", "8-memory", "max(iter(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-min-max-materialize-default", "8-memory", "min(iter(range(6 * 10**7)), default=0)", "limit", _MEMORY),
    _a("f7-heapq-nsmallest-materialize", "8-memory", "import heapq\nheapq.nsmallest(3, range(6 * 10**7))", "limit", _MEMORY),
    _a("f7-statistics-materialize", "8-memory", "import statistics\nstatistics.median(iter(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-itertools-product-materialize", "8-memory", "import itertools\nitertools.product(iter(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-itertools-combinations-materialize", "8-memory", "import itertools\nitertools.combinations(iter(range(6 * 10**7)), 2)", "limit", _MEMORY),
    _a("f7-random-sample-materialize", "8-memory", "import random\nrandom.sample(iter(range(6 * 10**7)), 2)", "limit", _MEMORY),
    _a("f7-namedtuple-fields-materialize", "8-memory", "from typing import NamedTuple\nNamedTuple('P', iter(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-dict-view-set-operator-or", "8-memory", "len({}.keys() | iter(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-dict-view-set-operator-and", "8-memory", "len({}.keys() & map(abs, range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-dict-view-set-operator-sub", "8-memory", "len({}.items() - iter(range(6 * 10**7)))", "limit", _MEMORY),
    _a("f7-stand-in-copies-ok", "8-memory", "import collections, heapq, itertools, statistics\nd = collections.deque(iter(range(10**6)), maxlen=3)\n[list(d), type(d) is collections.deque, max(iter(range(10**6))), heapq.nsmallest(2, range(10**6)), statistics.median(iter(range(5))), len(list(itertools.product(iter(range(3)), repeat=2))), sorted({1: 0}.keys() | iter(range(3)))]", "ok", value=[[999997, 999998, 999999], True, 999999, [0, 1], 2, 9, [0, 1, 2]]),
    # -- findings9 F06/F07: a list's or deque's `+=` reads any iterable in one C call ------------
    _a("f9-list-iadd-iterator", "8-memory", "l = []\nl += iter(range(6 * 10**7))\nlen(l)", "limit", _MEMORY),
    _a("f9-list-iadd-range", "8-memory", "l = [0]\nl += range(6 * 10**7)\nlen(l)", "limit", "would be too large"),
    _a("f9-deque-iadd-generator", "8-memory", "import collections\nd = collections.deque()\nd += (i for i in range(6 * 10**7))\nlen(d)", "limit", _MEMORY),
    _a("f9-iadd-iterables-ok", "8-memory", "import collections\nl = [1]\nl += iter([2, 3])\nl += range(4, 6)\nd = collections.deque([1])\nd += (x for x in [2])\nt = (1,)\nt += (2,)\n[l, list(d), t]", "ok", value=[[1, 2, 3, 4, 5], [1, 2], [1, 2]]),
    # -- findings9 F08: unbound methods through the class take the bound form's guard ------------
    _a("f9-unbound-dict-update", "8-memory", "x = {}\ndict.update(x, " + _F9_PAIRS + ")\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-dict-update-as-value", "8-memory", "f = dict.update\nx = {}\nf(x, " + _F9_PAIRS + ")\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-defaultdict-update", "8-memory", "import collections\nx = collections.defaultdict(int)\ncollections.defaultdict.update(x, " + _F9_PAIRS + ")\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-ordereddict-update", "8-memory", "import collections\nx = collections.OrderedDict()\ncollections.OrderedDict.update(x, " + _F9_PAIRS + ")\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-counter-update", "8-memory", "import collections\nx = collections.Counter()\ncollections.Counter.update(x, range(3 * 10**7))\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-dict-subclass-update", "8-memory", "class D(dict):\n    pass\nx = D()\nD.update(x, " + _F9_PAIRS + ")\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-set-update", "8-memory", "x = set()\nset.update(x, range(3 * 10**7))\nlen(x)", "limit", _MEMORY),
    _a("f9-unbound-deque-extend", "8-memory", "import collections\nx = collections.deque()\ncollections.deque.extend(x, range(6 * 10**7))\nlen(x)", "limit", _TOO),
    _a("f9-unbound-methods-ok", "8-memory", "import collections\nd = {}\ndict.update(d, [('k', 2)], a=3)\nod = collections.OrderedDict()\ncollections.OrderedDict.update(od, zip('ab', 'cd'))\ndd = collections.defaultdict(int)\ncollections.defaultdict.update(dd, {'k': 1})\nc = collections.Counter()\ncollections.Counter.update(c, 'aab')\ns = set()\nset.update(s, [1], [2])\nl = []\nlist.extend(l, range(3))\nq = collections.deque()\ncollections.deque.extendleft(q, [1, 2])\n[d, list(od.items()), dict(dd), dict(c), sorted(s), l, list(q), dict.setdefault(d, 'z', 8), sorted(dict.fromkeys('ba')), sorted(['b', 'A'], key=str.lower)]", "ok", value=[{"k": 2, "a": 3, "z": 8}, [["a", "c"], ["b", "d"]], {"k": 1}, {"a": 2, "b": 1}, [1, 2], [0, 1, 2], [2, 1], 8, ["a", "b"], ["A", "b"]]),
    # -- findings10 F05: a set/dict table of a known-length input is charged before the C call ---
    _a("f10-fromkeys-range", "8-memory", "len(dict.fromkeys(range(3 * 10**7)))", "limit", _MEMORY),
    _a("f10-set-range", "8-memory", "len(set(range(3 * 10**7)))", "limit", _MEMORY),
    _a("f10-frozenset-range-iterator", "8-memory", "len(frozenset(iter(range(3 * 10**7))))", "limit", _MEMORY),
    _a("f10-counter-range", "8-memory", "import collections\nlen(collections.Counter(range(3 * 10**7)))", "limit", _MEMORY),
    _a("f10-dict-zip-ranges", "8-memory", "len(dict(zip(range(3 * 10**7), range(3 * 10**7))))", "limit", _MEMORY),
    _a("f10-known-length-tables-ok", "8-memory", "d = {i: 0 for i in range(10)}\n[len(set(range(10**6))), len(dict.fromkeys(range(5000))), len(dict(zip(range(10**5), range(10**5)))), len(frozenset(enumerate('ab' * 5000))), len(set(d.keys())), len(set(iter([1, 2] * 5000)))]", "ok", value=[10**6, 5000, 10**5, 10_000, 10, 2]),
    # -- findings14 A10: a str's characters above U+00FF are new objects when it is copied by item ---
    *[_a(f"f14-str-chars-copied-{name}", "8-memory", _CJK + code, "limit", _MEMORY)
      for name, code in (("list", "x = list(s)\nlen(x)"), ("tuple", "x = tuple(s)\nlen(x)"),
                         ("sorted", "x = sorted(s)\nlen(x)"), ("star", "x = [*s]\nlen(x)"),
                         ("deque", "import collections\nx = collections.deque(s)\nlen(x)"),
                         ("extend", "x = []\nx.extend(s)\nlen(x)"), ("iadd", "x = []\nx += s\nlen(x)"),
                         ("slice-assign", "x = [1]\nx[1:] = s\nlen(x)"),
                         ("nsmallest", "import heapq\nx = heapq.nsmallest(3_000_000, s)\nlen(x)"),
                         ("sample", "import random\nx = random.sample(s, 10)\nlen(x)"),
                         ("product", "import itertools\nx = itertools.product(s)\n1"),
                         ("mixed-text", "s = ('a\u2019' * 1_500_000) + 'x'\nx = list(s)\nlen(x)"))],
    _a("f14-sample-k-before-copy", "8-memory", _CJK + "import random\nrandom.sample(s, k=len(s))", "limit", "random.sample of 3000000"),
    _a("f14-str-chars-copied-ok", "8-memory", "import random, heapq\nlatin = 'é' * 3_000_000\ncjk = '\u4e00\u4e8c' * 50_000\n[len(list(latin)), len([*latin]), len(tuple(cjk)), sorted(cjk)[-1], len(random.sample(cjk, 5)), heapq.nsmallest(2, cjk)]", "ok", value=[3_000_000, 3_000_000, 100_000, "\u4e8c", 5, ["\u4e00", "\u4e00"]]),
    # -- findings14 A14: str.split()/splitlines() count every Unicode separator, pieces priced wide ---
    _a("f14-split-unicode-spaces", "8-memory", "s = '\\u4e00\\u3000' * 2_000_000\nx = s.split()\nlen(x)", "limit", _MEMORY),
    _a("f14-rsplit-unicode-spaces", "8-memory", "s = '\\u4e00\\u2003' * 2_000_000\nx = s.rsplit()\nlen(x)", "limit", _MEMORY),
    _a("f14-splitlines-unicode-separators", "8-memory", "s = '\\u4e00\\u2028' * 2_000_000\nx = s.splitlines()\nlen(x)", "limit", _MEMORY),
    _a("f14-split-unicode-ok", "8-memory", "s = '\\u4e00\\u3000' * 100_000\nt = '\\u4e00\\u4e8c' * 2_000_000\n[len(s.split()), '\\u4e00\\u3000\\xa0\\u4e8c'.split(), 'a\\u2028b\\u2029c'.splitlines(), len(t.split()), len(s.splitlines())]", "ok", value=[100_000, ["\u4e00", "\u4e8c"], ["a", "b", "c"], 1, 1]),
    # -- findings14 A09: string.capwords is charged as two splits of its text and the join --------
    _a("f14-capwords-wide-words", "8-memory", "import string\nlen(string.capwords('\\u01c6 ' * 2_000_000))", "limit", _MEMORY),
    _a("f14-capwords-ascii-words", "8-memory", "import string\nlen(string.capwords('a ' * 3_000_000))", "limit", _MEMORY),
    _a("f14-capwords-str-subclass", "8-memory", "import string\nclass S(str):\n    def split(self, sep=None):\n        return ['x']\nlen(string.capwords(S('a ' * 3_000_000)))", "limit", _MEMORY),
    _a("f14-capwords-ok", "8-memory", "import string\nclass S(str):\n    pass\n[string.capwords('hello   world\\tfoo'), string.capwords('a-b c-d', '-'), len(string.capwords('ab ' * 100_000)), string.capwords(S('x y')), string.capwords('\\u01c6a \\u4e00b')]", "ok", value=["Hello World Foo", "A-B c-D", 299_999, "X Y", "\u01c5a \u4e00b"]),
    _a("onecall-list-as-value-ok", "8-memory", "f = list\ng = tuple\n[f(range(3)), g(map(abs, [-1, 2])), len(f(range(10**6))), len(next(map(list, [range(10**5)])))]", "ok", value=[[0, 1, 2], [1, 2], 10**6, 10**5]),
]  # fmt: skip
"""One-call copies that only the memory budget ends (run under ``attacks_extra.MEMORY_LIMITS``)."""
IN_PROCESS_ONLY = frozenset(
    {
        "f7-statistics-materialize",
        "f9-unbound-counter-update",
    }
)
"""Memory attacks on the in-process meter only: in a worker ``RLIMIT_AS`` ends them, but
``statistics`` re-raises the MemoryError with a message, so the worker's result is a ``runtime`` error
(CPython's ``deque()`` reporting it as a ``SystemError`` is mapped back: findings14 A12)
(``Counter.update``'s Python loop may meet the MemoryError outside the budget's reach too)."""

_F01 = "s = 'x' * 9_000_000\nclass A:\n    def __repr__(self):\n        return s\n"
_F01_STR = "s = 'x' * 9_000_000\nclass B:\n    def __str__(self):\n        return s\n"
_RENDERING = "one rendering"
_F9_CM = "import collections\ncm = collections.ChainMap()\n"
_F10_PCT = "% formatting of this mapping"
RENDER_SCOPE_ATTACKS = [
    # -- findings9 F04: a decorated rendering dunder would return unmeasured text -----------------
    _a("f9-staticmethod-repr-refused", "8-memory", "s = 'x' * 9_000_000\nclass A:\n    @staticmethod\n    def __repr__():\n        return s\nlen(str([A()] * 50))", "runtime", "plain method written with def"),
    _a("f9-classmethod-str-refused", "8-memory", "class A:\n    @classmethod\n    def __str__(cls):\n        return 'a'\nstr(A())", "runtime", "plain method written with def"),
    # -- findings7 F01: C joins every script __repr__/__str__ of one rendering --------------------
    _a("f7-repr-of-script-reprs-str", "8-memory", _F01 + "len(str([A()] * 100))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-percent", "8-memory", _F01 + "len('%s' % ([A()] * 60,))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-percent-r", "8-memory", _F01 + "len('%r' % ([A()] * 60,))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-tuple", "8-memory", _F01 + "len(repr(([A()] * 30, [A()] * 30)))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-format", "8-memory", _F01 + "len(format([A()] * 60))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-ascii", "8-memory", _F01 + "len(ascii([A()] * 60))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-deque", "8-memory", _F01 + "import collections\nlen(str(collections.deque([A()] * 60)))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-pformat", "8-memory", _F01 + "import pprint\nlen(pprint.pformat([A()] * 60))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-saferepr", "8-memory", _F01 + "import pprint\nlen(pprint.saferepr([A()] * 60))", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-print", "8-memory", _F01 + "print([A()] * 60)", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-nested", "8-memory", "s = 'x' * 9_000_000\nclass A:\n    def __repr__(self):\n        repr(1)\n        return s\nlen(repr([A()] * 60))", "limit", _RENDERING),
    _a("f7-str-of-script-strs-print", "8-memory", _F01_STR + "print(*[B()] * 60)", "limit", _RENDERING),
    _a("f7-repr-of-script-reprs-each-ok", "8-memory", _F01 + "n = 0\nfor i in range(5):\n    n += len(repr(A())) + len(str([A()]))\nn", "ok", value=5 * (9_000_000 + 9_000_002)),
    # -- findings9 F03: a host stand-in's __repr__ (ChainMap's check_render) mid-rendering joins it --
    _a("f9-render-scope-chainmap-repr", "8-memory", _F01 + _F9_CM + "len(repr([A(), cm] * 50))", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-str", "8-memory", _F01 + _F9_CM + "len(str([A(), cm] * 50))", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-format", "8-memory", _F01 + _F9_CM + "len(format([A(), cm] * 50))", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-fstring", "8-memory", _F01 + _F9_CM + "x = [A(), cm] * 50\nlen(f'{x}')", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-percent", "8-memory", _F01 + _F9_CM + "len('%s' % ([A(), cm] * 50,))", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-ascii", "8-memory", _F01 + _F9_CM + "len(ascii([A(), cm] * 50))", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-print", "8-memory", _F01 + _F9_CM + "print([A(), cm] * 50)", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-pformat", "8-memory", _F01 + _F9_CM + "import pprint\nlen(pprint.pformat([A(), cm] * 50))", "limit", _RENDERING),
    _a("f9-render-scope-chainmap-maps", "8-memory", "import collections\ncm = collections.ChainMap({'a': 'x' * 3_000_000})\nlen(repr([cm] * 50))", "limit", _RENDERING),
    # -- findings10 F04: `%` with a mapping renders mapping[key] once per %(key) conversion -------
    _a("f10-percent-mapping-repeated-key", "8-memory", "len(('%(a)s' * 100000) % {'a': 'x' * 5000})", "limit", _F10_PCT),
    _a("f10-percent-mapping-bytes", "8-memory", "len((b'%(a)s' * 100000) % {b'a': b'x' * 5000})", "limit", _F10_PCT),
    _a("f10-percent-mapping-bytearray", "8-memory", "len(bytearray(b'%(a)s' * 100000) % {b'a': b'x' * 5000})", "limit", _F10_PCT),
    _a("f10-percent-mapping-imod", "8-memory", "t = '%(a)s' * 100000\nt %= {'a': 'x' * 5000}\nlen(t)", "limit", _F10_PCT),
    _a("f10-percent-mapping-operator-mod", "8-memory", "import operator\nlen(operator.mod('%(a)s' * 100000, {'a': 'x' * 5000}))", "limit", _F10_PCT),
    _a("f10-percent-mapping-script-getitem", "8-memory", "class M:\n    def __getitem__(self, k):\n        return 'y' * 5000\nlen(('%(a)s' * 100000) % M())", "limit", _F10_PCT),
    _a("f10-percent-mapping-lying-str-subclass", "8-memory", "class S(str):\n    def __contains__(self, x):\n        return False\nlen(S('%(a)s' * 100000) % {'a': 'x' * 5000})", "limit", _F10_PCT),
    _a("f10-percent-width-lying-str-subclass", "8-memory", "class S(str):\n    def __contains__(self, x):\n        return False\nlen(S('%099999999d') % 1)", "limit", "% format width above"),
    _a("f10-percent-mapping-script-strs", "8-memory", _F01_STR + "len(('%(b)s' * 60) % {'b': B()})", "limit", _RENDERING),
    _a("f10-percent-mapping-ok", "8-memory", "import collections\nclass M:\n    def __getitem__(self, k):\n        return k * 2\n['%(a)s-%(b)5d %%' % {'a': 'x', 'b': 3}, '%s %(a)s' % {'a': 1}, '%(a)s %(a)r' % collections.defaultdict(list), '%(ab)s|%(c)s' % M(), len(('%(a)s' * 1000) % {'a': 'x' * 5000}), (b'%(k)s' % {b'k': b'v'}).decode()]", "ok", value=["x-    3 %", "{'a': 1} 1", "[] []", "abab|cc", 5_000_000, "v"]),
    # -- findings12 F03/F04/F05/F08/F09: % templates read by C's grammar, every width counted ------
    _a("f12-printf-width-empty-precision", "8-memory", "len('%1000000000.s' % ('x',))", "limit", "% format width above"),
    _a("f12-printf-width-empty-precision-bytes", "8-memory", "len(b'%1000000000.s' % (b'x',))", "limit", "% format width above"),
    _a("f12-printf-star-empty-precision", "8-memory", "'%*.s' % (10**9, 'x')", "limit", "width above"),
    _a("f12-printf-mapping-empty-precision", "8-memory", "len(('%(a)s' + '%(a)9999.s' * 100000) % {'a': 'x'})", "limit", _TOO),
    _a("f12-printf-mapping-nested-paren-key", "8-memory", "len(('%s' + '%(a(b))9999s' * 100000) % {'a(b)': 'x'})", "limit", _TOO),
    _a("f12-printf-mapping-nested-paren-key-wide", "8-memory", "len('%(a(b))1000000000s' % {'a(b)': 'x'})", "limit", "% format width above"),
    _a("f12-printf-tuple-widths", "8-memory", "len(('%9999s' * 100000) % (('x',) * 100000))", "limit", _TOO),
    _a("f12-printf-tuple-widths-bytes", "8-memory", "len((b'%9999s' * 100000) % ((b'x',) * 100000))", "limit", _TOO),
    _a("f12-printf-tuple-numeric-precisions", "8-memory", "len(('%.9999d' * 100000) % ((1,) * 100000))", "limit", _TOO),
    _a("f12-printf-constant-template-widths", "8-memory", "len('" + "%9999s" * 1666 + "' % (" + "'x', " * 1666 + "))", "limit", _TOO),
    _a("f12-printf-mixed-keyless-script-mapping", "8-memory", "class M:\n    n = 0\n    def __getitem__(self, k):\n        M.n += 1\n        return 'x' if M.n == 1 else 'y' * 5_000_000\nlen(('%s' + '%(a)s' * 200) % M())", "runtime", "needs a plain dict"),
    _a("f12-printf-ok", "8-memory", "class D(dict):\n    pass\nt = '%9999s' * 100\n['%5.s|' % 'abc', '%(a(b))3s' % {'a(b)': 'x'}, '%s %(a)s' % {'a': 1}, '%-4.d|' % 7, len(t % (('x',) * 100)), '%(a)s %(a)r' % D(a=1)]", "ok", value=["     |", "  x", "{'a': 1} 1", "7   |", 999_900, "1 1"]),
    _a("f9-render-scope-chainmap-ok", "8-memory", _F01 + _F9_CM + "n = 0\nfor i in range(3):\n    n += len(repr([A(), cm])) + len(str([cm, 1]))\nn", "ok", value=3 * (9_000_000 + 16 + 17)),
]  # fmt: skip
"""findings7 F01: one rendering's script dunder results are bounded together (both modes)."""

_F12_BIG = "a = 3 ** 500000\nb = 7 ** 400000\n"
_F10_HEAVY = "a = int('f' * 2_000_000, 16)\nL = [a, a - 1] * 10_000\ns = 'a' * 5_000_000\nS = [s + 'b', s] * 1000\n"
"""Large scalars repeated: 8 M-bit ints equal but for the last digit, and 5 MB strings."""
_F9_HUGE = "x = int('f' * 1_000_000, 16)\ny = int('f' * 500_000, 16)\n"
"""A 4 M-bit and a 2 M-bit int from hex text: their division is about 8 s of C."""
QUADRATIC_INT_ATTACKS = [
    # -- findings7 F12: quadratic big-int C calls refused up front ---------------------------------
    _a("f7-math-gcd-quadratic", "8-cpu", _F12_BIG + "import math\nmath.gcd(a, b)", "limit", "take too long"),
    _a("f7-math-lcm-quadratic", "8-cpu", _F12_BIG + "import math\nmath.lcm(a, b)", "limit", "take too long"),
    _a("f7-fraction-gcd-quadratic", "8-cpu", _F12_BIG + "from fractions import Fraction\nFraction(a, b)", "limit", "take too long"),
    _a("f7-int-from-bytes-huge", "8-memory", "int.from_bytes(b'\\x01' * 5 * 10**6, 'big')", "limit", "int.from_bytes"),
    _a("f7-int-from-bytes-iterable-huge", "8-memory", "int.from_bytes([1] * 150_000, 'big')", "limit", "int.from_bytes"),
    # -- findings9 F02/F05 and the lead's follow-up: big divisions checked or refused ---------------
    _a("f9-hex-int-floordiv-huge", "8-cpu", _F9_HUGE + "x // y", "limit", "take too long"),
    _a("f9-hex-int-mod-huge", "8-cpu", _F9_HUGE + "x % y", "limit", "take too long"),
    _a("f9-hex-int-imod-huge", "8-cpu", _F9_HUGE + "x %= y", "limit", "take too long"),
    _a("f9-hex-int-ifloordiv-huge", "8-cpu", _F9_HUGE + "x //= y", "limit", "take too long"),
    _a("f9-hex-int-divmod-huge", "8-cpu", _F9_HUGE + "divmod(x, y)", "limit", "take too long"),
    _a("f9-hex-int-operator-huge", "8-cpu", _F9_HUGE + "import operator\noperator.floordiv(x, y)", "limit", "take too long"),
    _a("f9-hex-int-isqrt-huge", "8-cpu", _F9_HUGE + "import math\nmath.isqrt(x)", "limit", "take too long"),
    _a("f9-hex-int-round-huge", "8-cpu", _F9_HUGE + "round(x, -300_000)", "limit", "take too long"),
    _a("f9-round-power-huge", "8-memory", _F9_HUGE + "round(x, -1_200_000)", "limit", "too large"),
    _a("f9-round-tiny-power-of-ten", "8-cpu", "[round(5, -10**7), round(-7, -10**9), round(1234, -2)]", "ok", value=[0, 0, 1200]),
    # -- findings10 F02/F03/F06: C loops comparing large scalars, weighed before they run -------------
    *[_a(f"f10-heavy-scalars-{name}", "8-cpu", _F10_HEAVY + call, "limit", "would take too long")
      for name, call in (("sorted", "sorted(L)"), ("sort", "L.sort()"), ("max", "max(L)"), ("min", "min(L)"),
                         ("heapify", "import heapq\nheapq.heapify(L)"), ("median", "import statistics\nstatistics.median(L)"),
                         ("count", "L.count(a)"), ("in", "a in L"), ("sorted-strs", "sorted(S)"), ("max-strs", "max(S)"))],
    _a("f10-heavy-scalars-ok", "8-cpu", "a = (1 << 5000) + 1\nL = [a + i for i in range(50)]\n[sorted(L)[0] == a, max(L) == a + 49, sum(L) == 50 * a + 1225, min(['b' * 300, 'a' * 300])[0]]", "ok", value=[True, True, True, "a"]),
    # -- findings11: the compiled fast paths evaluate every operand; range bounds; lying ints ------
    _a("f11-inline-divide-evaluates-the-divisor", "8-cpu", "from fractions import Fraction\nn = 3\n[str(Fraction(60) // (n + 2)), True % (n + 1), str(Fraction(7) % (n + 1))]", "ok", value=["12", 1, "3"]),
    _a("f11-inline-divide-no-stale-divisor", "8-cpu", "from fractions import Fraction\ncalls = []\ndef d(ds):\n    calls.append(1)\n    return ds.pop(0)\nds = [2, 3, 5]\nout = [str(v // d(ds)) for v in [10, Fraction(60), Fraction(60)]]\n[out, len(calls)]", "ok", value=[["5", "20", "12"], 3]),
    _a("f13-printf-fast-path-tuple-of-long-strs", "8-memory", "x = 'y' * 9_000_000\n'%s%s%s' % (x, x, x)", "limit", "too large"),
    _a("f13-printf-fast-path-one-long-str-ok", "8-memory", "x = 'y' * 1_000_000\nlen('<%s>' % x)", "ok", value=1_000_002),
    _a("f12-printf-long-literal-tuple", "8-cpu", "x = [1]\ns = '" + "%s" * 1200 + "' % (" + "x, " * 1199 + "len(x))\n[len(s), s[-4:]]", "ok", value=[3598, "[1]1"]),
    _a("f11-printf-tuple-evaluates-every-element", "8-cpu", "items = [1, 2]\nn = 0\ndef bump():\n    global n\n    n += 1\n    return n\n['%s has %d items' % (items, len(items)), '%s %d %d' % ({}, bump(), bump()), n]", "ok", value=["[1, 2] has 2 items", "{} 1 2", 2]),
    *[_a(f"f11-range-big-bounds-{name}", "8-cpu", source, "limit", "bounds beyond")
      for name, source in (("floordiv-item", "a = int('f' * 1_000_000, 16)\nfor i in range(a >> 1, (a >> 1) + 1):\n    q = a // i"),
                           ("class-call", "R = type(range(0))\nR(2 ** 100, 2 ** 100 + 3)"),
                           ("dunder-class", "range(3).__class__(2 ** 100, 2 ** 100 + 2)"),
                           ("plain", "range(2 ** 64)"))],
    _a("f11-range-ok", "8-cpu", "[list(range(-2 ** 62, -2 ** 62 + 2)), list(type(range(3))(2, 5)), list(range(10))[::3], len(range(0, 2 ** 63 - 1, 2 ** 50))]", "ok", value=[[-(2**62), -(2**62) + 1], [2, 3, 4], [0, 3, 6, 9], 8192]),
    _a("f11-round-lying-ndigits", "8-cpu", "class N(int):\n    def __lt__(self, other):\n        return False\nround(5, N(-10_000_000))", "runtime", "a subclass of a number cannot redefine __lt__"),
    _a("f11-round-subclass-ndigits", "8-cpu", "class N(int):\n    pass\nround(5, N(-10_000_000))", "ok", value=0),
    # -- findings11 F12-F14: a number's comparisons and arithmetic are the builtin's --------------
    *[_a(f"f11-lying-number-{name}", "8-memory", source + "\nbig = N(300_000_000)\nbytes(big)", "runtime", "a subclass of a number cannot redefine")
      for name, source in (("lt", "class N(int):\n    def __lt__(self, o):\n        return True"),
                           ("gt", "class N(int):\n    def __gt__(self, o):\n        return False"),
                           ("abs", "class N(int):\n    def __abs__(self):\n        return 1"),
                           ("add", "class N(int):\n    def __add__(self, o):\n        return 0"),
                           ("float-le", "class N(float):\n    def __le__(self, o):\n        return True"),
                           ("mixin", "class M:\n    def __lt__(self, o):\n        return True\nclass N(M, int):\n    pass"))],
    _a("f11-lying-number-alias", "8-memory", "class N(int):\n    def ge(self, o):\n        return False\n    __ge__ = ge\nbytes(N(300_000_000))", "rejected", "allowed only as an alias"),
    # -- findings12 F01/F02/F06/F07: whatever the value, wherever it is written, before type() ------
    _a("f12-lying-number-kept-by-init-subclass", "8-memory", "saved = []\nclass Base:\n    def __init_subclass__(cls, **kw):\n        saved.append(cls)\ntry:\n    class N(Base, int):\n        def __gt__(self, o):\n            return False\nexcept TypeError:\n    pass\nlen(saved)", "ok", value=0),
    _a("f12-lying-number-lru-cache", "8-memory", "import functools\nclass N(int):\n    @functools.lru_cache\n    def __gt__(self, o):\n        return False\nbytes(N(300_000_000))", "runtime", "a subclass of a number cannot redefine __gt__"),
    _a("f12-lying-number-property", "8-memory", "class N(int):\n    @property\n    def __gt__(self):\n        return lambda o: False\nbytes(N(300_000_000))", "runtime", "a subclass of a number cannot redefine __gt__"),
    _a("f12-lying-number-bit-length", "8-cpu", "class N(int):\n    def bit_length(self):\n        return 1\nN(2 ** 2000 + 1) ** 1_000_000", "runtime", "a subclass of a number cannot redefine bit_length"),
    _a("f12-lying-number-mixin-cache", "8-memory", "import functools\nclass M:\n    @functools.cache\n    def __lt__(self, o):\n        return True\nclass N(M, int):\n    pass", "runtime", "a subclass of a number cannot redefine __lt__"),
    _a("f11-number-subclass-ok", "8-cpu", "from enum import IntEnum, IntFlag\nclass C(IntEnum):\n    A = 1\n    B = 2\nclass P(IntFlag):\n    R = 4\n    W = 2\nclass M(float):\n    def __repr__(self):\n        return 'M'\n    def half(self):\n        return M(self / 2)\n[C.A < C.B, int(P.R | P.W), repr(M(3.0).half()), M(2) + 1]", "ok", value=[True, 6, "M", 3.0]),
    # -- findings14 A04-A07: date formats bounded, a deque's + and += measured ------------------------
    _a("f14-strftime-wide-directives", "8-memory", "import datetime\nlen(datetime.datetime(2020, 1, 1).strftime('%c' * 5_000_000))", "limit", "a date format of 10000000 characters"),
    _a("f14-strftime-through-format", "8-memory", "import datetime\nlen(format(datetime.datetime(2020, 1, 1), '%c' * 5_000_000))", "limit", "a date format of"),
    _a("f14-strftime-through-fstring-spec", "8-memory", "import datetime\nd = datetime.date(2020, 1, 1)\nspec = '%A' * 5_000_000\nlen(f'{d:{spec}}')", "limit", "a date format of"),
    _a("f14-strftime-unbound", "8-memory", "import datetime\nlen(datetime.datetime.strftime(datetime.datetime(2020, 1, 1), '%c' * 5_000_000))", "limit", "a date format of"),
    _a("f14-strftime-long-zone-name", "8-memory", "import datetime\ntz = datetime.timezone(datetime.timedelta(0), 'x' * 1_000_000)\nlen(datetime.datetime(2020, 1, 1, tzinfo=tz).strftime('%Z' * 400))", "limit", _TOO),
    _a("f14-strptime-quadratic-format", "8-cpu", "import datetime\ndatetime.datetime.strptime('x', '%%' * 1_000_000)", "limit", "a date format of 2000000 characters"),
    _a("f14-dates-ok", "8-memory", "import datetime\nd = datetime.datetime(2020, 1, 2, 3, 4)\n[d.strftime('%Y-%m-%d %H:%M'), f'{d:%d/%m}', format(d.date(), '%A'), datetime.datetime.strptime('2020-01-02', '%Y-%m-%d').day, datetime.datetime.strftime(d, '%Y'), len(d.strftime('%c' * 500))]", "ok", value=["2020-01-02 03:04", "02/01", "Thursday", 2, "2020", 12_000]),
    _a("f14-deque-iadd-doubling", "8-memory", "import collections\nd = collections.deque([0] * 1_000_000)\nfor i in range(6):\n    d += d\nlen(d)", "limit", _TOO),
    _a("f14-deque-add-doubling", "8-memory", "import collections\nd = collections.deque([0] * 1_000_000)\nfor i in range(6):\n    d = d + d\nlen(d)", "limit", _TOO),
    _a("f14-deque-concat-ok", "8-memory", "import collections\nd = collections.deque([1, 2])\ne = d + d\nd += [3]\n[list(e), list(d)]", "ok", value=[[1, 2, 1, 2], [1, 2, 3]]),
    # -- findings14 A01-A03/A15: an allow-list of codecs, encodes sized; json's layout measured --------
    _a("f14-encode-punycode-quadratic", "8-cpu", "s = ''.join([chr(0x100 + i) for i in range(8000)])\nlen(s.encode('punycode'))", "runtime", "not available in the sandbox: 'punycode'"),
    _a("f14-encode-idna-quadratic", "8-cpu", "s = ''.join([chr(0x4e00 + i) for i in range(8000)])\nlen(s.encode('idna'))", "runtime", "not available in the sandbox: 'idna'"),
    _a("f14-bytes-of-str-punycode", "8-cpu", "s = ''.join([chr(0x100 + i) for i in range(8000)])\nlen(bytes(s, 'punycode'))", "runtime", "'punycode'"),
    _a("f14-bytearray-of-str-idna", "8-cpu", "len(bytearray('ab' * 4000, encoding='idna'))", "runtime", "'idna'"),
    _a("f14-decode-idna", "8-cpu", "(b'xn--' * 1000).decode('idna')", "runtime", "'idna'"),
    _a("f14-str-of-bytes-punycode", "8-cpu", "str(b'abc' * 1000, 'punycode')", "runtime", "'punycode'"),
    _a("f14-unbound-encode-punycode", "8-cpu", "list(map(str.encode, ['\u0100' * 8000], ['punycode']))", "runtime", "'punycode'"),
    _a("f14-encode-namereplace-growth", "8-memory", "s = chr(64505) * 10_000_000\nlen(s.encode('ascii', 'namereplace'))", "limit", "too large for the sandbox"),
    _a("f14-bytes-namereplace-growth", "8-memory", "s = chr(64505) * 10_000_000\nlen(bytes(s, 'ascii', 'namereplace'))", "limit", "too large for the sandbox"),
    _a("f14-encode-long-codec-name", "8-cpu", "'x'.encode('a' * 10_000_000)", "runtime", "unknown encoding"),
    _a("f14-encode-unknown-handler", "8-cpu", "'x'.encode('utf-8', 'b' * 1000)", "runtime", "unknown error handler"),
    _a("f14-codecs-ok", "8-memory", "s = 'h\\u00e9llo \\u2603 \\U0001f600'\n[len(s.encode()), s.encode('latin-1', 'replace').hex(), s.encode('ascii', 'xmlcharrefreplace').decode(), s.encode('UTF8').decode('utf_8') == s, bytes(s, 'utf-8') == s.encode(), bytearray('ab', 'ascii').hex(), str(b'abc', 'ascii'), str(b'\\xff', 'utf-8', 'replace'), b'\\xff'.decode('latin1'), '\\u65e5'.encode('shift_jis').decode('sjis'), str.encode('a', 'utf-8').hex(), len(('\\u00e9' * 100000).encode()), len(s.encode('utf-16'))]", "ok", value=[15, '68e96c6c6f203f203f', 'h&#233;llo &#9731; &#128512;', True, True, '6162', 'abc', '�', 'ÿ', '日', '61', 200000, 22]),
    _a("f14-cjk-decode-python-handler-slow", "8-cpu", "(b'\\xff' * 9_999_000).decode('euc_jp', 'surrogateescape')", "limit", "too slow for the sandbox"),
    _a("f14-cjk-encode-python-handler-slow", "8-cpu", "('\\udcff' * 9_990_000).encode('gb18030', 'surrogateescape')", "limit", "too slow for the sandbox"),
    _a("f14-utf7-decode-slow", "8-cpu", "str(b'\\xff' * 9_999_000, 'utf-7', 'replace')", "limit", "too slow for the sandbox"),
    _a("f14-cjk-codecs-ok", "8-cpu", "[len((b'\\xff' * 1000).decode('euc_jp', 'surrogateescape')), len(('\\u65e5' * 100_000).encode('shift_jis')), len((b'a' * 400_000).decode('utf-7'))]", "ok", value=[1000, 200_000, 400_000]),
    _a("f14-strftime-field-widths", "8-memory", "import datetime\nlen(datetime.date(2020, 1, 1).strftime('%99999999Y' * 90))", "limit", _TOO),
    _a("f14-json-indent-str-subclass", "8-memory", "import json\nclass S(str):\n    pass\nlen(json.dumps([1] * 600, indent=S(' ' * 1_000_000)))", "limit", "indent string longer than 64"),
    _a("f14-json-separator-str-subclass", "8-memory", "import json\nclass S(str):\n    pass\nlen(json.dumps([1] * 600, separators=(S(' ' * 10**6), ':')))", "limit", "separator longer than 64"),
    _a("f14-json-layout-ok", "8-memory", "import json\nclass S(str):\n    def __len__(self):\n        return 0\n[json.dumps({'a': [1]}, indent=2), json.dumps([1], indent=S('\t')), json.dumps({'a': 1}, separators=(',', ':')), json.dumps([1, 2], indent=True)]", "ok", value=['{\n  "a": [\n    1\n  ]\n}', "[\n\t1\n]", '{"a":1}', "[\n 1,\n 2\n]"]),
    # -- findings14 D06: a nested class tuple is 2**40 class checks in one C call ---------------------
    _a("f14-isinstance-nested-class-tuple", "8-cpu", "t = int\nfor i in range(40):\n    t = (t, t)\nisinstance(1, t)", "limit", "a class tuple of more than 1000"),
    _a("f14-issubclass-nested-class-tuple", "8-cpu", "t = int\nfor i in range(40):\n    t = (t, t)\nissubclass(int, t)", "limit", "a class tuple of more than 1000"),
    _a("f14-isinstance-tuple-subclass-nested", "8-cpu", "class T(tuple):\n    def __iter__(self):\n        return iter(())\nt = int\nfor i in range(40):\n    t = T((t, t))\nisinstance(1, t)", "limit", "a class tuple of more than 1000"),
    _a("f14-suppress-nested-tuple-message", "8-cpu", "import contextlib\nt = KeyError\nfor i in range(40):\n    t = (t, t)\nwith contextlib.suppress(t):\n    pass", "runtime", "not tuple"),
    _a("f14-isinstance-ok", "8-cpu", "[isinstance(1, (int, float)), isinstance('a', str), issubclass(bool, (str, (int,))), isinstance(1, type), isinstance(int, type), isinstance(2, ((((int,),),),))]", "ok", value=[True, True, True, False, True, True]),
    _a("f7-quadratic-int-ok", "8-cpu", "import math\nfrom fractions import Fraction\n[int.from_bytes(b'\\x01\\x00', 'big'), int.from_bytes([1, 0], 'little'), math.gcd(12, 18, 3 ** 1000), math.lcm(4, 6), str(Fraction(6, 4))]", "ok", value=[256, 1, 3, 12, "3/2"]),
]  # fmt: skip
"""findings7 F12: gcd-reducing calls and ``int.from_bytes`` bounded before the C call (both modes)."""

_F06 = "s = 'a' * 10**7\n"
_TIMED_OUT = None  # in-process "timed out"; a worker is killed at the deadline ("time limit")
HOST_LOOP_DEADLINE_ATTACKS = [
    # -- findings7 F03/F04/F06/F07: host loops observe the deadline --------------------------------
    _a("f7-c-loop-of-slow-calls", "8-cpu", _F06 + "sum(map(s.find, map(str, range(5000))))", "limit", _TIMED_OUT),
    _a("f7-c-loop-of-slow-calls-filter", "8-cpu", _F06 + "list(filter(s.count, ['b'] * 5000))", "limit", _TIMED_OUT),
    _a("f7-c-loop-of-slow-calls-sorted-key", "8-cpu", _F06 + "sorted(['b'] * 5000, key=s.count)", "limit", _TIMED_OUT),
    _a("f7-c-loop-of-slow-calls-max-key", "8-cpu", _F06 + "max(['b'] * 5000, key=s.count)", "limit", _TIMED_OUT),
    _a("f7-c-loop-of-slow-calls-deque", "8-cpu", _F06 + "import collections\ncollections.deque(map(s.count, ['b'] * 5000), maxlen=0)", "limit", _TIMED_OUT),
    _a("f7-c-loop-of-slow-calls-starmap", "8-cpu", _F06 + "import itertools\nlist(itertools.starmap(s.count, [('b',)] * 5000))", "limit", _TIMED_OUT),
    _a("f7-heapq-python-loop", "8-cpu", "import heapq\nheapq.nlargest(3, [0] * 10**5, key=abs)\nheapq.nlargest(3, [0] * 10**5)\nx = [(0, 'a' * 10**6)] * 10**5\nfor i in range(100):\n    heapq.nlargest(3, x)", "limit", _TIMED_OUT),
    _a("f10-sum-of-big-ints", "8-cpu", "a = int('f' * 2_000_000, 16)\nsum([a] * 20_000)", "limit", _TIMED_OUT),
    _a("f10-sum-of-big-ints-view", "8-cpu", "a = int('f' * 2_000_000, 16)\nd = dict.fromkeys(range(20_000), a)\nsum(d.values())", "limit", _TIMED_OUT),
    _a("f11-sum-piece-grown-by-zeros", "8-cpu", "a = int('f' * 2_000_000, 16)\nxs = [0] * 21760 + [a] * 65536\nsum(xs)", "limit", _TIMED_OUT),
    _a("f11-fraction-floordiv-loop", "8-cpu", "from fractions import Fraction\nfa = Fraction(int('f' * 100_000, 16))\nfb = Fraction(int('e' * 50_000, 16))\nfor k in range(200):\n    q = fa // fb", "limit", _TIMED_OUT),
    _a("f9-big-division-loop", "8-cpu", "x = (1 << 200_000) - 1\ny = (1 << 100_000) + 3\nfor i in range(5000):\n    q = x // y", "limit", _TIMED_OUT),
    _a("f9-big-isqrt-loop", "8-cpu", "import math\nx = (1 << 200_000) - 1\nfor i in range(5000):\n    q = math.isqrt(x)", "limit", _TIMED_OUT),
    # -- findings10 F07: a regex call of ten million (empty) matches ends at the deadline --------
    _a("f10-re-findall-empty-matches", "8-cpu", "import re\nlen(re.findall('', 'a' * 10_000_000))", "limit", _TIMED_OUT),
    _a("f10-re-sub-empty-matches", "8-cpu", "import re\nlen(re.sub('', '', 'a' * 10_000_000))", "limit", _TIMED_OUT),
    _a("f10-re-split-empty-matches", "8-cpu", "import re\nlen(re.split('', 'a' * 10_000_000))", "limit", _TIMED_OUT),
    # -- findings14 A16: slow bounded calls on large inputs check the budget first -------------------
    _a("f14-loop-of-large-str-methods", "8-cpu", "s = '\\u4e00' * 10_000_000\nfor i in range(200):\n    t = s.upper()", "limit", _TIMED_OUT),
    _a("f14-loop-of-stored-large-method", "8-cpu", "s = '\\u4e00' * 10_000_000\nu = s.upper\nfor i in range(200):\n    t = u()", "limit", _TIMED_OUT),
    _a("f14-loop-of-html-unescape", "8-cpu", "import html\ns = '&amp;' * 2_000_000\nfor i in range(20):\n    html.unescape(s)", "limit", _TIMED_OUT),
    _a("f14-loop-of-re-compile", "8-cpu", "import re\nfor i in range(20):\n    re.compile('X%d' % i + '[ab]' * 24_990)", "limit", _TIMED_OUT),
    _a("f14-loop-of-large-calls-ok", "8-cpu", "import html, json\ns = 'ab' * 40_000\nn = 0\nfor i in range(50):\n    n += len(s.upper()) + len(html.unescape('&lt;')) + len(json.dumps([i]))\nn", "ok", value=50 * 80_001 + sum(len(str([i])) for i in range(50))),
    _a("f7-pprint-python-loop", "8-cpu", "import pprint\nx = [[1] * 1000] * 2000\nfor i in range(100):\n    pprint.pformat(x)", "limit", _TIMED_OUT),
]  # fmt: skip
"""findings7 F03/F04/F06: a host loop of few steps and slow items ends at the short deadline
(the wall-time bound is proven in ``guards/test_host_loops.py``; findings14 A16's in
``guards/test_large_calls.py``)."""
