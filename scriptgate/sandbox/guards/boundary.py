"""The object boundary: the allow-list of what a script may hold and which attributes it may read.

Owns :func:`check_value` (every value a host-side read hands to a script: attributes, items,
awaited results), :func:`attribute_allowed` (the per-type attribute allow-list) and the
registry of stand-in value types (:func:`register_holdable`, fed by the world from each
stand-in module's ``HOLDABLE`` tuple), and :func:`held_data` (what a host exception's
attributes hold, deep-checked). Sits low in ``guards/``: imports only :mod:`.constants`,
:mod:`.namespace` and :mod:`.ticking`, never the world, the engine, isolation or the model.

The rule is an allow-list, not a deny-list (issue 13): a value crosses from the host into a
script only if it is plain data (``str``, ``int``, ``list``, ``dict``…, their iterators and
views), an instance or class of a class the script defined, a stand-in value type a module
listed (``datetime``, ``deque``…), an exception (one of a host class not listed is held
as its nearest listed class: ``type(e)``, and the attributes that class has), an opaque awaitable (a tool call, ``gather(...)``), a
curated function, or a bound method of a holdable value. Everything else — an asyncio
``Future``, an event loop, frames, code, modules, real classes not listed, host functions,
descriptors — is refused whatever path produced it, with one line telling the model what to
write instead. Attributes are allowed per type: the public names the listed type defines, so
the stepping methods of coroutines and generators (``send``, ``throw``, ``close``, ``asend``,
``athrow``) and their ``cr_*``/``gi_*``/``ag_*`` internals are reachable on nothing.
Tests: ``tests/sandbox/guards/test_boundary.py``.
"""

from __future__ import annotations

import builtins as _builtins
import collections
import types
import typing
from collections.abc import Iterable
from typing import Any, NoReturn

from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK, SIZED_VIEWS
from scriptgate.sandbox.guards.namespace import OpaqueNamespace
from scriptgate.sandbox.guards.ticking import check_budget

__all__ = [
    "HOLDABLE_MARK",
    "STEPPING_NAMES",
    "SUBCLASSABLE_MARK",
    "attribute_allowed",
    "check_opaque_key",
    "check_value",
    "exception_base",
    "held_data",
    "holdable",
    "holdable_class",
    "refuse_value",
    "register_holdable",
    "register_opaque",
    "register_subclassable",
    "release_typing_cache",
    "subclassable_class",
    "typing_form",
]

HOLDABLE_MARK = "__scriptgate_holdable__"
"""Class attribute marking host-made classes that belong to the run (``namedtuple`` results)."""

STEPPING_NAMES = frozenset({"send", "throw", "close", "asend", "athrow"})
"""The methods that step a coroutine or generator by hand: never reachable (they hand out
what the coroutine yields to its driver, the host's ``Future``)."""

_INTERNAL_PREFIXES = ("cr_", "gi_", "ag_", "f_", "tb_", "co_")
_type_name = type.__dict__["__name__"].__get__
_type_module = type.__dict__["__module__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_TYPING_MODULES = frozenset({"typing", "types", "typing_extensions"})


def _iter_types() -> set[type]:
    samples: list[Any] = [
        [],
        (),
        "",
        b"",
        bytearray(),
        range(0),
        {},
        {}.values(),
        {}.items(),
        set(),
        reversed([]),
        reversed(range(0)),
        {}.keys(),
        reversed({}),
        reversed({}.values()),
        reversed({}.items()),
        collections.deque(),
        reversed(collections.deque()),
    ]
    return {type(iter(sample)) for sample in samples} | {type(reversed([]))}


_DATA: frozenset[type] = frozenset(
    {
        str, int, float, bool, type(None), complex, list, dict, tuple, set, frozenset, range,
        slice, bytes, bytearray, type(Ellipsis), type(NotImplemented),
        map, filter, zip, enumerate, reversed,
        *SIZED_VIEWS, *_iter_types(),
    }
)  # fmt: skip
"""Plain data and its iterators: every public attribute is a method returning data."""

_STEPPED: frozenset[type] = frozenset(
    {types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType}
)
"""The script's own generators and coroutines: holdable, iterable, awaitable; no attributes."""

_FULL: dict[type, frozenset[str]] = {}
"""Holdable exact types and the attribute names a script may read on their instances."""
_OPAQUE: set[type] = set()
"""Holdable types with no readable attribute (opaque awaitables, ``typing`` aliases)."""
_CLASSES: set[type] = set()
"""Real classes a script may hold as values (call, ``isinstance``)."""
_SUBCLASSABLE: set[type] = set()
"""Real classes a script's ``class`` statement may name as a base (findings G04, G05, G08):
builtin types and the stand-in classes listed in a module's ``SUBCLASSABLE`` tuple, whose
guards never call a method a subclass could override."""
SUBCLASSABLE_MARK = "__scriptgate_subclassable__"
"""Set, in its own ``__dict__``, on a class a script may subclass: the script's own classes
and run-made ones whose guards trust no overridable method (namedtuple classes)."""
_FUNCTION_MODULES = frozenset(
    {"math", "time", "_functools", "_random", "itertools", "_json", "_operator", "operator"}
)
"""Modules whose C functions a script may hold (those the stand-in modules expose)."""
_SAFE_BUILTIN_FUNCTIONS = frozenset(
    id(getattr(_builtins, name))
    for name in (
        "abs", "all", "any", "ascii", "bin", "callable", "chr", "divmod", "hex", "isinstance",
        "issubclass", "len", "max", "min", "next", "oct", "ord", "repr", "round", "sorted",
        "sum", "hash",
    )
)  # fmt: skip
_STR_FORMATTING = frozenset({"format", "format_map"})


def _public(kind: type) -> frozenset[str]:
    names = {name for name in dir(kind) if not name.startswith("_")}
    return frozenset(
        name
        for name in names - STEPPING_NAMES
        if not name.startswith(_INTERNAL_PREFIXES) and name != "mro"
    )


def register_holdable(kinds: Iterable[type]) -> None:
    """Let scripts hold instances of ``kinds`` (and the classes), reading their public names.

    Called by the world with every stand-in module's ``HOLDABLE`` tuple; idempotent. A
    metaclass (``type`` or a subclass) is refused: its call builds classes (F06).
    """
    for kind in kinds:
        if issubclass(kind, type):
            raise ValueError(f"{kind!r} is a metaclass: scripts may never hold one")
        if kind not in _FULL and not issubclass(kind, BaseException):
            _FULL[kind] = _public(kind)  # exceptions: their instance attributes too (e.pos)
        _add_class(kind)


_STATIC_METHODS: set[int] = set()
"""ids of the C static methods of listed classes (``str.maketrans``)."""


def register_subclassable(kinds: Iterable[type]) -> None:
    """Let a script's ``class`` statement subclass ``kinds`` (a stand-in module's
    ``SUBCLASSABLE`` tuple: classes whose guards do not trust an overridable method)."""
    for kind in kinds:
        if issubclass(kind, type):
            raise ValueError(f"{kind!r} is a metaclass: scripts may never subclass one")
        _SUBCLASSABLE.add(kind)


def subclassable_class(value: type) -> bool:
    """Whether a script may name the class ``value`` as a base (holdable, and listed,
    builtin, an exception, or marked subclassable in its own ``__dict__``)."""
    if not holdable_class(value):
        return False
    return (
        value in _SUBCLASSABLE
        or issubclass(value, BaseException)
        or bool(value.__dict__.get(SUBCLASSABLE_MARK, False))
    )


def _add_class(kind: type) -> None:
    _CLASSES.add(kind)
    for name in _public(kind):
        value = getattr(kind, name, None)
        if type(value) is types.BuiltinFunctionType and value.__self__ is None:
            _STATIC_METHODS.add(id(value))


def register_opaque(kinds: Iterable[type]) -> None:
    """Let scripts hold instances of ``kinds`` without reading any attribute of them."""
    for kind in kinds:
        if kind in (types.FunctionType, type, object) or kind in _FULL:
            raise ValueError(f"{kind!r} cannot be registered as opaque")
        _OPAQUE.add(kind)


for _kind in _DATA:
    _FULL[_kind] = _public(_kind)
for _kind in _STEPPED:
    _FULL[_kind] = frozenset()
_FULL[types.GeneratorType] = frozenset({"close"})
"""``gen.close()`` runs the generator's ``finally`` (it returns None and yields nothing out; a
plain generator cannot delegate to an awaitable, so no host ``Future`` comes out of one)."""
for _kind in (str, int, float, bool, complex, list, dict, tuple, set, frozenset, range, bytes):
    _add_class(_kind)
_CLASSES.add(object)  # `class Foo(object)`; it has no public attribute
_add_class(bytearray)
_SUBCLASSABLE.update(_CLASSES)  # the builtin types: their own methods are all the guards use
_CLASSES.update(
    value
    for value in vars(_builtins).values()
    if isinstance(value, type) and issubclass(value, BaseException)
)


MAX_FORWARD_REFERENCE = 1_000
"""Longest string an opaque value (a ``typing`` alias) may be subscripted with: ``typing``
compiles string forward references (``Optional["x" * 10**7]`` was one long compile)."""


_KEY_SCALARS = frozenset({str, int, bool, bytes, float, type(None), type(Ellipsis)})
_KEY_ITEMS = 1_000


def check_opaque_key(obj: Any, key: Any) -> None:
    """Refuse ``alias[key]`` on a ``typing`` form or a class unless ``key`` is made of keys that
    compare without running script code.

    ``typing``'s subscriptions go through a process-wide cache whose keys outlive the run:
    a script object kept there as a key (it passes typing's check with a ``__call__``) would
    have its ``__eq__`` called by a later lookup in another run, another Sandbox or the
    host (issue 13, the fourth attack's F04). So a key may hold only classes (they compare
    by identity), ``None``, ``...``, ``str``/``int``/``bool``/``bytes``/``float`` values of
    exactly those types (a string at most :data:`MAX_FORWARD_REFERENCE` characters: it is
    compiled as a forward reference), other ``typing`` forms and lists or tuples of these.
    """
    if not typing_form(obj):
        return
    pending = [key]
    seen = 0
    while pending:
        item = pending.pop()
        seen += 1
        if seen > _KEY_ITEMS:
            raise TypeError(f"a typing subscript of more than {_KEY_ITEMS} parts is refused")
        kind = type(item)
        if kind in _KEY_SCALARS:
            if kind is str and str.__len__(item) > MAX_FORWARD_REFERENCE:
                raise ValueError(
                    f"a forward reference longer than {MAX_FORWARD_REFERENCE} characters is refused"
                )
        elif kind is tuple or kind is list:
            pending.extend(item)
        elif issubclass(kind, type):
            # a class: compared by identity; one of the script's stays in typing's cache
            # (with all it holds) until the run ends (release_typing_cache)
            if _type_module(item) not in _HOST_MODULES:
                _TYPING_CACHED[0] = True
        elif typing_form(item):
            if kind in _SCRIPT_MADE_FORMS:
                # a TypeVar holds its bound, constraints and name, which may be the
                # script's objects: cached, they would outlive the run (findings18 B04)
                _TYPING_CACHED[0] = True
            pending.extend(_form_args(item))
        elif _builtin_stand_in(item):
            pass  # `dict[str, type]`: the sandbox's `type` compares by identity, holds nothing
        else:
            raise TypeError(
                f"a {_type_name(kind)} object cannot be a typing subscript in the sandbox: "
                "write classes, None, other typing forms or str/int/bool values "
                "(typing.Literal['a', 1])"
            )


def _builtin_stand_in(item: Any) -> bool:
    """Whether ``item`` is a builtin of the sandbox written as a plain function (``type``):
    a module-level function of scriptgate without a closure (it holds no script object and
    compares by identity)."""
    return (
        type(item) is types.FunctionType
        and item.__closure__ is None
        and type(item.__module__) is str
        and item.__module__.startswith("scriptgate.")
    )


_SCRIPT_MADE_FORMS = frozenset(
    {typing.TypeVar, typing.ParamSpec, typing.TypeVarTuple, typing.NewType}
)
"""Typing forms a script makes with arguments of its own (``TypeVar("T", bound=obj)``,
``NewType('X', Point)`` keeps ``Point``)."""
_HOST_MODULES = frozenset({"builtins", "typing", "types", "collections.abc", "typing_extensions"})
_TYPING_CACHED = [False]
"""Set when a subscript put a class that is not a builtin into typing's caches."""


def release_typing_cache() -> None:
    """Empty typing's subscript caches if a run put one of its own classes in them.

    ``List[Point]`` keeps ``Point`` (and whatever its class attributes hold) in a
    process-wide cache: a finished run's memory would stay in the host, each run
    leaving up to its whole budget behind (the fifth attack's F04). Called by the
    engine when a run ends; typing rebuilds what the host uses on its next lookup.
    """
    if _TYPING_CACHED[0]:
        _TYPING_CACHED[0] = False
        for clear in getattr(typing, "_cleanups", ()):
            clear()


def typing_form(value: Any) -> bool:
    """Whether ``value`` is a class, an opaque value or an object of a class of ``typing``
    (``typing.Tuple``, ``typing.Literal``…: their ``[]`` and ``|`` cache the operands)."""
    kind = type(value)
    return kind in _OPAQUE or issubclass(kind, type) or _type_module(kind) in _TYPING_MODULES


def _form_args(form: Any) -> tuple[Any, ...]:
    # the arguments a typing form compares by (read through the type's own attribute, not a
    # script method); a form without any has none
    args = getattr(form, "__args__", ())
    return args if type(args) is tuple else ()


def holdable_class(value: type) -> bool:
    """Whether the class ``value`` may be held by a script (listed, or the script's own).

    Never a metaclass, ``type`` itself included (issue 13, F06): calling one with three
    arguments makes a class from a namespace the compile policy never saw (``__index__``,
    ``__await__``, ``__del__``…), so no class whose call can create a class is holdable,
    whatever marks it carries.
    """
    if issubclass(value, type):
        return False
    return value in _CLASSES or _marked(value)


def _marked(kind: type) -> bool:
    # script classes (and their subclasses) and run-made classes such as namedtuples
    return bool(getattr(kind, SCRIPT_CLASS_MARK, False) or getattr(kind, HOLDABLE_MARK, False))


_script_instance = _marked


def holdable(value: Any) -> bool:
    """Whether a script may hold ``value`` (the allow-list; see the module docstring)."""
    kind = type(value)
    if kind in _FULL or kind in _OPAQUE:
        return True
    if kind is OpaqueNamespace:
        return True
    if kind is type or isinstance(value, type):
        return holdable_class(value)
    if kind is types.FunctionType:
        module = value.__module__
        return module == "__script__" or (
            isinstance(module, str)
            and (module.startswith("scriptgate.sandbox") or module in ("collections", "functools"))
        )
    if kind is types.MethodType:
        return holdable(value.__self__) and holdable(value.__func__)
    if kind is types.BuiltinFunctionType:
        owner = value.__self__
        if owner is None or owner is _builtins:
            return id(value) in _SAFE_BUILTIN_FUNCTIONS or id(value) in _STATIC_METHODS
        if isinstance(owner, types.ModuleType):
            return owner.__name__ in _FUNCTION_MODULES
        if isinstance(owner, str) and value.__name__ in _STR_FORMATTING:
            return False
        return holdable(owner)
    if isinstance(value, BaseException):
        # any exception, as its nearest listed class: what `except ... as e` binds
        # (findings17 H01); a host class's own attributes stay unreadable
        return True
    if kind is super:
        return _marked(value.__thisclass__)  # super() inside the script's own class
    return _script_instance(kind)


def exception_base(kind: type) -> type:
    """The nearest class of an exception class's MRO a script may hold (``kind`` if it may).

    ``calendar.IllegalMonthError`` → ``ValueError``: a script holds such a host exception as
    an instance of that class (``type(e)``, the attributes it may read).
    """
    for base in type.__dict__["__mro__"].__get__(kind):
        if holdable_class(base):
            return base  # type: ignore[no-any-return]
    return BaseException


def refuse_value(value: Any) -> NoReturn:
    """Raise the one-line refusal for a value a script may not hold."""
    kind = type(value)
    if isinstance(value, types.ModuleType):
        what = f"the module {value.__name__!r}"
        hint = "import the listed stand-in modules instead"
    elif isinstance(value, type):
        what = f"the class {value.__name__!r}"
        hint = "use the listed builtins and stand-in modules, or define your own class"
    elif isinstance(value, types.BuiltinFunctionType | types.FunctionType):
        what = f"the function {getattr(value, '__name__', '?')!r}"
        hint = "use the listed builtins and stand-in modules"
    else:
        what = f"a {kind.__name__} object"
        hint = "scripts hold plain data, their own objects and awaited results"
    raise TypeError(f"{what} is not available in the sandbox ({hint})")


def check_value(value: Any) -> Any:
    """Return ``value`` if a script may hold it, else refuse it (see :func:`holdable`)."""
    if type(value) in _FULL or holdable(value):
        return value
    refuse_value(value)


_HELD_SCALARS = frozenset({str, int, float, bool, bytes, complex, type(None)})
_HELD_CONTAINERS = frozenset({tuple, list, dict, set, frozenset})
_HELD_CHECK_EVERY = 4096
_HELD_MAX_DEPTH = 100


def held_data(value: Any) -> Any:
    """``value`` read from a host object (an exception's ``args``), safe for a script to hold.

    ``check_value`` looks at one value; a host exception's attributes are containers the
    host filled, and unpacking or a ``for`` loop over them hands out their items with no
    further check: ``decimal.InvalidOperation``'s ``args`` is ``([<class
    'decimal.ConversionSyntax'>],)``, a host class (issue 13, F05). So every tuple, list,
    dict, set and frozenset inside is walked (the budget checked every few thousand items),
    and returned as it is when everything in it may be held; else a copy is returned in
    which each item a script may not hold is replaced by the text naming it
    (``"<class 'decimal.ConversionSyntax'>"``, what ``str(e)`` shows), and containers
    nested past :data:`_HELD_MAX_DEPTH` levels by ``"<nested too deeply>"``.
    """
    kind = type(value)
    if kind in _HELD_SCALARS:
        return value
    if kind not in _HELD_CONTAINERS:
        return value if holdable(value) else _held_name(value)
    if _all_held(value):
        return value
    return _held_copy(value, {}, 0)


def _all_held(value: Any) -> bool:
    pending = [(value, 0)]
    seen: set[int] = set()
    walked = 0
    while pending:
        item, depth = pending.pop()
        kind = type(item)
        if kind in _HELD_SCALARS:
            continue
        if kind not in _HELD_CONTAINERS:
            if not holdable(item):
                return False
            continue
        if id(item) in seen:
            continue
        if depth >= _HELD_MAX_DEPTH:
            return False
        seen.add(id(item))
        walked += len(item)
        if walked >= _HELD_CHECK_EVERY:
            walked = 0
            check_budget()
        if kind is dict:
            pending.extend((part, depth + 1) for pair in dict.items(item) for part in pair)
        else:
            pending.extend((part, depth + 1) for part in item)
    return True


def _held_copy(value: Any, done: dict[int, Any], depth: int) -> Any:
    kind = type(value)
    if kind in _HELD_SCALARS:
        return value
    if kind not in _HELD_CONTAINERS:
        return value if holdable(value) else _held_name(value)
    made = done.get(id(value))
    if made is not None:
        return made
    if depth >= _HELD_MAX_DEPTH:
        return "<nested too deeply>"
    if len(value) >= _HELD_CHECK_EVERY:
        check_budget()
    if kind is list:
        new_list: list[Any] = []
        done[id(value)] = new_list  # a list that holds itself
        new_list.extend(_held_copy(item, done, depth + 1) for item in value)
        return new_list
    if kind is dict:
        new_dict: dict[Any, Any] = {}
        done[id(value)] = new_dict
        for key, item in dict.items(value):
            new_dict[_held_copy(key, done, depth + 1)] = _held_copy(item, done, depth + 1)
        return new_dict
    made = kind(_held_copy(item, done, depth + 1) for item in value)  # tuple, set, frozenset
    done[id(value)] = made
    return made


def _held_name(value: Any) -> str:
    """The text naming a value a script may not hold (its ``repr`` for classes and modules)."""
    if isinstance(value, type):
        return f"<class '{_type_module(value)}.{_type_qualname(value)}'>"
    if isinstance(value, types.ModuleType):
        return f"<module {value.__name__!r}>"
    return f"<{_type_name(type(value))} object>"


def attribute_allowed(obj: Any, name: str) -> bool:
    """Whether a script may read the public attribute ``name`` of ``obj`` (per-type allow-list).

    Plain data and listed types: the public names the type defines; generators and
    coroutines: none; script classes and their instances: any public name not a stepping
    method; classes: the public names the class itself defines (not its metaclass's, so not
    ``mro`` or ``register``); opaque values: none.
    """
    kind = type(obj)
    allowed = _FULL.get(kind)
    if allowed is not None:
        return name in allowed
    if kind in _OPAQUE:
        return False
    if isinstance(obj, type):
        if not holdable_class(obj):
            return False
        return name in _class_names(obj)
    if kind is OpaqueNamespace:
        return True
    if kind is super:
        return _marked(obj.__thisclass__)
    if kind is types.FunctionType:
        # attributes set on a curated or script function (itertools.chain.from_iterable)
        return holdable(obj) and name in obj.__dict__
    if isinstance(obj, BaseException):
        if kind in _CLASSES or _script_instance(kind):
            return True
        # a host exception of a class not listed: the names of its nearest listed class
        # (e.args), each value read through held_data (findings17 H01)
        return name in _class_names(exception_base(kind))
    return _script_instance(kind)


_CLASS_NAMES: dict[type, frozenset[str]] = {}


def _class_names(cls: type) -> frozenset[str]:
    if _marked(cls):
        return frozenset(name for name in dir(cls) if not name.startswith("_"))
    names = _CLASS_NAMES.get(cls)
    if names is None:
        names = _CLASS_NAMES[cls] = _public(cls)
    return names
