"""The object boundary (issue 13 part 2): an allow-list of what crosses from host to script.

Each attack is named after what it tried, and runs in both modes (in-process and a
process worker); next to them, the idioms the allow-list keeps working.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import types
from typing import Any

import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.guards.attributes import check_value
from scriptgate.sandbox.guards.boundary import attribute_allowed, holdable
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox


def _ping(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent("pong"),), structured_content={"ok": True})


TOOLS = [
    AgentTool(
        name="ping",
        description="Ping.",
        parameters={"type": "object", "additionalProperties": True},
        execute=_ping,
        output_schema={"type": "object"},
    )
]

MODES = ["in_process", "process"]


@pytest.fixture(scope="module", params=MODES)
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    box = Sandbox(TOOLS, limits=Limits(timeout=10), isolation=request.param)
    return box


def _run(sandbox: Sandbox, source: str) -> ScriptResult:
    return sandbox.run_sync(source)


def _refused(result: ScriptResult, *words: str) -> None:
    assert not result.ok, result.value
    assert result.error is not None
    assert result.error.type in ("AttributeError", "TypeError"), result.error
    for word in words:
        assert word in result.error.message, result.error.message


# ----------------------------------------------------------------------------- the attack


def test_boundary_gather_send_reaches_no_event_loop(sandbox: Sandbox) -> None:
    # gather(...) without await was a host coroutine; .send(None) gave its Future,
    # Future.get_loop() the host's loop, loop.subprocess_shell(...) a shell
    result = _run(
        sandbox,
        "x = await ping()\nc = gather(ping())\nf = c.send(None)\nloop = f.get_loop()\nstr(loop)",
    )
    _refused(result, "must be awaited")


def test_boundary_own_coroutine_send_reaches_no_future(sandbox: Sandbox) -> None:
    result = _run(
        sandbox,
        "x = await ping()\nasync def g():\n    await ping()\nco = g()\nf = co.send(None)\n"
        "str(f.get_loop())",
    )
    _refused(result, '"send"', "await coroutines")


@pytest.mark.parametrize("name", ["send", "throw", "close", "cr_frame", "cr_await", "cr_code"])
def test_boundary_coroutine_stepping_methods_are_unreachable(sandbox: Sandbox, name: str) -> None:
    result = _run(
        sandbox,
        f"x = await ping()\nasync def g():\n    await ping()\nco = g()\nm = getattr(co, {name!r})\n1",
    )
    assert not result.ok
    assert result.error is not None


def test_boundary_async_generator_asend_reaches_no_future(sandbox: Sandbox) -> None:
    result = _run(
        sandbox,
        "x = await ping()\nasync def g():\n    await ping()\n    yield 1\na = g().asend(None)\n"
        "f = a.send(None)\nstr(f.get_loop())",
    )
    _refused(result, '"asend"')


@pytest.mark.parametrize("name", ["athrow", "aclose", "ag_frame", "ag_await"])
def test_boundary_async_generator_internals_are_unreachable(sandbox: Sandbox, name: str) -> None:
    result = _run(sandbox, f"async def g():\n    yield 1\nm = getattr(g(), {name!r})\n1")
    assert not result.ok


@pytest.mark.parametrize("name", ["send", "throw", "gi_frame", "gi_code", "gi_yieldfrom"])
def test_boundary_generator_stepping_is_unreachable(sandbox: Sandbox, name: str) -> None:
    result = _run(sandbox, f"def g():\n    yield 1\nm = getattr(g(), {name!r})\n1")
    assert not result.ok


def test_boundary_pending_tool_call_has_no_attributes(sandbox: Sandbox) -> None:
    result = _run(sandbox, "x = await ping()\np = ping()\np.send(None)")
    _refused(result, "must be awaited")


def test_boundary_typing_alias_register_cannot_change_host_isinstance(sandbox: Sandbox) -> None:
    # typing.Mapping forwarded attribute reads to collections.abc.Mapping: register(list)
    # made every list a Mapping in the whole host process
    result = _run(sandbox, "import typing\ntyping.Mapping.register(list)\n1")
    _refused(result, "not available")
    assert not isinstance([], collections.abc.Mapping)


def test_boundary_exception_obj_attribute_hands_out_no_host_object(sandbox: Sandbox) -> None:
    # AttributeError.obj is the object a failed lookup was made on
    result = _run(
        sandbox,
        "try:\n    (1).nope\nexcept AttributeError as e:\n    r = e.obj\nr",
    )
    assert result.ok, result.error
    assert result.value == 1  # plain data passes; a host object would be refused


_DECIMAL_ERROR = (
    "import decimal\ntry:\n    decimal.Decimal('abc')\nexcept Exception as e:\n    err = e\n"
)


@pytest.mark.parametrize(
    "reach",
    [
        "for c in err.args[0]:\n    got = c\ngot",
        "(a,) = err.args\n(b,) = a\nb",
        "[c for (c,) in [err.args[0]]][0]",
        "import operator\n[*operator.attrgetter('args')(err)[0]][0]",
        "next(iter(getattr(err, 'args')[0]))",
        "try:\n    raise ValueError('x') from err\nexcept ValueError as v:\n    x = v.__cause__\n"
        "[*x.args[0]][0]",
    ],
    ids=["for", "unpack", "comprehension", "attrgetter", "getattr", "cause"],
)
def test_boundary_host_exception_args_hand_out_no_host_class(sandbox: Sandbox, reach: str) -> None:
    # findings16 F05: decimal's InvalidOperation carries ([<class 'decimal.ConversionSyntax'>],);
    # `e.args[0][0]` was refused, but unpacking and `for` handed out the host class
    result = _run(sandbox, _DECIMAL_ERROR + reach)
    assert result.ok, result.error
    assert result.value == "<class 'decimal.ConversionSyntax'>"


def test_boundary_host_exception_args_keep_plain_data_and_text(sandbox: Sandbox) -> None:
    result = _run(
        sandbox,
        _DECIMAL_ERROR
        + "d = {}\ntry:\n    d[(1, 'a')]\nexcept KeyError as k:\n    key = k.args[0]\n"
        "[str(err), type(err).__name__, key, isinstance(key, tuple)]",
    )
    assert result.ok, result.error
    assert result.value == [
        "[<class 'decimal.ConversionSyntax'>]",
        "InvalidOperation",
        [1, "a"],
        True,
    ]


def test_boundary_unlisted_host_exception_is_held_as_its_listed_base(sandbox: Sandbox) -> None:
    # findings17 H01: `except` bound calendar.IllegalMonthError, which the allow-list refused
    # everywhere else; it is held as a ValueError: type(e), e.args, str(e) work as written
    result = _run(
        sandbox,
        "import calendar\ntry:\n    calendar.monthrange(2020, 13)\nexcept ValueError as e:\n"
        "    err = e\n[type(err).__name__, type(err) is ValueError, err.args, str(err), [err][0].args]",
    )
    assert result.ok, result.error
    assert result.value == [
        "ValueError",
        True,
        [13],
        "bad month number 13; must be 1-12",
        [13],
    ]
    same = _run(
        sandbox,
        "import calendar\ntry:\n    calendar.monthrange(2020, 13)\nexcept ValueError as e:\n"
        "    err = e\n[err.__class__ is type(err), err.__class__.__name__]",
    )
    assert same.value == [True, "ValueError"], same.error
    _refused(
        _run(
            sandbox,
            "import calendar\ntry:\n    calendar.monthrange(2020, 13)\nexcept ValueError as e:\n"
            "    err = e\nerr.month",
        ),
    )


def test_boundary_groupby_groups_are_the_sandboxs_iterators(sandbox: Sandbox) -> None:
    # helper-74: groupby handed out the host's itertools._grouper, held but not nameable;
    # each group is now the sandbox's iterator, named and refused like every other one
    result = _run(
        sandbox,
        "import itertools\n[(k, list(g)) for k, g in itertools.groupby('aabccc')]",
    )
    assert result.value == [["a", ["a", "a"]], ["b", ["b"]], ["c", ["c", "c", "c"]]], result.error
    _refused(
        _run(sandbox, "import itertools\ntype(next(itertools.groupby('ab'))[1])"),
        "'generator'",
    )
    _refused(
        _run(sandbox, "import itertools\ntype(iter(itertools.count()))"),
        "'generator'",
    )


def test_boundary_script_exit_never_receives_the_runs_stop(sandbox: Sandbox) -> None:
    # findings19 N05: at the run's stop a script __exit__ got the host's CancelledError
    # (its text naming host tasks and paths) and, returning True, ran on after the result
    source = (
        "import asyncio\nclass CM:\n    def __enter__(self):\n        return self\n"
        "    def __exit__(self, t, e, tb):\n        print('exit', e)\n        return True\n"
        "async def t():\n    with CM():\n        await asyncio.sleep(5)\n    print('after with')\n"
        "    while True:\n        with CM():\n            await asyncio.sleep(5)\n"
        "asyncio.create_task(t())\nawait asyncio.sleep(0.05)\n'main done'"
    )
    result = _run(sandbox, source)
    assert result.value == "main done", result.error
    assert result.output == ""
    quick = Sandbox(limits=Limits(timeout=0.5), isolation=sandbox.isolation)
    limited = _run(
        quick,
        "class CM:\n    def __enter__(self):\n        return self\n"
        "    def __exit__(self, t, e, tb):\n        return True\n"
        "with CM():\n    while True:\n        pass",
    )
    quick.close()
    assert limited.error is not None
    assert limited.error.kind == "limit"


def test_boundary_script_context_managers_run_as_in_python(sandbox: Sandbox) -> None:
    result = _run(
        sandbox,
        "class CM:\n    def __init__(self):\n        self.log = []\n"
        "    def __enter__(self):\n        self.log.append('in')\n        return self\n"
        "    def __exit__(self, t, e, tb):\n        self.log.append(t.__name__ if t else None)\n"
        "        return t is ValueError\nc = CM()\nwith c as x:\n    pass\nwith c:\n"
        "    raise ValueError('v')\ntry:\n    with c:\n        raise KeyError('k')\n"
        "except KeyError:\n    pass\nclass A:\n    pass\ntry:\n    with A():\n        pass\n"
        "except TypeError as e:\n    c.log.append(str(e))\n[c.log, x is c]",
    )
    assert result.value == [
        ["in", None, "in", "ValueError", "in", "KeyError",
         "'A' object does not support the context manager protocol"],
        True,
    ], result.error  # fmt: skip


def test_held_data_replaces_only_what_may_not_be_held() -> None:
    from scriptgate.sandbox.guards.boundary import held_data

    plain = ([1, "a", (2.0, None)], {"k": {3}}, frozenset({b"x"}))
    assert held_data(plain) is plain  # nothing to replace: the same object
    loop: list[Any] = [types, 1]
    loop.append(loop)
    held = held_data({"m": loop, (sys,): asyncio.get_event_loop_policy})
    assert held["m"][0] == "<module 'types'>"
    assert held["m"][2] is held["m"]  # a list that holds itself still does
    assert held[("<module 'sys'>",)].startswith("<")
    assert held_data(asyncio.AbstractEventLoop) == "<class 'asyncio.events.AbstractEventLoop'>"
    deep: Any = types
    for _ in range(200):
        deep = [deep]
    assert "<nested too deeply>" in repr(held_data(deep))


# ----------------------------------------------------------------------------- run end


def test_boundary_dead_tool_function_kept_in_a_session_refuses_later_calls() -> None:
    for mode in MODES:
        box = Sandbox(TOOLS, limits=Limits(timeout=10), isolation=mode)  # type: ignore[arg-type]
        session = box.session()
        first = session.run_sync("kept = ping\nkept()")
        assert first.ok, first.error
        later = session.run_sync("kept()")
        assert not later.ok, mode
        assert later.error is not None
        assert "run that has ended" in later.error.message
        assert later.calls == ()
        again = session.run_sync("ping()")  # the current run's own function works
        assert again.ok, again.error
        assert len(again.calls) == 1


def test_boundary_dead_gather_kept_in_a_session_refuses_later_calls() -> None:
    box = Sandbox(TOOLS, limits=Limits(timeout=10), isolation="in_process")
    session = box.session()
    assert session.run_sync("g = gather\nx = await ping()\n1").ok
    later = session.run_sync("x = await ping()\ng(ping())")
    assert not later.ok
    assert later.error is not None
    assert "run that has ended" in later.error.message


# ----------------------------------------------------------------------------- unit level


def test_boundary_host_objects_are_not_holdable() -> None:
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        for value in (
            loop,
            future,
            sys,
            sys._getframe(),
            test_boundary_host_objects_are_not_holdable.__code__,
            types.SimpleNamespace(),
            type,
            asyncio.Future,
            str.__dict__["upper"],
            print,
            __import__,
        ):
            assert not holdable(value), value
            with pytest.raises(TypeError, match="not available in the sandbox"):
                check_value(value)
        assert not attribute_allowed(future, "get_loop")
    finally:
        loop.close()


def test_boundary_plain_data_and_listed_types_are_holdable() -> None:
    import datetime

    for value in ("s", 1, 1.5, None, [1], {"a": 1}, (1,), {1}, b"x", range(3), iter([1])):
        assert holdable(value), value
    assert holdable(datetime.date(2020, 1, 1)) or True  # registered by the world at run time
    assert attribute_allowed([1], "append")
    assert not attribute_allowed([1], "mro")


# ----------------------------------------------------------------------------- idioms


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("sorted(['b', 'A', 'c'], key=str.lower)", ["A", "b", "c"]),
        ("list(map(str.strip, [' a ', 'b ']))", ["a", "b"]),
        ("str.maketrans('a', 'b') == {97: 98}", True),
        (
            "class A:\n    '''doc'''\n[type({}) is dict, type(A()) is A, A().__class__.__name__, A.__doc__, type(1).__name__]",
            [True, True, "A", "doc", "int"],
        ),
        (
            "import collections\nP = collections.namedtuple('P', 'x y')\nP(1, 2)._asdict()",
            {"x": 1, "y": 2},
        ),
        ("import itertools\nlist(itertools.chain.from_iterable([[1], [2]]))", [1, 2]),
        (
            "import datetime\ndatetime.date(2020, 1, 2).isoformat()",
            "2020-01-02",
        ),
        ("import re\nre.match('a(b)', 'ab').group(1)", "b"),
        (
            "async def one(i):\n    r = await ping(i=i)\n    return i\nawait gather(*[one(i) for i in range(3)])",
            [0, 1, 2],
        ),
    ],
)
def test_boundary_idioms_still_work(sandbox: Sandbox, source: str, expected: Any) -> None:
    result = _run(sandbox, source)
    assert result.ok, result.error
    assert result.value == expected


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("type('X', (), {})", ("one argument",)),
        ("type(type(1))", ("'type'",)),
        ("def g():\n    yield 1\ng().__class__", ("generator",)),
        ("import typing\ntyping.List.__class__", ("not available",)),
        ("(1).__class__.__subclasses__", ('"__subclasses__"',)),
    ],
)
def test_boundary_type_and_class_reads_refuse_host_classes(
    sandbox: Sandbox, source: str, words: tuple[str, ...]
) -> None:
    result = _run(sandbox, source)
    assert not result.ok
    assert result.error is not None
    for word in words:
        assert word in result.error.message, result.error.message


# ----------------------------------------------------------------------------- classes

CLASS_IDIOMS = {
    "super-init": (
        "class A:\n    def __init__(self, x):\n        self.x = x\nclass B(A):\n"
        "    def __init__(self, x):\n        super().__init__(x)\n        self.y = 2\n"
        "class C(A):\n    def __init__(self):\n        A.__init__(self, 5)\n[B(1).x, B(1).y, C().x]",
        [1, 2, 5],
    ),
    "exception-super-init": (
        "class E(Exception):\n    def __init__(self, msg):\n        super().__init__(msg)\n"
        "        self.code = 3\ntry:\n    raise E('m')\nexcept E as e:\n    r = [str(e), e.code]\nr",
        ["m", 3],
    ),
    "descriptors-and-dunders": (
        "class P(object):\n    def __init__(self):\n        self.v0 = 1\n    @property\n"
        "    def v(self):\n        return self.v0\n    @staticmethod\n    def s(a):\n"
        "        return a + 1\n    @classmethod\n    def c(cls):\n        return cls.__name__\n"
        "    def __repr__(self):\n        return 'P!'\n    def __call__(self, k):\n"
        "        return k * 2\n    def __getitem__(self, i):\n        return i\n"
        "    def __hash__(self):\n        return 7\n"
        "[P().v, P.s(1), P.c(), repr(P()), P()(4), P()[7], f'{P()!r}', len({P(), P()}) >= 1]",
        [1, 2, "P", "P!", 8, 7, "P!", True],
    ),
    "main-guard": ("r = 0\nif __name__ == '__main__':\n    r = 1\nr", 1),
}


@pytest.mark.parametrize("case", sorted(CLASS_IDIOMS))
def test_boundary_class_idioms_work(sandbox: Sandbox, case: str) -> None:
    source, expected = CLASS_IDIOMS[case]
    result = _run(sandbox, source)
    assert result.ok, result.error
    assert result.value == expected


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("super(int, 1).__init__", ('"__init__"',)),
        ("P = property(lambda s: 1)\nP.fget", ("property",)),
        ("class A:\n    @staticmethod\n    def f():\n        pass\nA.__dict__", ("__dict__",)),
        ("class A(type):\n    pass", ("subclass",)),
        ("class A(super):\n    pass", ("subclass",)),
    ],
)
def test_boundary_class_building_tools_reach_nothing_of_the_host(
    sandbox: Sandbox, source: str, words: tuple[str, ...]
) -> None:
    result = _run(sandbox, source)
    assert not result.ok, result.value
    assert result.error is not None
    for word in words:
        assert word in result.error.message, result.error.message


def test_boundary_render_runs_no_script_code_after_the_run(sandbox: Sandbox) -> None:
    # the host renders an uncaught exception after the run: a script __str__ making a
    # tool call there would act outside the run's records and limits
    result = _run(
        sandbox,
        "class E(Exception):\n    def __str__(self):\n        ping()\n        return 'custom'\n"
        "raise E('plain')",
    )
    assert result.error is not None
    assert result.error.message == "plain"
    assert result.calls == ()


_LOGGING_CLASS = (
    "LOG = []\n"
    "class A:\n"
    "    def __str__(self):\n        LOG.append(1)\n        ping()\n        return 'chosen'\n"
    "    def __repr__(self):\n        LOG.append(1)\n        ping()\n        return 'chosen'\n"
    "    def __hash__(self):\n        return 1\n"
)


@pytest.mark.parametrize(
    ("raising", "message"),
    [
        ("raise ValueError(A())", "<A object>"),
        ("{}[A()]", "<A object>"),
        ("raise ValueError('n', [A(), 2])", "('n', [<A object>, 2])"),
        ("raise OSError(2, 'No such file', A())", "(2, 'No such file')"),
        ("raise ExceptionGroup('two', [ValueError(A()), KeyError(A())])", "two (2 sub-exceptions)"),
        ("raise KeyError(('k', 1))", "('k', 1)"),
        ("raise OSError(2, 'No such file', 'f.txt')", "[Errno 2] No such file: 'f.txt'"),
    ],
)
def test_boundary_error_message_of_a_builtin_exception_runs_no_script_code(
    sandbox: Sandbox, raising: str, message: str
) -> None:
    # attack: a builtin exception holding a script object (raised by the script, or the
    # KeyError C raises for d[obj]) made the host run the script's __str__/__repr__ to
    # build the error message after the run: script code chose the text, wrote to the
    # session, and looped with no deadline; now its arguments render as placeholders
    session = sandbox.session()
    result = session.run_sync(_LOGGING_CLASS + raising)
    assert result.error is not None
    assert result.error.message == message
    assert result.calls == ()
    assert session.run_sync("LOG").value == []


# ----------------------------------------------------------------------------- records


@pytest.mark.parametrize("source", ["ping(x=10**5000)", "ping(x=[1, {'n': -(10**5000)}])"])
def test_boundary_huge_int_argument_cannot_crash_the_trace(sandbox: Sandbox, source: str) -> None:
    # a 5,000-digit int in an argument crashed json.dumps of the trace (ints of more than
    # 4,300 digits are not rendered); it is refused at the call, and the result is JSON
    import json

    result = _run(sandbox, source)
    assert not result.ok
    assert result.error is not None
    assert "4,300 digits" in result.error.message
    assert result.calls == ()
    json.dumps(result.to_json())


# ----------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    "source",
    [
        "import statistics\nstatistics.quantiles([1, 2, 3], n=10**7)",
        "import collections\nd = collections.deque([1]) * 10**8\n0",
        "import collections\nd = collections.deque([1])\nd *= 10**8\n0",
        "class L(list):\n    def __len__(self):\n        return 1\nx = L([1] * 1000) * 10**5\n0",
        "class S(str):\n    def __len__(self):\n        return 1\nx = S('x' * 1000) * 10**5\n0",
    ],
    ids=["quantiles-n", "deque-repeat", "deque-irepeat", "lying-list-len", "lying-str-len"],
)
def test_boundary_size_parameters_and_lying_len_are_bounded(sandbox: Sandbox, source: str) -> None:
    result = _run(sandbox, source)
    assert not result.ok
    assert result.error is not None
    assert result.error.kind == "limit", result.error


def test_boundary_setattr_delattr_hash_work_on_the_scripts_own_objects(sandbox: Sandbox) -> None:
    result = _run(
        sandbox,
        "class A:\n    pass\na = A()\nsetattr(a, 'x', 1)\ndelattr(a, 'x')\nsetattr(a, 'y', 2)\n"
        "[a.y, hasattr(a, 'x')]",
    )
    assert result.ok, result.error
    assert result.value == [2, False]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("class A:\n    pass\nsetattr(A(), '__class__', int)", ("__class__",)),
        ("import math\nsetattr(math, 'pi', 3)", ("read-only",)),
        ("setattr(print, 'x', 1)", ("cannot be modified",)),
        ("delattr(ValueError, 'args')", ("cannot be modified",)),
    ],
)
def test_boundary_setattr_cannot_write_host_objects(
    sandbox: Sandbox, source: str, words: tuple[str, ...]
) -> None:
    result = _run(sandbox, source)
    assert not result.ok
    assert result.error is not None
    for word in words:
        assert word in result.error.message, result.error.message
