"""Attack scripts against the sandbox (data only; the tests are in test_guards.py).

Every entry names the category of restrictedpython-notes §6-8 it belongs to and the
``error.kind`` the sandbox must produce (``"ok"`` when the script may run but must
not gain anything: then ``value`` is the expected result). Process isolation reuses
this list (``tests/sandbox/test_attack_suite.py``), so the scripts only rely on
the tools of :func:`attack_tools` and on :data:`ATTACK_LIMITS`.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.result import Limits

__all__ = ["ATTACKS", "ATTACK_LIMITS", "HOST_CONFIG", "Attack", "attack_tools"]

_UNSET: Any = object()


@dataclass(frozen=True)
class Attack:
    """One attack: ``expect`` is the ``error.kind`` (or ``"ok"``), ``message`` a substring."""

    id: str
    category: str
    source: str
    expect: str
    message: str | None = None
    value: Any = _UNSET

    @property
    def has_value(self) -> bool:
        """Whether ``value`` is set (only for ``expect == "ok"``)."""
        return self.value is not _UNSET


ATTACK_LIMITS = Limits(
    timeout=3.0,
    max_steps=200_000,
    max_tool_calls=50,
    max_output_chars=100_000,
    max_recursion=100,
    max_result_bytes=1_000_000,
    max_source_bytes=64_000,
)
"""The limits every attack runs under."""

HOST_CONFIG: dict[str, Any] = {"limit": 10, "nested": {"admin": False}}
"""A host dict the ``config`` tool returns as structured content (it must never change)."""


class _LeakyError(Exception):
    def __init__(self) -> None:
        super().__init__("request failed")
        self.headers = {"Authorization": "Bearer s3cr3t"}


def attack_tools() -> list[AgentTool]:
    """The tools the attack scripts may call: ``echo``, ``config``, ``secret``, ``path``."""

    def echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=(TextContent("echoed"),), structured_content={"args": params}
        )

    def config(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=(TextContent("config"),), structured_content=HOST_CONFIG)

    def secret(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise _LeakyError()

    def path(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=(TextContent("/etc"),), structured_content=pathlib.Path("/etc/passwd")
        )

    open_object = {"type": "object", "additionalProperties": True}
    return [
        AgentTool(
            name="echo",
            description="Echo the arguments.",
            parameters=open_object,
            execute=echo,
            output_schema={"type": "object"},
        ),
        AgentTool(
            name="config",
            description="Host configuration.",
            parameters=open_object,
            execute=config,
            output_schema={"type": "object"},
        ),
        AgentTool(name="secret", description="Fails.", parameters=open_object, execute=secret),
        AgentTool(
            name="path",
            description="Returns a path object.",
            parameters=open_object,
            execute=path,
            output_schema={"type": "string"},
        ),
    ]


def _a(
    id: str,
    category: str,
    source: str,
    expect: str,
    message: str | None = None,
    value: Any = _UNSET,
) -> Attack:
    return Attack(id, category, source, expect, message, value)


ATTACKS: list[Attack] = [
    # -- §6: frames, generators and coroutines (CVE-2023-37271) ------------------
    _a("gen-gi-frame", "6-frames", "g = (x for x in [1])\ng.gi_frame", "rejected", "gi_frame"),
    _a("gen-gi-frame-getattr", "6-frames", "g = (x for x in [1])\ngetattr(g, 'gi_frame')", "runtime", "gi_frame"),
    _a("gen-gi-code-getattr", "6-frames", "g = (x for x in [1])\ngetattr(g, 'gi_code')", "runtime"),
    _a("coro-cr-frame", "6-frames", "async def f():\n    return 1\nc = f()\nawait c\ngetattr(c, 'cr_frame')", "runtime"),
    _a("traceback-dunder", "6-frames", "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__", "rejected"),
    _a("traceback-getattr", "6-frames", "try:\n    1 / 0\nexcept Exception as e:\n    t = getattr(e, '__traceback__')", "runtime"),
    _a("frame-f-globals", "6-frames", "getattr(print, 'f_globals')", "runtime"),
    # -- §6: dunder walks and policy gaps ------------------------------------------
    _a("class-mro", "6-policy", "().__class__.__mro__[-1].__subclasses__()", "rejected", "__subclasses__"),
    _a("class-getattr", "6-policy", "getattr(getattr((), '__class__'), '__subclasses__')", "runtime", "__subclasses__"),
    _a("getattr-str-subclass-name", "6-policy", "class S(str):\n    pass\ngetattr(1, S('real'))", "runtime", "must be a str"),
    _a("function-globals", "6-policy", "def f():\n    pass\nf.__globals__", "rejected"),
    _a("builtins-name", "6-policy", "__builtins__", "rejected"),
    _a("rebind-hook", "6-policy", "_getattr_ = None", "rejected"),
    _a("walrus-hook", "6-policy", "(_getattr_ := None)", "rejected"),
    _a("global-hook", "6-policy", "def f():\n    global _print_\n    _print_ = None", "rejected"),
    _a("positional-only-hook-shadow", "6-policy", "def f(x, _write_=None, /):\n    return x", "rejected"),
    _a("dunder-import", "6-policy", "__import__('os')", "rejected"),
    _a("getattribute-method", "6-policy", "class A:\n    def __getattribute__(self, n):\n        return 1", "rejected"),
    _a("del-time-bomb", "6-policy", "class A:\n    def __del__(self):\n        pass", "rejected"),
    _a("metaclass-keyword", "6-policy", "class M:\n    pass\nclass A(metaclass=M):\n    pass", "rejected"),
    _a("type-builtin", "6-policy", "type('X', (), {'__eq__': lambda a, b: True})", "runtime", "type"),
    _a("object-subclasses", "6-policy", "object.__subclasses__()", "rejected"),
    _a("globals-builtin", "6-policy", "globals()", "runtime", "globals"),
    _a("vars-builtin", "6-policy", "vars()", "runtime"),
    _a("exec-call", "6-policy", "exec('x = 1')\nx", "ok", value=1),
    # eval/exec compile their string through the policy (issue 14; the b-eval-* attacks)
    _a("eval-call", "6-policy", "eval('1')", "ok", value=1),
    _a("compile-builtin", "6-policy", "compile('1', 'f', 'eval')", "runtime"),
    _a("open-builtin", "6-policy", "open('/etc/passwd').read()", "runtime", "open"),
    _a("try-star", "6-policy", "try:\n    pass\nexcept* ValueError:\n    pass\n1", "ok", value=1),
    _a("exception-group", "6-policy", "raise ExceptionGroup('x', [ValueError()])", "runtime"),
    _a("printed-name", "6-policy", "print(1)\nprinted", "rejected"),
    _a("match-kwd-dunder", "6-policy", "match 1:\n    case int(__class__=c):\n        c", "rejected"),
    _a("match-kwd-format", "6-policy", "match 'x':\n    case str(format=f):\n        f('{0.__class__}', 1)", "rejected", "plain name"),
    # -- §6: str.format and string.Formatter (CVE-2023-41039, CVE-2026-76825) ---
    _a("format-attribute", "6-format", "'{0.__class__}'.format(1)", "runtime", "only positions and names"),
    _a("format-index", "6-format", "'{0[x]}'.format({'x': 1})", "ok", value="1"),  # the item guard
    _a("format-map-attribute", "6-format", "'{a.real}'.format_map({'a': 1})", "ok", value="1"),
    _a("format-class-method", "6-format", "str.format('{0.__class__}', 1)", "runtime"),
    _a("formatter-import", "6-format", "from string import Formatter", "runtime", "Formatter"),
    _a("fstring-dunder", "6-format", "f'{(1).__class__.__base__}'", "rejected"),
    _a("format-builtin-width", "6-format", "format(1, '>10000000000')", "limit"),
    _a("fstring-dynamic-width", "6-format", "w = 10 ** 10\nf'{1:>{w}}'", "limit"),
    _a("fstring-constant-width", "6-format", "f'{1:>9999999999}'", "rejected"),
    _a("format-nested-width", "6-format", "'{:>{}}'.format(1, 10 ** 10)", "limit"),
    _a("printf-star-width", "6-format", "'%*d' % (10 ** 10, 1)", "limit", "width above"),
    _a("printf-star-precision", "6-format", "'%.*f' % (10 ** 6, 1.0)", "limit", "width above"),
    _a("printf-star-negative-width", "6-format", "'%*d' % (-10 ** 9, 1)", "limit", "width above"),
    _a("printf-star-int-subclass", "6-format", "class I(int):\n    pass\n'%*d' % (I(10 ** 9), 1)", "limit", "width above"),
    _a("printf-star-many", "6-format", "('%*s' * 2000) % ((9999, 'a') * 2000)", "limit", "too large"),
    _a("printf-literal-width", "6-format", "'%9999999999d' % 1", "limit"),
    # -- §7.1: interpreter crashes ----------------------------------------------
    _a("deep-tuple-hash", "7.1-crash", "t = ()\nfor i in range(12000):\n    t = (t,)\nhash(t)", "limit", "nested"),
    _a("deep-slice-chain", "7.1-crash", "s = slice(1)\nfor i in range(100000):\n    s = slice(s)", "runtime", "slice"),
    # -- §7.2: the tool surface ---------------------------------------------------
    _a("tool-private-keyword", "7.2-tool-surface", "echo(_trusted=True)", "rejected", "_trusted"),
    _a("tool-private-double-star", "7.2-tool-surface", "echo(**{'_trusted': True})", "runtime", "_trusted"),
    _a("tool-private-dict", "7.2-tool-surface", "echo({'_trusted': True})", "runtime", "_trusted"),
    _a("tool-str-subclass-argument", "7.2-tool-surface", "class S(str):\n    def __eq__(self, o):\n        return True\necho(text=S('x'))", "runtime", "not JSON"),
    _a("tool-object-argument", "7.2-tool-surface", "echo(fn=print)", "runtime", "not JSON"),
    _a("tool-live-dict", "7.2-tool-surface", "c = config()\nc['limit'] = 999\nc['nested']['admin'] = True\nconfig()", "ok", value={"limit": 10, "nested": {"admin": False}}),
    _a("tool-exception-secrets", "7.2-tool-surface", "try:\n    secret()\nexcept ToolError as e:\n    r = [str(e), hasattr(e, 'headers'), list(e.args)]\nr", "ok", value=["request failed", False, ["request failed"]]),
    # exc.__cause__/__context__ are readable (issue 14): the tool's own exception (its
    # headers) is chained to nothing the script can reach
    _a("tool-exception-cause", "7.2-tool-surface", "try:\n    secret()\nexcept ToolError as e:\n    r = [e.__cause__, e.__context__]\nr", "ok", value=[None, None]),
    _a("tool-rich-return-value", "7.2-tool-surface", "p = path()\np.read_text()", "tool", "not JSON"),
    _a("tool-function-closure", "7.2-tool-surface", "echo.__closure__", "rejected"),
    _a("tool-function-wrapped", "7.2-tool-surface", "getattr(echo, '__wrapped__')", "runtime"),
    _a("tool-function-partial-fields", "7.2-tool-surface", "echo.func", "runtime"),
    _a("tools-namespace-private", "7.2-tool-surface", "getattr(tools, '_members')", "runtime"),
    _a("tools-namespace-method", "7.2-tool-surface", "getattr(tools, 'member')('echo')", "runtime", "does not exist"),
    _a("tools-namespace-write", "7.2-tool-surface", "tools.echo = None", "runtime", "read-only"),
    _a("tool-unknown", "7.2-tool-surface", "tools.nope()", "runtime", "tools.nope does not exist"),
    _a("tool-positional-args", "7.2-tool-surface", "echo(1, 2)", "runtime", "keyword arguments"),
    # -- §7.3: module attribute graphs --------------------------------------------
    _a("datetime-sys", "7.3-module-graph", "import datetime\ndatetime.sys", "runtime", "no attribute"),
    _a("from-datetime-import-sys", "7.3-module-graph", "from datetime import sys", "runtime", "cannot import name"),
    _a("re-enum-builtins", "7.3-module-graph", "import re\nre.enum.bltns", "runtime"),
    _a("json-codecs", "7.3-module-graph", "import json\njson.codecs", "runtime"),
    _a("json-function-globals", "7.3-module-graph", "import json\ngetattr(json.loads, '__globals__')", "runtime"),
    _a("import-os", "7.3-module-graph", "import os", "runtime", "not available"),
    # `import sys` is a stand-in of plain values (world/modules/sys.py): the host's is unreachable
    _a("import-sys-modules", "7.3-module-graph", "import sys\nsys.modules", "runtime", "has no attribute"),
    # sys.stdout is the run's own output (findings18 M13): never the host's stream
    _a("import-sys-stdout", "7.3-module-graph", "import sys\nsys.stdout.buffer", "runtime", "not available"),
    _a("import-sys-settrace", "7.3-module-graph", "import sys\nsys.settrace", "runtime", "has no attribute"),
    _a("import-sys-getframe", "7.3-module-graph", "from sys import _getframe", "runtime", "cannot import name"),
    _a("import-sys-values", "7.3-module-graph", "import sys\nsys.setrecursionlimit(10)\n[type(sys.maxsize).__name__, type(sys.version_info).__name__]", "ok", value=["int", "tuple"]),
    _a("import-builtins", "7.3-module-graph", "import builtins", "rejected", "reserved"),
    _a("import-builtins-alias", "7.3-module-graph", "import builtins as b", "rejected"),
    _a("import-shutil", "7.3-module-graph", "import shutil", "runtime", "not available"),
    _a("import-subprocess", "7.3-module-graph", "import subprocess", "runtime"),
    _a("import-dotted", "7.3-module-graph", "import os.path", "runtime"),
    _a("import-relative", "7.3-module-graph", "from . import x", "runtime"),
    _a("import-star", "7.3-module-graph", "from json import *\ndumps([1])", "ok", value="[1]"),
    _a("import-star-binds-no-private-name", "7.3-module-graph", "from re import *\n_compile", "runtime", "_compile"),
    _a("import-star-not-a-stand-in", "7.3-module-graph", "from os import *", "rejected", "import the names you use"),
    _a("import-star-in-function", "7.3-module-graph", "def f():\n    from json import *\n    return dumps\nf()", "rejected", "top level"),
    _a("import-namespace-method", "7.3-module-graph", "from json import member", "runtime"),
    _a("module-as-value", "7.3-module-graph", "import json\nj = json\nj.loads('1') + j.member", "runtime"),
    _a("datetime-mro", "7.3-module-graph", "import datetime\ndatetime.datetime.mro()", "runtime"),
    _a("pattern-groupindex-proxy", "7.3-module-graph", "import re\nre.compile('(?P<a>x)').groupindex", "runtime"),
    _a("collections-userstring", "7.3-module-graph", "import collections\ncollections.UserString('{0.__class__}').format(1)", "runtime"),
    # -- §7.4: C-level attribute access -------------------------------------------
    _a("import-operator", "7.4-c-attribute", "import operator\noperator.attrgetter('__class__.__subclasses__')(1)()", "runtime"),
    _a("import-inspect", "7.4-c-attribute", "import inspect", "runtime"),
    _a("typing-get-type-hints", "7.4-c-attribute", "import typing\ntyping.get_type_hints", "runtime"),
    _a("functools-partial", "7.4-c-attribute", "import functools\nfunctools.partial(len).func.__self__", "rejected"),
    _a("import-ctypes", "7.4-c-attribute", "import ctypes", "runtime"),
    _a("import-pickle", "7.4-c-attribute", "import pickle", "runtime"),
    # -- §7.5: host state integrity -----------------------------------------------
    _a("module-attribute-write", "7.5-host-state", "import math\nmath.pi = 3", "runtime", "read-only"),
    _a("host-class-write", "7.5-host-state", "import datetime\ndatetime.date.today = None", "runtime", "cannot be modified"),
    _a("builtin-function-write", "7.5-host-state", "len.x = 1", "runtime", "cannot be modified"),
    # the script's own functions take attributes (issue 14: `wrapper.calls = 0`); a stand-in's do not
    _a("function-attribute-write", "7.5-host-state", "def f():\n    pass\nf.x = 1\nimport json\njson.loads.x = 1", "runtime", "cannot be modified"),
    _a("json-encoder-table", "7.5-host-state", "import json\njson.encoder.ESCAPE_DCT['a'] = 'b'", "runtime"),
    _a("random-module-state", "7.5-host-state", "import random\nrandom.seed(1)\nrandom.randint(0, 10 ** 9)", "ok"),
    # -- §7.6: objects that call back later ----------------------------------------
    _a("eq-planted-in-tool-args", "7.6-callback", "class E:\n    def __eq__(self, o):\n        return True\necho(x=[E()])", "runtime", "not JSON"),
    _a("object-as-script-value", "7.6-callback", "class E:\n    def __eq__(self, o):\n        return True\nE()", "ok", value="<E object>"),
    _a("function-as-script-value", "7.6-callback", "print", "ok", value="<function object>"),
    # -- §7.7: exceptions as control flow ------------------------------------------
    _a("raise-system-exit", "7.7-control-flow", "raise SystemExit(0)", "runtime", "SystemExit"),
    _a("raise-keyboard-interrupt", "7.7-control-flow", "raise KeyboardInterrupt", "runtime", "KeyboardInterrupt"),
    _a("raise-base-exception", "7.7-control-flow", "raise BaseException('x')", "runtime"),
    _a("raise-generator-exit", "7.7-control-flow", "raise GeneratorExit", "runtime"),
    _a("bare-except-swallows-limit", "7.7-control-flow", "while True:\n    try:\n        while True:\n            pass\n    except:\n        pass", "limit"),
    _a("finally-continue-swallows-limit", "7.7-control-flow", "while True:\n    try:\n        while True:\n            pass\n    finally:\n        continue", "limit"),
    _a("except-base-exception", "7.7-control-flow", "try:\n    while True:\n        pass\nexcept BaseException:\n    pass\n1", "limit"),
    # -- §7.8: information leaks -------------------------------------------------------
    _a("id-builtin", "7.8-info-leak", "id(1)", "runtime", "id"),
    _a("hash-builtin-keyed", "7.8-info-leak", "hash(1) == 1 or hash(-1) == -2", "ok", value=False),
    # -- §8: CPU ------------------------------------------------------------------------
    _a("while-true", "8-cpu", "while True:\n    pass", "limit", "step limit"),
    _a("huge-range", "8-cpu", "for i in range(10 ** 18):\n    pass", "limit", "range"),
    _a("endless-generator", "8-cpu", "def g():\n    while True:\n        yield 1\nfor x in g():\n    pass", "limit"),
    _a("raise-catch-loop", "8-cpu", "while True:\n    try:\n        raise ValueError\n    except ValueError:\n        pass", "limit"),
    _a("itertools-count-sum", "8-cpu", "import itertools\nsum(itertools.count())", "limit"),
    # a long scalar repeated in a list: `t in a` compares t with every item, a memcmp each
    _a("in-list-repeated-long-string", "8-cpu", "s = 'x' * 10 ** 6\nt = ''.join(['x'] * 10 ** 6)\na = [s] * 10 ** 5\nt in a", "limit", "shared references"),
    _a("in-list-repeated-big-int", "8-cpu", "x = 10 ** 300000\ny = -(-x)\na = [x] * 10 ** 5\ny in a", "limit", "shared references"),
    _a("compare-lists-of-repeated-long-strings", "8-cpu", "s = 'x' * 10 ** 6\nt = ''.join(['x'] * 10 ** 6)\n[s] * 10 ** 5 == [t] * 10 ** 5", "limit", "shared references"),
    # reductions whose every step grows with the result: one C call of 11 s before
    _a("math-lcm-many", "8-cpu", "import math\nmath.lcm(*range(1, 400000))", "limit"),
    _a("math-prod-many", "8-cpu", "import math\nmath.prod(range(1, 400000))", "limit"),
    _a("reduce-builtin-lcm", "8-cpu", "import functools, math\nfunctools.reduce(math.lcm, range(1, 400000))", "limit"),
    _a("itertools-repeat-list", "8-cpu", "import itertools\nlist(itertools.repeat(0))", "limit"),
    _a("itertools-cycle-max", "8-cpu", "import itertools\nmax(itertools.cycle([1]))", "limit"),
    _a("itertools-count-sorted", "8-cpu", "import itertools\nsorted(itertools.count())", "limit"),
    _a("itertools-count-unpack", "8-cpu", "import itertools\n[*itertools.count()]", "limit"),
    _a("charged-c-iteration", "8-cpu", "data = [1] * 150000\nsum(data) + sum(data)", "limit"),
    _a("hash-flood-loop", "8-cpu", "s = set()\ni = 0\nwhile True:\n    s.add(i * (2 ** 61 - 1))\n    i += 1", "limit"),
    _a("iter-callable-sentinel", "8-cpu", "list(iter(int, 1))", "limit"),
    _a("time-sleep", "8-cpu", "import time\ntime.sleep(100)", "limit", "timed out"),
    _a("factorial-huge", "8-cpu", "import math\nmath.factorial(10 ** 6)", "limit"),
    _a("async-busy-loop", "8-cpu", "async def f():\n    while True:\n        pass\nawait f()", "limit"),
    _a("async-gather-busy", "8-cpu", "async def f():\n    while True:\n        pass\nawait gather(f(), f())", "limit"),
    # -- §8: recursion ----------------------------------------------------------------
    _a("plain-recursion", "8-recursion", "def f(n):\n    return f(n + 1)\nf(0)", "limit", "recursion limit"),
    _a("catch-recursion-and-recurse", "8-recursion", "def f():\n    try:\n        f()\n    except RecursionError:\n        f()\nf()", "limit"),
    _a("lambda-recursion", "8-recursion", "f = lambda n: f(n + 1)\nf(0)", "limit"),
    _a("generator-recursion", "8-recursion", "def g(n):\n    yield from g(n + 1)\nlist(g(0))", "limit"),
    _a("eq-recursion", "8-recursion", "class A:\n    def __eq__(self, o):\n        return self == o\nA() == A()", "limit"),
    # -- §8: memory -------------------------------------------------------------------------
    _a("str-repeat", "8-memory", "'x' * 10 ** 10", "limit", "too large"),
    _a("list-repeat", "8-memory", "[None] * 10 ** 10", "limit", "too large"),
    _a("str-center", "8-memory", "'a'.center(10 ** 10)", "limit", "too large"),
    _a("str-replace-blowup", "8-memory", "('a' * 1000).replace('a', 'a' * 100000)", "limit", "too large"),
    _a("str-expandtabs", "8-memory", "('\\t' * 1000).expandtabs(10 ** 7)", "limit", "too large"),
    _a("left-shift", "8-memory", "1 << 10 ** 11", "limit", "too large"),
    _a("power", "8-memory", "10 ** (10 ** 9)", "limit", "too large"),
    _a("pow-builtin", "8-memory", "pow(7, 10 ** 9)", "limit", "too large"),
    # a modular power's result is small but its work is not: one C call of seconds to hours
    _a("pow-modular-huge", "8-cpu", "pow(3, 10 ** 5000, 10 ** 5000)", "limit", "take too long"),
    _a("pow-modular-inverse-huge", "8-cpu", "pow(3, -1, 2 ** 990000 - 3)", "limit", "take too long"),
    _a("repeated-squaring", "8-memory", "x = 3\nfor i in range(100):\n    x = x * x", "limit", "too large"),
    _a("inplace-squaring", "8-memory", "x = 3\nfor i in range(100):\n    x *= x", "limit", "too large"),
    _a("item-inplace-repeat", "8-memory", "d = {'s': 'x' * 1000}\nfor i in range(100):\n    d['s'] *= 100", "limit", "too large"),
    _a("hex-huge", "8-memory", "hex(1 << 10 ** 9)", "limit"),
    _a("int-to-str-digits", "8-memory", "str(10 ** 5000)", "runtime"),
    _a("unpack-huge-range", "8-memory", "[*range(10 ** 9)]", "limit", "range"),
    _a("random-choices-huge", "8-memory", "import random\nrandom.choices([1], k=10 ** 9)", "limit"),
    _a("bytearray-huge", "8-memory", "bytearray(10 ** 10)", "limit", "bytearray"),
    _a("bytes-huge", "8-memory", "bytes(10 ** 10)", "limit", "bytes"),
    _a("dict-fromkeys-range", "8-memory", "dict.fromkeys(range(10 ** 9))", "limit", "range"),
    # -- §8: output ------------------------------------------------------------------------------
    _a("print-flood", "8-output", "while True:\n    print('x' * 1000)", "limit", "output"),
    _a("print-one-huge", "8-output", "print('x' * 5000000)", "limit", "output"),
    _a("print-to-file", "8-output", "print('x', file=tools)", "runtime", "file"),
    # -- §8: compile time ----------------------------------------------------------------------
    _a("huge-source", "8-compile", "x = 1\n" * 20000, "rejected", "bytes"),
    _a("deep-unary-nesting", "8-compile", "x = " + "-" * 500 + "1", "rejected", "nested"),
    _a("deep-list-nesting", "8-compile", "x = " + "[" * 150 + "]" * 150, "rejected", "nested"),
    _a("yield-at-top-level", "8-compile", "yield 1", "syntax"),
]  # fmt: skip
"""The attack scripts (more than 60, every category of restrictedpython-notes §6-8)."""
