"""``functools.singledispatch`` against plain Python, in both isolation modes.

Attack-style scripts for it are in ``tests/sandbox/attacks_extra.py`` (``x-singledispatch-*``).
"""

from __future__ import annotations

import pytest
from sandbox_support import refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox

HEAD = (
    "from functools import singledispatch\n@singledispatch\ndef show(x):\n    return 'object'\n"
    "@show.register\ndef _(x: int):\n    return f'int {x}'\n"
    "@show.register(str)\ndef _(x):\n    return 'str ' + x\n"
)

FEATURES = {
    "annotations-and-classes": HEAD + "@show.register\ndef _(x: list | tuple):\n    return len(x)\n"
    "[show(3), show('a'), show(True), show([1, 2]), show((1,)), show(None), show(2.5)]",
    "most-specific-wins": HEAD
    + "class A:\n    pass\nclass B(A):\n    pass\nclass C(B):\n    pass\n"
    "show.register(A, lambda x: 'A')\nshow.register(B, lambda x: 'B')\n"
    "[show(A()), show(B()), show(C()), show.dispatch(C)(None), show.dispatch(bool)(7)]",
    "extra-arguments": "from functools import singledispatch\n@singledispatch\ndef fmt(x, width=4):\n"
    "    return str(x).rjust(width)\n@fmt.register\ndef _(x: float, width=4):\n"
    "    return f'{x:{width}.1f}'\n[fmt(3), fmt(2.25, width=6), fmt('ab', 3)]",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_singledispatch_matches_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


def test_singledispatch_refuses_with_a_hint(sandbox: Sandbox) -> None:
    refused(sandbox, HEAD + "show()", "runtime", "requires at least 1 positional argument")
    refused(
        sandbox,
        HEAD + "@show.register\ndef _(x):\n    return 1",
        "runtime",
        "@register(some_class)",
    )
    refused(
        sandbox,
        "from __future__ import annotations\n"
        + HEAD
        + "@show.register\ndef _(x: float):\n    return 1",
        "runtime",
        "write @f.register(int)",
    )
