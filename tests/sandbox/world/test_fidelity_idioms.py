"""Model idioms that run as written (findings18 M-, findings19 N-, findings19b S-items).

Each script runs in both isolation modes (the ``sandbox`` fixture) and gives what plain
CPython 3.11 gives; where the sandbox must refuse, the message says what to write instead.
"""

from __future__ import annotations

import time

import pytest
from sandbox_support import MODES, refused, same_as_python

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox

SANDBOX_TIMEOUT = 5


def test_iter_with_a_sentinel_calls_until_the_sentinel(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "from functools import partial\n"
        "vals = iter([5, 4, 0, 9])\n"
        "q = [1, 2, None, 3]\n"
        "d = iter([1, 2, 3])\n"
        "a = list(iter(lambda: next(vals), 0))\n"
        "b = list(iter(lambda: q.pop(0), None))\n"
        "c = [x for x in iter(partial(next, d), 3)]\n"
        "e = iter(int, 1)\n"
        "[a, b, q, c, next(e), next(e), repr(e).startswith('<callable_iterator object')]",
    )


def test_iter_with_a_sentinel_ends_when_the_callable_raises_stop_iteration(
    sandbox: Sandbox,
) -> None:
    same_as_python(sandbox, "it = iter([1, 2])\nlist(iter(lambda: next(it), 9))")


def test_iter_with_a_sentinel_needs_a_callable(sandbox: Sandbox) -> None:
    refused(sandbox, "iter(1, 2)", "iter(v, w): v must be callable")


@pytest.mark.parametrize("isolation", MODES)
def test_endless_iter_with_a_sentinel_ends_at_the_deadline(isolation: Isolation) -> None:
    box = Sandbox(limits=Limits(timeout=1, max_steps=None), isolation=isolation)
    try:
        assert box.run_sync("1").ok  # a process-mode sandbox's worker is started
        for source in (
            "for x in iter(lambda: 1, 2):\n    pass",
            "for x in iter(int, 1):\n    pass",
            "list(iter(int, 1))",
            "any(iter(int, 1))",
        ):
            start = time.monotonic()
            result = box.run_sync(source)
            elapsed = time.monotonic() - start
            assert result.error is not None, source
            assert result.error.kind == "limit", (source, result.error)
            assert elapsed < 4, (source, elapsed)
    finally:
        box.close()


def test_printf_star_width_and_precision_come_from_the_tuple(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "class I(int):\n    pass\n"
        "a = ['%*d' % (5, 1), '%.*f' % (2, 3.14159), '%-*s|' % (6, 'ab')]\n"
        "b = ['%*.*f|' % (-8, -1, 2.5), (b'%*d' % (5, 1)).decode(), '%*d' % (I(4), 7)]\n"
        "a + b + ['%*s %*s' % (3, 'a', 4, 'b')]",
    )


def test_printf_star_width_errors_are_pythons(sandbox: Sandbox) -> None:
    refused(sandbox, "'%*d' % ('x', 1)", "* wants int")
    refused(sandbox, "'%*d' % (5,)", "not enough arguments for format string")


def test_printf_star_width_is_capped_like_a_literal_width(sandbox: Sandbox) -> None:
    refused(sandbox, "'%*d' % (10 ** 9, 1)", "limit", "width above 10000")
    refused(sandbox, "'%.*f' % (10 ** 6, 1.0)", "limit", "width above 10000")
    refused(sandbox, "'%*d' % (-10 ** 9, 1)", "limit", "width above 10000")


def test_star_import_of_a_stand_in_binds_its_public_names(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "from math import *\n"
        "from collections import *\n"
        "def f(x):\n    return sqrt(x) + floor(e)\n"
        "if True:\n    from json import *\n"
        "[f(16), pi, dict(Counter('aab')), list(deque([1])), dumps([1])]",
    )


def test_star_import_elsewhere_says_what_to_write(sandbox: Sandbox) -> None:
    refused(sandbox, "from numpy import *", "rejected", "(from numpy import name1, name2)")
    refused(
        sandbox,
        "def f():\n    from math import *\n    return sqrt(4)\nf()",
        "rejected",
        "only at the top level",
    )


def test_star_import_does_not_hide_a_rebinding_from_the_number_facts(sandbox: Sandbox) -> None:
    # `dumps` is not the script's number function once the star import rebinds it
    refused(
        sandbox,
        "def dumps(x):\n    return 1\nfrom json import *\ndumps([1]) * 10 ** 9",
        "limit",
        "too large",
    )


def test_json_loads_hooks_and_dumps_options_work(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "import json\nfrom decimal import Decimal\nfrom collections import OrderedDict\n"
        "a = json.loads('{\"price\": 1.10}', parse_float=Decimal)\n"
        'b = json.loads(\'{"a": {"c": 2}}\', object_pairs_hook=lambda p: sorted(p))\n'
        "c = json.loads('[1, 22]', parse_int=str)\n"
        "d = json.loads('[NaN]', parse_constant=lambda s: s.lower())\n"
        "e = json.loads('{\"d\": 1}', object_hook=lambda d: list(d))\n"
        "f = json.dumps({(1, 2): 1, 'a': 2}, skipkeys=True)\n"
        "[str(a['price']), b, c, d, e, f, list(json.loads('{\"x\": 1}', object_pairs_hook=OrderedDict))]",
    )
    refused(sandbox, "import json\njson.dumps(float('nan'), allow_nan=False)", "not JSON compliant")


def test_json_loads_hook_that_never_returns_ends_at_the_deadline() -> None:
    box = Sandbox(limits=Limits(timeout=1, max_steps=None))
    try:
        result = box.run_sync(
            "import json\ndef h(d):\n    while True:\n        pass\njson.loads('{}', object_hook=h)"
        )
    finally:
        box.close()
    assert result.error is not None
    assert result.error.kind == "limit"


def test_private_slot_names_are_mangled_like_the_attributes(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "class A:\n    __slots__ = ('__v', 'w')\n"
        "    def __init__(self):\n        self.__v = 7\n        self.w = 1\n"
        "    def m(self):\n        return self.__v\n"
        "class B:\n    __slots__ = '__x'\n    def __init__(self):\n        self.__x = 3\n"
        "[A().m(), B()._B__x, A()._A__v]",
    )
