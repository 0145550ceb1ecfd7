"""No script writes reach a host object, and no metaclass is ever holdable (issue 13, F01/F06).

F01: ``functools.update_wrapper`` renamed the host's ``ToolError`` for every later run and
planted a list on the ``type`` builtin that another Sandbox read. Here every writing path
is tried in one run, then a second run of the same Sandbox and a run of a new Sandbox
check that host classes and builtins are what they were. F06: an audit of the whole
allow-list (every stand-in module's ``HOLDABLE``, every marked class): no metaclass.
"""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.sandbox.guards import boundary
from scriptgate.sandbox.guards.errors import ToolError
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import builtins as world_builtins
from scriptgate.sandbox.world.holdable import register_world, world_modules_list
from scriptgate.sandbox.world.modules import decimal as world_decimal

MODES = ["in_process", "process"]

WRITES = """
import functools, collections, typing
from decimal import Context
class Carrier:
    pass
c = Carrier()
c.box = ["secret of tenant A"]
T = typing.TypeVar("LimitExceeded")
def spoof():
    pass
attempts = [
    lambda: functools.update_wrapper(type, c),
    lambda: functools.update_wrapper(spoof, T),
    lambda: functools.update_wrapper(ToolError, spoof),
    lambda: functools.wraps(spoof)(len),
    lambda: functools.wraps(c)(collections.Counter),
    lambda: functools.total_ordering(collections.OrderedDict),
    lambda: setattr(Context, "box", [1]),
    lambda: setattr(ToolError, "box", [1]),
    lambda: setattr(type, "box", [1]),
    lambda: delattr(Context, "prec"),
]
refused = 0
for attempt in attempts:
    try:
        attempt()
    except (TypeError, AttributeError):
        refused += 1
refused
"""

READS = """
seen = []
for probe in (lambda: type.box, lambda: ToolError.box, lambda: Context.box):
    try:
        seen.append(probe())
    except (AttributeError, NameError, TypeError):
        seen.append("absent")
try:
    raise ToolError("x")
except ToolError as e:
    name = type(e).__name__
[seen, name, ToolError.__name__]
"""


def _host_state() -> Any:
    return (
        ToolError.__name__,
        ToolError.__qualname__,
        ToolError.__module__,
        sorted(vars(ToolError)),
        sorted(vars(world_decimal.Context)),
        sorted(getattr(world_builtins.type_of, "__dict__", {})),
        world_builtins.type_of.__name__,
    )


@pytest.mark.parametrize("mode", MODES)
def test_host_writes_never_reach_host_classes_or_builtins(mode: str) -> None:
    before = _host_state()
    first = Sandbox([], isolation=mode, limits=Limits(timeout=20))  # type: ignore[arg-type]
    try:
        wrote = first.run_sync(WRITES)
        assert wrote.ok, wrote.error
        # update_wrapper(spoof, T) writes to the script's own function: allowed
        assert wrote.value == 9
        again = first.run_sync("from decimal import Context\n" + READS)
    finally:
        first.close()
    second = Sandbox([], isolation=mode, limits=Limits(timeout=20))  # type: ignore[arg-type]
    try:
        other = second.run_sync("from decimal import Context\n" + READS)
    finally:
        second.close()
    expected = [["absent", "absent", "absent"], "ToolError", "ToolError"]
    assert again.value == expected, again.error  # a later run of the same (pooled) sandbox
    assert other.value == expected, other.error  # another tenant's sandbox
    assert _host_state() == before


def test_host_writes_audit_no_metaclass_is_holdable() -> None:
    register_world()
    listed = [kind for module in world_modules_list() for kind in getattr(module, "HOLDABLE", ())]
    for kind in [*listed, *boundary._CLASSES, *boundary._FULL]:
        if not isinstance(kind, type):
            continue
        meta = type(kind)
        assert not issubclass(kind, type), kind
        assert not boundary.holdable(meta), (kind, meta)
        assert not boundary.holdable_class(meta), (kind, meta)
        assert boundary.HOLDABLE_MARK not in vars(meta), (kind, meta)
    assert not boundary.holdable(type)
    assert not boundary.holdable(type(world_builtins._SIZED_BYTES["bytes"]))


def test_host_writes_metaclass_cannot_be_registered() -> None:
    class Meta(type):
        pass

    with pytest.raises(ValueError, match="metaclass"):
        boundary.register_holdable([Meta])
    assert not boundary.holdable(Meta)
