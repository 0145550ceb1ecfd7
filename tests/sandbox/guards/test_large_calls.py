"""Calls whose work grows with a large input check the budget first (findings14 A16).

A loop of fewer than 256 bounded but slow calls ran between two tick-chunk checks:
``for i in range(20): html.unescape(s)`` of 10 MB ran 49 s under a 2 s deadline, and
``s.upper()`` x 200 of 10 M CJK characters 26 s under 1 s. Two kinds of proof:

- deterministic: code compiled as the script's (``FILENAME``) with a counting
  ``__charge__`` calls methods of a 64 Ki-item receiver and stand-in functions on a
  64 Ki-item argument: each call charges the full check (``TICK_STEPS``) first; small
  receivers and arguments, and the members whose work does not grow (``heappush``),
  charge nothing;
- end to end: the findings' loops under a 0.3 s deadline end ``timed out`` within a
  bounded wall time (unchecked, each ran 10 s or more).
"""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_support import ends_at_the_deadline

from scriptgate.sandbox.guards.attributes import _guarded_getattr
from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.ticking import LARGE_INPUT, TICK_STEPS
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.modules import make_modules

_LOOPS = 10


def _checks(source: str, **names: Any) -> int:
    """How many full budget checks ``source``, run as script code, charged."""
    seen = [0]

    def charge(obj: Any) -> Any:
        if obj is TICK_STEPS:
            seen[0] += 1
        return obj

    code = compile(source, FILENAME, "exec")
    exec(code, {"__charge__": charge, "_getattr_": _guarded_getattr, **names})
    return seen[0]


_BIG = "\u4e00" * LARGE_INPUT
_RECEIVERS = {
    "str-upper": (_BIG, "upper", ()),
    "str-find": (_BIG, "find", ("x",)),
    "bytes-hex": (b"x" * LARGE_INPUT, "hex", ()),
    "bytearray-count": (bytearray(LARGE_INPUT), "count", (b"x",)),
    "list-index": (list(range(LARGE_INPUT)), "count", (-1,)),
    "list-copy": (list(range(LARGE_INPUT)), "copy", ()),
    "dict-copy": (dict.fromkeys(range(LARGE_INPUT)), "copy", ()),
}


@pytest.mark.parametrize("name", sorted(_RECEIVERS))
def test_large_calls_method_of_a_large_receiver_checks_first(name: str) -> None:
    obj, method, args = _RECEIVERS[name]
    source = f"for i in range({_LOOPS}):\n    _getattr_(obj, {method!r})(*args)"
    assert _checks(source, obj=obj, args=args) >= _LOOPS
    small = obj[:10] if not isinstance(obj, dict) else {1: 2}
    assert _checks(source, obj=small, args=args) == 0


def test_large_calls_stored_method_checks_at_each_call() -> None:
    source = f"u = _getattr_(s, 'upper')\nfor i in range({_LOOPS}):\n    u()"
    assert _checks(source, s=_BIG) >= _LOOPS + 1


def _member(module: str, name: str) -> Any:
    def no_op(*args: Any) -> Any:
        return None

    modules = make_modules(lambda obj: obj, lambda: None, no_op, no_op, no_op)
    namespace = modules(module)
    assert namespace is not None
    return namespace.member(name)


_MEMBERS = {
    "html-unescape": ("html", "unescape", ("&amp;" * LARGE_INPUT,), {}),
    "json-loads": ("json", "loads", ("[" + "0," * LARGE_INPUT + "0]",), {}),
    "re-escape": ("re", "escape", ("a" * LARGE_INPUT,), {}),
    "base64-b85encode": ("base64", "b85encode", (b"0" * LARGE_INPUT,), {}),
    "textwrap-fill-keyword": ("textwrap", "fill", (), {"text": "ab " * LARGE_INPUT}),
    "string-capwords": ("string", "capwords", ("a " * LARGE_INPUT,), {}),
    "statistics-mean": ("statistics", "mean", ([1] * LARGE_INPUT,), {}),
}


@pytest.mark.parametrize("name", sorted(_MEMBERS))
def test_large_calls_stand_in_on_a_large_argument_checks_first(name: str) -> None:
    module, member, args, kwargs = _MEMBERS[name]
    func = _member(module, member)
    source = f"for i in range({_LOOPS}):\n    func(*args, **kwargs)"
    assert _checks(source, func=func, args=args, kwargs=kwargs) == _LOOPS


def test_large_calls_small_and_numeric_calls_pay_nothing() -> None:
    source = f"for i in range({_LOOPS}):\n    func(*args)"
    for module, member, args in (
        ("html", "unescape", ("&amp;",)),
        ("heapq", "heappush", ([0] * LARGE_INPUT, 1)),  # O(log n): left out
        ("math", "fsum", ([0.5] * LARGE_INPUT,)),  # numeric stand-ins are not wrapped
    ):
        func = _member(module, member)
        assert _checks(source, func=func, args=args) == 0, (module, member)


_CJK = "s = '\\u4e00' * 10_000_000\n"
_FINDINGS = {
    "upper": _CJK + "for i in range(200):\n    t = s.upper()",
    "stored-upper": _CJK + "u = s.upper\nfor i in range(200):\n    t = u()",
    "encode": _CJK + "for i in range(200):\n    t = s.encode('utf-8')",
    "bytes-hex": "b = b'x' * 4_000_000\nfor i in range(200):\n    t = b.hex()",
    "html-unescape": "import html\ns = '&amp;' * 2_000_000\nfor i in range(20):\n    html.unescape(s)",
    "re-compile": "import re\nfor i in range(20):\n    re.compile('X%d' % i + '[ab]' * 24_990)",
    "base64-b85decode": "import base64\ne = b'0' * 5_000_000\nfor i in range(10):\n"
    "    base64.b85decode(e)",
    # the residuals: a str subclass receiver, a stored size-checked split (findings14 A16)
    "str-subclass-upper": "class S(str):\n    pass\ns = S('\\u4e00' * 10_000_000)\n"
    "for i in range(200):\n    t = s.upper()",
    "stored-split": "s = '\\u4e00 ' * 1_000_000\nf = s.split\nfor i in range(200):\n    t = f()",
}


@pytest.mark.parametrize("name", sorted(_FINDINGS))
def test_large_calls_findings_end_at_the_deadline(name: str) -> None:
    ends_at_the_deadline(_FINDINGS[name], 4.0)


def test_large_calls_ordinary_use_ok() -> None:
    source = (
        "import html, json, re, string\n"
        "s = 'ab' * 40_000\n"
        "out = [len(s.upper()), s.find('ba'), html.unescape('&lt;' * 3), json.loads('[1, 2]'),\n"
        "       string.capwords('x y'), len(re.findall('ab', s)), len(list(range(70_000)).copy())]\n"
        "u = s.lower\n"
        "out.append(len(u()))\n"
        "out"
    )
    result = Sandbox().run_sync(source)
    assert result.ok, result.error
    assert result.value == [80_000, 1, "<<<", [1, 2], "X Y", 40_000, 70_000, 80_000]
