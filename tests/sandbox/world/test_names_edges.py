"""Issue 14's names and sharp edges, each run in both modes: docstrings, ``@x.setter``,
``type(None)``, ``str.format`` item and attribute fields, bytearray writes, ``except*``.

The attack side of each (abusing the new door) is in ``tests/sandbox/attacks_boundary.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_support import MODES, value

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Isolation, Sandbox


def error(sandbox: Sandbox, source: str) -> Any:
    """The run's error (the run must fail)."""
    result: ScriptResult = sandbox.run_sync(source)
    assert not result.ok, result.value
    assert result.error is not None
    return result.error


# -- docstrings ------------------------------------------------------------------------


def test_names_edges_docstrings_of_script_functions_methods_and_classes(sandbox: Sandbox) -> None:
    source = (
        'class C:\n    "class doc"\n'
        '    def m(self):\n        "method doc"\n        return 1\n'
        '    @classmethod\n    def c(cls):\n        "classmethod doc"\n'
        '    @staticmethod\n    def s():\n        "staticmethod doc"\n'
        'def f():\n    "function doc"\n'
        'async def g():\n    "async doc"\n'
        "def plain():\n    return 2\n"
        "[C.__doc__, C().__doc__, C.m.__doc__, C().m.__doc__, C.c.__doc__, C.s.__doc__,"
        " f.__doc__, g.__doc__, plain.__doc__, (lambda: 0).__doc__, f(), C().m()]"
    )
    assert value(sandbox, source) == [
        "class doc",
        "class doc",
        "method doc",
        "method doc",
        "classmethod doc",
        "staticmethod doc",
        "function doc",
        "async doc",
        None,
        None,
        None,
        1,
    ]


def test_names_edges_a_docstring_function_still_ticks(sandbox: Sandbox) -> None:
    # the budget check goes after the docstring: a recursive docstring function is still
    # stopped by the recursion limit
    source = 'def down(n):\n    "recurse"\n    return down(n + 1)\ndown(0)'
    result = Sandbox(limits=Limits(timeout=10, max_recursion=50)).run_sync(source)
    assert result.error is not None
    assert result.error.kind == "limit"


def test_names_edges_wraps_copies_the_docstring(sandbox: Sandbox) -> None:
    source = (
        "from functools import wraps\n"
        "def deco(fn):\n    @wraps(fn)\n    def inner(*a):\n        return fn(*a)\n    return inner\n"
        '@deco\ndef add(a, b):\n    "Add."\n    return a + b\n'
        "[add(1, 2), add.__name__, add.__doc__]"
    )
    assert value(sandbox, source) == [3, "add", "Add."]


def test_names_edges_host_docstrings_read_none_builtin_types_their_own(sandbox: Sandbox) -> None:
    source = (
        "import json, functools\n"
        "def mine():\n    pass\n"
        "w = functools.wraps(json.dumps)(mine)\n"
        "[len.__doc__, json.dumps.__doc__, print.__doc__, [].append.__doc__, w.__doc__,"
        " int.__doc__ == (1).__doc__, str.__doc__.startswith('str(')]"
    )
    assert value(sandbox, source) == [None, None, None, None, None, True, True]


# -- @x.setter / .getter / .deleter --------------------------------------------------------


def test_names_edges_property_setter_getter_deleter(sandbox: Sandbox) -> None:
    source = (
        "class T:\n"
        "    def __init__(self):\n        self._v = 1\n        self.log = []\n"
        "    @property\n    def v(self):\n        return self._v\n"
        "    @v.setter\n    def v(self, x):\n        if x < 0:\n"
        "            raise ValueError('neg')\n        self._v = x\n"
        "    @v.deleter\n    def v(self):\n        self.log.append('del')\n"
        "    w = property(lambda self: 'w0')\n"
        "    w = w.getter(lambda self: 'w1')\n"
        "t = T()\nt.v = 5\ntry:\n    t.v = -1\nexcept ValueError as e:\n    err = str(e)\n"
        "del t.v\n[t.v, err, t.log, t.w]"
    )
    assert value(sandbox, source) == [5, "neg", ["del"], "w1"]


def test_names_edges_property_setter_refuses_a_host_accessor(sandbox: Sandbox) -> None:
    source = "def g(self):\n    return 1\nproperty(g).setter(print)"
    problem = error(sandbox, source)
    assert "takes a function you defined" in problem.message


def test_names_edges_property_of_a_host_function_has_no_setter(sandbox: Sandbox) -> None:
    problem = error(sandbox, "property(len).setter")
    assert "only when its functions are your own" in problem.message


# -- type(None) ---------------------------------------------------------------------------


def test_names_edges_none_type_is_holdable_like_int(sandbox: Sandbox) -> None:
    source = (
        "NoneType = type(None)\n"
        "def check(x):\n    return isinstance(x, (int, type(None)))\n"
        "[type(None).__name__, NoneType(), check(None), check(1), check('a'),"
        " type(None) is NoneType, type(1) is int, type(3.0).__name__, type(b'') is bytes]"
    )
    assert value(sandbox, source) == [
        "NoneType",
        None,
        True,
        True,
        False,
        True,
        True,
        "float",
        True,
    ]


def test_names_edges_none_type_is_not_a_base(sandbox: Sandbox) -> None:
    problem = error(sandbox, "class N(type(None)):\n    pass")
    assert problem.type == "TypeError"


def test_names_edges_type_and_class_give_the_scripts_own_builtin_types(sandbox: Sandbox) -> None:
    source = (
        "[type(b'') is bytes, type(bytearray()) is bytearray, b''.__class__ is bytes,"
        " ''.__class__ is str, {}.__class__ is dict, set().__class__ is set,"
        " type(b'').fromhex('ff').hex(), b'ab'.__class__([65]).decode()]"
    )
    assert value(sandbox, source) == [True, True, True, True, True, True, "ff", "A"]


# -- str.format item and attribute fields --------------------------------------------------


def test_names_edges_format_item_and_attribute_fields(sandbox: Sandbox) -> None:
    source = (
        "class P:\n    def __init__(self):\n        self.name = 'ann'\n"
        "        self._age = 7\n        self.tags = ['a', 'b']\n"
        "p = P()\npoint = {'x': 1, 'y': 2}\n"
        "['({p[x]}, {p[y]})'.format(p=point), '{0.name} {0.tags[1]} {0._age}'.format(p),"
        " '{[0]}-{}'.format([5], 6), '{p.name!r:>6}'.format(p=p),"
        " '{a[x]}'.format_map({'a': point}), '{0[1]}'.format('ab'), '{0.real}'.format(3)]"
    )
    assert value(sandbox, source) == ["(1, 2)", "ann b 7", "5-6", " 'ann'", "1", "b", "3"]


def test_names_edges_format_item_field_runs_the_scripts_getitem(sandbox: Sandbox) -> None:
    source = (
        "class Grid:\n    def __getitem__(self, key):\n        return key * 2\n"
        "'{0[3]} {0[ab]}'.format(Grid())"
    )
    assert value(sandbox, source) == "6 abab"


@pytest.mark.parametrize(
    "template",
    ["'{0.__class__}'.format(1)", "'{x.__dict__}'.format(x=1)", "'{0[0].__class__}'.format([1])"],
)
def test_names_edges_format_refuses_dunder_fields(sandbox: Sandbox, template: str) -> None:
    problem = error(sandbox, template)
    assert "is not readable" in problem.message


def test_names_edges_format_private_field_only_on_own_objects(sandbox: Sandbox) -> None:
    problem = error(sandbox, "import datetime\n'{0._hid}'.format(datetime.date(2020, 1, 1))")
    assert "not available" in problem.message


def test_names_edges_format_mixed_numbering_is_refused_as_python_does(sandbox: Sandbox) -> None:
    problem = error(sandbox, "'{}{0}'.format(1)")
    assert "cannot switch" in problem.message


# -- bytearray writes ----------------------------------------------------------------------


def test_names_edges_bytearray_item_slice_and_method_writes(sandbox: Sandbox) -> None:
    source = (
        "ba = bytearray(b'hello')\nba[0] = ord('j')\nba[1:3] = b'EL'\n"
        "ba[5:] = bytearray(b'!!')\nba[0:0] = [65, 66]\ndel ba[0]\n"
        "ba.extend(b'xy')\nba.append(122)\nba += b'+'\nba[0] += 1\n"
        "z = bytearray(3)\nz[1] = 255\nz[::2] = b'ab'\n"
        "[ba.decode(), list(z), ba.pop(), len(ba)]"
    )
    assert value(sandbox, source) == ["CjELlo!!xyz+", [97, 255, 98], 43, 11]


def test_names_edges_bytearray_growth_is_bounded(sandbox: Sandbox) -> None:
    source = "ba = bytearray(10 ** 6)\nwhile True:\n    ba[0:0] = ba"
    problem = error(sandbox, source)
    assert problem.kind == "limit"
    assert "bytearray longer than" in problem.message


def test_names_edges_bytearray_attributes_stay_unwritable(sandbox: Sandbox) -> None:
    problem = error(sandbox, "ba = bytearray(b'a')\nsetattr(ba, 'x', 1)")
    assert "cannot be written" in problem.message
    assert error(sandbox, "b = b'ab'\nb[0] = 1").type == "TypeError"


# -- except* -------------------------------------------------------------------------------


def test_names_edges_except_star_splits_a_group(sandbox: Sandbox) -> None:
    source = (
        "def work():\n"
        "    raise ExceptionGroup('batch', [ValueError('v'), KeyError('k'), ValueError('w')])\n"
        "got = []\n"
        "try:\n    work()\nexcept* ValueError as eg:\n"
        "    got.append(sorted(str(e) for e in eg.exceptions))\n"
        "except* KeyError as eg:\n    got.append([type(e).__name__ for e in eg.exceptions])\n"
        "finally:\n    got.append('done')\n"
        "try:\n    try:\n        raise TypeError('t')\n    except* ValueError:\n        pass\n"
        "except TypeError as e:\n    got.append(str(e))\n"
        "try:\n    raise ValueError('naked')\nexcept* ValueError as eg:\n"
        "    got.append([type(eg).__name__, str(eg.exceptions[0])])\n"
        "got"
    )
    assert value(sandbox, source) == [
        ["v", "w"],
        ["KeyError"],
        "done",
        "t",
        ["ExceptionGroup", "naked"],
    ]


def test_names_edges_except_star_unmatched_rest_propagates(sandbox: Sandbox) -> None:
    source = (
        "try:\n    try:\n        raise ExceptionGroup('g', [ValueError(1), KeyError(2)])\n"
        "    except* ValueError:\n        pass\n"
        "except ExceptionGroup as rest:\n    r = [type(e).__name__ for e in rest.exceptions]\nr"
    )
    assert value(sandbox, source) == ["KeyError"]


@pytest.mark.parametrize("mode", MODES)
def test_names_edges_except_star_cannot_swallow_the_deadline(mode: Isolation) -> None:
    source = (
        "n = 0\nwhile True:\n    try:\n        while True:\n            n += 1\n"
        "    except* BaseException:\n        n = -1\nn"
    )
    box = Sandbox(limits=Limits(timeout=0.5, max_steps=None), isolation=mode)
    try:
        result = box.run_sync(source)
    finally:
        box.close()
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "timed out" in result.error.message


def test_names_edges_except_star_group_subclasses_are_refused(sandbox: Sandbox) -> None:
    source = "class G(ExceptionGroup):\n    def split(self, t):\n        return 1\nG"
    problem = error(sandbox, source)
    assert "cannot subclass ExceptionGroup" in problem.message
    problem = error(sandbox, "class B(BaseExceptionGroup):\n    pass")
    assert "cannot subclass BaseExceptionGroup" in problem.message


def test_names_edges_group_member_finds_a_stop_at_any_depth() -> None:
    from scriptgate.sandbox.guards.edges import group_member

    inner = KeyboardInterrupt()
    group: BaseExceptionGroup[BaseException] = BaseExceptionGroup("g", [ValueError(), inner])
    for _ in range(5000):
        group = BaseExceptionGroup("g", [ValueError(), group])
    assert group_member(group, (KeyboardInterrupt,)) is inner
    assert group_member(group, (KeyError,)) is None


@pytest.mark.parametrize("mode", MODES)
def test_names_edges_except_star_cannot_swallow_a_cancelled_await(mode: Isolation) -> None:
    source = (
        "import asyncio\nasync def main():\n    while True:\n        try:\n"
        "            await asyncio.sleep(10)\n        except* BaseException:\n"
        "            pass\nawait main()"
    )
    box = Sandbox(limits=Limits(timeout=0.5, max_steps=None), isolation=mode)
    try:
        result = box.run_sync(source)
    finally:
        box.close()
    assert result.error is not None
    assert result.error.kind == "limit"
