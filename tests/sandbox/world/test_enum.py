"""The ``enum`` stand-in: each member against plain Python, in both isolation modes.

Attack-style scripts for it run in ``tests/sandbox/attacks_extra.py`` (``x-enum-*``).
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox

SANDBOX_TIMEOUT = 20


HEAD = (
    "from enum import Enum, IntEnum, StrEnum, Flag, IntFlag, auto, unique\n"
    "class Color(Enum):\n    RED = 1\n    GREEN = 2\n    BLUE = 3\n"
    "    def label(self):\n        return self.name.title()\n"
    "    @classmethod\n    def parse(cls, text):\n        return cls[text.upper()]\n"
)

FEATURES = {
    "members": HEAD + "[Color.RED.name, Color.RED.value, Color(2).name, Color['BLUE'].value,"
    " [c.name for c in Color], len(Color), Color.RED in Color, repr(Color.GREEN), str(Color.BLUE),"
    " Color.RED.label(), Color.parse('green').value, Color.RED is Color(1)]",
    "comparisons": HEAD + "[Color.RED == Color.RED, Color.RED == 1, Color.RED != Color.BLUE,"
    " {Color.RED: 'r'}[Color(1)], sorted(Color, key=lambda c: -c.value)[0].name,"
    " isinstance(Color.RED, Color), isinstance(Color.RED, Enum)]",
    "auto-and-alias": "from enum import Enum, auto\nclass Shape(Enum):\n    SQUARE = auto()\n"
    "    CIRCLE = auto()\n    ROUND = 2\n[s.value for s in Shape] + [Shape.ROUND is Shape.CIRCLE, Shape(2).name]",
    "int-enum": "from enum import IntEnum\nclass Pri(IntEnum):\n    LOW = 1\n    HIGH = 3\n"
    "[Pri.HIGH > Pri.LOW, Pri.LOW + 1, sorted([Pri.HIGH, Pri.LOW])[0].name, Pri(3) == 3, int(Pri.HIGH)]",
    "str-enum": "from enum import StrEnum, auto\nclass Mode(StrEnum):\n    READ = auto()\n"
    "    WRITE = 'w'\n[Mode.READ.value, Mode.WRITE == 'w', Mode('read').name, Mode.READ.upper(), f'{Mode.WRITE}']",
    "flag": "from enum import Flag, IntFlag, auto\nclass Perm(Flag):\n    R = auto()\n    W = auto()\n"
    "    X = auto()\nrw = Perm.R | Perm.W\nclass Bits(IntFlag):\n    A = 1\n    B = 2\n"
    "[repr(rw), Perm.R in rw, Perm.X in rw, (rw & Perm.W).name, [p.name for p in rw], bool(Perm.R & Perm.X),"
    " int(Bits.A | Bits.B), (Bits.A | 4).value]",
    "str-mixin": "from enum import Enum\nclass Color(str, Enum):\n    RED = 'red'\n    GREEN = 'green'\n"
    "[Color.RED == 'red', Color('green').name, isinstance(Color.RED, str), Color.RED.upper(),"
    " Color.GREEN.value, sorted(c.value for c in Color), {Color.RED: 1}['red'], Color.RED in ('red',)]",
    "int-float-mixin": "from enum import Enum\nclass N(int, Enum):\n    A = 1\n    B = 2\n"
    "class F(float, Enum):\n    X = 1.5\n[N.B + 1, N(1).name, N.A < N.B, F.X * 2, F(1.5).name]",
    "match": HEAD + "def f(c):\n    match c:\n        case Color.RED:\n            return 'stop'\n"
    "        case Color.GREEN | Color.BLUE if c.value > 2:\n            return 'blue'\n"
    "        case Color.GREEN:\n            return 'go'\n        case _:\n            return '?'\n"
    "[f(Color.RED), f(Color.GREEN), f(Color.BLUE), f(7)]",
    "unique-and-methods": "from enum import Enum, unique\n@unique\nclass Planet(Enum):\n"
    "    EARTH = (5.97, 6.37)\n    MARS = (0.642, 3.39)\n    def __init__(self, mass, radius):\n"
    "        self.mass = mass\n        self.radius = radius\n    @property\n    def ratio(self):\n"
    "        return round(self.mass / self.radius, 3)\n[Planet.MARS.mass, Planet.EARTH.ratio, Planet((0.642, 3.39)).name]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_enum_matches_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


ERRORS = {
    "unknown-value": (HEAD + "Color(9)", "9 is not a valid Color"),
    "unknown-name": (HEAD + "Color['PINK']", "PINK"),
    "unique-alias": (
        "from enum import Enum, unique\n@unique\nclass E(Enum):\n    A = 1\n    B = 1",
        "duplicate values found",
    ),
    "reassign-member": (HEAD + "Color.RED = 4", "cannot reassign member"),
    "extend-with-members": (HEAD + "class More(Color):\n    PINK = 4", "cannot extend"),
    "functional-api": ("from enum import Enum\nEnum('Color', 'RED GREEN')", "write a class"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_enum_errors_are_one_line(sandbox: Sandbox, name: str) -> None:
    source, words = ERRORS[name]
    refused(sandbox, source, "runtime", words)


def test_enum_metaclass_and_members_mapping_stay_out_of_reach(sandbox: Sandbox) -> None:
    refused(sandbox, HEAD + "type(Color)", "runtime", "ScriptEnumType")
    refused(sandbox, HEAD + "getattr(Color, '__members__')", "runtime", "__members__")
    refused(sandbox, HEAD + "Color.__members__", "rejected", "__members__")
