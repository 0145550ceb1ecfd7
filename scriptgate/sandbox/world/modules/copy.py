"""The ``copy`` stand-in: ``copy`` and ``deepcopy`` of script data, charged per item.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``deepcopy`` walks lists, dicts, tuples, sets
and the ``collections`` types itself (one tick per item, shared references kept
shared as in Python, memory charged for each copied container); immutable
values come back as they are; any other object (a script instance) is refused
until the object boundary lands (``copy.copy`` of it too), so no host object's
``__reduce_ex__`` is ever reached.
"""

from __future__ import annotations

import collections
import datetime
from typing import Any

from scriptgate.sandbox.guards.memory import charge_copy
from scriptgate.sandbox.guards.script_classes import InstanceDict
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "copy"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("copy", "deepcopy", "Error")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (copies of what the script held)."""

_IMMUTABLE = frozenset(
    {
        int, float, complex, bool, str, bytes, type(None), range, slice,
        datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone,
    }
)  # fmt: skip
_SHALLOW = frozenset(
    {
        list, dict, set, bytearray, collections.Counter, collections.OrderedDict,
        collections.defaultdict, collections.deque,
    }
)  # fmt: skip


class Error(Exception):
    """``copy.Error``: the value cannot be copied in the sandbox."""


def _refuse(value: Any) -> Error:
    return Error(
        f"copying a {type(value).__name__} is not available in the sandbox "
        "(copy lists, dicts, tuples, sets and collections values)"
    )


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind in _IMMUTABLE or kind is tuple or kind is frozenset:
        return value
    if kind in _SHALLOW:
        charge_copy(value)
        return value.copy()
    if kind is InstanceDict:
        charge_copy(value)
        return dict(value)  # copy.copy(vars(obj)): a plain dict, as in Python
    raise _refuse(value)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    tick = run.tick

    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        memo = {} if memo is None else memo

        def walk(item: Any) -> Any:
            tick()
            kind = type(item)
            if kind in _IMMUTABLE:
                return item
            found = memo.get(id(item))
            if found is not None:
                return found[0]
            if kind is list:
                charge_copy(item)
                out: Any = []
                memo[id(item)] = (out, item)
                out.extend(walk(x) for x in item)
            elif kind is tuple:
                out = tuple(walk(x) for x in item)
                memo[id(item)] = (out, item)
            elif kind in (dict, collections.OrderedDict, collections.Counter, InstanceDict):
                charge_copy(item)
                out = {} if kind is InstanceDict else kind()
                memo[id(item)] = (out, item)
                for k, v in item.items():
                    out[walk(k)] = walk(v)
            elif kind is collections.defaultdict:
                charge_copy(item)
                out = collections.defaultdict(item.default_factory)
                memo[id(item)] = (out, item)
                for k, v in item.items():
                    out[walk(k)] = walk(v)
            elif kind is collections.deque:
                charge_copy(item)
                out = collections.deque(maxlen=item.maxlen)
                memo[id(item)] = (out, item)
                out.extend(walk(x) for x in item)
            elif kind in (set, frozenset):
                charge_copy(item)
                out = kind(walk(x) for x in item)
                memo[id(item)] = (out, item)
            elif kind is bytearray:
                charge_copy(item)
                out = bytearray(item)
                memo[id(item)] = (out, item)
            else:
                raise _refuse(item)
            return out

        return walk(value)

    return {"copy": _copy, "deepcopy": deepcopy, "Error": Error}
