"""Messages and reprs name what the script called (``sum()``), never the sandbox's internals.

``sum(1, 2, 3)`` raised ``make_builtins.<locals>.sum_() takes from 1 to 2 positional
arguments``; ``divmod(1)`` named ``guarded_divmod``; ``heapq.heappush([])`` named
``build.<locals>.heappush`` (``world/naming.py``). Every builtin and every stand-in module
member is called with a wrong number of arguments, and its ``TypeError`` and ``repr``
are read, in both modes.
"""

from __future__ import annotations

import re

from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world.builtins import SAFE_BUILTIN_NAMES
from scriptgate.sandbox.world.modules import MODULE_NAMES

_INTERNAL = re.compile(
    r"<locals>|\bguarded_|\bsafe_|\bmake_|\bbuild\b|\bwrapper(\(\)| at)|_checked\b"
    r"|\b(?!(?:not|and|or|is|is_not)_\()\w+_\(\)"
)
"""What a name made by the sandbox looked like: a closure, a guard, a trailing ``_``
(``operator.not_`` and its kin are public names)."""

_SKIP_BUILTINS = frozenset({"print", "eval", "exec", "type", "vars", "getattr", "super"})
"""Builtins whose wrong-arity call is not a plain arity error (they explain themselves)."""

_PROBE = """
found = {}
def probe(label, f):
    text = repr(f)
    if not callable(f) or text.startswith('<class'):
        return
    found[label + ' repr'] = text
    try:
        f(*([0] * 12))
    except Exception as e:
        found[label] = str(e)
"""


def _source() -> str:
    lines = [_PROBE]
    for name in SAFE_BUILTIN_NAMES:
        if name[0].islower() and name not in _SKIP_BUILTINS:
            lines.append(f"probe({name!r}, {name})")
    for module, members in sorted(MODULE_NAMES.items()):
        if module in {"asyncio", "time", "__future__"}:
            continue  # sleeps and awaitables: arity errors are the same code path
        lines.append(f"import {module}")
        for member in members:
            if member.isidentifier() and not member.startswith("_"):
                lines.append(f"probe({module + '.' + member!r}, {module}.{member})")
    lines.append("found")
    return "\n".join(lines)


def test_public_names_messages_and_reprs_name_the_public_function(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(_source())
    assert result.ok, result.error
    found = result.value
    assert isinstance(found, dict)
    assert len(found) > 200  # builtins and module members were probed
    leaks = {label: text for label, text in found.items() if _INTERNAL.search(text)}
    assert not leaks, leaks


def test_public_names_sum_says_sum(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        "out = []\nfor f in (sum, divmod, round):\n    try:\n        f()\n"
        "    except TypeError as e:\n        out.append(str(e).split('(')[0])\nout"
    )
    assert result.value == ["sum", "divmod", "round"], result.error
