"""The ``dataclasses`` stand-in: each member against plain Python, in both isolation modes.

Attack-style scripts for it run in ``tests/sandbox/attacks_extra.py`` (``x-dc-*``);
the host-side checks of the generated methods (a foreign ``self``) are here.
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.modules import dataclasses as stand_in
from scriptgate.sandbox.world.modules.common import RunWorld

SANDBOX_TIMEOUT = 20


HEAD = "from dataclasses import dataclass, field, asdict, astuple, replace, fields, is_dataclass\n"

FEATURES = {
    "basic": HEAD + "@dataclass\nclass P:\n    x: int\n    y: int = 0\n"
    "p = P(1)\n[repr(p), p == P(1), p == P(1, 2), p.x, P(y=3, x=2).y, is_dataclass(p),"
    " is_dataclass(P), is_dataclass(1)]",
    "default-factory-post-init": HEAD + "@dataclass\nclass Bag:\n    name: str\n"
    "    items: list = field(default_factory=list)\n    size: int = field(init=False, default=0)\n"
    "    def __post_init__(self):\n        self.size = len(self.items)\n"
    "a = Bag('a')\nb = Bag('b', [1, 2])\na.items.append(5)\n[repr(a), repr(b), Bag('c').items, b.size]",
    "frozen-hash": HEAD + "from dataclasses import FrozenInstanceError\n"
    "@dataclass(frozen=True)\nclass K:\n    a: int\n    b: str = 'z'\n"
    "try:\n    K(1).a = 2\n    err = None\nexcept FrozenInstanceError as e:\n    err = str(e)\n"
    "d = {K(1): 'one'}\n[err, d[K(1)], len({K(1), K(1), K(2)}), K(1) == K(1, 'z')]",
    "order": HEAD + "@dataclass(order=True)\nclass V:\n    major: int\n    minor: int = 0\n"
    "vs = sorted([V(2), V(1, 5), V(1)])\n[repr(v) for v in vs] + [V(1) < V(2), V(3) >= V(3), max(vs).major]",
    "asdict-astuple": HEAD + "@dataclass\nclass In:\n    n: int\n@dataclass\nclass Out:\n"
    "    name: str\n    inner: In\n    rows: list\n    tags: dict\n"
    "o = Out('o', In(1), [In(2), (3, In(4))], {'k': In(5)})\n[asdict(o), astuple(o)]",
    "replace-fields": HEAD
    + "@dataclass\nclass C:\n    a: int\n    b: list = field(default_factory=list, repr=False, compare=False)\n"
    "c = C(1, [2])\nd = replace(c, a=9)\n[repr(d), d.b is c.b, [(f.name, f.repr, f.compare) for f in fields(C)],"
    " fields(c)[0].type is int, C(1, [1]) == C(1, [2])]",
    "inheritance": HEAD + "@dataclass\nclass Base:\n    x: int\n    y: int = 1\n"
    "@dataclass\nclass Child(Base):\n    z: int = 2\n"
    "[repr(Child(0)), [f.name for f in fields(Child)], Child(0) == Child(0), Child(0) == Base(0)]",
    "kw-only-slots-match": HEAD
    + "@dataclass(kw_only=True)\nclass Opt:\n    a: int\n    b: int = 2\n"
    "@dataclass(slots=True)\nclass S:\n    x: int\n    y: int\n"
    "def where(p):\n    match p:\n        case S(0, y):\n            return f'y={y}'\n        case S(x=x, y=0):\n"
    "            return f'x={x}'\n    return 'else'\n"
    "[repr(Opt(a=1)), where(S(0, 4)), where(S(3, 0)), where(S(1, 1))]",
    "eq-false-classvar-initvar": HEAD
    + "from dataclasses import InitVar\nfrom typing import ClassVar\n"
    "@dataclass(eq=False)\nclass E:\n    x: int\n    kind: ClassVar[str] = 'e'\n"
    "    scale: InitVar[int] = 1\n    def __post_init__(self, scale):\n        self.x = self.x * scale\n"
    "e = E(2, 3)\n[e.x, e == E(6), e == e, E.kind, [f.name for f in fields(E)], repr(E(1))]",
    "own-methods-kept": HEAD + "@dataclass\nclass R:\n    x: int\n    def __repr__(self):\n"
    "        return 'R!'\n    def __eq__(self, other):\n        return True\n[repr(R(1)), R(1) == 5]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_dataclasses_match_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


ERRORS = {
    "missing-argument": (
        HEAD + "@dataclass\nclass P:\n    x: int\nP()",
        "missing 1 required argument: 'x'",
    ),
    "mutable-default": (
        HEAD + "@dataclass\nclass P:\n    x: list = []",
        "use default_factory",
    ),
    "non-default-after-default": (
        HEAD + "@dataclass\nclass P:\n    x: int = 1\n    y: int",
        "non-default argument 'y' follows default argument",
    ),
    "unexpected-keyword": (
        HEAD + "@dataclass\nclass P:\n    x: int\nP(1, q=2)",
        "unexpected keyword argument 'q'",
    ),
    "frozen-inherits-plain": (
        HEAD + "@dataclass\nclass A:\n    x: int\n@dataclass(frozen=True)\nclass B(A):\n    y: int",
        "cannot inherit frozen dataclass from a non-frozen one",
    ),
    "asdict-of-class": (
        HEAD + "@dataclass\nclass P:\n    x: int\nasdict(P)",
        "dataclass instances",
    ),
    "fields-of-plain": (HEAD + "fields(1)", "dataclass type or instance"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_dataclasses_errors_are_python_s(sandbox: Sandbox, name: str) -> None:
    source, words = ERRORS[name]
    refused(sandbox, source, "runtime", words)


def _members() -> dict[str, object]:
    steps: list[object] = []
    return stand_in.build(
        RunWorld(
            lambda it: steps.append(it) or it,
            lambda: None,
            sleep=lambda seconds: None,
            async_sleep=lambda seconds, result: None,
            gather=lambda *aws, **kw: list(aws),
        )
    )


def test_dataclasses_generated_methods_refuse_a_foreign_self() -> None:
    # the generated __init__/__repr__/__eq__ take only instances of the script's class:
    # `P.__init__(other, 1)` must not write attributes on someone else's object
    from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK

    made = type("P", (), {"__annotations__": {"x": int}, SCRIPT_CLASS_MARK: True})
    cls = _members()["dataclass"](made)  # type: ignore[operator]

    class Host:
        pass

    host = Host()
    for name, args in (("__init__", (1,)), ("__repr__", ()), ("__eq__", (host,))):
        with pytest.raises(TypeError, match="takes an instance of P"):
            getattr(cls, name)(host, *args)
    assert vars(host) == {}
    assert repr(cls(3)) == "P(x=3)"


def test_dataclasses_decorator_refuses_host_classes() -> None:
    dataclass = _members()["dataclass"]
    for host in (int, dict, Sandbox):
        with pytest.raises(TypeError, match="a class the script defines"):
            dataclass(host)  # type: ignore[operator]
    assert not hasattr(dict, "__dataclass_fields__")


def test_dataclasses_asdict_refuses_a_cycle_in_one_line(sandbox: Sandbox) -> None:
    source = HEAD + "@dataclass\nclass P:\n    x: list\np = P([1])\np.x.append(p)\nasdict(p)"
    refused(sandbox, source, "runtime", "contains itself")


def test_dataclasses_session_class_charges_the_run_that_calls_it() -> None:
    # a class outlives the run that made it: its generated methods must charge the
    # current run, not the first one (whose budget tripped and stays tripped)
    from scriptgate.sandbox import SandboxSession
    from scriptgate.sandbox.result import Limits

    session = SandboxSession(Sandbox(limits=Limits(timeout=10, max_steps=50_000)))
    first = session.run_sync(
        HEAD + "@dataclass\nclass P:\n    x: int\nn = 0\nwhile True:\n    n += 1"
    )
    assert first.error is not None
    assert first.error.kind == "limit"
    second = session.run_sync("[repr(P(1)), P(2) == P(2), asdict(P(3))]")
    assert second.ok, second.error
    assert second.value == ["P(x=1)", True, {"x": 3}]
