"""``typing.NamedTuple`` and ``typing.TypedDict`` class syntax against plain Python (both modes).

Attack-style scripts for them run in ``tests/sandbox/attacks_extra.py`` (``x-nt-*``, ``x-td-*``).
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox

SANDBOX_TIMEOUT = 20


FEATURES = {
    "namedtuple-class": "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n"
    "    y: int = 0\n    def norm(self):\n        return abs(self.x) + abs(self.y)\n"
    "p = P(3, -4)\nx, y = p\n[p.x, p.y, P(1).y, p.norm(), repr(p), p._asdict(), p._replace(x=0).x,"
    " P._fields, x + y, p == (3, -4), isinstance(p, tuple), sorted([P(2), P(1, 5)])[0].y]",
    "namedtuple-functional": "from typing import NamedTuple\nQ = NamedTuple('Q', [('a', int), ('b', str)])\n"
    "q = Q(1, 'x')\n[q.a, q.b, repr(q)]",
    "namedtuple-match": "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int\n"
    "def f(p):\n    match p:\n        case P(0, y):\n            return y\n        case P(x=x):\n            return -x\n"
    "[f(P(0, 5)), f(P(2, 1))]",
    "typeddict-class": "from typing import TypedDict\nclass Movie(TypedDict):\n    title: str\n"
    "    year: int\nclass Rated(Movie):\n    stars: int\nm = Movie(title='x', year=1999)\n"
    "r = Rated(title='y', year=2000, stars=4)\nm['year'] += 1\n"
    "[m, r, type(m).__name__, Movie([('title', 'z')])]",
    "generic-class": "from typing import Generic, TypeVar, Optional\nT = TypeVar('T')\nK = TypeVar('K')\n"
    "class Node(Generic[T]):\n    def __init__(self, v: T, nxt: Optional['Node[T]'] = None) -> None:\n"
    "        self.v = v\n        self.nxt = nxt\nclass Pair(Generic[K, T]):\n    __slots__ = ('k', 'v')\n"
    "    def __init__(self, k: K, v: T) -> None:\n        self.k, self.v = k, v\n"
    "class IntNode(Node[int]):\n    def double(self) -> int:\n        return self.v * 2\n"
    "n: Node[str] = Node('a', Node('b'))\np: Pair[str, int] = Pair('x', 1)\n"
    "[n.v, n.nxt.v, p.k, p.v, IntNode(4).double(), isinstance(n, Generic), isinstance(IntNode(1), Node),"
    " type(n).__name__, Box.__name__ if (Box := Node) else None]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_typing_classes_match_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


def test_typing_classes_refuse_other_bases_and_keywords(sandbox: Sandbox) -> None:
    refused(
        sandbox,
        "from typing import NamedTuple\nclass P(NamedTuple, int):\n    x: int",
        "runtime",
        "only inherit from NamedTuple",
    )
    refused(
        sandbox,
        "from typing import TypedDict\nclass M(TypedDict, total=False):\n    a: int",
        "rejected",
        "remove the keyword",
    )
    refused(
        sandbox,
        "class M(type):\n    pass\nclass A(metaclass=M):\n    pass",
        "rejected",
        "use a class decorator",
    )
    refused(
        sandbox, "from typing import Generic\nGeneric()", "runtime", "used only as a base class"
    )
    refused(sandbox, "from typing import NamedTuple\ntype(NamedTuple)", "runtime", "Meta")
