"""A finished run is dead: nothing of it runs script code or makes a tool call afterwards.

Issue 13 §2 (dead after the run), in both isolation modes. The host counts every
execution of its ``echo`` tool; a run's records must hold every one, so a script method
that the host ran while rendering a value, an exception message or ``ScriptResult``
JSON — or a tool function, bound method or callback kept in a session and called in a
later run — shows up as an execution no run recorded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sandbox_support import EchoTool

from scriptgate.sandbox.sandbox import Isolation, Sandbox

_ECHO = EchoTool()
_TOOL = _ECHO.tool
_EXECUTED = _ECHO.executed

_CLASSES = """
class A:
    def __repr__(self):
        echo(m="repr"); return "A"
    def __str__(self):
        echo(m="str"); return "A"
    def __eq__(self, other):
        echo(m="eq"); return True
    def __hash__(self):
        echo(m="hash"); return 1
    def __len__(self):
        echo(m="len"); return 1
    def __iter__(self):
        echo(m="iter"); return iter([1])
class L(list):
    def __repr__(self):
        echo(m="Lrepr"); return "L"
    def __len__(self):
        echo(m="Llen"); return 0
    def __iter__(self):
        echo(m="Liter"); return iter([])
    def __getitem__(self, i):
        echo(m="Lgetitem"); return 0
class D(dict):
    def keys(self):
        echo(m="Dkeys"); return []
    def items(self):
        echo(m="Ditems"); return []
    def __iter__(self):
        echo(m="Diter"); return iter([])
    def __len__(self):
        echo(m="Dlen"); return 0
    def __repr__(self):
        echo(m="Drepr"); return "D"
class S(str):
    def __str__(self):
        echo(m="Sstr"); return "S"
    def __repr__(self):
        echo(m="Srepr"); return "S"
class E(Exception):
    def __str__(self):
        echo(m="Estr"); return "E"
    def __repr__(self):
        echo(m="Erepr"); return "E"
class F:
    def __format__(self, spec):
        echo(m="format"); return "F"
"""

_AFTER_THE_RUN = {
    "value-instance": ("A()", None),
    "value-nested-instances": ("[A(), {'k': A()}, (A(),)]", None),
    "value-lying-list": ("L([1, 2])", [1, 2]),
    "value-lying-dict": ("D(a=1)", {"a": 1}),
    "value-str-subclass": ("S('x')", None),
    "value-instance-key": ("{A(): 1}", None),
    "raise-builtin-with-instance": ("raise ValueError(A())", None),
    "raise-builtin-with-lying-list": ("raise ValueError(L([1]))", None),
    "raise-own-exception": ("raise E('x')", None),
    "raise-own-exception-with-instance": ("raise E(A())", None),
    "raise-keyerror-with-instance": ("raise KeyError(A())", None),
    "raise-group-with-instance": ("raise ExceptionGroup('g', [ValueError(A())])", None),
    "assert-with-instance": ("assert False, A()", None),
    "global-instances-dropped": ("a = A()\nl = L([1])\nd = D(a=1)\nNone", None),
    # __format__ is a script method since issue 14: rendering never formats a value
    "value-format-instances": ("[F(), {'k': F()}, vars(F())]", None),
    "raise-builtin-with-format-instance": ("raise ValueError(F(), 'x')", None),
    "raise-own-exception-with-format-instance": ("raise E(F())", None),
    "raise-chained-to-format-instance": ("raise KeyError(F()) from ValueError(F())", None),
}


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    isolation: Isolation = request.param
    box = Sandbox([_TOOL], isolation=isolation)
    yield box
    box.close()


_unrecorded = _ECHO.unrecorded


@pytest.mark.parametrize("case", list(_AFTER_THE_RUN), ids=str)
def test_dead_after_run_rendering_runs_no_script_code(sandbox: Sandbox, case: str) -> None:
    source, value = _AFTER_THE_RUN[case]
    before = len(_EXECUTED)
    result = sandbox.run_sync(_CLASSES + source)
    text = json.dumps(result.to_json())
    assert str(result)
    assert repr(result)
    assert text
    if result.error is not None:
        assert str(result.error)
        assert result.error.message
    elif value is not None:
        assert result.value == value
    assert _unrecorded(before, len(result.calls)) == []


def test_dead_after_run_script_dunders_the_host_would_call_are_refused(sandbox: Sandbox) -> None:
    # __del__ runs from host code (the garbage collector after the run): a script cannot
    # define it (__format__ may be defined since issue 14: no rendering formats a value,
    # see the rendering cases above; __getattr__ is shielded: it answers only public and
    # private names, and after the run every name is missing without running it, see
    # world/test_class_idioms.py)
    result = sandbox.run_sync("class A:\n    def __del__(self, *a):\n        echo(m=1)\n1")
    assert result.error is not None
    assert result.error.kind == "rejected", result.error
    before = len(_EXECUTED)
    kept = sandbox.run_sync(
        "class A:\n    def __getattr__(self, name):\n        echo(m=name)\n        return 1\nA()"
    )
    assert kept.ok, kept.error
    assert _unrecorded(before, len(kept.calls)) == []


def test_dead_after_run_kept_functions_cannot_call_tools_later(sandbox: Sandbox) -> None:
    session = sandbox.session()
    first = session.run_sync(
        "f = echo\nclass K:\n    def m(self):\n        return echo(m='bound')\n"
        "b = K().m\ncb = lambda: echo(m='callback')\ng = gather\nnone = None"
    )
    assert first.ok, first.error
    before = len(_EXECUTED)
    for call in (
        "f(m='later')",
        "b()",
        "cb()",
        "g(echo(m='g'))",
        "import asyncio\nasync def main():\n    return await g()\nNone",
    ):
        result = session.run_sync(call)
        assert _unrecorded(before, len(result.calls)) == [], call
        before = len(_EXECUTED)
    kept_tool = session.run_sync("f(m='x')")
    assert kept_tool.error is not None
    assert "run that has ended" in kept_tool.error.message
    session.reset()
    assert _unrecorded(before) == []


@pytest.mark.parametrize(
    "later",
    ["await p", "await q\nawait p", "import asyncio\nawait asyncio.sleep(0)\nawait p"],
    ids=["await", "await-two", "await-after-sleep"],
)
def test_dead_after_run_kept_pending_call_awaited_later_is_refused(
    sandbox: Sandbox, later: str
) -> None:
    # an un-awaited tool call kept in the session from an ended async run: awaiting it
    # later gave an internal AttributeError ('start_soon' of None) or waited forever
    session = sandbox.session()
    first = session.run_sync("p = echo(m='kept')\nq = echo(m='kept2')\nif False:\n    await p\n1")
    assert first.ok, first.error
    assert [call.status for call in first.calls] == ["cancelled", "cancelled"]
    before = len(_EXECUTED)
    result = session.run_sync(later)
    assert result.error is not None
    assert result.error.kind == "tool", result.error
    assert "belongs to a run that has ended" in result.error.message
    assert _unrecorded(before, len(result.calls)) == []
    session.reset()
