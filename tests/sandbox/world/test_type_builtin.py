"""``type`` as a script sees it (issue 14): ``isinstance(c, type)`` works, ``type`` is no base.

``type`` was a plain function, so ``isinstance(x, type)`` — a common check in generic model
code — raised ``isinstance() arg 2 must be a type``, and ``class M(type)`` said ``cannot
subclass <function type at 0x…>``. It is now an opaque callable whose ``isinstance`` and
``issubclass`` checks are the real type's; subclassing it is refused with what to write
instead, and nothing of it is readable (both modes).
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("isinstance(int, type)", True),
        ("isinstance(3, type)", False),
        ("class A:\n    pass\nisinstance(A, type)", True),
        ("isinstance(3, (type, int))", True),
        ("[isinstance(type, type), issubclass(type, type)]", [True, True]),
        ("issubclass(bool, type)", False),
        ("type(3) is int", True),
        ("[type(x).__name__ for x in (1, 'a', [], {})]", ["int", "str", "list", "dict"]),
        ("f = type\nf(2.5) is float", True),
        ("[t.__name__ for t in map(type, [1, 'a'])]", ["int", "str"]),
        ("repr(type)", "<class 'type'>"),
        ("def kind(x):\n    return 'class' if isinstance(x, type) else type(x).__name__\n"
         "[kind(int), kind(1)]", ["class", "int"]),
    ],
)  # fmt: skip
def test_type_builtin_behaves_like_python(sandbox: Sandbox, source: str, expected: object) -> None:
    assert value(sandbox, source) == expected


def test_type_builtin_subclassing_is_refused_with_what_to_write(sandbox: Sandbox) -> None:
    refused(sandbox, "class M(type):\n    pass", "metaclasses are not available in the sandbox")
    refused(sandbox, "class M(type):\n    pass", "use a class decorator, __init_subclass__")


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("type.mro", '"mro" of type is not available'),
        ("type.__call__", "invalid attribute name"),
        ("type.__class__", '"__class__" of type objects is not available'),
        ("type(type)", "the class 'type' is not available"),
        ("getattr(type, '__instancecheck__')", "invalid attribute name"),
        ("type('X', (), {})", "type() takes one argument in the sandbox"),
        ("class M(metaclass=type):\n    pass", "metaclass= is not available"),
    ],
)
def test_type_builtin_exposes_nothing_of_itself(sandbox: Sandbox, source: str, words: str) -> None:
    refused(sandbox, source, words)
