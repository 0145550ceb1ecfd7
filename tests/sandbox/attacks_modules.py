"""Attacks on the issue-14 stand-ins (decimal, fractions, pprint, uuid, difflib, csv, io, …).

Run in both modes by ``test_attack_suite.py``: reaching a host object through a returned
value's attributes is refused, huge sizes are refused before the work, slow paths are
bounded, callbacks that raise surface as the script's own error.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from sandbox_support import load

__all__ = ["MODULE_ATTACKS", "MODULE_DEADLINE_ATTACKS", "MODULE_MEMORY_ATTACKS"]


def _base() -> ModuleType:
    return load("attacks.py")


Attack = _base().Attack


def _a(
    id: str, category: str, source: str, expect: str, message: str | None = None, **value: Any
) -> Any:
    return Attack("m-" + id, category, source, expect, message, **value)


_D = "from decimal import Decimal, getcontext, localcontext, Context, setcontext\n"

MODULE_ATTACKS: list[Any] = [
    # -- host objects through returned values ------------------------------------------------
    _a(
        "decimal-class-module",
        "6-policy",
        _D + "Decimal(1).__class__.__module__",
        "rejected",
        "__module__",
    ),
    _a(
        "decimal-class-bases",
        "6-policy",
        _D + "Decimal(1).__class__.__bases__",
        "rejected",
        "__bases__",
    ),
    _a("decimal-context-real", "6-policy", _D + "getcontext()._real", "runtime", "_real"),
    _a("decimal-context-traps", "6-policy", _D + "getcontext().traps", "runtime", "traps"),
    _a(
        "decimal-context-new-attr",
        "6-policy",
        _D + "getcontext().evil = 1",
        "runtime",
        "no setting",
    ),
    _a(
        "decimal-setcontext-foreign",
        "6-policy",
        _D + "class C:\n    pass\nsetcontext(C())",
        "runtime",
        "Context",
    ),
    _a("decimal-as-tuple-plain", "6-policy", _D + "type(Decimal('1.5').as_tuple()).__name__", "ok"),
    _a("stringio-buffer", "6-policy", "import io\nio.StringIO().buffer", "runtime", "buffer"),
    _a(
        "bytesio-getbuffer",
        "6-policy",
        "import io\nio.BytesIO(b'x').getbuffer()",
        "runtime",
        "getbuffer",
    ),
    _a(
        "csv-reader-dialect-class",
        "6-policy",
        "import csv\ncsv.reader([]).dialect.__class__.__subclasses__()",
        "rejected",
        "__subclasses__",
    ),
    _a(
        "csv-dictwriter-writer",
        "6-policy",
        "import csv, io\ncsv.DictWriter(io.StringIO(), ['a']).writer",
        "runtime",
        "writer",
    ),
    _a(
        "csv-register-dialect",
        "6-policy",
        "import csv\ncsv.register_dialect('x', delimiter=';')",
        "runtime",
        "register_dialect",
    ),
    _a(
        "matcher-isjunk",
        "6-policy",
        "import difflib\ndifflib.SequenceMatcher().isjunk",
        "runtime",
        "isjunk",
    ),
    _a(
        "matcher-method-func",
        "6-policy",
        "import difflib\ndifflib.SequenceMatcher().ratio.__func__",
        "rejected",
        "__func__",
    ),
    _a("uuid-is-safe-enum", "6-policy", "import uuid\nuuid.uuid4().is_safe", "runtime"),
    _a("uuid1-mac", "6-policy", "import uuid\nuuid.uuid1()", "runtime", "uuid1"),
    _a(
        "zoneinfo-traversal",
        "6-policy",
        "from zoneinfo import ZoneInfo\nZoneInfo('../../../etc/passwd')",
        "runtime",
        "No time zone",
    ),
    _a(
        "zoneinfo-from-file",
        "6-policy",
        "from zoneinfo import ZoneInfo\nimport io\nZoneInfo.from_file(io.BytesIO(b'TZif'))",
        "runtime",
        "not available",
    ),
    _a("io-open", "6-policy", "import io\nio.open('/etc/passwd')", "runtime", "open"),
    # -- huge sizes and slow paths -----------------------------------------------------------
    _a("decimal-int-huge-exponent", "8-cpu", _D + "int(Decimal('1e999999'))", "limit", "exponent"),
    _a("decimal-int-large", "8-cpu", _D + "int(Decimal('1e90000'))", "limit", "int"),
    _a("decimal-prec-huge", "8-cpu", _D + "getcontext().prec = 10**9", "limit", "precision"),
    _a(
        "decimal-localcontext-prec",
        "8-cpu",
        _D + "with localcontext(prec=10**6) as c:\n    Decimal(2).ln()",
        "limit",
        "precision",
    ),
    _a("decimal-context-ctor", "8-cpu", _D + "Context(Emax=10**9)", "limit", "Emax"),
    _a("decimal-pow-overflow", "8-cpu", _D + "Decimal(10) ** 10**9", "runtime", "Emax"),
    _a(
        "decimal-format-huge", "8-cpu", _D + "format(Decimal('1e999999'), 'f')", "limit", "exponent"
    ),
    _a("decimal-digits", "8-cpu", _D + "Decimal('7' * 50000)", "limit", "digits"),
    _a("decimal-tuple-digits", "8-cpu", _D + "Decimal((0, (1,) * 50000, 0))", "limit", "digits"),
    _a("decimal-ratio-tiny", "8-cpu", _D + "Decimal('1e-99999').as_integer_ratio()", "limit"),
    _a(
        "decimal-floor-huge",
        "8-cpu",
        _D + "import math\nmath.floor(Decimal('1e99999'))",
        "limit",
        "int",
    ),
    _a(
        "fraction-pow",
        "8-cpu",
        "from fractions import Fraction\nFraction(3, 7) ** 10**8",
        "limit",
        "too large",
    ),
    _a(
        "fraction-square-loop",
        "8-cpu",
        "from fractions import Fraction\nf = Fraction(3, 7)\nwhile True:\n    f = f * f",
        "limit",
    ),
    _a(
        "fraction-text-exponent",
        "8-cpu",
        "from fractions import Fraction\nFraction('1e999999999')",
        "limit",
        "exponent",
    ),
    _a(
        "fraction-decimal-exponent",
        "8-cpu",
        "from fractions import Fraction\nfrom decimal import Decimal\nFraction(Decimal('1e99999'))",
        "limit",
        "exponent",
    ),
    _a(
        "difflib-quadratic",
        "8-cpu",
        "import difflib\ndifflib.SequenceMatcher(None, 'ab' * 20000, 'ba' * 20000).ratio()",
        "limit",
        "quadratic",
    ),
    _a(
        "difflib-close-matches",
        "8-cpu",
        "import difflib\ndifflib.get_close_matches('x' * 5000, ['y' * 5000] * 5000)",
        "limit",
    ),
    _a(
        "io-seek-gap",
        "7.2-memory",
        "import io\ns = io.StringIO()\ns.seek(10**12)\ns.write('x')",
        "limit",
        "in-memory file",
    ),
    _a(
        "io-write-flood",
        "7.2-memory",
        "import io\ns = io.BytesIO()\nwhile True:\n    s.write(b'x' * 10**6)",
        "limit",
    ),
    _a(
        "pprint-huge", "7.2-memory", "import pprint\npprint.pformat([[0] * 1000] * 100000)", "limit"
    ),
    _a(
        "pprint-stream",
        "6-policy",
        "import pprint, io\npprint.pprint(1, stream=io.StringIO())",
        "runtime",
        "stream",
    ),
    _a("sleep-past-deadline", "8-cpu", "import time\ntime.sleep(10**6)", "limit", "timed out"),
    # -- cycles and callbacks that raise ----------------------------------------------------
    _a("pprint-cycle", "6-policy", "import pprint\na = [1]\na.append(a)\npprint.pformat(a)", "ok"),
    _a(
        "pprint-repr-raises",
        "6-policy",
        "import pprint\nclass A:\n    def __repr__(self):\n        raise ValueError('no')\npprint.pformat([A()])",
        "runtime",
        "no",
    ),
    _a(
        "pprint-repr-loops",
        "8-cpu",
        "import pprint\nclass A:\n    def __repr__(self):\n        while True:\n            pass\npprint.pformat([A()])",
        "limit",
    ),
    _a(
        "matcher-isjunk-raises",
        "6-policy",
        "import difflib\ndifflib.SequenceMatcher(lambda c: 1 / 0, 'abc', 'abd').ratio()",
        "runtime",
        "division",
    ),
    _a(
        "csv-writer-str-raises",
        "6-policy",
        "import csv, io\nclass A:\n    def __str__(self):\n        raise ValueError('bad')\ncsv.writer(io.StringIO()).writerow([A()])",
        "runtime",
        "bad",
    ),
    _a(
        "csv-reader-endless",
        "8-cpu",
        "import csv\ndef lines():\n    while True:\n        yield 'a,b'\nfor row in csv.reader(lines()):\n    pass",
        "limit",
    ),
    # -- asyncio: the run's own loop only ----------------------------------------------------
    _a(
        "asyncio-sleep-send",
        "7.1-host-loop",
        "import asyncio\nasyncio.sleep(1).send(None)",
        "runtime",
        "must be awaited",
    ),
    _a(
        "asyncio-sleep-await-attr",
        "7.1-host-loop",
        "import asyncio\nasyncio.sleep(1).__await__()",
        "rejected",
        "__await__",
    ),
    _a(
        "asyncio-sleep-coro",
        "7.1-host-loop",
        "import asyncio\nasyncio.sleep(1)._coro",
        "runtime",
        "_coro",
    ),
    _a(
        "asyncio-get-event-loop",
        "7.1-host-loop",
        "import asyncio\nasyncio.get_event_loop()",
        "runtime",
        "get_event_loop",
    ),
    _a(
        "asyncio-from-import-loop",
        "7.1-host-loop",
        "from asyncio import get_running_loop",
        "runtime",
        "get_running_loop",
    ),
    _a(
        "asyncio-run-in-function",
        "7.1-host-loop",
        "import asyncio\nasync def g():\n    return 1\ndef f():\n    return asyncio.run(g())\nf()",
        "runtime",
        "await main()",
    ),
    _a(
        "asyncio-sleep-past-deadline",
        "8-cpu",
        "import asyncio\nawait asyncio.sleep(10 ** 9)",
        "limit",
        "timed out",
    ),
    _a("asyncio-sleep-huge", "8-cpu", "import asyncio\nawait asyncio.sleep(10 ** 400)", "runtime"),
    _a(
        "asyncio-run-module-attrs",
        "7.3-module-graph",
        "import asyncio\nasyncio.run.__globals__",
        "rejected",
        "__globals__",
    ),
    # -- the second fresh-eyes pass (findings2, G01-G08) ---------------------------------
    _a(
        "g04-bytesio-subclass-tell-lies",
        "8-memory",
        "import io\nclass B(io.BytesIO):\n    def tell(self):\n        return 0\n"
        "f = B()\nfor i in range(16):\n    f.seek(50_000_000, 1)\nf.write(b'x')\n"
        "len(f.getvalue())",
        "runtime",
        "cannot subclass BytesIO in the sandbox: wrap it",
    ),
    _a(
        "g05-sequencematcher-subclass-sets-b2j",
        "8-cpu",
        "import difflib\nclass M(difflib.SequenceMatcher):\n    pass\n"
        "m = M(None, 'a', 'b')\nm.a = 'x' * 20_000\nm.b = 'x' * 20_000\n"
        "m.find_longest_match(0, 20_000, 0, 20_000)",
        "runtime",
        "cannot subclass SequenceMatcher in the sandbox: wrap it",
    ),
    _a(
        "g07-unicodedata-normalize-nfkd-expands-18x",
        "8-memory",
        "import unicodedata\nlen(unicodedata.normalize('NFKD', '\\ufdfa' * 10_000_000))",
        "limit",
        "could make it 18x longer",
    ),
    _a(
        "g03-csv-writerow-one-call-join",
        "8-memory",
        "import csv\nclass Sink:\n    def write(self, line):\n        return len(line)\n"
        "s = 'x' * 1_000_000\n"
        "csv.writer(Sink()).writerow([s] * 20)",
        "limit",
        "a csv row of more than",
    ),
    _a(
        "g03-csv-writerows-one-call-join",
        "8-memory",
        "import csv\nclass Sink:\n    def write(self, line):\n        return len(line)\n"
        "s = 'x' * 1_000_000\n"
        "csv.writer(Sink()).writerows([['a'], [s] * 20])",
        "limit",
        "a csv row of more than",
    ),
    _a(
        "g03-csv-dictwriter-one-call-join",
        "8-memory",
        "import csv\nclass Sink:\n    def write(self, line):\n        return len(line)\n"
        "s = 'x' * 1_000_000\n"
        "w = csv.DictWriter(Sink(), [str(i) for i in range(20)])\n"
        "w.writerow({str(i): s for i in range(20)})",
        "limit",
        "a csv row of more than",
    ),
    _a(
        "g01-ndiff-scores-every-pair-before-first-yield",
        "8-cpu",
        "import difflib, itertools\n"
        "perms = [''.join(p) for p in itertools.islice("
        "itertools.permutations('abcdefgh'), 0, 40320, 97)]\n"
        "next(difflib.ndiff(perms[:200], perms[200:400]))[:4]",
        "limit",
        "step limit",
    ),
    _a(
        "g01-ndiff-long-lines-pair",
        "8-cpu",
        "import difflib\nlist(difflib.ndiff(['ab' * 1000], ['ba' * 1000]))",
        "limit",
        "ndiff of lines whose lengths multiply past",
    ),
    _a(
        "g06-flag-member-wide-value-iteration",
        "8-cpu",
        "import enum\nclass F(enum.Flag):\n    A = 2 ** 200_000 - 1\nlen(list(F.A))",
        "runtime",
        "a Flag value wider than 1000 bits",
    ),
    _a(
        "g06-intflag-lookup-wide-value",
        "8-cpu",
        "import enum\nclass F(enum.IntFlag):\n    A = 1\nF(2 ** 200_000 - 1)",
        "runtime",
        "a Flag value wider than 1000 bits",
    ),
    _a(
        "g08-fraction-subclass-refused",
        "6-policy",
        "from fractions import Fraction\nclass F(Fraction):\n    pass\nF(1, 2)",
        "runtime",
        "cannot subclass Fraction",
    ),
    _a(
        "g08-fraction-pow-int-subclass-lying-abs",
        "8-cpu",
        "import fractions\nclass I(int):\n    def __abs__(self):\n        return 0\n"
        "r = fractions.Fraction(3, 2) ** I(2_000_000)\nr.numerator.bit_length()",
        "runtime",  # a number keeps its own abs() (findings11 F12-F14): refused at the class
        "a subclass of a number cannot redefine __abs__",
    ),
    _a(
        "g08-fraction-pow-int-subclass-lying-numerator",
        "8-cpu",
        "import fractions\nclass I(int):\n    @property\n    def numerator(self):\n"
        "        return 2_000_000\n"
        "r = fractions.Fraction(3, 2) ** I(2)\nassert r == fractions.Fraction(9, 4), r\nr.numerator",
        "runtime",  # a number keeps its own numerator (findings12): refused at the class
        "a subclass of a number cannot redefine numerator",
    ),
    # fourth attacker's F02: difflib's bounds read lengths through the builtin base type
    _a(
        "f02-difflib-lying-len-str-subclass",
        "8-cpu",
        "import difflib\nLIE = [True]\nclass S(str):\n    def __len__(self):\n"
        "        return 1 if LIE[0] else 100_000\n"
        "alphabet = ''.join(chr(65 + i) for i in range(200))\n"
        "sm = difflib.SequenceMatcher(None, S(alphabet * 500), alphabet * 500)\n"
        "LIE[0] = False\nsm.ratio()",
        "limit",
        "quadratic",
    ),
    _a(
        "f02-difflib-lying-len-lines-and-words",
        "8-cpu",
        "import difflib\nclass S(str):\n    def __len__(self):\n        return 1\n"
        "class L(list):\n    def __len__(self):\n        return 1\n"
        "list(difflib.ndiff(L([S('ab' * 1000)]), [S('ba' * 1000)]))",
        "limit",
        "ndiff of lines whose lengths multiply past",
    ),
    _a(
        "f02-difflib-lying-len-close-matches",
        "8-cpu",
        "import difflib\nclass S(str):\n    def __len__(self):\n        return 1\n"
        "difflib.get_close_matches(S('x' * 5000), [S('y' * 5000)] * 5000)",
        "limit",
        "get_close_matches of this many long words",
    ),
    _a(
        "f02-difflib-subclasses-match-by-contents-ok",
        "8-cpu",
        "import difflib\nclass S(str):\n    def __len__(self):\n        return 0\n"
        "    def __getitem__(self, i):\n        raise ValueError('script method ran')\n"
        "    def __hash__(self):\n        raise ValueError('script method ran')\n"
        "r = difflib.SequenceMatcher(None, S('abcd'), 'abce').ratio()\n"
        "d = list(difflib.unified_diff([S('a\\n'), S('b\\n')], ['a\\n', 'c\\n'], lineterm=''))\n"
        "m = difflib.get_close_matches(S('appel'), [S('apple'), 'ape'])\n"
        "assert (r, d[-2:], m) == (0.75, ['-b\\n', '+c\\n'], ['apple', 'ape']), (r, d, m)\n"
        "r",
        "ok",
    ),
    # the same: the other stand-ins' bounds measure a str subclass by its base type
    _a(
        "f02-textwrap-lying-len",
        "8-cpu",
        "import textwrap\nclass S(str):\n    def __len__(self):\n        return 1\nlen(textwrap.wrap(S('ab ' * 2_000_000)))",
        "limit",
        "textwrap of more than",
    ),
    _a(
        "f02-fraction-text-lying-len",
        "8-cpu",
        "from fractions import Fraction\nclass S(str):\n    def __len__(self):\n        return 1\nFraction(S('1' * 200_000))",
        "limit",
        "a Fraction text longer than",
    ),
    _a(
        "f02-base64-lying-len",
        "8-memory",
        "import base64\nclass S(str):\n    def __len__(self):\n        return 1\nlen(base64.b64decode(S('A' * 6_000_000)))",
        "limit",
        "base64 input above",
    ),
    _a(
        "f02-zoneinfo-key-is-exact-ok",
        "6-policy",
        "import zoneinfo\nclass S(str):\n    def __hash__(self):\n        return 7\n"
        "z = zoneinfo.ZoneInfo(S('UTC'))\nassert type(z.key) is str, type(z.key)\nz.key",
        "ok",
    ),
]
"""Attacks on the issue-14 stand-ins (both modes; the second batch is appended below)."""

_ABC = "from abc import ABC, abstractmethod\n"
_CTX = "from contextlib import contextmanager, suppress, nullcontext, closing\n"
_DAG = "t = ()\nfor _ in range(100):\n    t = (t, t)\n"

MODULE_ATTACKS += [
    # -- abc: no metaclass, no register, no write to host functions ------------------------
    _a("abc-register-list", "6-policy", _ABC + "ABC.register(list)", "runtime", "subclass the ABC"),
    _a(
        "abc-register-own-class",
        "6-policy",
        _ABC + "class P(ABC):\n    pass\nP.register(dict)\nisinstance({}, P)",
        "runtime",
        "not available in the sandbox",
    ),
    _a(
        "abc-abstractmethod-host-function",
        "6-policy",
        _ABC + "from functools import lru_cache\nabstractmethod(lru_cache)",
        "runtime",
        "a function you define",
    ),
    _a(
        "abc-init-subclass-read",
        "6-policy",
        _ABC + "ABC.__init_subclass__",
        "runtime",
        "not available",
    ),
    _a(
        "abc-abstractmethods-clear",
        "6-policy",
        _ABC + "class A(ABC):\n    @abstractmethod\n    def f(self): ...\n"
        "A.__abstractmethods__ = frozenset()\nA()",
        "rejected",
    ),
    _a(
        "abc-base-write",
        "6-policy",
        _ABC + "ABC.register = lambda c: c",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "abc-private-on-subclass-ok",
        "6-policy",
        _ABC + "class A(ABC):\n    def __init__(self):\n        self._x = 2\nA()._x",
        "ok",
    ),
    # -- contextlib: the script's generator is stepped host-side; stops are never swallowed -
    _a(
        "contextmanager-generator-held",
        "6-policy",
        _CTX + "@contextmanager\ndef c():\n    yield 1\nc()._gen",
        "runtime",
        "_gen",
    ),
    _a(
        "contextmanager-class-over-host-function",
        "6-policy",
        _CTX + "@contextmanager\ndef c():\n    yield 1\ntype(c())(iter, ([1],), {})",
        "runtime",
        "a generator function you define",
    ),
    _a(
        "contextmanager-yields-host-object",
        "6-policy",
        _CTX + "@contextmanager\ndef c():\n    yield c\nwith c() as f:\n    f.__globals__",
        "rejected",
    ),
    _a(
        "suppress-base-exception-step-limit",
        "8-cpu",
        _CTX
        + "while True:\n    with suppress(BaseException):\n        while True:\n            pass",
        "limit",
    ),
    _a(
        "contextmanager-swallows-stop",
        "8-cpu",
        _CTX + "@contextmanager\ndef swallow():\n    while True:\n        try:\n            yield\n"
        "        except BaseException:\n            pass\nwhile True:\n    with swallow():\n"
        "        while True:\n            pass",
        "limit",
    ),
    _a(
        "suppress-tool-error-keeps-record",
        "6-policy",
        _CTX + "with suppress(Exception):\n    secret()\n'done'",
        "ok",
    ),
    _a(
        "closing-host-object",
        "6-policy",
        _CTX + "import json\nwith closing(json):\n    pass",
        "runtime",
        "close",
    ),
    _a(
        "exitstack-many-exits",
        "8-memory",
        "from contextlib import ExitStack\ns = ExitStack()\nfor i in range(20000):\n"
        "    s.callback(len, 'x')",
        "runtime",
        "at most 10000 exits",
    ),
    _a(
        "exitstack-exit-swallows-stop",
        "8-cpu",
        "from contextlib import ExitStack\nclass Eat:\n    def __enter__(self):\n        return self\n"
        "    def __exit__(self, t, e, tb):\n        return True\nwhile True:\n"
        "    with ExitStack() as s:\n        s.enter_context(Eat())\n        while True:\n"
        "            pass",
        "limit",
    ),
    _a(
        "exitstack-exit-gets-no-traceback",
        "6-policy",
        "from contextlib import ExitStack\nseen = []\nclass C:\n    def __enter__(self):\n"
        "        return self\n    def __exit__(self, t, e, tb):\n        seen.append(tb)\n"
        "        return True\nwith ExitStack() as s:\n    s.enter_context(C())\n    1 / 0\nseen",
        "ok",
        value=[None],
    ),
    _a(
        "exitstack-enter-module",
        "6-policy",
        "from contextlib import ExitStack\nimport json\nExitStack().enter_context(json)",
        "runtime",
        "context manager protocol",
    ),
    # -- functools.cached_property: the script's own instances, the private-name rule -------
    _a(
        "cached-property-private-on-stand-in-subclass",
        "6-policy",
        "from functools import cached_property\nfrom collections import Counter\n"
        "class C(Counter):\n    @cached_property\n    def _secret(self):\n        return 1\nC()._secret",
        "runtime",
        "_secret",
    ),
    _a(
        "cached-property-rename",
        "6-policy",
        "from functools import cached_property\nclass C:\n    @cached_property\n    def p(self):\n"
        "        return 1\nC.p.attrname = '__class__'",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "cached-property-func-swap",
        "6-policy",
        "from functools import cached_property\nclass C:\n    @cached_property\n    def p(self):\n"
        "        return 1\nC.p.func = len",
        "runtime",
        "cannot be modified",
    ),
    # -- itertools.tee: bounded branches, charged buffers ------------------------------------
    _a("tee-many-branches", "8-memory", "import itertools\nitertools.tee([1], 10**9)", "limit"),
    _a(
        "tee-infinite-lag",
        "8-memory",
        "from itertools import tee, count\na, b = tee(count())\nfor _ in range(10**8):\n    next(a)",
        "limit",
    ),
    # -- collections.ChainMap: maps checked at every use, keys bounded, walks charged -------
    _a(
        "chainmap-typing-alias-map",
        "6-policy",
        "from collections import ChainMap\nimport typing\nChainMap(typing.List)['x' * 10**7]",
        "runtime",
        "ChainMap holds dicts",
    ),
    _a(
        "chainmap-module-appended",
        "6-policy",
        "from collections import ChainMap\nimport json\nc = ChainMap()\nc.maps.append(json)\n"
        "c['loads']",
        "runtime",
        "ChainMap holds dicts",
    ),
    _a(
        "chainmap-maps-replaced",
        "6-policy",
        "from collections import ChainMap\nc = ChainMap()\nc.maps = 'x'\nc['a']",
        "runtime",
        "must be a list",
    ),
    _a(
        "chainmap-class-write",
        "6-policy",
        "from collections import ChainMap\nChainMap.get = lambda *a: 1",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "chainmap-subclass",
        "6-policy",
        "from collections import ChainMap\nclass C(ChainMap):\n    pass",
        "runtime",
        "cannot subclass ChainMap",
    ),
    _a(
        "chainmap-new-attribute",
        "6-policy",
        "from collections import ChainMap\nChainMap().evil = 1",
        "runtime",
        "evil",
    ),
    _a(
        "chainmap-dag-key",
        "8-cpu",
        "from collections import ChainMap\n" + _DAG + "ChainMap({1: 2})[t]",
        "limit",
        "hashing this value",
    ),
    _a(
        "chainmap-many-maps-walk",
        "8-cpu",
        "from collections import ChainMap\nd = {i: i for i in range(1000)}\n"
        "c = ChainMap(*([d] * 1000))\nwhile True:\n    len(c)",
        "limit",
    ),
    # -- string.Template: own class, regex guard, bounded output ------------------------------
    _a(
        "template-huge-result",
        "8-memory",
        "from string import Template\nTemplate('$a' * 10**6).substitute(a='x' * 1000)",
        "limit",
        "longer than",
    ),
    _a(
        "template-repeat-idpattern",
        "8-cpu",
        "from string import Template\nclass T(Template):\n    idpattern = 'a{1000000}{1000}'\n"
        "T('$a').substitute(a=1)",
        "limit",
    ),
    _a(
        "template-class-state",
        "6-policy",
        "from string import Template\nTemplate.delimiter = '%'",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "template-instance-write",
        "6-policy",
        "from string import Template\nt = Template('$a')\nt.template = 5",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "template-mapping-typing-alias",
        "6-policy",
        "from string import Template\nimport typing\n"
        "class T(Template):\n    idpattern = '[a-z]+'\nT('$' + 'x' * 10**6).substitute(typing.List)",
        "runtime",
        "Template substitution takes dicts",
    ),
    _a(
        "chainmap-repr-many-large-maps",
        "8-memory",
        "from collections import ChainMap\nd = {i: 'x' * 100 for i in range(9000)}\n"
        "repr(ChainMap(*([d] * 2000)))",
        "limit",
        "repr() of this ChainMap",
    ),
    _a(
        "chainmap-update-dag-keys",
        "8-cpu",
        "from collections import ChainMap\n" + _DAG + "ChainMap().update([(t, 1)])",
        "limit",
        "hashing this value",
    ),
    _a(
        "template-mapping-host-value",
        "6-policy",
        "from string import Template\nclass M:\n    def __getitem__(self, k):\n        return M\n"
        "Template('$a').substitute(M())",
        "ok",
    ),
    # -- typing.Protocol: metaclass never held, checks run no host code ----------------------
    _a(
        "protocol-metaclass",
        "6-policy",
        "from typing import Protocol\nclass P(Protocol):\n    pass\ntype(P)",
        "runtime",
        "not available",
    ),
    _a(
        "protocol-metaclass-build",
        "6-policy",
        "from typing import Protocol\nclass P(Protocol):\n    pass\n"
        "type(P)('X', (), {'__index__': lambda s: 1})",
        "runtime",
        "not available",
    ),
    _a(
        "protocol-register",
        "6-policy",
        "from typing import Protocol\nclass P(Protocol):\n    pass\nP.register(list)",
        "runtime",
        "register",
    ),
    _a(
        "protocol-member-reads-generator-internals",
        "6-policy",
        "from typing import Protocol, runtime_checkable\n@runtime_checkable\n"
        "class P(Protocol):\n    gi_frame: int\ndef g():\n    yield 1\nisinstance(g(), P)",
        "ok",
    ),
]

MODULE_DEADLINE_ATTACKS: list[Any] = [
    _a(
        "suppress-base-exception-deadline",
        "8-cpu",
        _CTX
        + "import time\nwhile True:\n    with suppress(BaseException):\n        time.sleep(10)",
        "limit",
        "timed out",
    ),
    _a(
        "contextmanager-swallows-deadline",
        "8-cpu",
        _CTX + "@contextmanager\ndef swallow():\n    while True:\n        try:\n            yield\n"
        "        except BaseException:\n            pass\n        finally:\n            pass\n"
        "import time\nwhile True:\n    with swallow():\n        time.sleep(10)",
        "limit",
        "timed out",
    ),
]
"""Stand-in attacks only the deadline ends (a sleep the stop interrupts, under the short
deadline, both modes)."""

MODULE_MEMORY_ATTACKS: list[Any] = [
    _a(
        "tee-infinite-lag-memory",
        "8-memory",
        "from itertools import tee, count\na, b = tee(count())\nfor _ in range(10**8):\n    next(a)",
        "limit",
        "tee buffering more than",
    ),
]
"""Stand-in attacks run under the small memory budget with no step limit (both modes)."""
