"""The ``operator`` stand-in: the operators as functions, through the same guards as the syntax.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``mul``/``pow``/``lshift``/``mod``/``add`` are
the guards the compiler uses for ``*``, ``**``, ``<<``, ``%``, ``+`` (size-checked);
``attrgetter`` and ``methodcaller`` read attributes through the attribute guard
(``attrgetter("__class__")`` is refused like ``x.__class__``); ``itemgetter`` reads
items through the item guard. Every member is a plain function.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards import attributes as guards
from scriptgate.sandbox.guards.comparisons import SCALARS, compare_ok, contains
from scriptgate.sandbox.guards.int_work import guarded_floordiv
from scriptgate.sandbox.guards.memory import guarded_add
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

_PLAIN_OPS = (
    "lt", "le", "eq", "ne", "ge", "gt", "not_", "truth", "is_", "is_not", "abs", "neg", "pos",
    "invert", "index", "and_", "or_", "xor", "truediv", "sub", "rshift",
)  # fmt: skip
_COMPARING = frozenset({"lt", "le", "eq", "ne", "ge", "gt"})

NAME = "operator"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    *_PLAIN_OPS, "contains", "concat", "add", "mul", "pow", "lshift", "mod", "floordiv", "getitem",
    "itemgetter",
    "attrgetter", "methodcaller",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (its getters are plain functions)."""


def _dotted(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = guards._guarded_getattr(obj, part)
    return obj


def _itemgetter(*items: Any) -> Callable[[Any], Any]:
    getitem = guards._guarded_getitem
    if len(items) == 1:
        (item,) = items
        return lambda obj: getitem(obj, item)
    return lambda obj: tuple(getitem(obj, item) for item in items)


def _attrgetter(*names: str) -> Callable[[Any], Any]:
    for name in names:
        if type(name) is not str:
            raise TypeError("attribute name must be a string")
    if len(names) == 1:
        (name,) = names
        return lambda obj: _dotted(obj, name)
    return lambda obj: tuple(_dotted(obj, name) for name in names)


def _methodcaller(name: str, /, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    if type(name) is not str:
        raise TypeError("method name must be a string")
    return lambda obj: guards._guarded_getattr(obj, name)(*args, **kwargs)


def _wrap(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    if name in _COMPARING:

        def compare(a: Any, b: Any) -> Any:
            # a == b in C on values built from shared references (dagguard)
            if not (type(a) in SCALARS and type(b) in SCALARS):
                compare_ok(a, b)
            return fn(a, b)

        compare.__name__ = name
        return compare

    def wrapper(*args: Any) -> Any:
        return fn(*args)

    wrapper.__name__ = name
    return wrapper


def _contains(container: Any, item: Any) -> bool:
    return contains(item, container)  # the compiled `in`'s own search (findings14 D01)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: _wrap(getattr(operator, name), name) for name in _PLAIN_OPS}
    table.update(
        {
            "add": guarded_add,
            "concat": guarded_add,
            "contains": _contains,
            "mul": guards.guarded_mul,
            "pow": guards.guarded_pow,
            "lshift": guards.guarded_lshift,
            "mod": guards.guarded_mod,
            "floordiv": guarded_floordiv,  # big int divisions checked (guards.int_work)
            # the compiled `&`/`|`/`^`/`-` guards: hashing bounded, tables charged (findings14 C03)
            "and_": guards.guarded_set_operator(operator.and_),
            "or_": guards.guarded_set_operator(operator.or_),
            "xor": guards.guarded_set_operator(operator.xor),
            "sub": guards.guarded_set_operator(operator.sub),
            "getitem": guards._guarded_getitem,
            "itemgetter": _itemgetter,
            "attrgetter": _attrgetter,
            "methodcaller": _methodcaller,
        }
    )
    return table
