"""More attack scripts (data only; run in both isolation modes by test_attack_suite.py).

Same :class:`Attack` records as ``attacks.py`` (restrictedpython-notes §6-8 categories),
run under the same :data:`ATTACK_LIMITS` and :func:`attack_tools`.

- :data:`EXTRA_ATTACKS` run in both modes: every escape is rejected and every
  resource attack is refused or stopped before it can hurt the host process.
- :data:`DEADLINE_ATTACKS` (catastrophic regular expressions, stopped at the deadline
  by the ``re`` stand-in's timeouts) and :data:`MEMORY_ATTACKS` (loops of large
  copies, charged to the memory budget before each copy) run in both modes too,
  under short limits (:data:`DEADLINE_LIMITS`, :data:`MEMORY_LIMITS`): each runs
  until a limit stops it.
- :data:`PROCESS_ONLY_ATTACKS` are real interpreter crashes (deep iterator chains)
  and straight-line C work that runs on past the deadline between two budget
  checks. No in-process guard refuses them (restrictedpython-notes §7.1 — an
  in-process sandbox cannot contain them), so they run only in process isolation,
  where the worker dies (or is killed at the deadline) and the host reports it.
  They must never run in the test process. (Comparing or hashing shared-reference
  DAGs was here until dagguard bounded it: the ``dag-*`` entries run in both modes.)
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

from sandbox_support import load

__all__ = [
    "DEADLINE_ATTACKS",
    "DEADLINE_LIMITS",
    "EXTRA_ATTACKS",
    "MEMORY_ATTACKS",
    "MEMORY_LIMITS",
    "PROCESS_ONLY_ATTACKS",
    "base",
]


def base() -> ModuleType:
    """``attacks.py`` (the module ``test_guards.py`` uses)."""
    return load("attacks.py")


_attacks = base()
Attack = _attacks.Attack
_UNSET: Any = _attacks._UNSET

DEADLINE_LIMITS = replace(_attacks.ATTACK_LIMITS, timeout=0.3)
"""The limits :data:`DEADLINE_ATTACKS` run under (both modes): a short deadline."""
MEMORY_LIMITS = replace(
    _attacks.ATTACK_LIMITS, timeout=20.0, max_steps=None, memory_bytes=128 << 20
)
"""The limits :data:`MEMORY_ATTACKS` run under (both modes): a small memory budget."""


def _a(
    id: str,
    category: str,
    source: str,
    expect: str,
    message: str | None = None,
    value: Any = _UNSET,
) -> Any:
    return Attack("x-" + id, category, source, expect, message, value)


_FORBIDDEN_MODULES = (
    "importlib", "threading", "pathlib", "gc", "socket",
    "signal", "marshal", "types", "copyreg", "posix", "code", "weakref",
    "resource", "multiprocessing", "tempfile", "codecs", "sysconfig", "site",
)  # fmt: skip

_UNAVAILABLE_BUILTINS = (
    "dir", "locals",
    "memoryview", "input", "help", "exit", "quit", "copyright",
)  # fmt: skip

EXTRA_ATTACKS: list[Any] = [
    # -- §6: attribute and dunder walks ---------------------------------------------------
    _a("type-three-arguments", "6-policy", "type('X', (), {})", "runtime", "one argument"),
    _a("subclasses-walk", "6-policy", "().__class__.__bases__[0].__subclasses__()", "rejected", "__bases__"),
    _a("getattr-concatenated-dunder", "6-policy", "def f():\n    pass\ngetattr(f, '__glob' + 'als__')", "runtime", "__globals__"),
    _a("getattr-fullwidth-name", "6-policy", "getattr(1, '\\uff3f\\uff3fclass\\uff3f\\uff3f')", "runtime"),
    _a("str-subclass-dunder-name", "6-policy", "class S(str):\n    pass\ngetattr(1, S('__class__'))", "runtime", "must be a str"),
    _a("lambda-code", "6-policy", "(lambda: 0).__code__", "rejected", "__code__"),
    _a("class-dict", "6-policy", "class A:\n    pass\nA.__dict__", "runtime", "__dict__ of a class"),
    _a("builtin-self", "6-policy", "len.__self__", "rejected", "__self__"),
    _a("builtin-self-getattr", "6-policy", "getattr(isinstance, '__self__')", "runtime", "__self__"),
    _a("print-self-getattr", "6-policy", "getattr(print, '__self__')", "runtime", "__self__"),
    _a("builtins-via-self-open", "6-policy", "b = getattr(isinstance, '__self__')\nb.open('/etc/passwd')", "runtime"),
    _a("class-of-class", "6-policy", "(1).__class__.__class__", "runtime", "__class__"),
    _a("tools-dict", "6-policy", "getattr(tools, '__dict__')", "runtime", "__dict__"),
    _a("mro-index-object", "6-policy", "ValueError.mro()[-1]", "runtime", "mro"),
    _a("mro-getattr", "6-policy", "getattr(ValueError, 'mro')", "runtime", "mro"),
    _a("match-class-pattern-mro", "6-policy", "match ValueError:\n    case type(mro=m):\n        m", "rejected", "mro"),
    _a("roles-suffix", "6-policy", "x__roles__ = 1", "rejected", "__roles__"),
    _a("private-keyword", "6-policy", "len(_x=1)", "rejected", "_x"),
    _a("private-keyword-double-star", "6-policy", "def f(**kw):\n    return kw\nf(**{'_trusted': True})", "runtime", "_trusted"),
    _a("global-hook-rebind", "6-policy", "def f():\n    global _getattr_\n    _getattr_ = getattr\nf()", "rejected", "_getattr_"),
    _a("underscore-variable", "6-policy", "_tk_ = 2", "rejected", "_tk_"),
    _a("underscore-variable-hook-shaped", "6-policy", "_getattr_ = getattr", "rejected", "_getattr_"),
    _a("underscore-private-own-object-ok", "6-policy", "class A:\n    def __init__(self):\n        self._x = 1\nA()._x", "ok", value=1),
    _a("underscore-private-host-object", "6-policy", "import json\njson._default_encoder", "runtime", "not available"),
    _a("underscore-private-write-host", "6-policy", "x = []\nx._y = 1", "runtime", "private names"),
    _a("underscore-private-stand-in-base", "6-policy", "from collections import Counter\nclass C(Counter):\n    pass\nC(a=1)._keep_positive", "runtime", "not available"),  # Fraction is not subclassable now (G08)
    _a("underscore-private-match-class", "6-policy", "class A:\n    pass\nmatch A():\n    case A(_x=1):\n        pass", "rejected", "_x"),
    _a("dunder-init-module-level", "6-policy", "if True:\n    def __init__(self):\n        pass\n    __init__.__globals__", "rejected"),
    _a("exec-fullwidth", "6-policy", "ｅｘｅｃ('x = 1')\nx", "ok", value=1),
    _a("eval-fullwidth", "6-policy", "ｅｖａｌ('1')", "ok", value=1),  # the real eval (issue 14)
    _a("breakpoint", "6-policy", "breakpoint()", "rejected", "breakpoint"),
    *[_a(f"builtin-{n}", "6-policy", n, "runtime", n) for n in _UNAVAILABLE_BUILTINS],
    # -- §6: frames -----------------------------------------------------------------------------
    _a("gi-code", "6-frames", "g = (x for x in [1])\ng.gi_code", "rejected", "gi_code"),
    _a("gi-frame-concatenated", "6-frames", "g = (x for x in [1])\ngetattr(g, 'gi' + '_frame')", "runtime", "gi_frame"),
    _a("gi-yieldfrom", "6-frames", "def g():\n    yield from [1]\nx = g()\nx.gi_yieldfrom", "rejected", "gi_yieldfrom"),
    _a("cr-frame", "6-frames", "async def f():\n    return 1\nc = f()\nc.cr_frame", "rejected", "cr_frame"),
    _a("ag-frame", "6-frames", "async def f():\n    yield 1\nc = f()\nc.ag_frame", "rejected", "ag_frame"),
    _a("tb-frame", "6-frames", "try:\n    1 / 0\nexcept Exception as e:\n    t = getattr(e, 'with_traceback')(None)\n    t.tb_frame", "rejected", "tb_frame"),
    _a("f-back", "6-frames", "def g():\n    yield 1\nx = g()\nnext(x)\ngetattr(x, 'gi_frame').f_back", "rejected", "f_back"),
    # the chain is readable (issue 14): the builtin exception, value-checked; its frames never
    _a("exception-context", "6-frames", "try:\n    try:\n        1 / 0\n    except Exception:\n        raise ValueError('x')\nexcept ValueError as e:\n    r = [type(e.__context__).__name__, str(e.__context__)]\nr", "ok", value=["ZeroDivisionError", "division by zero"]),
    # -- §6: format machinery -------------------------------------------------------------------
    _a("format-globals-field", "6-format", "def f():\n    pass\n'{0.__globals__}'.format(f)", "runtime", "only positions and names"),
    _a("format-map-mro", "6-format", "'{a.__class__.__mro__}'.format_map({'a': 1})", "runtime", "only positions and names"),
    _a("format-bound-via-getattr", "6-format", "getattr('{0.__class__}', 'format')(1)", "runtime", "only positions and names"),
    _a("string-formatter-attribute", "6-format", "import string\nstring.Formatter().format('{0.__class__}', 1)", "runtime", "Formatter"),
    _a("userstring-import", "6-format", "from collections import UserString", "runtime", "UserString"),
    _a("format-builtin-field-spec", "6-format", "format(1, '{0.__class__}')", "runtime"),
    _a("percent-mapping-dunder", "6-format", "'%(__class__)s' % {}", "runtime"),
    _a("fstring-spec-from-variable", "6-format", "x = '{0.__class__}'\nf'{1:{x}}'", "runtime"),
    # -- §7.2: the tool surface -----------------------------------------------------------------
    _a("tool-result-mutation", "7.2-tool-surface", "e = echo(x=1)\ne['args']['x'] = 2\necho(x=1)", "ok", value={"args": {"x": 1}}),
    _a("tool-config-clear", "7.2-tool-surface", "c = config()\nc.clear()\nc.update({'admin': True})\nconfig()", "ok", value={"limit": 10, "nested": {"admin": False}}),
    _a("tool-complex-argument", "7.2-tool-surface", "echo(x=1j)", "runtime", "not JSON"),
    _a("tool-int-keys", "7.2-tool-surface", "echo(x={1: 2})", "runtime", "JSON"),
    _a("tool-dict-subclass", "7.2-tool-surface", "class D(dict):\n    pass\necho(D(a=1))", "runtime"),
    _a("tool-deep-argument", "7.2-tool-surface", "x = []\nfor i in range(300):\n    x = [x]\necho(x=x)", "runtime", "nested"),
    _a("tool-exception-attribute", "7.2-tool-surface", "try:\n    secret()\nexcept ToolError as e:\n    getattr(e, 'headers')", "runtime", "headers"),
    _a("tool-exception-args", "7.2-tool-surface", "try:\n    secret()\nexcept ToolError as e:\n    r = list(e.args)\nr", "ok", value=["request failed"]),
    _a("tool-wrapped", "7.2-tool-surface", "tools.echo.__wrapped__", "rejected"),
    _a("tool-private-keyword-via-getattr", "7.2-tool-surface", "f = getattr(tools, 'echo')\nf(**{'_x': 1})", "runtime", "_x"),
    _a("tool-generator-argument", "7.2-tool-surface", "echo(x=(i for i in range(3)))", "runtime", "not JSON"),
    # -- §7.3: imports and module attribute graphs ----------------------------------------------
    *[_a(f"import-{m}", "7.3-module-graph", f"import {m}", "runtime", "not available") for m in _FORBIDDEN_MODULES],
    _a("import-underscore-module", "7.3-module-graph", "import _thread", "runtime", "_thread"),
    _a("import-alias", "7.3-module-graph", "import os as s", "runtime", "not available"),
    _a("import-inside-function", "7.3-module-graph", "def f():\n    import os\n    return os\nf()", "runtime", "not available"),
    _a("import-fullwidth-name", "7.3-module-graph", "import ｏｓ", "runtime", "not available"),
    _a("from-os-import", "7.3-module-graph", "from os import system", "runtime", "not available"),
    _a("from-json-codecs", "7.3-module-graph", "from json import codecs", "runtime", "cannot import name"),
    _a("re-enum", "7.3-module-graph", "import re\nre.enum", "runtime", "no attribute"),
    _a("from-re-enum", "7.3-module-graph", "from re import enum", "runtime", "cannot import name"),
    _a("statistics-sys", "7.3-module-graph", "import statistics\nstatistics.sys", "runtime", "no attribute"),
    # random.Random is the sandbox's wrapper now (issue 14): the real generator stays out of reach
    _a("random-class", "7.3-module-graph", "import random\ngetattr(random.Random(1), '_rng')", "runtime", "_rng"),
    _a("math-loader", "7.3-module-graph", "import math\nmath.__loader__", "rejected"),
    _a("json-decoder-module", "7.3-module-graph", "import json\njson.decoder", "runtime", "no attribute"),
    _a("math-function-self", "7.3-module-graph", "import math\ngetattr(math.floor, '__self__')", "runtime", "__self__"),
    # collections.abc is typing's opaque aliases (findings18): never an ABC whose register
    # changes isinstance for the whole host
    _a("collections-abc", "7.3-module-graph", "import collections\ncollections.abc.Mapping.register(list)", "runtime", "not available"),
    # a module in the last value: a placeholder, never the module (issue 14 renders, not fails)
    _a("module-in-container", "7.3-module-graph", "import math\nx = [math]\nx[0]", "ok", value="<OpaqueNamespace object>"),
    _a("pattern-class", "7.3-module-graph", "import re\np = re.compile('a')\ngetattr(getattr(p, '__class__'), '__init__')", "runtime", "__init__"),
    _a("typing-get-type-hints-call", "7.4-c-attribute", "from typing import get_type_hints", "runtime", "cannot import name"),
    # functools.partial is a plain function now: the real partial's writable state is out of reach
    _a("functools-partial-import", "7.4-c-attribute", "from functools import partial\ngetattr(partial(len), '__setstate__')", "runtime", "__setstate__"),
    _a("functools-reduce-getattr", "7.4-c-attribute", "import functools\nfunctools.reduce(getattr, ['__class__', '__subclasses__'], 1)", "runtime", "__subclasses__"),
    _a("map-getattr-dunder", "7.4-c-attribute", "list(map(getattr, [1], ['__dict__']))", "runtime", "__dict__"),
    _a("sorted-key-getattr", "7.4-c-attribute", "sorted([1, 2], key=lambda v: getattr(v, '__dict__'))", "runtime", "__dict__"),
    # -- §7.5: host state -----------------------------------------------------------------------
    _a("stand-in-function-attribute", "7.5-host-state", "import json\njson.dumps.x = 1", "runtime"),
    _a("stand-in-class-attribute", "7.5-host-state", "import collections\ncollections.Counter.x = 1", "runtime", "cannot be modified"),
    _a("datetime-class-attribute", "7.5-host-state", "import datetime\ndatetime.timedelta.max = 0", "runtime", "cannot be modified"),
    _a("pattern-attribute", "7.5-host-state", "import re\nre.compile('a').flags = 0", "runtime"),
    # -- §7.6 / §7.7: callbacks and control flow --------------------------------------------------
    _a("contains-planted-in-value", "7.6-callback", "class E:\n    def __contains__(self, o):\n        return True\nE()", "ok", value="<E object>"),
    _a("eq-planted-in-config-args", "7.6-callback", "class E:\n    def __eq__(self, o):\n        return True\nconfig(x={'k': E()})", "runtime", "not JSON"),
    _a("catch-limit-and-loop", "7.7-control-flow", "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass", "limit"),
    _a("limit-in-finally-return", "7.7-control-flow", "def f():\n    try:\n        while True:\n            pass\n    finally:\n        return 1\nf()", "limit"),
    # -- §8: CPU --------------------------------------------------------------------------------
    _a("comprehension-huge-range", "8-cpu", "[i for i in range(10 ** 12)]", "limit", "range"),
    _a("sum-generator-huge", "8-cpu", "sum(i for i in range(10 ** 12))", "limit", "range"),
    _a("max-huge-range", "8-cpu", "max(range(10 ** 12))", "limit", "range"),
    _a("sorted-huge-key", "8-cpu", "sorted(range(10 ** 9), key=lambda x: -x)", "limit", "range"),
    _a("join-generator-huge", "8-cpu", "''.join('a' for i in range(10 ** 12))", "limit", "range"),
    _a("nested-loops", "8-cpu", "for i in range(100000):\n    for j in range(100000):\n        pass", "limit", "step limit"),
    _a("while-counter", "8-cpu", "i = 0\nwhile i >= 0:\n    i += 1", "limit", "step limit"),
    _a("exponential-recursion", "8-cpu", "def f(n):\n    if n == 0:\n        return 1\n    return f(n - 1) + f(n - 1)\nf(60)", "limit", "step limit"),
    _a("hash-flood-set-add", "8-cpu", "s = set()\nfor i in range(200000):\n    s.add(i * (2 ** 61 - 1))", "limit"),
    _a("hash-flood-dict", "8-cpu", "d = {}\nfor i in range(200000):\n    d[i * (2 ** 61 - 1)] = i", "limit"),
    _a("unpack-endless-generator", "8-cpu", "def g():\n    while True:\n        yield 1\na, b = g()", "limit"),
    _a("async-endless-gather", "8-cpu", "async def f():\n    while True:\n        await gather()\nawait f()", "limit"),
    # -- §8: recursion ---------------------------------------------------------------------------
    _a("mutual-recursion", "8-recursion", "def a():\n    return b()\ndef b():\n    return a()\na()", "limit", "recursion limit"),
    _a("recursion-catch-exception", "8-recursion", "def f(n):\n    try:\n        return f(n + 1)\n    except Exception:\n        return f(n + 1)\nf(0)", "limit", "recursion limit"),
    _a("class-init-recursion", "8-recursion", "class A:\n    def __init__(self):\n        A()\nA()", "limit", "recursion limit"),
    _a("deep-list-repr", "8-recursion", "x = []\nfor i in range(100000):\n    x = [x]\nrepr(x)", "runtime", "recursion"),
    _a("deep-list-compare", "8-recursion", "a = []\nb = []\nfor i in range(90000):\n    a = [a]\n    b = [b]\na == b", "limit", "too deep"),  # measured before the C comparison (dagguard)
    _a("deep-dict-json", "8-recursion", "import json\nd = {}\nfor i in range(20000):\n    d = {'a': d}\njson.dumps(d)", "runtime", "recursion"),
    # counted before the copy (findings18 L04): 100,001 lists are past the value's count
    _a("deep-result-value", "8-recursion", "x = []\nfor i in range(100000):\n    x = [x]\nx", "limit", "lists and dicts"),
    _a("deep-result-value-few-lists", "8-recursion", "x = []\nfor i in range(10000):\n    x = [x]\nx", "runtime", "nested"),
    # -- §8: memory and big values ---------------------------------------------------------------
    _a("tuple-repeat", "8-memory", "(0,) * 10 ** 10", "limit", "too large"),
    _a("str-ljust", "8-memory", "'a'.ljust(10 ** 10)", "limit", "too large"),
    _a("str-zfill", "8-memory", "'1'.zfill(10 ** 10)", "limit", "too large"),
    _a("str-replace-huge", "8-memory", "('a' * 1000).replace('a', 'a' * 10 ** 7)", "limit", "too large"),
    _a("str-translate-huge", "8-memory", "('a' * 10 ** 6).translate({97: 'b' * 10 ** 6})", "limit", "too large"),
    _a("join-huge", "8-memory", "'-'.join(['x' * 10 ** 6] * 10 ** 4)", "limit", "too large"),
    _a("fstring-width", "8-memory", "f'{1:>{10 ** 10}}'", "limit", "width"),
    _a("inplace-power", "8-memory", "x = 10\nx **= 10 ** 9", "limit", "too large"),
    _a("inplace-shift", "8-memory", "x = 1\nx <<= 10 ** 10", "limit", "too large"),
    _a("int-parse-digits", "8-memory", "int('7' * 10 ** 6)", "runtime", "digits"),
    _a("math-comb-huge", "8-memory", "import math\nmath.comb(10 ** 8, 5 * 10 ** 7)", "limit"),
    _a("list-range-huge", "8-memory", "list(range(10 ** 9))", "limit", "range"),
    _a("star-range-set", "8-memory", "{*range(10 ** 9)}", "limit", "range"),
    # memory growth: the memory budget (memguard) in-process, RLIMIT_AS in process isolation;
    # geometric growth is refused by the concatenation/extend size guards in both modes
    _a("memory-growth-append", "8-memory", "x = []\nwhile True:\n    x.append('y' * 10 ** 6)", "limit", "memory limit"),
    _a("memory-doubling-concat", "8-memory", "s = 'x' * 1000\nwhile True:\n    s = s + s", "limit", "too large"),
    _a("memory-doubling-iadd", "8-memory", "x = [1] * 1000\nwhile True:\n    x += x", "limit", "too large"),
    _a("memory-list-extend-self", "8-memory", "x = [1] * 1000\nwhile True:\n    x.extend(x)", "limit", "too large"),
    _a("memory-deque-extendleft-self", "8-memory", "import collections\nd = collections.deque([1] * 1000)\nwhile True:\n    d.extendleft(d)", "limit", "too large"),
    _a("memory-star-unpack-doubling", "8-memory", "x = [1] * 1000\nwhile True:\n    x = [*x, *x]", "limit", "too large"),
    _a("memory-slice-assign-doubling", "8-memory", "x = [1] * 1000\nwhile True:\n    x[len(x):] = x", "limit", "too large"),
    _a("memory-fstring-doubling", "8-memory", "s = 'x' * 1000\nwhile True:\n    s = f'{s}{s}'", "limit", "too large"),
    _a("result-value-huge", "8-output", "['x' * 1000000] * 100", "limit", "bytes"),
    # -- §8: output ------------------------------------------------------------------------------
    _a("print-many-args", "8-output", "print(*(['y' * 1000] * 5000))", "limit", "output"),
    _a("print-huge-sep", "8-output", "print(1, 2, sep='x' * 9000000)", "limit", "output"),
    _a("print-end-flood", "8-output", "for i in range(100000):\n    print(end='x' * 100)", "limit", "output"),
    # -- §8: compile time ------------------------------------------------------------------------
    _a("long-binop-chain", "8-compile", "x = " + "+".join(["1"] * 5000), "rejected"),
    _a("deep-attribute-chain", "8-compile", "x = (1)" + ".real" * 3000, "rejected"),
    _a("deep-lambda-nesting", "8-compile", "f = " + "lambda: " * 500 + "1", "rejected", "nested"),
    _a("deep-parentheses", "8-compile", "x = " + "(" * 300 + "1" + ")" * 300, "syntax"),
    _a("deep-indentation", "8-compile", "".join("    " * i + "if True:\n" for i in range(120)) + "    " * 120 + "pass\n", "syntax"),
]  # fmt: skip
"""Attacks that run in both isolation modes."""

# -- §8.2 / §8.1: resource attacks stopped at a deadline or a memory budget ---------------------
# They run until a limit stops them, so they run under short limits to keep the suite fast.
# "time" is in the in-process timeout message ("Script timed out after ...") and in process
# isolation's kill message ("... time limit ..."); "memory" in the memory budget's (in-process)
# and in the RLIMIT_AS one (process isolation).
_SLOW = "'a' * 60 + 'b'"
_TIME = "time"
_DAG = (
    "a = [0] * 1000\nb = [0] * 1000\nfor i in range(4):\n    a = [a] * 1000\n    b = [b] * 1000\n"
)
"""Two distinct lists that each stand for 10**15 items through shared references."""
_SD = "from functools import singledispatch\n@singledispatch\ndef f(x):\n    return 0\n"
_DAG_TUPLE = "t = (0,) * 1000\nfor i in range(4):\n    t = (t,) * 1000\n"
_FLOOD = "xs = [i * (2 ** 61 - 1) for i in range(60000)]\n"
"""60,000 distinct ints that all hash to 0: hashing them into one set or dict takes minutes."""
_PAIRS = "xs = [(i * (2 ** 61 - 1), 0) for i in range(60000)]\n"
_PROBE = "s = {i * (2 ** 61 - 1) for i in range(2000)}\nys = [(2 ** 61 - 1) * 1999] * 10 ** 6\n"
"""A set of 2,000 colliding ints (cheap to build) and a million look-ups of its slowest member."""
_FEED_OK = (
    "from collections import Counter, OrderedDict, defaultdict\n"
    "xs = list(range(1000))\ns = set()\ns.update(xs)\ns |= {5000}\n"
    "d = {}\nd.update([(i, i) for i in range(300)])\nd |= [(1, 'a')]\n"
    "c = Counter(x % 3 for x in xs)\nc.update(xs[:300])\nc.subtract(iter([2] * 400))\n"
    "o = OrderedDict((i, -i) for i in range(300))\ndd = defaultdict(int, [(i, 1) for i in range(300)])\n"
    "[len(s), len({*xs, -1}), len(dict.fromkeys(range(700))), d[1], d[299], c[0], c[2], len(o), "
    "o[299], dd[5], dd[1000], isinstance(c, Counter), isinstance(o, OrderedDict), "
    "isinstance(dd, dict), s.issuperset(range(1000)), frozenset(xs).isdisjoint(range(2000, 2600)), "
    "len(set(map(str, xs)).union(iter(['a'] * 300))), sorted(set(range(300)).intersection(range(298, 900)))]"
)
"""Results through the chunked feed are those of plain Python (inputs above 256 items)."""
_FEED_OK_VALUE = [
    1001,
    1001,
    700,
    "a",
    299,
    335,
    -66,
    300,
    -299,
    1,
    0,
    True,
    True,
    True,
    True,
    True,
    1001,
    [298, 299],
]

DEADLINE_ATTACKS: list[Any] = [
    # hash flooding in one constructor call: set()/frozenset()/dict() of a large list or tuple
    # hash it in chunks of 256 with the deadline checked between them (guards._copy_)
    _a("hash-flood-set-constructor", "8-cpu", "xs = [i * (2 ** 61 - 1) for i in range(60000)]\nlen(set(xs))", "limit", _TIME),
    _a("hash-flood-frozenset-tuple", "8-cpu", "xs = tuple(i * (2 ** 61 - 1) for i in range(60000))\nlen(frozenset(xs))", "limit", _TIME),
    _a("hash-flood-dict-pairs", "8-cpu", "xs = [(i * (2 ** 61 - 1), 0) for i in range(60000)]\nlen(dict(xs))", "limit", _TIME),
    # ... and every other entry point that hashes a whole input in one C call: the set/dict/
    # Counter methods (attribute guard), `{*x}` (_hstar_), `d |= pairs` (guarded_ior), the
    # collections constructors (stand-ins), and iterators/generators/ranges (C-drained inputs)
    _a("hash-flood-set-update", "8-cpu", _FLOOD + "s = set()\ns.update(xs)", "limit", _TIME),
    _a("hash-flood-set-union", "8-cpu", _FLOOD + "len(set().union(xs))", "limit", _TIME),
    _a("hash-flood-frozenset-union-many", "8-cpu", _FLOOD + "len(frozenset().union([1], xs))", "limit", _TIME),
    _a("hash-flood-set-symmetric-difference-update", "8-cpu", _FLOOD + "s = {1}\ns.symmetric_difference_update(xs)", "limit", _TIME),
    _a("hash-flood-set-issubset", "8-cpu", _FLOOD + "{1}.issubset(xs)", "limit", _TIME),
    _a("hash-flood-set-intersection", "8-cpu", _PROBE + "len(s.intersection(ys))", "limit", _TIME),
    _a("hash-flood-set-isdisjoint", "8-cpu", _PROBE + "s.isdisjoint([(2 ** 61 - 1) * 5000] * 10 ** 6)", "limit", _TIME),
    _a("hash-flood-set-issuperset", "8-cpu", _PROBE + "s.issuperset(ys)", "limit", _TIME),
    _a("hash-flood-set-difference-update", "8-cpu", _PROBE + "s.difference_update(ys)", "limit", _TIME),
    _a("hash-flood-set-display-star", "8-cpu", _FLOOD + "len({*xs})", "limit", _TIME),
    _a("hash-flood-set-display-star-mixed", "8-cpu", _FLOOD + "len({0, *xs, 1})", "limit", _TIME),
    _a("hash-flood-set-yield-from", "8-cpu", _FLOOD + "def g():\n    yield from xs\nlen(set(g()))", "limit", _TIME),
    _a("hash-flood-set-map", "8-cpu", _FLOOD + "len(set(map(int, xs)))", "limit", _TIME),
    _a("hash-flood-set-iter", "8-cpu", _FLOOD + "len(frozenset(iter(xs)))", "limit", _TIME),
    # a range of colliding hashes needs bounds past 2**63: refused up front (findings11)
    _a("hash-flood-set-range", "8-cpu", "len(set(range(0, 60000 * (2 ** 61 - 1), 2 ** 61 - 1)))", "limit", "bounds beyond"),
    _a("hash-flood-set-multiples", "8-cpu", "xs = [k * (2 ** 61 - 1) for k in range(60000)]\nlen(set(xs))", "limit", _TIME),
    _a("hash-flood-dict-fromkeys", "8-cpu", _FLOOD + "len(dict.fromkeys(xs))", "limit", _TIME),
    _a("hash-flood-dict-fromkeys-instance", "8-cpu", _FLOOD + "len({}.fromkeys(xs, 0))", "limit", _TIME),
    _a("hash-flood-dict-update-pairs", "8-cpu", _PAIRS + "d = {}\nd.update(xs)", "limit", _TIME),
    _a("hash-flood-dict-ior-pairs", "8-cpu", _PAIRS + "d = {}\nd |= xs", "limit", _TIME),
    _a("hash-flood-dict-item-ior-pairs", "8-cpu", _PAIRS + "d = {'a': {}}\nd['a'] |= xs", "limit", _TIME),
    _a("hash-flood-dict-generator-pairs", "8-cpu", _FLOOD + "def g():\n    for x in xs[:256]:\n        yield (x, 0)\n    yield from ((x, 0) for x in xs)\nlen(dict(g()))", "limit", _TIME),
    _a("hash-flood-counter", "8-cpu", _FLOOD + "import collections\nlen(collections.Counter(xs))", "limit", _TIME),
    _a("hash-flood-counter-update", "8-cpu", _FLOOD + "from collections import Counter\nc = Counter()\nc.update(xs)", "limit", _TIME),
    _a("hash-flood-counter-subtract", "8-cpu", _FLOOD + "from collections import Counter\nc = Counter()\nc.subtract(xs)", "limit", _TIME),
    _a("hash-flood-counter-subclass", "8-cpu", _FLOOD + "from collections import Counter\nclass C(Counter):\n    pass\nlen(C(xs))", "limit", _TIME),
    _a("hash-flood-defaultdict", "8-cpu", _PAIRS + "from collections import defaultdict\nlen(defaultdict(list, xs))", "limit", _TIME),
    _a("hash-flood-ordereddict", "8-cpu", _PAIRS + "from collections import OrderedDict\nlen(OrderedDict(xs))", "limit", _TIME),
    _a("hash-flood-ordereddict-fromkeys", "8-cpu", _FLOOD + "from collections import OrderedDict\nlen(OrderedDict.fromkeys(xs))", "limit", _TIME),
    _a("hash-flood-statistics-mode", "8-cpu", _FLOOD + "import statistics\nstatistics.mode(xs)", "limit", _TIME),
    _a("hash-flood-statistics-multimode", "8-cpu", _FLOOD + "import statistics\nlen(statistics.multimode(xs))", "limit", _TIME),
    _a("hash-feed-results-unchanged", "8-cpu", _FEED_OK, "ok", value=_FEED_OK_VALUE),
    # catastrophic regular expressions: the re stand-in runs on the regex engine with a timeout
    # up to the run's deadline (regexguard), through every entry point
    _a("regex-catastrophic-match", "8-cpu", "import re\nre.match('(a+)+$', 'a' * 64 + 'b')", "ok", value=None),  # regex's engine does not backtrack here
    _a("regex-catastrophic-search", "8-cpu", "import re\nre.search('(x+x+)+y', 'x' * 5000)", "limit", _TIME),
    _a("regex-catastrophic-compiled", "8-cpu", f"import re\np = re.compile('(a|aa)+$')\np.match({_SLOW})", "limit", _TIME),
    _a("regex-catastrophic-fullmatch", "8-cpu", f"import re\nre.fullmatch('(a|aa)+', {_SLOW})", "limit", _TIME),
    _a("regex-catastrophic-findall", "8-cpu", f"import re\nre.findall('(a|aa)+$', {_SLOW})", "limit", _TIME),
    _a("regex-catastrophic-finditer", "8-cpu", f"import re\n[m.span() for m in re.finditer('(a|aa)+$', {_SLOW})]", "limit", _TIME),
    _a("regex-catastrophic-pattern-finditer", "8-cpu", f"import re\nit = re.compile('(a|aa)+$').finditer('b' * 100 + {_SLOW})\nnext(it)", "limit", _TIME),
    _a("regex-catastrophic-split", "8-cpu", f"import re\nre.split('(a|aa)+$', {_SLOW})", "limit", _TIME),
    _a("regex-catastrophic-sub", "8-cpu", f"import re\nre.sub('(a|aa)+$', 'x', {_SLOW})", "limit", _TIME),
    _a("regex-catastrophic-subn-compiled", "8-cpu", f"import re\nre.compile('(a|aa)+$').subn('x', {_SLOW})", "limit", _TIME),
    _a("regex-catastrophic-sub-callable", "8-cpu", f"import re\nre.sub('(a|aa)+$', lambda m: 'x', {_SLOW})", "limit", _TIME),
    _a("regex-nested-quantifier", "8-cpu", "import re\nre.match('(?:a+)+b', 'a' * 50000)", "limit", _TIME),
    _a("regex-alternation-overlap", "8-cpu", f"import re\nre.match('(a|a)+$', {_SLOW})", "limit", _TIME),
    _a("regex-backreference", "8-cpu", "import re\nre.search(r'(a+)\\1+b', 'a' * 5000)", "limit", _TIME),
    _a("regex-lookahead-nested", "8-cpu", "import re\nre.search('(?=(a+)+b)', 'a' * 5000)", "limit", _TIME),
    _a("regex-recursive-pattern", "8-cpu", "import re\nre.search('(?R)?a', 'a' * 100)", "limit", _TIME),
    _a("regex-through-match-re", "8-cpu", f"import re\nm = re.compile('(a|aa)+$').match('aa')\nm.re.match({_SLOW})", "limit", _TIME),
    _a("regex-timeout-caught", "8-cpu", f"import re\ntry:\n    re.match('(a|aa)+$', {_SLOW})\nexcept TimeoutError:\n    pass\n'escaped'", "limit", _TIME),
    _a("regex-timeout-caught-loop", "8-cpu", f"import re\nwhile True:\n    try:\n        re.match('(a|aa)+$', {_SLOW})\n    except BaseException:\n        pass", "limit", _TIME),
]  # fmt: skip
"""Catastrophic regular expressions, stopped at the deadline in both modes (``DEADLINE_LIMITS``)."""

_DISTINCT = "x = [*range(150000), *range(150000, 300000)]\n"

MEMORY_ATTACKS: list[Any] = [
    # memory copies faster than the memory poll: each iteration copies 80 MB (10 MB for
    # strings) through an operation the memory guard charges before the copy (memguard)
    _a("memory-copy-loop", "8-memory", "x = [0] * 10 ** 7\ny = []\nfor i in range(1000):\n    y.append(x[:])", "limit", "memory"),
    _a("memory-copy-partial-slice", "8-memory", "x = [0] * 10 ** 7\ny = []\nfor i in range(1000):\n    y.append(x[1:-1])", "limit", "memory"),
    _a("memory-copy-str-slice", "8-memory", "s = 'ab' * 5 * 10 ** 6\ny = []\nfor i in range(1000):\n    y.append(s[1:])", "limit", "memory"),
    _a("memory-copy-list-call", "8-memory", "x = [0] * 10 ** 7\ny = []\nfor i in range(1000):\n    y.append(list(x))", "limit", "memory"),
    _a("memory-copy-tuple-call", "8-memory", "x = [0] * 10 ** 7\ny = []\nfor i in range(1000):\n    y.append(tuple(x))", "limit", "memory"),
    _a("memory-copy-method", "8-memory", "x = [0] * 10 ** 7\ny = []\nfor i in range(1000):\n    y.append(x.copy())", "limit", "memory"),
    _a("memory-copy-dict-call", "8-memory", _DISTINCT + "d = dict.fromkeys(x)\ny = []\nfor i in range(1000):\n    y.append(dict(d))", "limit", "memory"),
    _a("memory-copy-dict-method", "8-memory", _DISTINCT + "d = dict.fromkeys(x)\ny = []\nfor i in range(1000):\n    y.append(d.copy())", "limit", "memory"),
    _a("memory-copy-set-call", "8-memory", _DISTINCT + "y = []\nfor i in range(1000):\n    y.append(set(x))", "limit", "memory"),
    _a("memory-copy-frozenset-call", "8-memory", _DISTINCT + "y = []\nfor i in range(1000):\n    y.append(frozenset(x))", "limit", "memory"),
    _a("memory-copy-sorted", "8-memory", "x = [0] * 10 ** 7\ny = [sorted(x) for i in range(100)]", "limit", "memory"),
    _a("memory-copy-str-upper", "8-memory", "s = 'a' * 10 ** 7\ny = []\nfor i in range(1000):\n    y.append(s.upper())", "limit", "memory"),
    _a("memory-copy-join", "8-memory", "parts = ['abcd' * 1000] * 2000\ny = []\nfor i in range(1000):\n    y.append(''.join(parts))", "limit", "memory"),
    _a("memory-copy-small-ok", "8-memory", "x = [1, 2, 3]\ny = []\nfor i in range(1000):\n    y.append(x[:] + list(x) + x.copy() + sorted(x))\n[len(y), y[0], 'ab'[1:], 'a'.upper()]", "ok", value=[1000, [1, 2, 3] * 4, "b", "A"]),
]  # fmt: skip
"""Loops of large copies, stopped by the memory budget in both modes (``MEMORY_LIMITS``)."""

EXTRA_ATTACKS += [
    # a shared-reference DAG standing for 10**15 items renders in one C call: the render
    # guard counts every occurrence and refuses past 10**7 characters (sizeguard)
    _a("dag-str", "8-memory", _DAG + "str(a)", "limit", "too large"),
    _a("dag-repr", "8-memory", _DAG + "repr(b)", "limit", "too large"),
    _a("dag-fstring", "8-memory", _DAG + "f'{a}'", "limit", "too large"),
    _a("dag-json-dumps", "8-memory", _DAG + "import json\njson.dumps(a)", "limit", "too large"),
    _a("dag-tuple-str", "8-memory", _DAG_TUPLE + "str(t)", "limit", "too large"),
    _a("dag-print", "8-output", _DAG + "print(a)", "limit", "output"),
    # small shared rows stay ordinary: a 1000 x 1000 grid of one row compares and renders
    _a("dag-grid-ok", "8-cpu", "row = [0] * 1000\ngrid = [row] * 1000\nother = [[0] * 1000 for _ in range(1000)]\n[grid == other, len(str(grid[:2]))]", "ok", value=[True, 6004]),
    # regex's compile unrolls counted repeats and has extras re does not: refused up front
    _a("regex-compile-huge-repeat", "8-memory", "import re\nre.compile('a{4294967294}')", "limit", "too large"),
    _a("regex-compile-nested-repeats", "8-memory", "import re\nre.compile('(?:(?:(?:a{100}){100}){100}){100}')", "limit", "too large"),
    _a("regex-compile-verbose-hidden-group", "8-memory", "import re\nre.compile('(?x)(?:a{2000}#)\\n){2000}')", "limit", "too large"),
    _a("regex-compile-huge-pattern", "8-memory", "import re\nre.compile('a|' * 60000 + 'b')", "limit", "too large"),
    _a("regex-version1", "7.3-module-graph", "import re\nre.compile('(?V1)[[a]--b]')", "runtime", "VERSION1"),
    _a("regex-timeout-keyword", "8-cpu", f"import re\nre.compile('(a|aa)+$').match({_SLOW}, timeout=None)", "runtime", "timeout"),
    _a("regex-concurrent-keyword", "8-cpu", "import re\nre.compile('a').search('a', concurrent=True)", "runtime", "concurrent"),
    _a("regex-match-expandf", "6-format", "import re\nre.match('(a)', 'a').expandf('{0.__class__}')", "runtime", "expandf"),
    _a("regex-match-captures", "7.3-module-graph", "import re\nre.match('(a)*', 'aaa').captures(1)", "runtime", "captures"),
    _a("regex-pattern-scanner", "7.3-module-graph", "import re\nre.compile('a').scanner('a')", "runtime", "scanner"),
    _a("regex-pattern-subf", "6-format", "import re\nre.compile('a').subf('{0.__class__}', 'a')", "runtime", "subf"),
    _a("regex-match-private", "7.3-module-graph", "import re\nm = re.match('a', 'a')\ngetattr(m, '_match')", "runtime", "_match"),
    _a("regex-expand-huge", "8-memory", "import re\nre.match('a+', 'a' * 10 ** 6).expand('\\\\g<0>' * 1000)", "limit", "too large"),
    _a("regex-pattern-sub-huge", "8-memory", "import re\nre.compile('').sub('x' * 100, 'a' * 10 ** 6)", "limit", "too large"),
]  # fmt: skip

# -- §8.2: comparing or hashing a shared-reference DAG at a compiled site --------------------
# Five levels of 1,000 references to one list (tiny memory) stand for 10**15 items, and two-item
# displays are enough (50 levels of `(t, t)` stand for 2**50): comparing two such values, or
# hashing such a tuple, is one C call that never returns. The policy measures every operand that
# is not provably scalar first (dagguard, through _cmpok_/_in_/_hkey_/_cval_): a size limit.
_PAIR = "t = 0\nfor i in range(50):\n    t = (t, t)\n"
_FPAIR = "F = frozenset({1})\nG = frozenset({1})\nfor i in range(60):\n    F, G = frozenset({(F, G)}), frozenset({(G, F)})\n"
_SHARED = "shared references"

EXTRA_ATTACKS += [
    _a("dag-list-compare", "8-cpu", _DAG + "a == b", "limit", _SHARED),
    _a("dag-list-compare-comprehension", "8-cpu", "a = [0] * 1000\nb = [0] * 1000\nfor i in range(4):\n    a = [a for _ in range(1000)]\n    b = [b for _ in range(1000)]\na == b", "limit", _SHARED),
    _a("dag-tuple-set-membership", "8-cpu", _DAG_TUPLE + "t in {1}", "limit", _SHARED),
    _a("dag-tuple-dict-key", "8-cpu", _DAG_TUPLE + "{t: 1}", "limit", _SHARED),
    _a("dag-tuple-pair-display-hash", "8-cpu", "t = 0\nfor i in range(50):\n    t = (t, t)\n{t: 1}", "limit", _SHARED),
    _a("dag-list-pair-display-compare", "8-cpu", "a = [0]\nb = [0]\nfor i in range(50):\n    a = [a, a]\n    b = [b, b]\na == b", "limit", _SHARED),
    _a("dag-chained-compare", "8-cpu", _DAG + "1 != a == b", "limit", _SHARED),
    _a("dag-list-not-equal", "8-cpu", _DAG + "a != b", "limit", _SHARED),
    _a("dag-list-less-than", "8-cpu", _DAG + "a < b", "limit", _SHARED),
    _a("dag-list-not-in-list", "8-cpu", _DAG + "a not in [1, b]", "limit", _SHARED),
    _a("dag-dict-comprehension-key", "8-cpu", _PAIR + "{k: 1 for k in [t]}", "limit", _SHARED),
    _a("dag-set-comprehension", "8-cpu", _PAIR + "{k for k in [t]}", "limit", _SHARED),
    _a("dag-set-display", "8-cpu", _PAIR + "{1, t}", "limit", _SHARED),
    _a("dag-subscript-read", "8-cpu", _PAIR + "d = {}\nd.get(1, d[t])", "limit", _SHARED),
    _a("dag-subscript-write", "8-cpu", _PAIR + "d = {}\nd[t] = 1", "limit", _SHARED),
    _a("dag-subscript-augmented", "8-cpu", _PAIR + "d = {t: 0}\nd[t] += 1", "limit", _SHARED),
    _a("dag-subscript-augmented-only", "8-cpu", _PAIR + "d = {}\nd[t] += 1", "limit", _SHARED),
    _a("dag-subscript-del", "8-cpu", _PAIR + "d = {}\ndel d[t]", "limit", _SHARED),
    _a("dag-generator-expression", "8-cpu", _DAG + "any(x == b for x in [a])", "limit", _SHARED),
    _a("dag-generator-expression-membership", "8-cpu", _PAIR + "list(x in {1} for x in [t])", "limit", _SHARED),
    _a("dag-lambda-body", "8-cpu", _DAG + "f = lambda x: x <= b\nf(a)", "limit", _SHARED),
    _a("dag-class-body", "8-cpu", _DAG + "class C:\n    same = a == b", "limit", _SHARED),
    _a("dag-class-body-chain", "8-cpu", _DAG + "class C:\n    same = 1 != a == b", "limit", _SHARED),
    _a("dag-comprehension-iterable", "8-cpu", _DAG + "[x for x in [a == b]]", "limit", _SHARED),
    _a("dag-comprehension-condition", "8-cpu", _DAG + "[x for x in [a] if x == b]", "limit", _SHARED),
    _a("dag-assert", "8-cpu", _DAG + "assert a != b", "limit", _SHARED),
    _a("dag-while-test", "8-cpu", _DAG + "while a == b:\n    pass", "limit", _SHARED),
    _a("dag-function-default", "8-cpu", _DAG + "def f(x=a == b):\n    return x\nf()", "limit", _SHARED),
    # literal patterns compare in time bounded by the literal: a DAG subject matches normally
    _a("dag-match-literal-patterns", "8-cpu", _DAG + "match a:\n    case [0, 1]:\n        r = 1\n    case {'k': 0}:\n        r = 2\n    case 'a' | 1:\n        r = 3\n    case _:\n        r = 4\nr", "ok", value=4),
    # a named value pattern compares with no place for a guard (and reads around the attribute
    # guard): value patterns and mapping-pattern keys must be literals
    _a("dag-match-value", "8-cpu", _DAG + "class K:\n    v = b\nmatch a:\n    case K.v:\n        pass", "limit", "would take too long"),
    _a("dag-match-value-nested", "8-cpu", _DAG + "class K:\n    v = b\nmatch [a]:\n    case [K.v]:\n        pass", "rejected", "literals"),
    _a("dag-match-mapping-key", "8-cpu", _PAIR + "class K:\n    v = t\nmatch {}:\n    case {K.v: 1}:\n        pass", "rejected", "literals"),
    # equal frozensets built from each other hash cheaply but compare in 2**60 steps when a
    # lookup's hash matches: the compiled key checks measure them as comparison operands too
    _a("dag-frozenset-pair-membership", "8-cpu", _FPAIR + "F in {G}", "limit", _SHARED),
    _a("dag-frozenset-pair-subscript", "8-cpu", _FPAIR + "{G: 1}[F]", "limit", _SHARED),
    _a("dag-frozenset-pair-set-display", "8-cpu", _FPAIR + "{F, G}", "limit", _SHARED),
    _a("dag-frozenset-pair-store", "8-cpu", _FPAIR + "d = {G: 1}\nd[F] = 2", "limit", _SHARED),
    # set operators hash one side into the other and compare elements whose hashes match
    _a("dag-frozenset-pair-set-and", "8-cpu", _FPAIR + "{F} & {G}", "limit", _SHARED),
    _a("dag-frozenset-pair-set-ixor", "8-cpu", _FPAIR + "s = {F}\ns ^= {G}", "limit", _SHARED),
    _a("dag-frozenset-pair-dict-merge", "8-cpu", _FPAIR + "{F: 1} | {G: 2}", "limit", _SHARED),
    _a("dag-keys-view-and-list", "8-cpu", _DAG_TUPLE + "{1: 2}.keys() & [t]", "limit", _SHARED),
    # a tuple nested 190,000 levels deep crashed CPython 3.11's recursive hash: refused up front
    _a("deep-tuple-set-membership", "7.1-crash", "t = ()\ni = 0\nwhile i < 190000:\n    t = (t,)\n    i += 1\nt in {1}", "limit", "too deep"),
    _a("deep-tuple-dict-key", "7.1-crash", "t = ()\nfor i in range(190000):\n    t = (t,)\n{t: 1}", "limit", "too deep"),
]  # fmt: skip

_COUNTER = "from collections import Counter\n"
EXTRA_ATTACKS += [
    # issue 5, the calls: builtins, container methods and stand-in modules that compare or
    # hash in C check the values first (guards "comparing and hashing calls", dagguard)
    _a("dag-list-sorted", "8-cpu", _DAG + "sorted([a, b, a])", "limit", _SHARED),
    _a("dag-list-sort-method", "8-cpu", _DAG + "xs = [a, b]\nxs.sort()", "limit", _SHARED),
    _a("dag-sorted-key", "8-cpu", _DAG + "sorted([1, 2], key=lambda i: a if i == 1 else b)", "limit", _SHARED),
    _a("dag-list-sort-key", "8-cpu", _DAG + "xs = [1, 2]\nxs.sort(key=lambda _: a if xs else b)", "limit", _SHARED),
    _a("dag-max", "8-cpu", _DAG + "max([a, b])", "limit", _SHARED),
    _a("dag-min-arguments", "8-cpu", _DAG + "min(a, b)", "limit", _SHARED),
    _a("dag-max-key", "8-cpu", _DAG + "max([0, 1], key=lambda i: [a, b][i])", "limit", _SHARED),
    _a("dag-min-generator", "8-cpu", _DAG + "min(x for x in (a, b))", "limit", _SHARED),
    _a("dag-list-index", "8-cpu", _DAG + "[a, b].index(b)", "limit", _SHARED),
    _a("dag-list-count", "8-cpu", _DAG + "([a] * 2).count(b)", "limit", _SHARED),
    _a("dag-list-remove", "8-cpu", _DAG + "xs = [a]\nxs.remove(b)", "limit", _SHARED),
    _a("dag-tuple-index", "8-cpu", _DAG + "(a, a).index(b)", "limit", _SHARED),
    _a("dag-deque-count", "8-cpu", _DAG + "from collections import deque\ndeque([a, a]).count(b)", "limit", _SHARED),
    _a("dag-namedtuple-index", "8-cpu", _DAG + "from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(a, a).index(b)", "limit", _SHARED),
    _a("dag-list-subclass-count", "8-cpu", _DAG + "class L(list):\n    pass\nL([a, a]).count(b)", "limit", _SHARED),
    _a("dag-dict-get", "8-cpu", _DAG_TUPLE + "d = {}\nd.get(t)", "limit", _SHARED),
    _a("dag-dict-get-mapped", "8-cpu", _DAG_TUPLE + "list(map({}.get, [t]))", "limit", _SHARED),
    _a("dag-dict-setdefault", "8-cpu", _DAG_TUPLE + "d = {}\nd.setdefault(t, 1)", "limit", _SHARED),
    _a("dag-dict-pop", "8-cpu", _DAG_TUPLE + "d = {}\nd.pop(t, None)", "limit", _SHARED),
    _a("dag-set-add", "8-cpu", _DAG_TUPLE + "s = set()\ns.add(t)", "limit", _SHARED),
    _a("dag-set-add-stored", "8-cpu", _DAG_TUPLE + "add = set().add\nadd(t)", "limit", _SHARED),
    _a("dag-set-discard", "8-cpu", _DAG_TUPLE + "s = {1}\ns.discard(t)", "limit", _SHARED),
    _a("dag-ordereddict-move-to-end", "8-cpu", _DAG_TUPLE + "from collections import OrderedDict\nOrderedDict().move_to_end(t)", "limit", _SHARED),
    _a("dag-hash-builtin", "7.2-builtins", _DAG_TUPLE + "hash(t)", "limit", "hashing this value"),
    _a("dag-set-constructor", "8-cpu", _DAG_TUPLE + "set([t])", "limit", _SHARED),
    _a("dag-frozenset-generator", "8-cpu", _DAG_TUPLE + "frozenset(x for x in [t])", "limit", _SHARED),
    _a("dag-dict-constructor", "8-cpu", _DAG_TUPLE + "dict([(t, 1)])", "limit", _SHARED),
    _a("dag-dict-pair-generator", "8-cpu", _DAG_TUPLE + "dict([(x for x in (t, 1))])", "limit", _SHARED),
    _a("dag-set-alias", "8-cpu", _DAG_TUPLE + "f = set\nf([t])", "limit", _SHARED),
    _a("dag-frozenset-mapped", "8-cpu", _DAG_TUPLE + "list(map(frozenset, [[t]]))", "limit", _SHARED),
    _a("dag-set-display-star", "8-cpu", _DAG_TUPLE + "{*[t]}", "limit", _SHARED),
    _a("dag-set-update", "8-cpu", _DAG_TUPLE + "s = set()\ns.update([t])", "limit", _SHARED),
    _a("dag-set-issubset", "8-cpu", _DAG_TUPLE + "{1}.issubset([t])", "limit", _SHARED),
    _a("dag-dict-update", "8-cpu", _DAG_TUPLE + "d = {}\nd.update([(t, 1)])", "limit", _SHARED),
    _a("dag-dict-fromkeys", "8-cpu", _DAG_TUPLE + "dict.fromkeys([t])", "limit", _SHARED),
    _a("dag-dict-ior", "8-cpu", _DAG_TUPLE + "d = {}\nd |= [(t, 1)]", "limit", _SHARED),
    # equal frozensets built from each other hash cheaply and compare in 2**60 steps
    _a("dag-frozenset-pair-set-add", "8-cpu", "F = frozenset({1})\nG = frozenset({1})\nfor i in range(60):\n    F, G = frozenset({(F, G)}), frozenset({(G, F)})\ns = {G}\ns.add(F)", "limit", _SHARED),
    _a("dag-keys-isdisjoint", "8-cpu", _DAG_TUPLE + "{1: 2}.keys().isdisjoint([t])", "limit", _SHARED),
    # one tuple of a million items hashes in a few ms; a chunk repeating it 256 times is refused
    _a("dag-set-repeated-tuple", "8-cpu", "t = (0,) * 1000\nt = (t,) * 1000\nset([t] * 100000)", "limit", _SHARED),
    _a("dag-counter", "8-cpu", _DAG_TUPLE + _COUNTER + "Counter([t])", "limit", _SHARED),
    _a("dag-counter-update", "8-cpu", _DAG_TUPLE + _COUNTER + "c = Counter()\nc.update(iter([t]))", "limit", _SHARED),
    _a("dag-counter-most-common", "8-cpu", _DAG + _COUNTER + "c = Counter()\nc['x'] = a\nc['y'] = b\nc.most_common()", "limit", _SHARED),
    _a("dag-functools-cache", "8-cpu", _DAG_TUPLE + "import functools\n@functools.cache\ndef f(x):\n    return 1\nf(t)", "limit", _SHARED),
    _a("dag-lru-cache-keyword", "8-cpu", _DAG_TUPLE + "from functools import lru_cache\n@lru_cache(maxsize=4)\ndef f(x=0):\n    return 1\nf(x=t)", "limit", _SHARED),
    _a("dag-groupby", "8-cpu", _DAG + "import itertools\nlist(itertools.groupby([a, b]))", "limit", _SHARED),
    _a("dag-groupby-key", "8-cpu", _DAG + "import itertools\nlist(itertools.groupby([0, 1], key=lambda i: [a, b][i]))", "limit", _SHARED),
    _a("dag-statistics-median", "8-cpu", _DAG + "import statistics\nstatistics.median([a, b, a])", "limit", _SHARED),
    # functools.singledispatch: the sandbox's own object; its registry is private and bounded
    _a("singledispatch-registry", "6-policy", _SD + "f._registry", "runtime", "not available"),
    _a("singledispatch-registry-getattr", "6-policy", _SD + "getattr(f, '_registry')", "runtime", "_registry"),
    _a("singledispatch-flood", "8-memory", _SD + "for i in range(2000):\n    f.register(type('C', (), {}), len)", "runtime"),
    _a("singledispatch-flood-classes", "8-memory", _SD + "for i in range(1001):\n    class C:\n        pass\n    f.register(C, len)", "runtime", "at most 1000"),
    _a("singledispatch-not-class", "6-policy", _SD + "f.dispatch(1)", "runtime", "takes a class"),
    _a("singledispatch-default-globals", "6-frames", _SD + "f.default.__globals__", "rejected", "__globals__"),
    _a("singledispatch-slow-subclasscheck", "8-cpu", "from typing import Protocol\n" + _SD + "class P(Protocol):\n    def m(self): ...\nf.register(P, len)\nf(1)", "runtime", "runtime_checkable"),
    # calendar: checked integers only, no host objects, no text calendars
    _a("calendar-big-year", "8-cpu", "import calendar\ncalendar.leapdays(0, 10**100000)", "runtime", "calendar range"),
    _a("calendar-float-year", "6-policy", "import calendar\ncalendar.isleap(2024.5)", "runtime", "integer"),
    _a("calendar-module-graph", "7.3-module-graph", "import calendar\ncalendar.datetime", "runtime", "no attribute"),
    _a("calendar-textcalendar", "7.3-module-graph", "import calendar\ncalendar.TextCalendar(w=10**9)", "runtime", "no attribute"),
    _a("calendar-names-readonly", "6-policy", "import calendar\ncalendar.month_name[1] = 'x'", "runtime", "cannot be modified"),
    _a("calendar-timegm-bad", "6-policy", "import calendar\ncalendar.timegm([2024, 1, 1, 0, 0, 0])", "runtime", "takes a tuple"),
    _a("calendar-function-globals", "6-frames", "import calendar\ncalendar.isleap.__globals__", "rejected", "__globals__"),
    # statistics of two series copy both first: sizes and element work stay bounded
    _a("statistics-pair-range-too-long", "8-memory", "import statistics\nstatistics.covariance(range(10**9), range(10**9))", "limit", "longer than the sandbox allows"),
    _a("statistics-pair-replace", "6-policy", "import statistics\nstatistics.linear_regression([1, 2], [1, 3])._replace(slope=0)", "runtime", "_replace"),
    # __mro__ hands out only the classes a script may hold (issue 14): never a host base
    _a("statistics-pair-mro", "6-policy", "import statistics\n[c.__name__ for c in type(statistics.linear_regression([1, 2], [1, 3])).__mro__]", "ok", value=["LinearRegression", "tuple", "object"]),
    _a("statistics-pair-slow-item", "8-cpu", "import statistics\nclass Slow(float):\n    def __sub__(self, other):\n        while True:\n            pass\nstatistics.covariance([Slow(1), Slow(2)], [1, 2])", "runtime", "a subclass of a number cannot redefine __sub__"),
    _a("dag-statistics-mode", "8-cpu", _DAG_TUPLE + "import statistics\nstatistics.mode([t, t])", "limit", _SHARED),
    # the same calls on ordinary values keep their results
    _a("dag-calls-ok", "8-cpu", "from collections import Counter, deque\nimport functools, itertools, statistics\nrows = [[i % 3, i] for i in range(50)]\nd = {(1, 2): 'x'}\ns = {(1, 2)}\ns.add((3, 4))\n@functools.cache\ndef f(p):\n    return p[0]\n[sorted(rows)[:2], max(rows, key=lambda r: r[0]), min([[2], [1]]), rows.index([2, 2]), rows.count([0, 0]), d.get((1, 2)), d.pop((9,), 0), (3, 4) in s, len(set([(1, 2)] * 300)), Counter([(1,), (1,)]).most_common(), deque([[1]]).count([1]), f((5, 6)), [k for k, _ in itertools.groupby([[1], [1], [2]])], statistics.median([[1], [3], [2]])]", "ok", value=[[[0, 0], [0, 3]], [2, 2], [1], 2, 1, "x", 0, True, 1, [[[1], 2]], 1, 5, [[1], [2]], [2]]),
]  # fmt: skip

# -- issue 14: the class-making stand-ins (dataclasses, enum, typing.NamedTuple/TypedDict) -----
_DC = "from dataclasses import dataclass, field, asdict, astuple, fields\n"
_EN = "from enum import Enum, Flag, auto, unique\nclass Color(Enum):\n    RED = 1\n    GREEN = 2\n"
_ENS = "from enum import Enum\nclass S(str, Enum):\n    A = 'a'\n    B = 'b'\n"
_GN = "from typing import Generic, TypeVar\nT = TypeVar('T')\nclass Box(Generic[T]):\n    pass\n"
_NT = "from typing import NamedTuple, TypedDict\nclass P(NamedTuple):\n    x: int\nclass M(TypedDict):\n    a: int\n"
_DC_NODES = "@dataclass\nclass N:\n    kids: list\nn = N([])\nm = N([])\nfor i in range(40):\n    n = N([n, n])\n    m = N([m, m])\n"
_TOO_LONG = "would take too long"

EXTRA_ATTACKS += [
    # the enum metaclass, its member mapping and internals stay out of reach
    _a("enum-metaclass-type", "6-policy", _EN + "type(Color)", "runtime", "ScriptEnumType"),
    _a("enum-metaclass-class", "6-policy", _EN + "getattr(Color, '__class__')", "runtime", "__class__"),
    _a("enum-members-mapping", "6-policy", _EN + "Color.__members__", "rejected", "__members__"),
    _a("enum-members-getattr", "6-policy", _EN + "getattr(Color, '__members__')['RED']", "runtime", "__members__"),
    _a("enum-member-map", "6-policy", _EN + "Color._member_map_['X'] = 1", "rejected", "_member_map_"),
    _a("enum-member-reassign", "6-policy", _EN + "Color.RED = 5", "runtime", "cannot reassign member"),
    _a("enum-member-delete", "6-policy", _EN + "del Color.RED", "runtime", "cannot delete member"),
    _a("enum-mro", "6-policy", _EN + "[c.__name__ for c in Color.RED.__class__.__mro__]", "ok", value=["Color", "Enum", "object"]),
    _a("enum-class-mro-method", "6-policy", _EN + "Color.mro()", "runtime", "mro"),
    _a("enum-functional-api", "6-policy", "from enum import Enum\nEnum('Color', 'RED GREEN')", "runtime", "write a class"),
    _a("enum-unique-host-class", "6-policy", "from enum import unique\nunique(int)", "runtime", "script defines"),
    # class E(str, Enum): the joint metaclass (script str's + enum's) stays out of reach
    _a("enum-str-mixin-metaclass", "6-policy", _ENS + "type(S)", "runtime", "ScriptEnumType"),
    _a("enum-str-mixin-member-metaclass", "6-policy", _ENS + "type(type(S.A))", "runtime", "ScriptEnumType"),
    _a("enum-str-mixin-mro", "6-policy", _ENS + "[c.__name__ for c in S.A.__class__.__mro__]", "ok", value=["S", "str", "Enum", "object"]),
    _a("enum-str-mixin-members", "6-policy", _ENS + "getattr(S, '__members__')", "runtime", "__members__"),
    _a("enum-str-mixin-new", "6-policy", _ENS + "str.__new__(S, 'x')", "rejected", "__new__"),
    _a("enum-str-mixin-big-value", "8-memory", "from enum import Enum\nclass S(str, Enum):\n    A = 'x' * 10**9", "limit"),
    # member values and lookups hash a shared-reference DAG only through the guard
    _a("enum-dag-member-value", "8-cpu", _DAG_TUPLE + "from enum import Enum\nclass E(Enum):\n    A = t", "limit", _TOO_LONG),
    _a("enum-dag-call", "8-cpu", _DAG_TUPLE + _EN + "Color(t)", "limit", _TOO_LONG),
    _a("enum-dag-getitem", "8-cpu", _DAG_TUPLE + _EN + "Color[t]", "limit", _TOO_LONG),
    # @dataclass only on the script's own classes; fields hold what the script held
    _a("dc-host-class", "6-policy", _DC + "dataclass(int)", "runtime", "a class the script defines"),
    _a("dc-host-counter", "6-policy", _DC + "from collections import Counter\ndataclass(Counter)", "runtime", "a class the script defines"),
    _a("dc-fields-type-walk", "6-policy", _DC + "@dataclass\nclass P:\n    x: int\nfields(P)[0].type.__subclasses__()", "rejected", "__subclasses__"),
    _a("dc-field-class-walk", "6-policy", _DC + "@dataclass\nclass P:\n    x: int\n[c.__name__ for c in type(fields(P)[0]).__mro__]", "ok", value=["Field", "object"]),
    _a("dc-fields-type-getattr", "6-policy", _DC + "@dataclass\nclass P:\n    x: int\ngetattr(fields(P)[0].type, '__subclasses__')", "runtime", "__subclasses__"),
    _a("dc-factory-not-callable", "6-policy", _DC + "@dataclass\nclass P:\n    x: list = field(default_factory=1)", "runtime", "must be callable"),
    _a("dc-factory-host-builtin", "6-policy", _DC + "@dataclass\nclass P:\n    x: object = field(default_factory=getattr)\nP()", "runtime", "getattr"),
    _a("dc-default-host-namespace", "6-policy", _DC + "@dataclass\nclass P:\n    x: object = tools\nP().x.__dict__", "runtime", "__dict__ of OpaqueNamespace"),
    _a("dc-frozen-object-setattr", "6-policy", _DC + "@dataclass(frozen=True)\nclass P:\n    x: int\nobject.__setattr__(P(1), 'x', 2)", "rejected", "__setattr__"),
    _a("dc-frozen-setattr-builtin", "6-policy", _DC + "@dataclass(frozen=True)\nclass P:\n    x: int\nsetattr(P(1), 'x', 2)", "runtime", "cannot assign to field"),
    _a("dc-init-foreign-self", "6-policy", _DC + "@dataclass\nclass P:\n    x: int\nclass Q:\n    pass\nq = Q()\nP.__init__(q, 1)", "runtime", "takes an instance of P"),
    # asdict/astuple: cycles refused in one line, DAGs and deep values bounded
    _a("dc-asdict-cycle", "8-cpu", _DC + "@dataclass\nclass P:\n    x: list\np = P([])\np.x.append(p)\nasdict(p)", "runtime", "contains itself"),
    _a("dc-astuple-cycle", "8-cpu", _DC + "@dataclass\nclass P:\n    x: dict\np = P({})\np.x['me'] = p\nastuple(p)", "runtime", "contains itself"),
    _a("dc-asdict-dag", "8-cpu", _DAG + _DC + "@dataclass\nclass P:\n    x: list\nasdict(P(a))", "limit"),
    _a("dc-asdict-deep", "8-cpu", _DC + "@dataclass\nclass P:\n    x: list\nv = []\nfor i in range(5000):\n    v = [v]\nasdict(P(v))", "runtime", "recursion"),
    # generated __eq__/__hash__/__lt__ compare and hash through the DAG guard
    _a("dc-eq-dag", "8-cpu", _DAG + _DC + "@dataclass\nclass P:\n    x: list\nP(a) == P(b)", "limit", _TOO_LONG),
    _a("dc-order-dag", "8-cpu", _DAG + _DC + "@dataclass(order=True)\nclass P:\n    x: list\nP(a) < P(b)", "limit", _TOO_LONG),
    _a("dc-hash-dag", "8-cpu", _DAG_TUPLE + _DC + "@dataclass(frozen=True)\nclass P:\n    x: tuple\n{P(t)}", "limit", _TOO_LONG),
    # a field whose own __eq__/__hash__ is slow is script code: the budget stops it
    _a("dc-slow-field-eq", "8-cpu", _DC + "class Slow:\n    def __eq__(self, other):\n        while True:\n            pass\n@dataclass\nclass P:\n    x: object\nP(Slow()) == P(Slow())", "limit"),
    _a("dc-slow-field-hash", "8-cpu", _DC + "class Slow:\n    def __hash__(self):\n        while True:\n            pass\n@dataclass(frozen=True)\nclass P:\n    x: object\n{P(Slow())}", "limit"),
    # typing.NamedTuple / TypedDict: their metaclasses and host bases stay out of reach
    _a("nt-metaclass", "6-policy", _NT + "type(NamedTuple)", "runtime", "_NamedTupleMeta"),
    _a("td-metaclass", "6-policy", _NT + "type(M)", "runtime", "_TypedDictMeta"),
    _a("nt-mro", "6-policy", _NT + "[c.__name__ for c in P.__mro__]", "ok", value=["P", "tuple", "object"]),
    _a("nt-host-base", "6-policy", "from typing import NamedTuple\nclass P(NamedTuple, int):\n    x: int", "runtime", "only inherit from NamedTuple"),
    _a("td-host-base", "6-policy", "from typing import TypedDict\nclass M(TypedDict, int):\n    a: int", "runtime", "non-TypedDict base"),
    _a("td-dag-pairs", "8-cpu", _DAG_TUPLE + _NT + "M([(t, 1)])", "limit", _TOO_LONG),
    # typing.Generic: a stateless base; its parameters are never stored (the subscript guard
    # bounds the key as for any other subscript)
    _a("generic-mro", "6-policy", _GN + "[c.__name__ for c in Box.__mro__]", "ok", value=["Box", "Generic", "object"]),
    _a("generic-class-getitem", "6-policy", _GN + "getattr(Generic, '__class_getitem__')", "runtime", "__class_getitem__"),
    _a("generic-new-foreign", "6-policy", _GN + "getattr(Generic, '__new__')(int)", "runtime", "__new__"),
    _a("generic-self-private", "6-policy", _GN + "b = Box()\nb._secret = 1\nGeneric.__slots__", "rejected", "__slots__"),
    _a("generic-dag-params", "8-cpu", _DAG_TUPLE + _GN + "Box[t]", "limit", "shared references"),
    _a("generic-instantiate", "6-policy", _GN + "Generic()", "runtime", "only as a base class"),
    _a("class-metaclass-keyword-hint", "6-policy", "class A(metaclass=type):\n    pass", "rejected", "use a class decorator"),
    # case K.x compares in a guard: the attribute read and the == are checked
    _a("match-named-value-dag", "8-cpu", _DAG + "class K:\n    pass\nK.v = b\nmatch a:\n    case K.v:\n        1", "limit", _TOO_LONG),
    _a("match-named-value-dunder", "6-policy", "class K:\n    pass\nmatch 1:\n    case K.__class__:\n        1", "runtime", "__class__"),
    _a("match-named-value-ok", "6-policy", _EN + "def f(c):\n    match c:\n        case Color.RED | Color.GREEN if c.value > 1:\n            return 'g'\n        case Color.RED:\n            return 'r'\n    return 'o'\n[f(Color.RED), f(Color.GREEN), f(3)]", "ok", value=["r", "g", "o"]),
]  # fmt: skip

DEADLINE_ATTACKS += [
    # a DAG of dataclass instances: every generated __eq__/__repr__ call checks the budget
    _a("dc-eq-instance-dag", "8-cpu", _DC + _DC_NODES + "n == m", "limit"),
    _a("dc-repr-instance-dag", "8-cpu", _DC + _DC_NODES + "repr(n)", "limit"),
]  # fmt: skip

PROCESS_ONLY_ATTACKS: list[Any] = [
    # -- §7.1: interpreter crashes (SIGSEGV in CPython 3.11) ---------------------------------
    # findings7 F06: the script's map()/filter() read ticked inputs (a Python generator per
    # level), so a deep chain ends in RecursionError instead of crashing the C stack
    _a("crash-deep-map-chain", "7.1-crash", "it = iter([1])\nfor i in range(5000):\n    it = map(abs, it)\nnext(it)", "runtime", "recursion"),
    _a("crash-deep-generator-chain", "7.1-crash", "it = iter([1])\nfor i in range(40000):\n    it = (x for x in it)\nnext(it)", "sandbox", "SIGSEGV"),
    _a("crash-deep-filter-chain", "7.1-crash", "it = [1]\nfor i in range(5000):\n    it = filter(None, it)\nsum(it)", "runtime", "recursion"),
    # -- §8.2 residual: slow C operations with no budget check between them --------------
    # Straight-line code runs no loop tick between its operations: forty divisions of
    # million-bit ints (each bounded, about half a second). Each division now checks the
    # deadline first (findings11), so the worker may report the timeout itself or be
    # killed by the parent at the deadline, whichever comes first under load: a `limit`
    # either way. (Comparing or hashing shared-reference DAGs used to be the example:
    # dagguard refuses those in both modes, see the `dag-*` entries above.)
    _a("straight-line-slow-c", "8-cpu", "x = 10 ** 300000\ny = 10 ** 150000 + 1\n" + "q = x // y\n" * 40, "limit"),
]  # fmt: skip
"""Attacks only process isolation contains: real interpreter crashes, and straight-line
C work that runs past the deadline between two budget checks."""
