"""Stand-in modules: what ``import json`` (and friends) gives a script — the registry.

Part of ``world/``: owns the table of importable stand-ins and ``import``; each stand-in
is one module of this package (``json.py``, ``math.py``…, built on
:mod:`.common`), uses ``guards/`` and must not import the engine, isolation or the
model-facing text. A new stand-in is one new file plus one line in :data:`_STAND_INS`.

A script never receives a real module object (``datetime.sys``, ``json.codecs``
and ``re.enum.bltns`` lead to the host, restrictedpython-notes §7.3). ``import X``
returns an immutable :class:`~scriptgate.sandbox.guards.attributes.OpaqueNamespace` that
exposes only the members listed in :data:`MODULE_NAMES`; ``from X import name``
is checked against the same list (``IMPORT_FROM`` bypasses the attribute guard).
Each stand-in declares ``HOLDABLE``, the value types it hands to scripts;
:data:`HOLDABLE` collects them for the object boundary.
"""

from __future__ import annotations

import collections as _collections
import types
from collections.abc import Callable
from types import ModuleType
from typing import Any

from scriptgate.sandbox.compile.cache import register_star_members
from scriptgate.sandbox.guards.attributes import OpaqueNamespace
from scriptgate.sandbox.guards.ticking import LARGE_INPUT, check_budget
from scriptgate.sandbox.world.modules import (
    abc,
    asyncio,
    base64,
    bisect,
    calendar,
    cmath,
    collections,
    collections_abc,
    contextlib,
    copy,
    csv,
    dataclasses,
    datetime,
    decimal,
    difflib,
    enum,
    fractions,
    functools,
    hashlib,
    heapq,
    html,
    io,
    itertools,
    json,
    logging,
    math,
    operator,
    pprint,
    random,
    re,
    statistics,
    string,
    sys,
    textwrap,
    time,
    traceback,
    typing,
    unicodedata,
    urllib,
    urllib_parse,
    uuid,
    warnings,
    zoneinfo,
)
from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.naming import name_functions

__all__ = ["HOLDABLE", "MODULE_NAMES", "make_import", "make_modules"]

_STAND_INS: tuple[ModuleType, ...] = (
    json, math, re, datetime, time, itertools, collections, statistics, random, string,
    functools, typing, heapq, bisect, operator, copy, textwrap, base64, hashlib,
    decimal, fractions, pprint, uuid, difflib, csv, io, html, unicodedata, zoneinfo,
    calendar, cmath, sys,
    asyncio,
    dataclasses, enum, abc, contextlib, collections_abc, warnings,
    logging, traceback, urllib, urllib_parse,
)  # fmt: skip
"""Every stand-in module, in the order the README and the model's rules list them."""

_SUBMODULES: dict[str, dict[str, str]] = {}
for _module in _STAND_INS:
    if "." in _module.NAME:
        _parent, _child = _module.NAME.rsplit(".", 1)
        _SUBMODULES.setdefault(_parent, {})[_child] = _module.NAME
"""Packages among the stand-ins: ``collections`` → its member ``abc`` → ``collections.abc``."""

MODULE_NAMES: dict[str, tuple[str, ...]] = {
    m.NAME: (*m.MEMBERS, *_SUBMODULES.get(m.NAME, ())) for m in _STAND_INS
}
"""Every importable stand-in module and the members it exposes (for the README)."""
register_star_members({m.NAME: m.MEMBERS for m in _STAND_INS})  # `from math import *`

HOLDABLE: tuple[type, ...] = tuple(dict.fromkeys(t for m in _STAND_INS for t in m.HOLDABLE))
"""Every value type a stand-in hands to scripts (the object boundary's allow-list takes these)."""

_BUILDERS: dict[str, Callable[[RunWorld], dict[str, Any]]] = {
    **{m.NAME: m.build for m in _STAND_INS},
    "__future__": lambda run: {"annotations": None},
}
_IMPORTABLE = frozenset(_BUILDERS)
_C_INTERNAL = datetime.C_INTERNAL_IMPORTS
_EMPTY = OpaqueNamespace("internal", {})


MISSING_HINTS: dict[str, dict[str, str]] = {
    "sys": sys.HINTS,
    "asyncio": {
        "timeout": "use await asyncio.wait_for(work(), timeout=seconds)",
        "get_event_loop": "the event loop is the host's: use asyncio.create_task, gather, "
        "wait_for and sleep",
        "get_running_loop": "the event loop is the host's: use asyncio.create_task, gather, "
        "wait_for and sleep",
        "new_event_loop": "the event loop is the host's: call asyncio.run(main()) once",
        "run_until_complete": "call asyncio.run(main()) once",
        "wait": "use await asyncio.gather(*aws) or asyncio.as_completed(aws)",
        "Future": "use asyncio.create_task(work()) or an asyncio.Event",
    },
    "json": {
        "JSONEncoder": "pass default=fn to json.dumps (json.dumps(obj, default=str))",
        "JSONDecoder": "pass object_hook=fn to json.loads",
        "load": "read the text through a tool, then json.loads(text)",
        "dump": "json.dumps(obj) gives the text; write it through a tool",
    },
    "time": {"process_time": "use time.perf_counter()"},
    "logging": logging.HINTS,
    "traceback": traceback.HINTS,
    "urllib": urllib.HINTS,
}
"""Members a stand-in leaves out that models reach for, and what to write instead."""


def _missing(module: str) -> Callable[[str], Exception]:
    hints = MISSING_HINTS.get(module, {})

    def missing(name: str) -> Exception:
        hint = hints.get(name)
        text = f"module {module!r} has no attribute {name!r}"
        return AttributeError(f"{text} in the sandbox: {hint}" if hint else text)

    return missing


_SIZED_WORK: dict[str, frozenset[str]] = {
    "json": frozenset(),
    "re": frozenset(),
    "html": frozenset(),
    "base64": frozenset(),
    "string": frozenset(),
    "textwrap": frozenset(),
    "statistics": frozenset(),
    "random": frozenset(
        {"random", "randint", "randrange", "choice", "uniform", "gauss", "seed", "getrandbits"}
    ),
    "heapq": frozenset({"heappush", "heappop", "heapreplace", "heappushpop"}),
    "copy": frozenset(),
    "pprint": frozenset(),
    "difflib": frozenset(),
    "csv": frozenset(),
    "hashlib": frozenset(),
    "unicodedata": frozenset(),
}
"""Stand-ins whose functions' work grows with a text or container argument, and the members
left out (their work does not: ``heappush`` is O(log n), ``random.choice`` O(1)). Each other
function checks the run's budget first when an argument has :data:`LARGE_INPUT` items or more
(findings14 A16: ``for i in range(20): html.unescape(s)`` of 10 MB ran 49 s under a 2 s
deadline, the tick chunk being 256). Numeric stand-ins (``math``, ``cmath``), the lazy
``itertools``, classes and constants pay nothing."""
_SIZERS: dict[type, Callable[[Any], int]] = {
    str: str.__len__,
    bytes: bytes.__len__,
    bytearray: bytearray.__len__,
    list: list.__len__,
    tuple: tuple.__len__,
    dict: dict.__len__,
    set: set.__len__,
    frozenset: frozenset.__len__,
    _collections.deque: _collections.deque.__len__,
}
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType)


def _large_keywords(kwargs: dict[str, Any]) -> bool:
    for value in kwargs.values():
        sizer = _SIZERS.get(type(value))
        if sizer is not None and sizer(value) >= LARGE_INPUT:
            return True
    return False


def _checking(func: Callable[..., Any]) -> Callable[..., Any]:
    sizers = _SIZERS.get

    def member(*args: Any, **kwargs: Any) -> Any:
        for value in args:  # inline: a small call pays a dict lookup per argument
            sizer = sizers(type(value))
            if sizer is not None and sizer(value) >= LARGE_INPUT:
                check_budget()
                break
        else:
            if kwargs and _large_keywords(kwargs):
                check_budget()
        return func(*args, **kwargs)

    member.__doc__ = func.__doc__
    return member


def _budget_checked(members: dict[str, Any], left_out: frozenset[str]) -> dict[str, Any]:
    """``members`` with each function (but ``left_out``) checking the budget on large input."""
    return {
        name: _checking(value) if type(value) in _FUNCTIONS and name not in left_out else value
        for name, value in members.items()
    }


def make_modules(
    charge: Callable[[Any], Any],
    tick: Callable[[], None],
    sleep: Callable[[float], None],
    async_sleep: Callable[[float, Any], Any],
    gather: Callable[..., Any],
    *,
    spawn: Callable[..., None] | None = None,
    check: Callable[[str], None] | None = None,
) -> Callable[[str], OpaqueNamespace | None]:
    """The stand-in modules of one run, built on first import (fresh per run: no shared state)."""
    run = RunWorld(charge, tick, sleep, async_sleep, gather, spawn, check)
    built: dict[str, OpaqueNamespace] = {}

    def get(name: str) -> OpaqueNamespace | None:
        module = built.get(name)
        if module is None:
            builder = _BUILDERS.get(name)
            if builder is None:
                return None
            members = builder(run)
            for child, full in _SUBMODULES.get(name, {}).items():
                members[child] = get(full)  # collections.abc: the same namespace as imported
            name_functions(members)  # `heappush()` in messages, not `build.<locals>.heappush()`
            if name in _SIZED_WORK:
                members = _budget_checked(members, _SIZED_WORK[name])
                name_functions(members)
            module = built[name] = OpaqueNamespace(name, members, missing=_missing(name))
        return module

    return get


def make_import(modules: Callable[[str], OpaqueNamespace | None]) -> Callable[..., OpaqueNamespace]:
    """The ``__import__`` of a run: stand-ins only, ``fromlist`` checked against the member list."""

    def import_(
        name: str,
        globals: Any = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> OpaqueNamespace:
        # test_guards_import_*: no real modules, no relative imports, and
        # `from datetime import sys` refused (IMPORT_FROM bypasses _getattr_).
        if name in _C_INTERNAL and type(fromlist) is list and len(fromlist) <= 1 and level == 0:
            # PyImport_Import from C (datetime.strptime): the value is discarded, the
            # real module is read from sys.modules (imported by the stand-in itself)
            return _EMPTY
        if level != 0 or type(name) is not str:
            raise ImportError("relative imports are not available in the sandbox")
        module = modules(name) if name in _IMPORTABLE else None
        if module is not None and "." in name and not fromlist:
            module = modules(name.partition(".")[0])  # `import collections.abc` binds collections
        if module is None:
            available = ", ".join(sorted(n for n in MODULE_NAMES))
            # ModuleNotFoundError (an ImportError): `try: import numpy except ImportError:` works
            raise ModuleNotFoundError(
                f"No module named {name!r}: it is not available in the sandbox "
                f"(importable: {available})",
                name=name,
            )
        allowed = MODULE_NAMES.get(name, ("annotations",))
        for item in fromlist or ():
            if item not in allowed:
                hint = MISSING_HINTS.get(name, {}).get(item)
                raise ImportError(
                    f"cannot import name {item!r} from {name!r} in the sandbox: {hint}"
                    if hint
                    else f"cannot import name {item!r} from {name!r} (the sandbox's {name} "
                    f"exposes: {', '.join(allowed)})"
                )
        return module

    return import_
