"""The second batch of issue-14 stand-ins: ``abc``, ``contextlib``, ``cached_property``,
``itertools.tee``, ``collections.ChainMap``, ``string.Template``, ``typing.Protocol``.

Each feature script runs in both modes and must give what plain CPython gives; the
refusals say what to write instead. Their attacks are in ``tests/sandbox/attacks_modules.py``.
"""

from __future__ import annotations

import abc
import collections.abc
import typing
from typing import Any

import pytest
from sandbox_support import value

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import modules

SANDBOX_TIMEOUT = 5


def plain(source: str) -> Any:
    """What plain Python gives for ``source`` whose last line is an expression, rendered."""
    from scriptgate.sandbox.lastvalue import render_last_value

    *body, last = source.rstrip().split("\n")
    scope: dict[str, Any] = {"__name__": "__main__"}
    exec("\n".join(body), scope)
    return render_last_value(eval(last, scope))[0]


def refused(result: ScriptResult, words: str) -> None:
    assert not result.ok, result.value
    assert result.error is not None
    assert words in result.error.message, result.error.message


_ABC = "from abc import ABC, abstractmethod\n"
_CTX = "from contextlib import contextmanager, suppress, nullcontext, closing\n"

FEATURES: dict[str, str] = {
    "abc-abstract-refused": _ABC
    + "class Shape(ABC):\n    @abstractmethod\n    def area(self): ...\n"
    "try:\n    Shape()\n    r = 'made'\nexcept TypeError as e:\n    r = str(e)\nr",
    "abc-implemented": _ABC + "class Shape(ABC):\n    def __init__(self, n):\n        self._n = n\n"
    "    @abstractmethod\n    def area(self): ...\n    def twice(self):\n"
    "        return 2 * self.area()\nclass Sq(Shape):\n    def area(self):\n"
    "        return self._n ** 2\n[Sq(3).twice(), isinstance(Sq(1), ABC), issubclass(Sq, Shape)]",
    "abc-inherited-abstract": _ABC + "class A(ABC):\n    @abstractmethod\n    def f(self): ...\n"
    "    @abstractmethod\n    def g(self): ...\nclass B(A):\n    def f(self):\n        return 1\n"
    "try:\n    B()\n    r = 'made'\nexcept TypeError as e:\n    r = str(e)\nr",
    "abc-abstract-property-classmethod": _ABC + "class A(ABC):\n    @property\n"
    "    @abstractmethod\n    def size(self): ...\n    @classmethod\n    @abstractmethod\n"
    "    def make(cls): ...\nclass B(A):\n    size = 3\n    @classmethod\n    def make(cls):\n"
    "        return cls()\ntry:\n    A()\n    r = 'made'\nexcept TypeError as e:\n    r = str(e)\n"
    "[r, B.make().size]",
    "contextmanager": _CTX + "log = []\n@contextmanager\ndef step(name):\n"
    "    log.append('start ' + name)\n    try:\n        yield name.upper()\n"
    "    except KeyError as e:\n        log.append('caught ' + str(e))\n    finally:\n"
    "        log.append('end ' + name)\nwith step('a') as s:\n    log.append(s)\n"
    "with step('b'):\n    raise KeyError('k')\ntry:\n    with step('c'):\n"
    "        raise ValueError('v')\nexcept ValueError:\n    log.append('outer')\nlog",
    "contextmanager-misuse": _CTX + "@contextmanager\ndef twice():\n    yield 1\n    yield 2\n"
    "@contextmanager\ndef never():\n    if False:\n        yield\nout = []\nfor cm in (twice, never):\n"
    "    try:\n        with cm():\n            pass\n    except RuntimeError as e:\n"
    "        out.append(str(e))\nout",
    "suppress-nullcontext-closing": _CTX + "out = []\nwith suppress(KeyError, ZeroDivisionError):\n"
    "    1 / 0\nwith suppress(KeyError):\n    out.append('body')\ntry:\n"
    "    with suppress(KeyError):\n        raise ValueError('x')\nexcept ValueError:\n"
    "    out.append('not suppressed')\nwith nullcontext(5) as n:\n    out.append(n)\n"
    "class R:\n    closed = False\n    def close(self):\n        self.closed = True\nr = R()\n"
    "with closing(r) as same:\n    out.append(same is r)\nout + [r.closed]",
    "exitstack": "from contextlib import ExitStack, contextmanager\nlog = []\n@contextmanager\n"
    "def res(n):\n    log.append('open ' + n)\n    try:\n        yield n\n    finally:\n"
    "        log.append('close ' + n)\nclass CM:\n    def __enter__(self):\n        return self\n"
    "    def __exit__(self, t, e, tb):\n        log.append('cm exit ' + t.__name__)\n"
    "        return True\nwith ExitStack() as st:\n"
    "    log.append([st.enter_context(res(x)) for x in 'ab'])\n    st.callback(log.append, 'cb')\n"
    "with ExitStack() as st:\n    st.enter_context(CM())\n    st.enter_context(res('c'))\n"
    "    raise KeyError('k')\ntry:\n    with ExitStack() as st:\n        st.callback(log.append, 'x')\n"
    "        raise ValueError('v')\nexcept ValueError:\n    log.append('v out')\n"
    "with ExitStack() as st:\n    st.enter_context(res('d'))\n    moved = st.pop_all()\n"
    "log.append('popped')\nmoved.close()\ndef boom():\n    raise RuntimeError('cb')\ntry:\n"
    "    with ExitStack() as st:\n        st.callback(boom)\nexcept RuntimeError as e:\n"
    "    log.append(str(e))\nlog",
    "cached-property": "from functools import cached_property\nclass D:\n"
    "    def __init__(self, xs):\n        self.xs = xs\n        self.calls = 0\n"
    "    @cached_property\n    def total(self):\n        self.calls += 1\n        return sum(self.xs)\n"
    "    @cached_property\n    def _size(self):\n        return len(self.xs)\nd = D([1, 2, 3])\n"
    "r = [d.total, d.total, d.calls, d._size]\ndel d.total\n"
    "r + [d.total, d.calls, D.total.attrname]",
    "tee": "from itertools import tee, islice, count\na, b = tee(iter(range(5)))\n"
    "x, y, z = tee('abc', 3)\nc1, c2 = tee(count())\nhead = list(islice(c1, 3))\n"
    "[list(islice(a, 2)), list(b), list(a), list(x), list(z), head, next(c2), len(tee([1], 0))]",
    "chainmap": "from collections import ChainMap\nd = {'color': 'red', 'user': 'guest'}\n"
    "env = {'user': 'ann'}\ncfg = ChainMap(env, d)\nchild = cfg.new_child({'color': 'blue'})\n"
    "child['size'] = 3\nr = [cfg['user'], dict(cfg), child['color'], child.parents['color'],"
    " len(child), sorted(child), 'size' in child, child.get('no', 0), len(child.maps)]\n"
    "del child['size']\ntry:\n    del child['user']\nexcept KeyError:\n    r.append('first only')\n"
    "r + [child.pop('color'), list(cfg.keys()), list(cfg.values()), cfg == {'user': 'ann',"
    " 'color': 'red'}, repr(ChainMap({'a': 1}))]",
    "template": "from string import Template\nt = Template('Hello $name, you owe $$$amount ${x}y')\n"
    "class P(Template):\n    delimiter = '%'\na = P('%who likes %{what}').substitute(who='a', what='t')\n"
    "b = Template('$a $b').safe_substitute({'a': 1})\ntry:\n    Template('$').substitute()\n"
    "    c = None\nexcept ValueError as e:\n    c = str(e)\ntry:\n    Template('$q').substitute()\n"
    "except KeyError as e:\n    c2 = str(e)\n[t.substitute(name='Ann', amount=5, x=[1]), a, b, c, c2,"
    " t.get_identifiers(), t.is_valid(), t.template]",
    "template-idpattern": "from string import Template\nclass T(Template):\n"
    "    idpattern = r'[a-z]+_[a-z]+'\nT('$first_name $x').safe_substitute(first_name='ann')",
    "template-pattern": "from string import Template\nclass T(Template):\n"
    "    pattern = r'\\[(?:(?P<escaped>\\[) | (?P<named>[a-z]+)\\] | (?P<braced>[a-z]+)\\]"
    " | (?P<invalid>))'\n[T('hi [name] [[').substitute(name='ann'), T('[x]').get_identifiers()]",
    "protocol": "from typing import Protocol, runtime_checkable, TypeVar\nT = TypeVar('T')\n"
    "class HasLen(Protocol):\n    def __len__(self) -> int: ...\n@runtime_checkable\n"
    "class Named(Protocol):\n    name: str\n    def greet(self) -> str: ...\n"
    "class Box(Protocol[T]):\n    def get(self) -> T: ...\nclass P:\n"
    "    def __init__(self, name):\n        self.name = name\n    def greet(self):\n"
    "        return 'hi ' + self.name\nclass Impl(Named):\n    def __init__(self):\n"
    "        self._x = 5\n        self.name = 'i'\n    def greet(self):\n        return str(self._x)\n"
    "out = []\nfor f in (lambda: isinstance('a', HasLen), lambda: HasLen(),"
    " lambda: issubclass(P, Named)):\n    try:\n        out.append(f())\n    except TypeError as e:\n"
    "        out.append(str(e))\nout + [isinstance(P('a'), Named), isinstance(3, Named),"
    " Impl().greet(), isinstance(Impl(), Named)]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_more_stand_ins_match_plain_python(sandbox: Sandbox, name: str) -> None:
    source = FEATURES[name]
    assert value(sandbox, source) == plain(source)


REFUSALS: dict[str, tuple[str, str]] = {
    "abc-register": (
        _ABC + "class A(ABC):\n    pass\nA.register(int)",
        "subclass the ABC instead",
    ),
    "abc-host-function": (_ABC + "import math\nabstractmethod(math.floor)", "a function you"),
    "abc-metaclass-not-importable": ("from abc import ABCMeta", "cannot import name"),
    "contextmanager-host-function": (_CTX + "contextmanager(len)", "a generator function you"),
    "contextmanager-not-a-generator": (
        _CTX + "def f():\n    return 1\nwith contextmanager(f)():\n    pass",
        "needs a generator function",
    ),
    "suppress-non-exception": (_CTX + "suppress(int)", "exception classes"),
    "exitstack-not-a-context-manager": (
        "from contextlib import ExitStack\nExitStack().enter_context(5)",
        "does not support the context manager protocol",
    ),
    "exitstack-private-keyword": (
        "from contextlib import ExitStack\ndef f(**k):\n    return k\n"
        "ExitStack().callback(f, _trusted=True)",
        "starts with",
    ),
    "cached-property-private-on-stand-in-subclass": (
        "from functools import cached_property\nfrom collections import Counter\n"
        "class C(Counter):\n    @cached_property\n    def _secret(self):\n        return 1\n"
        "C()._secret",
        "_secret",
    ),
    "tee-too-many": ("from itertools import tee\ntee([1], 10**6)", "at most 100"),
    "chainmap-host-map": (
        "from collections import ChainMap\nimport typing\nChainMap(typing.List)['x']",
        "ChainMap holds dicts",
    ),
    "chainmap-appended-host-map": (
        "from collections import ChainMap\nimport json\nc = ChainMap()\nc.maps.append(json)\nc['x']",
        "ChainMap holds dicts",
    ),
    "template-long-delimiter": (
        "from string import Template\nclass T(Template):\n    delimiter = '%' * 50\nT('x').substitute()",
        "delimiter must be 1 to 20",
    ),
    "template-pattern-without-groups": (
        "from string import Template\nclass T(Template):\n    pattern = 'x'\nT('x').substitute()",
        "needs the groups",
    ),
    "protocol-subclass-of-class": (
        "from typing import Protocol\nclass A:\n    pass\nclass P(A, Protocol):\n    pass",
        "Protocols can only inherit from other protocols",
    ),
    "runtime-checkable-plain-class": (
        "from typing import runtime_checkable\n@runtime_checkable\nclass A:\n    pass",
        "only applied to protocol classes",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_more_stand_ins_refuse_with_a_hint(sandbox: Sandbox, name: str) -> None:
    source, words = REFUSALS[name]
    refused(sandbox.run_sync(source), words)


def test_more_stand_ins_abc_register_leaves_host_isinstance_alone(sandbox: Sandbox) -> None:
    before = (isinstance([], collections.abc.Mapping), issubclass(list, abc.ABC))
    for source in (
        "from abc import ABC\nABC.register(list)",
        "import typing\nclass P(typing.Protocol):\n    pass\nP.register(list)",
    ):
        assert not sandbox.run_sync(source).ok
    assert (isinstance([], collections.abc.Mapping), issubclass(list, abc.ABC)) == before
    assert not isinstance([], typing.Mapping)


def test_more_stand_ins_metaclasses_are_never_held(sandbox: Sandbox) -> None:
    for source in (
        "from typing import Protocol\nclass P(Protocol):\n    pass\ntype(P)",
        "from typing import Protocol\nclass P(Protocol):\n    pass\nP.__class__",
    ):
        assert not sandbox.run_sync(source).ok, source


def test_more_stand_ins_are_listed_for_the_model() -> None:
    from scriptgate.sandbox.model.rules import codemode_description

    assert modules.MODULE_NAMES["abc"] == ("ABC", "abstractmethod")
    assert "contextmanager" in modules.MODULE_NAMES["contextlib"]
    for module, member in (
        ("functools", "cached_property"),
        ("itertools", "tee"),
        ("collections", "ChainMap"),
        ("string", "Template"),
        ("typing", "runtime_checkable"),
    ):
        assert member in modules.MODULE_NAMES[module]
    text = codemode_description([])
    line = next(row for row in text.splitlines() if row.startswith("- Importable modules:"))
    importable = line.split(": ", 1)[1].rstrip(".").split(", ")
    assert {"abc", "contextlib"} <= set(importable)
    assert "instead of `g.send(x)`" in text


def test_more_stand_ins_suppress_never_swallows_the_deadline() -> None:
    sandbox = Sandbox(limits=Limits(timeout=0.5))
    try:
        result = sandbox.run_sync(
            "from contextlib import suppress\nwhile True:\n    with suppress(BaseException):\n"
            "        while True:\n            pass"
        )
    finally:
        sandbox.close()
    assert result.error is not None
    assert result.error.kind == "limit"
