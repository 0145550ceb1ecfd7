"""Attacks from the fresh-eyes pass of issue 13 (F01, F04, F06, F07), run in both modes.

Run by ``test_attack_suite.py``. Each closes a class, not one script: no metaclass (the
callable that builds classes from an unchecked namespace) reaches a script by any path;
no helper writes to an object the script did not make; a script's ``__exit__`` never
receives a traceback; a script object cannot speak the event loop's protocol.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from sandbox_support import load

__all__ = ["BOUNDARY_ATTACKS"]


def _base() -> ModuleType:
    return load("attacks.py")


_base_module = _base()
Attack = _base_module.Attack
_UNSET = _base_module._UNSET


def _a(
    id: str,
    category: str,
    source: str,
    expect: str,
    message: str | None = None,
    value: Any = _UNSET,
) -> Any:
    return Attack("b-" + id, category, source, expect, message, value)


_META = "is a metaclass"
_FOREIGN = "cannot be modified in the sandbox"
_WRAPS = "import functools\ndef spoof():\n    pass\n"

BOUNDARY_ATTACKS: list[Any] = [
    # -- F06: a metaclass builds a class the compile policy never saw ---------------------
    _a(
        "bytes-metaclass-builds-class",
        "6-policy",
        "M = type(bytes)\n"
        "def size(self):\n    return 300_000_000\n"
        'Big = M("Big", (object,), {"__index__": size})\n'
        '"ab" * Big()',
        "runtime",
        _META,
    ),
    _a("bytearray-metaclass", "6-policy", "type(bytearray)", "runtime", _META),
    _a("bytes-class-attribute-metaclass", "6-policy", "bytes.__class__", "runtime", "bytes_type"),
    _a(
        "bytes-subclass-metaclass",
        "6-policy",
        "class B(bytes):\n    pass\ntype(B)",
        "runtime",
        _META,
    ),
    _a(
        "bytes-subclass-instance-class-class",
        "6-policy",
        "class B(bytes):\n    pass\nB(b'x').__class__.__class__",
        "runtime",
        "not available",
    ),
    _a("set-metaclass", "6-policy", "type(set)", "runtime", _META),
    _a("dict-metaclass", "6-policy", "type(dict)", "runtime", _META),
    _a("str-metaclass", "6-policy", "type(str)", "runtime", _META),
    _a(
        "counter-metaclass",
        "6-policy",
        "import collections\ntype(collections.Counter)",
        "runtime",
        _META,
    ),
    _a(
        "fraction-abcmeta",
        "6-policy",
        "from fractions import Fraction\ntype(Fraction)",
        "runtime",
        _META,
    ),
    _a("regexflag-enumtype", "6-policy", "import re\ntype(type(re.I))", "runtime", _META),
    _a("script-class-metaclass", "6-policy", "class A:\n    pass\ntype(A)", "runtime", _META),
    _a("script-class-type-read", "6-policy", "class A:\n    pass\nA.__class__", "runtime", "type"),
    _a(
        "metaclass-through-getattr",
        "6-policy",
        "getattr(bytes, '__class__')",
        "runtime",
        "not available",
    ),
    # -- F07 (needs F06): a script-made __await__ yields its own object to the loop ---------
    _a(
        "script-yields-to-host-loop",
        "7.7-control-flow",
        "M = type(bytes)\n"
        "def aw(self):\n    yield self\n"
        'Fut = M("Fut", (object,), {"__await__": aw, "_asyncio_future_blocking": True})\n'
        "async def main():\n    await Fut()\n"
        "await main()",
        "runtime",
        _META,
    ),
    # -- issue 14 names (branch names): each new door, abused --------------------------------
    _a(
        "names-doc-of-host-functions",
        "7.8-info-leak",
        "import json, functools\ndef mine():\n    pass\n"
        "[json.dumps.__doc__, len.__doc__, [].append.__doc__, functools.wraps(json.loads)(mine).__doc__]",
        "ok",
        value=[None, None, None, None],
    ),
    _a(
        "names-doc-not-a-string",
        "7.8-info-leak",
        "import json\nclass C:\n    __doc__ = json\nC.__doc__",
        "rejected",
        "__doc__",
    ),
    _a(
        "names-docstring-skips-the-tick",
        "8-recursion",
        'def down(n):\n    "only a docstring before the call"\n    return down(n + 1)\ndown(0)',
        "limit",
    ),
    _a(
        "names-setter-on-host-property",
        "7.4-c-attribute",
        "p = property(len)\np.setter",
        "runtime",
        "only when its functions are your own",
    ),
    _a(
        "names-setter-plants-host-function",
        "7.2-builtins",
        "import json\ndef g(self):\n    return 1\nclass C:\n    x = property(g)\n"
        "    x = x.setter(json.loads)\nc = C()\nc.x = '[1]'",
        "runtime",
        "takes a function you defined",
    ),
    _a(
        "names-getter-callable-object",
        "7.2-builtins",
        "class K:\n    def __call__(self, o):\n        return 1\n"
        "def g(self):\n    return 1\nproperty(g).getter(K())",
        "runtime",
        "takes a function you defined",
    ),
    _a(
        "names-property-fget-of-stand-in-class",
        "7.4-c-attribute",
        "import datetime\nd = datetime.date(2020, 1, 2)\ntype(d).year.fget",
        "runtime",
        "not available",
    ),
    _a(
        "names-property-object-read-from-class",
        "7.4-c-attribute",
        "def g(self):\n    return 1\nclass C:\n    x = property(g)\nC.x.setter",
        "runtime",
        "not available",
    ),
    _a(
        "names-none-type-metaclass",
        "6-policy",
        "N = type(None)\ntype(N)",
        "runtime",
        "metaclass",
    ),
    _a(
        "names-none-type-class-attribute",
        "7.4-c-attribute",
        "getattr(type(None), '__class__')",
        "runtime",
        "not available",
    ),
    _a(
        "names-none-type-subclass",
        "6-policy",
        "class N(type(None)):\n    pass\nN",
        "runtime",
        "cannot subclass",
    ),
    _a(
        "names-bytes-class-allocates",
        "8-memory",
        "b = b''.__class__(10 ** 9)\nlen(b)",
        "limit",
        "larger than the sandbox allows",
    ),
    _a(
        "names-type-of-bytearray-allocates",
        "8-memory",
        "b = type(bytearray())(10 ** 9)\nlen(b)",
        "limit",
        "larger than the sandbox allows",
    ),
    _a(
        "names-format-class-field",
        "6-format",
        "'{0.__class__.__base__.__subclasses__}'.format(1)",
        "runtime",
        "is not readable",
    ),
    _a(
        "names-format-item-then-dunder",
        "6-format",
        "'{0[k].__globals__}'.format({'k': lambda: 0})",
        "runtime",
        "is not readable",
    ),
    _a(
        "names-format-map-frame-field",
        "6-format",
        "g = (x for x in [1])\n'{g.gi_frame}'.format_map({'g': g})",
        "runtime",
        "is not readable",
    ),
    _a(
        "names-format-item-typing-forward-ref",
        "8-compile",
        "import typing\n('{0[' + 'x' * 10 ** 6 + ']}').format(typing.Optional)",
        "runtime",
        "forward reference",
    ),
    _a(
        "names-format-item-of-host-config",
        "7.5-host-state",
        "c = config()\n'{0[nested][admin]}'.format(c)",
        "ok",
        value="False",
    ),
    _a(
        "names-format-private-of-stand-in",
        "6-format",
        "import datetime\n'{0._date__year}'.format(datetime.date(2020, 1, 1))",
        "runtime",
        "not available",
    ),
    _a(
        "names-format-attribute-of-generator",
        "7.1-host-loop",
        "def c():\n    yield 1\nk = c()\n'{0.send}'.format(k)",
        "runtime",
        "not available",
    ),
    _a(
        "names-format-item-huge-key-result",
        "8-memory",
        "class G:\n    def __getitem__(self, k):\n        return 'x' * 10 ** 6\n"
        "('{0[a]}' * 200).format(G())",
        "limit",
    ),
    _a(
        "names-bytearray-slice-doubling",
        "8-memory",
        "ba = bytearray(10 ** 6)\nwhile True:\n    ba[0:0] = ba",
        "limit",
        "bytearray longer than",
    ),
    _a(
        "names-bytearray-append-slices-past-budget",
        "8-memory",
        "ba = bytearray()\nbig = b'x' * 10 ** 7\nfor i in range(100):\n    ba[len(ba):] = big",
        "limit",
        "bytearray longer than",
    ),
    _a(
        "names-bytearray-lying-len-value",
        "8-memory",
        "import itertools\nclass L:\n    def __len__(self):\n        return 1\n"
        "    def __iter__(self):\n        return itertools.cycle([1])\n"
        "ba = bytearray(b'ab')\nba[0:1] = L()",
        "limit",
    ),
    _a(
        "names-bytearray-aug-slice-growth",
        "8-memory",
        "ba = bytearray(b'x')\nwhile True:\n    ba[0:1] += ba",
        "limit",
    ),
    _a(
        "names-bytes-still-immutable",
        "7.5-host-state",
        "b = b'abc'\nb[0] = 1",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "names-bytearray-writer-attribute",
        "7.5-host-state",
        "ba = bytearray(b'a')\nba._target = 1",
        "runtime",
    ),
    _a(
        "names-except-star-split-override",
        "7.1-crash",
        "class G(ExceptionGroup):\n    def split(self, t):\n        return 1\n"
        "try:\n    raise G('g', [ValueError()])\nexcept* ValueError:\n    pass",
        "runtime",
        "cannot subclass ExceptionGroup",
    ),
    _a(
        "names-except-star-derive-override",
        "7.1-crash",
        "class G(BaseExceptionGroup):\n    def derive(self, excs):\n        return self\n"
        "try:\n    raise G('g', [ValueError(), KeyError()])\n"
        "except* ValueError:\n    pass\nexcept* KeyError:\n    pass",
        "runtime",
        "cannot subclass BaseExceptionGroup",
    ),
    _a(
        "names-except-star-enum-group-mixin",
        "7.1-crash",
        "from enum import Enum\nclass E(ExceptionGroup, Enum):\n    A = 1",
        "runtime",
        "cannot subclass ExceptionGroup",
    ),
    _a(
        "names-except-star-plant-split-on-instance",
        "7.1-crash",
        "eg = ExceptionGroup('g', [ValueError()])\neg.split = lambda t: 1",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "names-except-star-setattr-split",
        "7.1-crash",
        "eg = ExceptionGroup('g', [ValueError()])\nsetattr(eg, 'split', len)",
        "runtime",
        "cannot be modified",
    ),
    _a(
        "names-except-star-swallows-limit",
        "8-cpu",
        "n = 0\nwhile True:\n    try:\n        while True:\n            n += 1\n"
        "    except* BaseException as eg:\n        n = len(eg.exceptions)",
        "limit",
    ),
    _a(
        "names-except-star-deep-group",
        "8-recursion",
        "g = ExceptionGroup('x', [ValueError()])\nfor i in range(10 ** 5):\n"
        "    g = ExceptionGroup('x', [g])\n"
        "try:\n    raise g\nexcept* ValueError:\n    pass",
        "runtime",
        "recursion",
    ),
    _a(
        "names-except-star-finally-continue",
        "8-cpu",
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except* ValueError:\n        pass\n    finally:\n        continue",
        "limit",
    ),
    # -- F01: helpers that write attributes write only to the script's own objects ----------
    _a(
        "update-wrapper-host-class",
        "7.5-host-state",
        _WRAPS + "functools.update_wrapper(ToolError, spoof)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "update-wrapper-type-builtin",
        "7.5-host-state",
        "import functools\nclass Carrier:\n    pass\nc = Carrier()\nc.box = [1]\n"
        "functools.update_wrapper(type, c)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "wraps-host-builtin",
        "7.5-host-state",
        _WRAPS + "functools.wraps(spoof)(len)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "update-wrapper-stand-in-class",
        "7.5-host-state",
        _WRAPS + "import collections\nfunctools.update_wrapper(collections.Counter, spoof)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "total-ordering-host-class",
        "7.5-host-state",
        "import functools, collections\nfunctools.total_ordering(collections.OrderedDict)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "decimal-context-class-write",
        "7.5-host-state",
        "from decimal import Context\nContext.evil = [1]",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "setattr-decimal-context-class",
        "7.5-host-state",
        "from decimal import Context\nsetattr(Context, 'prec', 3)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "wraps-script-functions-still-works",
        "7.5-host-state",
        "import functools\n"
        "def deco(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(*args):\n        return fn(*args) + 1\n"
        "    return wrapper\n"
        "@deco\ndef hello(x):\n    return x\n"
        "[hello.__name__, hello.__qualname__, hello(1)]",
        "ok",
        value=["hello", "hello", 2],
    ),
    _a(
        "total-ordering-script-class-still-works",
        "7.5-host-state",
        "import functools\n@functools.total_ordering\nclass V:\n"
        "    def __init__(self, v):\n        self.v = v\n"
        "    def __eq__(self, o):\n        return self.v == o.v\n"
        "    def __lt__(self, o):\n        return self.v < o.v\n"
        "[V(1) >= V(2), V(3) >= V(2)]",
        "ok",
        value=[False, True],
    ),
    # -- F04: a script's __exit__ / __aexit__ never receives a traceback ----------------------
    _a(
        "exit-receives-traceback",
        "6-frames",
        "import json\nheld = []\nclass Catch:\n"
        "    def __enter__(self):\n        return self\n"
        "    def __exit__(self, t, e, tb):\n        held.append((t, e, tb))\n        return True\n"
        'with Catch():\n    json.loads("{bad")\n'
        "t, e, tb = held[0]\n[tb is None, t.__name__, type(e).__name__]",
        "ok",
        value=[True, "JSONDecodeError", "JSONDecodeError"],
    ),
    _a(
        "aexit-receives-traceback",
        "6-frames",
        "held = []\nclass Catch:\n"
        "    async def __aenter__(self):\n        return self\n"
        "    async def __aexit__(self, t, e, tb):\n        held.append(tb)\n        return True\n"
        "async def main():\n    async with Catch():\n        raise KeyError(1)\n"
        "await main()\nheld == [None]",
        "ok",
        value=True,
    ),
    _a(
        "exit-staticmethod-traceback",
        "6-frames",
        "class Catch:\n    def __enter__(self):\n        return self\n"
        "    @staticmethod\n    def __exit__(t, e, tb):\n        return True\n"
        "with Catch():\n    1 / 0",
        "runtime",
        "plain method",
    ),
    _a(
        "caught-exception-traceback-getattr",
        "6-frames",
        "try:\n    1 / 0\nexcept Exception as e:\n    x = getattr(e, '__traceback__')",
        "runtime",
        "__traceback__",
    ),
    # the chain is readable (issue 14) and value-checked; the frames behind it are not
    _a(
        "caught-exception-context",
        "6-frames",
        "try:\n    1 / 0\nexcept Exception as e:\n    x = [e.__context__, e.__cause__]\nx",
        "ok",
        value=[None, None],
    ),
    _a(
        "caught-exception-cause-getattr",
        "6-frames",
        "try:\n    try:\n        1 / 0\n    except Exception as e:\n        raise KeyError(1) from e\n"
        "except KeyError as k:\n    x = getattr(getattr(k, '__cause__'), '__traceback__')",
        "runtime",
        "__traceback__",
    ),
    # -- issue 14: the dunder doors of script classes (guards/script_classes.py) ----------------
    _a(
        "dunder-format-returns-non-str",
        "6-policy",
        "class P:\n    def __format__(self, spec):\n        return [print]\nf'{P()}'",
        "runtime",
        "__format__ must return a str",
    ),
    _a(
        "dunder-format-lying-str-subclass",
        "8-memory",
        "class Liar(str):\n    def __len__(self):\n        return 0\n"
        "class P:\n    def __format__(self, spec):\n        return Liar('ab')\n"
        "[type(f'{P()}').__name__, len(format(P(), ''))]",
        "ok",
        value=["str", 2],
    ),
    _a(
        "dunder-format-wide-spec-checked-first",
        "8-memory",
        "class P:\n    def __format__(self, spec):\n        return 'x'\nformat(P(), '>' + '9' * 9)",
        "limit",
        "format width",
    ),
    _a(
        "dunder-slots-class",
        "6-policy",
        "class P:\n    __slots__ = ('__class__',)",
        "runtime",
        "may not name",
    ),
    _a(
        "dunder-slots-dict",
        "6-policy",
        "class P:\n    __slots__ = ['__dict__']",
        "runtime",
        "may not name",
    ),
    _a(
        "dunder-slots-script-mark",
        "6-policy",
        "class P:\n    __slots__ = ('__scriptgate_script_class__',)",
        "runtime",
        "may not name",
    ),
    _a(
        "dunder-slots-one-call-flood",
        "8-memory",
        "class P:\n    __slots__ = tuple('s' + str(i) for i in range(5000))",
        "runtime",
        "at most 1000",
    ),
    _a(
        "dunder-slots-in-function",
        "6-policy",
        "def f():\n    __slots__ = 1\nf()",
        "rejected",
        "__slots__",
    ),
    _a(
        "dunder-match-args-reduce",
        "7.1-host-loop",
        "class P:\n    __match_args__ = ('__reduce_ex__',)\nmatch P():\n    case P(r):\n        r",
        "runtime",
        "may not name",
    ),
    _a(
        "dunder-match-args-non-str",
        "6-policy",
        "class P:\n    __match_args__ = (print,)",
        "runtime",
        "must hold str",
    ),
    _a(
        "dunder-match-args-builtin-method",
        "8-memory",
        "class P(str):\n    __match_args__ = ('zfill',)\nmatch P('a'):\n    case P(z):\n        z(10 ** 8)",
        "sandbox",
        "builtin",
    ),
    _a("dunder-vars-tool", "6-policy", "vars(echo)", "runtime", "your own classes"),
    _a("dunder-vars-print", "6-policy", "vars(print)", "runtime", "your own classes"),
    _a("dunder-vars-module", "6-policy", "import json\nvars(json)", "runtime", "your own classes"),
    _a("dunder-vars-locals", "6-policy", "vars()", "runtime", "locals are not available"),
    _a(
        "dunder-function-dict",
        "6-policy",
        "def f():\n    pass\nf.__dict__",
        "runtime",
        "your own classes",
    ),
    _a(
        "dunder-class-dict-mappingproxy",
        "6-policy",
        "class C:\n    pass\nC.__dict__",
        "runtime",
        "getattr(cls",
    ),
    _a(
        "dunder-dict-of-stand-in-subclass",
        "6-policy",
        "from collections import OrderedDict\nclass O(OrderedDict):\n    pass\nO().__dict__",
        "runtime",
        "your own classes",
    ),
    _a(
        "dunder-dict-dunder-key",
        "6-policy",
        "class C:\n    pass\nc = C()\nc.__dict__.update({'__deepcopy__': print})",
        "runtime",
        "cannot be set through __dict__",
    ),
    _a(
        "dunder-dict-made-by-script",
        "6-policy",
        # the snapshot's class is never handed out: __class__ is the script's dict, so this
        # makes a plain dict that writes through to nothing
        "class C:\n    pass\nc = C()\nd = vars(c).__class__({'_x': 1})\n[d, vars(c)]",
        "ok",
        value=[{"_x": 1}, {}],
    ),
    # dict.update(d, ...) is d.update(...) (findings9 F08): the snapshot's write checks apply
    _a(
        "dunder-dict-unbound-update-checks-dunders",
        "6-policy",
        "class C:\n    pass\nc = C()\nd = vars(c)\ndict.update(d, {'__init__': 1, 'z': 2})",
        "runtime",
        "cannot be set through __dict__",
    ),
    _a(
        "dunder-dict-unbound-update-is-the-bound-one",
        "6-policy",
        "class C:\n    pass\nc = C()\nd = vars(c)\ndict.update(d, {'z': 2})\n"
        "[hasattr(c, 'z'), sorted(vars(c))]",
        "ok",
        value=[True, ["z"]],
    ),
    _a(
        "dunder-dict-shared-reference-key",
        "8-cpu",
        "class C:\n    pass\nt = ()\nfor _ in range(60):\n    t = (t, t)\n"
        "d = vars(C())\n[d.get(t), d.pop(t, 0), d.setdefault('k', t) is t]",
        "ok",
        value=[None, 0, True],
    ),
    _a("dunder-attribute-on-print", "6-policy", "print.calls = 0", "runtime", _FOREIGN),
    _a("dunder-attribute-on-tool", "6-policy", "echo.calls = 0", "runtime", _FOREIGN),
    _a("dunder-attribute-on-builtin", "6-policy", "len.calls = 0", "runtime", _FOREIGN),
    _a(
        "dunder-attribute-on-stand-in",
        "6-policy",
        "import json\nsetattr(json.dumps, 'calls', 0)",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "dunder-attribute-on-partial",
        "6-policy",
        "import functools\ndef f():\n    pass\nfunctools.partial(f).calls = 0",
        "runtime",
        _FOREIGN,
    ),
    _a(
        "dunder-cause-host-object",
        "6-policy",
        "try:\n    raise ValueError('x') from print\nexcept ValueError as e:\n    r = e.__cause__\nr",
        "runtime",
        "must derive from BaseException",
    ),
    _a(
        "dunder-cause-write",
        "6-policy",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__context__ = print",
        "rejected",
        "__context__",
    ),
    _a(
        "dunder-context-traceback",
        "6-policy",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__context__.__traceback__",
        "rejected",
        "__traceback__",
    ),
    _a(
        "dunder-matmul-repeat",
        "8-memory",
        "import operator\nclass M(list):\n    def __rmatmul__(self, n):\n"
        "        return operator.mul(list(self), n)\n10 ** 9 @ M([1])",
        "limit",
    ),
    _a(
        "dunder-matmul-doubling",
        "8-memory",
        "class M(list):\n    def __matmul__(self, o):\n        return M(list.__add__(self, o))\n",
        "rejected",
        "__add__",
    ),
    _a(
        "dunder-imatmul-doubling",
        "8-memory",
        "class M(list):\n    def __imatmul__(self, o):\n        self.extend(o)\n        return self\n"
        "x = M([0] * 1000)\nwhile True:\n    x @= x",
        "limit",
    ),
    # -- match class patterns read attributes in C (second fresh-eyes pass, G00) ----------------
    _a(
        "match-class-keyword-send",
        "7.1-host-loop",
        "async def g():\n    pass\nc = g()\nmatch c:\n    case object(send=s):\n        r = s\nr",
        "sandbox",
        "your own classes",
    ),
    _a(
        "match-class-keyword-missing",
        "7.1-host-loop",
        "match 1:\n    case object(get_loop=gl):\n        r = gl",
        "sandbox",
        "your own classes",
    ),
    _a(
        "match-class-builtin-keyword",
        "8-memory",
        "match 'x':\n    case str(zfill=z):\n        r = z(10 ** 9)",
        "rejected",
        "plain name",
    ),
    _a(
        "match-class-builtin-base-method",
        "8-memory",
        "class S(str):\n    pass\ntry:\n    match S('x'):\n        case S(zfill=z):\n            pass\nexcept BaseException:\n    pass\nz(10 ** 9)",
        "sandbox",
        "builtin 'str'",
    ),
    _a(
        "match-class-dotted-class",
        "6-policy",
        "import datetime\nmatch datetime.date(2020, 1, 1):\n    case datetime.date(year=y):\n        r = y",
        "rejected",
        "plain name",
    ),
    _a(
        "match-class-own-ok",
        "6-policy",
        "class P:\n    def __init__(self, x):\n        self.x = x\nmatch P(2):\n    case P(x=v):\n        r = v\nr",
        "ok",
        value=2,
    ),
    _a(
        "match-class-shadowed-builtin",
        "6-policy",
        "int = object\nmatch 5:\n    case int(n):\n        r = n\n    case _:\n        r = 0\nr",
        "ok",
        value=5,
    ),
    _a("match-class-hidden-name", "6-policy", "_mc_int_ = object", "rejected", "_mc_int_"),
    _a(
        "match-class-alias-capture-rebinds",
        "8-memory",
        "S = str\nmatch 'a':\n    case S(zfill=S):\n        pass\nS(10 ** 8)",
        "sandbox",
        "your own classes",
    ),
    _a(
        "match-class-as-capture-rebinds",
        "8-memory",
        "H = str\nmatch ['a']:\n    case [H(zfill=z) as H]:\n        pass\nz(10 ** 8)",
        "sandbox",
        "your own classes",
    ),
    _a(
        "match-class-alias-of-object",
        "7.1-host-loop",
        "O = object\nasync def g():\n    pass\nmatch g():\n    case O(send=O):\n        pass\nO",
        "sandbox",
        "your own classes",
    ),
    _a(
        "match-class-not-a-type",
        "6-policy",
        "class P:\n    pass\nP = 3\nmatch 1:\n    case P(x=v):\n        pass",
        "sandbox",
        "needs a class",
    ),
    _a(
        "match-class-rebound-during-match",
        "7.1-host-loop",
        "class Good:\n    pass\nclass Evil:\n    @property\n    def x(self):\n        global P\n        P = Good\n        return 1\nP = object\nasync def g():\n    pass\nmatch [g(), Evil()]:\n    case [P(send=s), Evil(x=_)]:\n        r = s\nr",
        "sandbox",
        "your own classes",
    ),
    # -- fourth attack, F04: typing's process-wide cache keeps a subscript's key past the run;
    # a script object there has its __eq__ called by another run's lookup
    *(
        _a(
            f"typing-cache-key-{i}",
            "7.5-host-state",
            "import typing\nclass K:\n    def __call__(self):\n        return 1\n"
            "    def __hash__(self):\n        return 42\n"
            "    def __eq__(self, other):\n        return True\n" + expression,
            "runtime",
            "cannot be a typing subscript",
        )
        for i, expression in enumerate(
            [
                "typing.List[K()]",
                "typing.Optional[K()]",
                "typing.Dict[str, K()]",
                "typing.Callable[[K()], int]",
                "typing.Union[int, K()]",
                "typing.Literal[K()]",
                "typing.List[int] | K()",
                "K() | typing.List[int]",
                "typing.Tuple[(int, [K()])]",
                "f = typing.List\nk = K()\nf[k]",
                "import operator\noperator.getitem(typing.List, K())",
                "list[K()]",
            ]
        )
    ),
    # -- eval/exec of a string (issue 14): the same policy, the run's own hooks -----------
    _a(
        "eval-hook-override-getattr",
        "6-policy",
        "eval('s.upper()', {'_getattr_': lambda o, n: (lambda: 'owned'), 's': 'ab'})",
        "ok",
        value="AB",
    ),
    _a(
        "eval-hook-override-getiter",
        "8-cpu",
        "import itertools\n"
        "exec('for i in it:\\n    pass', {'_getiter_': lambda x: x, 'it': itertools.repeat(1, 10**7)})",
        "limit",
        "step limit",
    ),
    _a(
        "eval-hook-planted-after-exec",
        "6-policy",
        "ns = {}\nexec('def f(s):\\n    return s.upper()', ns)\n"
        "ns['_getattr_'] = lambda o, n: (lambda: 'owned')\nexec('pass', ns)\nns['f']('ab')",
        "ok",
        value="AB",
    ),
    _a(
        "eval-builtins-override",
        "6-policy",
        "eval('len(x)', {'__builtins__': {'len': lambda o: 99}, 'x': 'ab'})",
        "ok",
        value=2,
    ),
    _a(
        "eval-builtins-override-adds-open",
        "6-policy",
        "exec('f = open', {'__builtins__': {'open': print}})",
        "runtime",
        "'open' is not defined",
    ),
    _a(
        "eval-dict-receives-no-hook",
        "7.5-host-state",
        "ns = {}\nexec('x = 1', ns)\neval('y', ns, {'y': 2})\nsorted(ns)",
        "ok",
        value=["x"],
    ),
    _a("eval-hook-name-in-string", "6-policy", "eval('_getattr_')", "runtime", "starts with"),
    _a(
        "eval-builtins-name-in-string", "6-policy", "eval('__builtins__')", "runtime", "starts with"
    ),
    _a("eval-dunder-in-string", "6-policy", "eval('().__class__.__base__')", "runtime", "__base__"),
    _a(
        "eval-string-built-at-run-time",
        "6-policy",
        "eval('().' + '_' * 2 + 'class_' + '_.' + '_' * 2 + 'subclasses__()')",
        "runtime",
        "invalid attribute name",
    ),
    _a(
        "eval-function-globals",
        "6-policy",
        "ns = {}\nexec('def f():\\n    return 1', ns)\neval('f.__glo' + 'bals__', ns)",
        "runtime",
        "__globals__",
    ),
    _a(
        "eval-import-os",
        "7.3-module-graph",
        "exec('import ' + 'os')",
        "runtime",
        "No module named 'os'",
    ),
    _a(
        "eval-host-frame-locals",
        "7.5-host-state",
        "sorted(['items', 'key'], key=eval)",
        "runtime",
        "is not defined",
    ),
    _a(
        "eval-compile-refused",
        "6-policy",
        "compile('1', '<s>', 'eval')",
        "runtime",
        "eval() or exec()",
    ),
    _a("eval-recursion-bomb", "8-cpu", "s = 'eval(s)'\neval(s)", "runtime", "nested more than"),
    _a(
        "eval-recursion-bomb-retried",
        "8-cpu",
        "s = 'eval(s)'\ndef bomb():\n    try:\n        eval(s)\n    except RecursionError:\n"
        "        bomb()\n        bomb()\nbomb()",
        "limit",
        "recursion limit",
    ),
    _a(
        "eval-huge-source",
        "8-memory",
        "eval('1+' * 100_000 + '1')",
        "runtime",
        "more than the limit",
    ),
    _a("eval-deep-source", "8-cpu", "eval('-' * 7_000 + '1')", "runtime", "too complex"),
    _a(
        "eval-loop-past-steps", "8-cpu", "exec('while True:\\n    pass', {})", "limit", "step limit"
    ),
    _a(
        "eval-cpu-loop-past-deadline",
        "8-cpu",
        # 50 k characters: below guards.ticking's LARGE_INPUT, so only the deadline ends it
        "exec('s = \"a\" * 50_000\\nwhile True:\\n    t = s.upper()', {})",
        "limit",
        "timed out",
    ),
    _a(
        "eval-class-body-loop",
        "8-cpu",
        "exec('class A:\\n    while True:\\n        pass', {})",
        "limit",
        "step limit",
    ),
    _a(
        "eval-sleep-loop-past-deadline",
        "8-cpu",
        "exec('import time\\nwhile True:\\n    time.sleep(0.01)', {})",
        "limit",
        "timed out",
    ),
    # -- fifth attack, F01/F02: an exec string rebinds a builtin name in the script's globals
    # after the compiler trusted it (`len(a) * n` left unguarded); a script naming eval/exec
    # now proves nothing at module level, as a session's
    _a(
        "eval-rebinds-len-then-repeat",
        "8-memory",
        "exec('def len(v):\\n    return v')\na = 'x' * 1000\nn = 10 ** 6\ns = a * len(n)\nlen(s)",
        "limit",
        "too large",
    ),
    _a(
        "eval-rebinds-len-then-double",
        "8-memory",
        "exec('def len(v):\\n    return v')\na = 'b' * 10000000\nfor i in range(7):\n"
        "    a = len(a) + len(a)\n0",
        "limit",
        "too large",
    ),
    _a(
        "eval-rebinds-len-then-compare",
        "8-cpu",
        "exec('def len(v):\\n    return v')\nx = [1]\ny = [1]\nfor i in range(26):\n"
        "    x = [x, x]\n    y = [y, y]\nlen(x) == len(y)",
        "limit",
        "shared references",
    ),
    _a(
        "eval-rebinds-range-items-squaring",
        "8-cpu",
        "x = 10 ** 100000\nexec('def range(n):\\n    return [n]')\n"
        "for a in range(x):\n    for b in range(a * a):\n        for c in range(b * b):\n"
        "            for d in range(c * c):\n                for e in range(d * d):\n"
        "                    r = e.bit_length()\nr",
        "limit",
        "",
    ),
    _a(
        "eval-walrus-rebinds-len",
        "8-memory",
        "eval('(len := (lambda v: v))')\na = 'x' * 1000\ns = a * len(10 ** 6)\n0",
        "limit",
        "too large",
    ),
    # -- sixth attack: the compiler "proved" numbers that were not (a script class's __abs__,
    # __radd__, __sub__ return anything; a later comprehension generator or an except-as/case
    # capture rebinds a name), and a plain f-string field or `%` rendered a shared list
    *(
        _a(
            f"proof-not-a-number-{i}",
            "8-memory",
            "x = ['a' * 1000] * 1000\ny = [x] * 100\n" + body,
            "limit",
            "too large",
        )
        for i, body in enumerate(
            [
                "class O:\n    def __abs__(self):\n        return y\nlen(f'{abs(O())}')",
                "class O:\n    def __sub__(self, other):\n        return y\nlen('%s' % (O() - 1))",
                "class O:\n    def __radd__(self, other):\n        return y\nlen(f'{1 + O()}')",
                # findings18 M22: the rest of the numeric protocol a script class may define
                "class O:\n    def __truediv__(self, other):\n        return y\nlen(f'{O() / 2}')",
                "class O:\n    def __floordiv__(self, other):\n        return y\nlen(f'{O() // 2}')",
                "class O:\n    def __mod__(self, other):\n        return y\nlen(f'{O() % 2}')",
                "class O:\n    def __pow__(self, other):\n        return y\nlen(f'{O() ** 2}')",
                "class O:\n    def __rsub__(self, other):\n        return y\nlen(f'{2 - O()}')",
                "class O:\n    def __invert__(self):\n        return y\nlen(f'{~O()}')",
                "class O:\n    def __iadd__(self, other):\n        return y\nv = O()\nv += 1\nlen(f'{v}')",
                "class O:\n    def __round__(self, n=0):\n        return y\nlen(f'{round(O())}')",
                "r = [f'{n}' for n in range(1) for n in [y]]\nlen(r[0])",
                "def f():\n    e = 1\n    try:\n        raise ValueError(y)\n"
                "    except ValueError as e:\n        return f'{e}'\nlen(f())",
                "def f(v):\n    n = 1\n    match v:\n        case n:\n            pass\n"
                "    return f'{n}'\nlen(f(y))",
                "def f(v):\n    n = 1\n    match v:\n        case [*n]:\n            pass\n"
                "    return f'{n}'\nlen(f([y]))",
                "def f(v):\n    n = 1\n    match v:\n        case {**n}:\n            pass\n"
                "    return f'{n}'\nlen(f({1: y}))",
            ]
        )
    ),
    # findings19 N01/N02: an int subclass is its int value to C, past `type(n) is int` checks
    *(
        _a(f"int-subclass-size-{i}", "8-memory", "class I(int):\n    pass\n" + body, "limit", words)
        for i, (body, words) in enumerate(
            [
                ("len(bytearray(I(10**9)))", "refused"),
                ("len((1).to_bytes(I(10**9), 'big'))", "too large"),
                ("import random\nlen(random.sample([1, 2], I(10**8)))", "at most"),
                ("import random\nlen(random.choices([1, 2], k=I(10**8)))", "too large"),
                ("import itertools\nitertools.product([1], repeat=I(10**8))", "above 64"),
                ("import itertools\nitertools.combinations(range(1), I(10**8))", "at most"),
                ("import statistics\nstatistics.quantiles([1, 2, 3, 4], n=I(10**7))", "above"),
            ]
        )
    ),
    _a(
        # findings18 B11: `set[int](keys)` (or `f = set; f(keys)`) took the small-scalars
        # shortcut to the real set: 60,000 ints that all hash to 0 were 112 s in one C call
        "set-alias-call-of-colliding-ints",
        "8-cpu",
        "keys = [i * (2**61 - 1) for i in range(60000)]\nlen(set[int](keys))",
        "limit",
        "time",  # "timed out", or in process mode "exceeded the time limit" (a chunk's end)
    ),
    _a(
        "proof-abs-template-printf",
        "8-memory",
        "class O:\n    def __abs__(self):\n        return '%100000000d'\nlen(abs(O()) % 1)",
        "limit",
        "width",
    ),
]
"""The issue-13 fresh-eyes findings' classes, as attack scripts (both modes)."""
