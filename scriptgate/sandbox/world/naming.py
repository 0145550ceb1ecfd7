"""Public names for the host functions a script calls: messages say ``sum()``, not our internals.

Part of ``world/``; imports only :mod:`scriptgate.sandbox.guards.constants`. A script's
``sum(1, 2, 3)`` raised ``make_builtins.<locals>.sum_() takes from 1 to 2 positional
arguments``, ``divmod(1)`` named ``guarded_divmod`` and ``heapq.heappush([])`` named
``build.<locals>.heappush``: CPython's argument errors and a function's ``repr`` use its
qualified name. The model then reads names that mean nothing to it (and learns how the
sandbox is laid out). Two ways to name them, neither costing a run anything:

- :func:`name_closures` renames, once at import, the code objects of the functions a
  factory makes per run (``sum_`` → ``sum``): each closure it makes is born named;
- :func:`name_functions` renames the host functions of a member table (builtins
  templates, stand-in modules) to the member name they are reached by.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from typing import Any

from scriptgate.sandbox.guards.constants import FILENAME

__all__ = ["name_closures", "name_functions"]


def _renamed(code: types.CodeType, names: dict[str, str]) -> types.CodeType:
    consts = tuple(
        _renamed(const, names) if isinstance(const, types.CodeType) else const
        for const in code.co_consts
    )
    public = names.get(code.co_name)
    if public is not None:
        return code.replace(co_consts=consts, co_name=public, co_qualname=public)
    return code.replace(co_consts=consts) if consts != code.co_consts else code


def name_closures(factory: Callable[..., Any], names: Iterable[str]) -> None:
    """Name the closures ``factory`` defines as ``<name>_`` by their public ``<name>``.

    Rewrites the factory's nested code objects once; every function it makes afterwards
    has the public ``__name__``/``__qualname__`` (and so the public name in ``TypeError``
    messages and its ``repr``).
    """
    if not isinstance(factory, types.FunctionType):
        raise TypeError("name_closures needs a Python function")
    mapping = {f"{name}_": name for name in names}
    factory.__code__ = _renamed(factory.__code__, mapping)


def name_functions(members: dict[str, Any]) -> None:
    """Give each host Python function in ``members`` its member name (in place, on the functions).

    Only scriptgate's own functions: script functions (compiled from ``<script>``) keep
    their names, and a real stdlib function is never touched (it is the host's). C
    functions and classes already have theirs. A function reached by two names keeps the
    last.
    """
    for name, value in members.items():
        if (
            type(value) is types.FunctionType
            and value.__code__.co_filename != FILENAME
            and str(value.__module__).startswith("scriptgate.")  # never a stdlib function
            and value.__qualname__ != name
            and not name.startswith("_")
        ):
            value.__name__ = name
            value.__qualname__ = name
