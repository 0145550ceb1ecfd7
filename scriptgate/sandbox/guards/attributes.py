"""The hook functions the policy's rewritten code calls: attributes and values, arithmetic, formatting, :func:`make_guards`.

The top of ``guards/``: imports the modules below it (budget, feeds, sizes, memory,
comparisons, regex, constants), never the world, the engine, isolation or the model. Over
800 lines because :func:`make_guards` and the attribute guard share one table of wrappers;
the budget is :mod:`.budget`, the chunked feeds :mod:`.feeds`.

Each guard says which escape it blocks and which test proves it (tests live in
``tests/sandbox/guards/test_attributes.py``; attack scripts in ``tests/sandbox/attacks.py``).

Guards are built per run by :func:`make_guards` around a :class:`Budget`, so no
mutable state is shared between runs. Size refusals (``'x' * 10**12``, huge
ints, widths, ``str`` methods…) go through
:func:`scriptgate.sandbox.guards.errors.refuse_size`: they trip the run's budget (bound
in the script's globals as ``STOP_NAME``), so they are final ``"limit"`` errors.

C calls that compare or hash script values outside the compiled operators are
bounded here too (issue 5, :mod:`scriptgate.sandbox.guards.comparisons`): the attribute
guard hands out checking wrappers for the container methods that compare or
hash their argument (``lst.index(x)``, ``d.get(k)``, ``s.add(x)``,
``lst.sort()``…), and every hash feed checks what it hashes, chunk by chunk
(sections "hash feeding" and "comparing and hashing calls" below; tests in
``tests/sandbox/guards/test_compare_calls.py``).
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # no stub: str.format's own field parser
import builtins
import builtins as _builtins
import collections
import inspect
import itertools
import operator
import string
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from scriptgate.sandbox.compile.shared import (
    INSPECT_ATTRIBUTES,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
)
from scriptgate.sandbox.guards import comparisons as dagguard
from scriptgate.sandbox.guards.allocations import BOUNDED_NAMES, bounded_method, repeat_count
from scriptgate.sandbox.guards.boundary import (
    HOLDABLE_MARK,
    STEPPING_NAMES,
    SUBCLASSABLE_MARK,
    attribute_allowed,
    check_opaque_key,
    exception_base,
    held_data,
    holdable,
    holdable_class,
    refuse_value,
    subclassable_class,
    typing_form,
)
from scriptgate.sandbox.guards.budget import Budget
from scriptgate.sandbox.guards.constants import (
    DENIED_NAMES as _DENIED_NAMES,
)
from scriptgate.sandbox.guards.constants import (
    FAST_RECEIVER_SLOW_NAMES,
    MATCH_SELF_TYPES,
    MAX_FORMAT_WIDTH,
    READABLE_UNDERSCORE_NAMES,
    SCRIPT_CLASS_MARK,
    SCRIPT_DUNDER_READS,
    SIZED_VIEWS,
    SUPER_DUNDERS,
    TICK_CHUNK,
    format_spec_too_wide,
    is_private_name,
)
from scriptgate.sandbox.guards.constants import (
    HASHING_METHODS as _HASHING_METHODS,
)
from scriptgate.sandbox.guards.dates import check_date_format, is_date, strftime_of, strptime_of
from scriptgate.sandbox.guards.edges import (
    PROPERTY_COPIERS,
    BytearrayWriter,
    group_member,
    property_copier,
    refuse_group_subclass,
    script_type,
)
from scriptgate.sandbox.guards.errors import STOP_NAME, ScriptStop, refuse_size
from scriptgate.sandbox.guards.feeds import (
    _CHECKED_CALL_NAMES,
    _FED_DICT_CALLS,
    _FED_SET_CALLS,
    _FED_UNBOUND_CALLS,
    _FEED_FROM,
    _HASHED_RECEIVERS,
    _HASHING_COPIES,
    _KEYS_VIEW,
    _METHOD,
    _NO_CALL,
    _NO_FEED,
    _RECEIVER_CALLS,
    _SCALARS,
    CheckedFeed,
    _checked_call,
    _elements_ok,
    _hashing_method,
    _hashing_target,
    checked_sort,
    fed,
    hash_bounded,
    hashed_ok,
    hashed_whole,
    needs_feed,
)
from scriptgate.sandbox.guards.generators import delegate
from scriptgate.sandbox.guards.int_work import (
    check_division,
    check_product,
    guarded_floordiv,
    guarded_ifloordiv,
)
from scriptgate.sandbox.guards.lengths import base_len, exact_copy
from scriptgate.sandbox.guards.memory import (
    CHECK_FROM,
    METER_NAME,
    REAL_OF_STAND_IN,
    GrowthFeed,
    charge_bytes,
    charge_copy,
    charge_sequence,
    check_field,
    growth_checked,
    guarded_add,
    guarded_extend,
    guarded_iadd,
    guarded_star,
    is_extendable,
)
from scriptgate.sandbox.guards.namespace import OpaqueNamespace
from scriptgate.sandbox.guards.printf import resolve_mapping
from scriptgate.sandbox.guards.printf_spec import PrintfSummary
from scriptgate.sandbox.guards.printf_spec import summarize as summarize_printf
from scriptgate.sandbox.guards.regex import BUDGET_NAME
from scriptgate.sandbox.guards.render_scope import RENDERING
from scriptgate.sandbox.guards.script_classes import (
    STATELESS_BASE_MARK,
    InstanceDict,
    prepare_namespace,
    private_ok,
    read_dunder,
    script_function,
)
from scriptgate.sandbox.guards.sizes import (
    CHECKED_METHOD_TYPES,
    FLAT_TYPES,
    MAX_RENDER,
    check_render,
    checked_method,
    guarded_print,
    safe_ascii,
    safe_repr,
    too_large_render,
)
from scriptgate.sandbox.guards.ticking import (
    BOUNDED_LAZY,
    LARGE_INPUT,
    TICK_EVERY,
    TICK_STEPS,
    budget_first,
    check_budget,
    counter_work,
    guarded_neg,
    guarded_pos,
    ticked,
)

__all__ = [
    "ITEM_WRITABLE_MARK",
    "MAX_INT_BITS",
    "MAX_RANGE",
    "MAX_SEQUENCE",
    "STATELESS_BASE_MARK",
    "WRITE_HINT_MARK",
    "Budget",
    "CheckedFeed",
    "OpaqueNamespace",
    "check_value",
    "checked_sort",
    "fed",
    "guarded_private_write",
    "hash_bounded",
    "hashed_ok",
    "hashed_whole",
    "make_guards",
    "needs_feed",
    "private_ok",
    "safe_str_format",
    "script_function",
]

MAX_SEQUENCE = 10_000_000
"""Longest str/list/tuple a single ``*``, ``%``, format or string method may build."""

MAX_INT_BITS = 1_000_000
"""Largest int (in bits) ``*``, ``**`` and ``<<`` may build."""

MAX_MODPOW_WORK = 100_000_000
"""``pow(a, b, m)``: the most bits(b) x digits(m)**2 allowed (about 0.1-0.3 s of C here)."""

MAX_RANGE = 100_000_000
"""Longest ``range`` a script may create."""

_TICK_CHUNK = TICK_CHUNK
"""Seconds a sync script runs before a budget check lets the event loop run."""
_SMALL = 1024
_chain_from_iterable = itertools.chain.from_iterable
_SIZED = frozenset({list, tuple, dict, str, set, frozenset, range, bytes, bytearray})
_NOT_MADE: Any = object()
"""``_copy_``'s third argument when the compiled call makes the value itself."""
_SIZED_VIEWS = SIZED_VIEWS
_LAZY_SAFE = frozenset(
    {
        types.GeneratorType,
        type(iter([])),
        type(iter(())),
        type(iter("")),
        type(iter(range(0))),
        type(iter({})),
        type(iter({}.values())),
        type(iter({}.items())),
        type(iter(set())),
        type(reversed([])),
    }
)

"""Iterators C may drain unchecked: a script generator ticks itself, a builtin container's
iterator reads its storage (an allow-list; everything else is ticked)."""
_HOST_LOOPS = frozenset({map, filter, zip, enumerate, reversed})
"""Lazy builtins whose every item may run a host callable: fed through :func:`ticked`."""

# ----------------------------------------------------------------------------- value checks

_PLAIN = frozenset(
    {str, int, float, bool, type(None), list, dict, tuple, set, frozenset, complex, range, slice}
)
_WRITABLE = frozenset(
    {collections.Counter, collections.defaultdict, collections.OrderedDict, collections.deque}
)
ITEM_WRITABLE_MARK = "__scriptgate_item_writable__"
"""Set (``True``) in its own ``__dict__`` on a stand-in class whose instances a script may
write items to (``cfg[k] = v``): one that checks what it holds at every use and has
``__slots__`` (``collections.ChainMap``)."""
WRITE_HINT_MARK = "__scriptgate_write_hint__"
"""A str in its own ``__dict__`` on a read-only stand-in class: what to write instead of
``obj.x = v``, appended to the write guard's refusal (``logger.propagate = False``)."""
_FAST_RECEIVERS = frozenset(
    {list, dict, tuple, set, frozenset, int, float, bool, complex, type(None), range, slice}
)
"""Exact types whose public attributes never need :func:`check_value` (``str`` has wrappers)."""
_SLOW_NAMES = FAST_RECEIVER_SLOW_NAMES
_SLICE_COPIES = frozenset({str, list, tuple, bytes, bytearray})
_LARGE_RECEIVERS: dict[type, Callable[[Any], int]] = {
    str: str.__len__,
    bytes: bytes.__len__,
    bytearray: bytearray.__len__,
    collections.deque: collections.deque.__len__,
}
"""Receivers whose every method reads through the guard and whose methods' work grows with
their length: from :data:`LARGE_INPUT` items a read checks the budget (findings14 A16)."""
_LARGE_BASES = (str, bytes, bytearray, collections.deque, list, dict, set, frozenset, tuple)
"""Their subclasses (read through the guard too) are sized by the base's ``__len__``."""
_COPYING_STR_METHODS = frozenset(
    {
        "upper", "lower", "casefold", "swapcase", "title", "capitalize", "strip", "lstrip",
        "rstrip", "split", "rsplit", "splitlines", "encode", "removeprefix", "removesuffix",
    }
)  # fmt: skip
"""str methods whose result is about as long as the receiver (charged for large receivers)."""


def _script_made(cls: type) -> bool:
    return bool(getattr(cls, SCRIPT_CLASS_MARK, False))


class _ScriptManaged:
    """A script class's context manager in a ``with`` (``async with``) statement.

    ``__enter__`` and ``__exit__`` are the script's, looked up on its class as Python
    does; but when the exception leaving the block is the run's stop or the host's
    cancellation, the script's ``__exit__`` is not called and the stop goes on: it held
    the host's ``CancelledError`` object (its text naming host tasks and paths), and a true
    return swallowed the stop and ran the script on after its result (findings19 N05).
    Python's ``except``/``finally`` blocks already re-raise the stop first (``_check_``).
    """

    __slots__ = ("_cm", "_exit", "_stopped")

    def __init__(self, cm: Any, stopped: Callable[[Any], bool], is_async: bool) -> None:
        kind = type(cm)
        names = ("__aenter__", "__aexit__") if is_async else ("__enter__", "__exit__")
        if not (hasattr(kind, names[0]) and hasattr(kind, names[1])):
            protocol = "asynchronous context manager" if is_async else "context manager"
            raise TypeError(f"'{kind.__name__}' object does not support the {protocol} protocol")
        self._cm = cm
        self._exit = getattr(kind, names[1]).__get__(cm, kind)
        self._stopped = stopped

    def __enter__(self) -> Any:
        kind = type(self._cm)
        return kind.__enter__.__get__(self._cm, kind)()

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> Any:
        if exc is not None and self._stopped(exc):
            return False
        return self._exit(kind, exc, tb)

    async def __aenter__(self) -> Any:
        kind = type(self._cm)
        return await kind.__aenter__.__get__(self._cm, kind)()

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> Any:
        if exc is not None and self._stopped(exc):
            return False
        return await self._exit(kind, exc, tb)


def check_value(value: Any) -> Any:
    """Return ``value`` if a script may hold it (the allow-list of :mod:`.boundary`), else refuse.

    test_boundary_*: a Future, an event loop, frames, tracebacks, code, modules, real classes
    not listed, host functions, descriptors and slot wrappers are refused whatever path
    produced them; curated C methods that hand out unbounded iterators come back wrapped.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if not holdable(value):
        refuse_value(value)
    if kind is types.BuiltinFunctionType:
        if value.__name__ == "finditer":
            return checked_method(value, MAX_SEQUENCE)  # sizeguard: Pattern.finditer
    elif kind in CHECKED_METHOD_TYPES:
        return checked_method(value, MAX_SEQUENCE)  # sizeguard: Counter.elements, finditer
    return value


_UNBOUND: dict[tuple[type, str], Callable[..., Any]] = {}


def _unbound(owner: type, name: str) -> Callable[..., Any]:
    """``str.lower``, ``Counter.most_common``…: an unbound method of a listed class as a callable.

    Calls go through the attribute guard on the instance, so every wrapper and check of
    ``x.name`` applies (``sorted(xs, key=str.lower)``, ``map(str.strip, lines)``).
    """
    method = _UNBOUND.get((owner, name))
    if method is not None:
        return method

    def unbound(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(self, owner):
            raise TypeError(
                f"{owner.__name__}.{name}() needs a {owner.__name__} object, "
                f"not {type(self).__name__}"
            )
        return _guarded_getattr(self, name)(*args, **kwargs)

    unbound.__name__ = name
    unbound.__qualname__ = f"{owner.__name__}.{name}"
    if len(_UNBOUND) < 4096:
        _UNBOUND[(owner, name)] = unbound
    return unbound


_CONTAINER_BASES = (dict, set, frozenset, list, bytearray, collections.deque)
_HOST_METHOD_KINDS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.FunctionType)


def _container_unbound(cls: type, name: str) -> Callable[..., Any] | None:
    """``dict.update``, ``OrderedDict.update``, ``list.extend``…: a host method read from a
    container class (or a subclass) as the guarded form, :func:`_unbound` (the call goes
    through ``x.name``'s guard on the instance); ``None`` for anything else.

    An allow-list over the class, not the names: every plain method the host class
    defines takes this path, so ``dict.update(x, zip(...))`` can no longer reach the real
    C method while ``x.update`` is guarded (findings9 F08: +3.3 GB in one call). A
    script's own method (a subclass's override) and class methods (``dict.fromkeys``,
    already bound to the class and guarded on their own) are left to the usual path.
    """
    if not issubclass(cls, _CONTAINER_BASES):
        return None
    value = inspect.getattr_static(cls, name, None)
    if type(value) not in _HOST_METHOD_KINDS or script_function(value):
        return None
    return _unbound(cls, name)


_UNBOUND_KINDS = (
    types.MethodDescriptorType,
    types.FunctionType,
    types.WrapperDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)


def _read_underscore(obj: Any, name: str, default: tuple[Any, ...]) -> Any:
    """``x.__class__``, ``cls.__name__``, ``f.__doc__``, ``nt._asdict``… (test_boundary_dunder_*).

    ``__class__`` is ``type(x)`` when the script may hold that class; ``__name__`` and
    ``__qualname__`` are strings; ``__doc__`` is the docstring of the script's own classes
    and functions and of the listed builtin types (``None`` for anything else, so nothing of
    the host's own code shows); the namedtuple names only on the run's namedtuples.
    """
    kind = type(obj)
    if name == "__class__":
        if isinstance(obj, BaseException) and not holdable(kind):
            return exception_base(kind)  # as type(e) gives it (findings17 H01)
        if not holdable(kind):
            return _no_underscore(obj, name, default)  # a generator's class, a host class
        return check_value(script_type(kind))  # b''.__class__ is the size-checked bytes
    if name in ("__name__", "__qualname__"):
        if not (isinstance(obj, type) or kind in _NAMED_KINDS) or not holdable(obj):
            return _no_underscore(obj, name, default)
        text = getattr(obj, name, None)
        return text if type(text) is str else _no_underscore(obj, name, default)
    if name == "__doc__":
        if not holdable(obj):
            return _no_underscore(obj, name, default)
        function = obj.__func__ if kind is types.MethodType else obj  # a bound method: its own
        if type(function) is types.FunctionType:
            doc = function.__doc__ if function.__module__ == "__script__" else None
            return doc if type(doc) is str else None
        if kind is types.MethodType:
            return None
        owner = obj if isinstance(obj, type) else kind
        source = owner if _script_made(owner) else _listed_builtin_type(owner)
        if source is None:
            return None  # a stand-in's or host object's own text stays unread
        doc = source.__doc__
        return doc if type(doc) is str else None
    if name == "__init__":
        return _read_init(obj, default)
    if name == "__init_subclass__":
        return _read_init_subclass(obj, default)
    if name == "__mro__":
        return _read_mro(obj, default)
    target = obj if isinstance(obj, type) else kind
    if getattr(target, HOLDABLE_MARK, False) and issubclass(target, tuple):
        return getattr(obj, name)  # a namedtuple's _asdict/_replace/_fields/_make
    return _no_underscore(obj, name, default)


def _read_init(obj: Any, default: tuple[Any, ...]) -> Any:
    """``super().__init__``, ``Base.__init__`` (test_boundary_super_*): on the script's classes only.

    A script function comes back as it is; a host base's ``__init__`` (``Exception``,
    ``dict``…) comes back as a function that calls it and returns ``None``, so nothing of
    the slot wrapper is held.
    """
    kind = type(obj)
    if kind is super:
        owner: Any = obj.__thisclass__
    elif isinstance(obj, type):
        owner = obj
    else:
        owner = kind
    if not _script_made(owner):
        return _no_underscore(obj, "__init__", default)
    value = obj.__init__
    if type(value) in (types.FunctionType, types.MethodType) and holdable(value):
        return value
    return _init_caller(value)


def _read_init_subclass(obj: Any, default: tuple[Any, ...]) -> Any:
    """``super().__init_subclass__`` in a script's ``__init_subclass__`` (issue 14).

    On a ``super()`` of the script's own class only: the script's own method comes back as
    it is (bound to the class being made), a builtin's (``object.__init_subclass__``) as a
    function that calls it and returns ``None``.
    """
    if type(obj) is not super or not _script_made(_THISCLASS.__get__(obj)):
        return _no_underscore(obj, "__init_subclass__", default)
    value = obj.__init_subclass__
    if type(value) is types.MethodType and script_function(value.__func__):
        return value
    return _init_caller(value)


_THISCLASS = super.__dict__["__thisclass__"]
_SUPER_SELF = super.__dict__["__self__"]
_OBJECT_DUNDERS = frozenset(
    {"__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"}
)
"""``object``'s methods ``super()`` hands out: identity and the default text, bounded."""
_DICT_DUNDERS = frozenset({"__getitem__", "__setitem__", "__delitem__", "__contains__"})
"""``dict``'s methods ``super()`` hands out, the key's hash checked first (dagguard)."""


def _read_super_dunder(obj: super, name: str, default: tuple[Any, ...]) -> Any:
    """``super().__name__`` in a method of the script's own class (findings18 M01/M23).

    A script base's method comes back as it is (bound, ticking like any script code);
    ``object``'s identity methods and default texts, an exception's ``__str__``/
    ``__repr__`` (its arguments' rendering bounded first) and a ``dict``'s item methods
    (the key's hash bounded first) as functions that call them and check what they return.
    Any other host base's method is refused, with what to write instead.
    """
    owner = _THISCLASS.__get__(obj)
    if not _script_made(owner):
        return _no_underscore(obj, name, default)
    value = getattr(obj, name)
    if (type(value) is types.MethodType and script_function(value.__func__)) or script_function(
        value
    ):
        return value  # a script base's method (a classmethod's super() gives it unbound)
    instance = _SUPER_SELF.__get__(obj)
    provider: Any = None
    if not isinstance(instance, type):
        # the class super() finds the name on: after __thisclass__ in the instance's MRO
        # (in a classmethod the second argument is a class, whose host base's unbound
        # methods were wrapped unchecked: dict.__eq__ of shared lists froze the host, 19b S01)
        mro = _MRO.__get__(type(instance))
        start = mro.index(owner) + 1 if owner in mro else len(mro)
        provider = next((k for k in mro[start:] if name in k.__dict__), None)
        if provider is not None and _script_made(provider):
            return value  # the script's own method behind its shield (a measured __repr__)
    if provider is object and name in _OBJECT_DUNDERS:
        return _checked_caller(value, None)
    if provider is BaseException and name in ("__str__", "__repr__"):
        args = BaseException.__dict__["args"].__get__(instance)
        return _checked_caller(value, lambda: check_render(args, f"{name}() of this exception"))
    if provider is dict and name in _DICT_DUNDERS:
        return _checked_key_caller(value)
    where = f"the builtin base {provider.__name__}" if provider is not None else "a builtin base"
    raise AttributeError(
        f"super().{name} of {where} is not available in the sandbox: call "
        f"the operation on self through the base's public methods (dict.get(self, k), "
        "list.append(self, x)) or keep the base as an attribute"
    )


def _checked_caller(method: Callable[..., Any], check: Callable[[], None] | None) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        if check is not None:
            check()
        return check_value(method(*args, **kwargs))

    call.__name__ = getattr(method, "__name__", "method")
    return call


def _checked_key_caller(method: Callable[..., Any]) -> Any:
    def call(key: Any, *rest: Any) -> Any:
        dagguard.hash_ok(key)
        return check_value(method(key, *rest))

    call.__name__ = getattr(method, "__name__", "method")
    return call


def _read_mro(obj: Any, default: tuple[Any, ...]) -> Any:
    """``Cls.__mro__`` of a class the script may hold: a tuple of the classes it may hold.

    Each class of the real MRO as ``type(x)`` would give it (a builtin's stand-in, once);
    a class the boundary refuses is left out (never handed out).
    """
    if not isinstance(obj, type) or not holdable(obj):
        return _no_underscore(obj, "__mro__", default)
    shown: list[Any] = []
    for klass in _MRO.__get__(obj):
        if holdable(klass):
            visible = script_type(klass)
            if visible not in shown:
                shown.append(visible)
    return check_value(tuple(shown))


def _init_caller(init: Callable[..., Any]) -> Callable[..., None]:
    def __init__(*args: Any, **kwargs: Any) -> None:
        init(*args, **kwargs)

    return __init__


_NAMED_KINDS = frozenset({types.FunctionType, types.BuiltinFunctionType, types.MethodType})
_DOC_TYPES = _PLAIN | {bytes, bytearray}


def _listed_builtin_type(owner: type) -> type | None:
    """The builtin type whose docstring ``owner.__doc__`` reads: ``owner`` itself when it is
    one of :data:`_DOC_TYPES`, the real type for the sandbox's stand-in (``str``, ``dict``,
    ``bytes``… are subclasses in module ``builtins``), else ``None``."""
    if owner in _DOC_TYPES:
        return owner
    bases = owner.__bases__
    if owner.__module__ == "builtins" and len(bases) == 1 and bases[0] in _DOC_TYPES:
        return bases[0]
    return None


_MRO = type.__dict__["__mro__"]
_CLASS_DICT = type.__dict__["__dict__"]
_MODULE = type.__dict__["__module__"]


def _read_private(obj: Any, name: str, default: tuple[Any, ...]) -> Any:
    """``self._x``: a private name of the script's own objects and functions (:func:`private_ok`)."""
    if not (private_ok(obj) or script_function(obj)):
        return _no_underscore(obj, name, default)
    return check_value(getattr(obj, name, *default))


def class_pattern_problem(cls: Any, names: tuple[str, ...], positional: int) -> str | None:
    """Why ``case cls(p, k=q):`` may not read what it read, or ``None`` when it may.

    A class pattern reads its attributes in C, past the attribute guard, so its ``match``
    checks the class before it runs: the class must be the script's own
    (:func:`private_ok`) or a namedtuple, and no attribute may come from a builtin base
    (``case MyStr(zfill=z)`` would hand out the raw method).
    """
    if not isinstance(cls, type):
        return f"a class pattern needs a class, not {type(cls).__name__!r}"
    named_tuple = bool(getattr(cls, HOLDABLE_MARK, False)) and issubclass(cls, tuple)
    if not (private_ok(cls) or named_tuple):
        return (
            f"a class pattern with sub-patterns needs one of your own classes, not "
            f"{cls.__name__!r}: write `case {cls.__name__}():` and read the attributes in the body"
        )
    mro = _MRO.__get__(cls)
    wanted = list(names)
    if positional:
        args = getattr(cls, "__match_args__", ())
        if type(args) is tuple and all(type(a) is str for a in args):
            wanted.extend(args[:positional])
        for name in wanted:
            if name.startswith("_") or name in INSPECT_ATTRIBUTES or name in _DENIED_NAMES:
                return f"a class pattern may not read {name!r}: read it in the body"
    for name in wanted:
        for klass in mro:
            if name in _CLASS_DICT.__get__(klass):
                if _MODULE.__get__(klass) == "builtins":
                    return (
                        f"a class pattern may not read {name!r}, an attribute of the builtin "
                        f"{klass.__name__!r}: read it in the body"
                    )
                break
    return None


def class_pattern_check(budget: Budget, cls: Any, names: tuple[str, ...], positional: int) -> Any:
    """The class of a class pattern with sub-patterns, read before its ``match`` runs.

    ``cls`` when the pattern may read what it names; else the run ends (the stop cannot be
    caught), before any attribute is read.
    """
    problem = class_pattern_problem(cls, names, positional)
    if problem is not None:
        raise budget.trip("sandbox", problem)
    return cls


def guarded_private_write(obj: Any) -> Any:
    """The write guard of ``obj._x = v`` targets: the script's own objects and functions only."""
    if private_ok(obj) or script_function(obj):
        return obj
    raise TypeError(
        f"private names of {type(obj).__name__} objects cannot be written in the sandbox "
        "(only instances of your own classes take `_names`)"
    )


def _no_underscore(obj: Any, name: str, default: tuple[Any, ...]) -> Any:
    if default:
        return default[0]
    raise AttributeError(
        f'"{name}" of {type(obj).__name__} objects is not available in the sandbox'
    )


def _refuse_attribute(obj: Any, name: str) -> NoReturn:
    kind = type(obj)
    if kind in (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType):
        if name in STEPPING_NAMES:
            # refused by design (issue 13): what they step out is the driver's (a host Future)
            raise AttributeError(
                f'"{name}" is not available on {kind.__name__} objects in the sandbox: '
                "keep the state in a class with a method instead (avg.add(10) for "
                "g.send(10)), or pass values as arguments; iterate generators with "
                "for/next() and await coroutines"
            )
        raise AttributeError(
            f'"{name}" is not available on {kind.__name__} objects in the sandbox '
            "(iterate generators with for/next(), await coroutines, async for over async "
            "generators)"
        )
    hint = getattr(kind, "_hint", None)
    if callable(hint) and not isinstance(obj, type):
        raise AttributeError(hint(obj))  # an opaque awaitable: "must be awaited"
    if not holdable(obj):
        raise AttributeError(
            f"attributes of {kind.__name__} objects are not available in the sandbox"
        )
    owner = obj.__name__ if isinstance(obj, type) else kind.__name__
    raise AttributeError(f'"{name}" of {owner} is not available in the sandbox')


# ----------------------------------------------------------------------------- formatting

_FORMATTER_PARSE = string.Formatter().parse
_FIELD_SPLIT: Callable[[str], tuple[int | str, Iterator[tuple[bool, int | str]]]] = (
    _string.formatter_field_name_split
)


def _check_printf(template: str | bytes | bytearray, operand: Any) -> PrintfSummary:
    """The template's conversions (:mod:`.printf_spec`, C's grammar), widths capped.

    Refuses any width or precision above :data:`MAX_FORMAT_WIDTH`, and conversions whose
    widths and numeric precisions together pass :data:`.sizes.MAX_RENDER` (``'%9999s' *
    100000``; findings12 F04). A ``*`` width or precision (``'%*d' % (5, 1)``) is the
    int C takes from ``operand`` (a tuple's items; findings18 M18), capped the same way.
    """
    text = template if isinstance(template, str) else template.decode("latin-1")
    args = None
    if "*" in text:
        args = tuple.__getitem__(operand, slice(None)) if isinstance(operand, tuple) else (operand,)
    # deadline checks through a long template; reading stops where it is refused below
    summary = summarize_printf(text, ticked, stop_past=(MAX_FORMAT_WIDTH, MAX_RENDER), args=args)
    if summary.widest > MAX_FORMAT_WIDTH:
        refuse_size(f"% format width above {MAX_FORMAT_WIDTH} refused")
    if summary.padding > MAX_RENDER:
        too_large_render("% formatting with these widths", summary.padding)
    return summary


def safe_format(value: Any, spec: str = "") -> str:
    """``format(value, spec)`` refusing huge widths (blocks ``format(1, '>10000000000')``)."""
    if type(spec) is not str:
        raise TypeError("format spec must be a str")
    if format_spec_too_wide(spec):
        refuse_size(f"format width above {MAX_FORMAT_WIDTH} refused")
    if type(value) in FLAT_TYPES:
        return _builtins.format(value, spec)
    if is_date(value):
        spec = check_date_format(value, spec, "format()")  # a strftime format (findings14 A06)
    with RENDERING:  # nested scope starts join this rendering (findings9 F03)
        check_render(value, "format() of this value")  # sizeguard: no 300 MB renderings
        return _builtins.format(value, spec)


def _format_field(
    field: str, args: tuple[Any, ...], kwargs: dict[str, Any], auto: list[int]
) -> Any:
    """The value of one ``str.format`` field: ``0``, ``name``, then ``[key]`` / ``.attr`` parts.

    Each part goes through the guard its expression would (``p[x]`` → the item guard,
    ``p.name`` → the attribute guard); a dunder or other ``_`` name the compiler refuses
    is refused here too (``{0.__class__}``, ``{f.__globals__}``; CVE-2023-41039), and a
    private ``_name`` reads only on the script's own objects, as ``p._name`` does.
    """
    try:
        first, rest = _FIELD_SPLIT(field)
        parts = list(rest)
    except ValueError as exc:
        raise ValueError(f"format field {field!r}: {exc}") from None
    if first == "":  # auto[1]: 1 once a field was numbered automatically, 2 by hand
        if auto[1] == 2:
            raise ValueError(
                "cannot switch from manual field specification to automatic field numbering"
            )
        first, auto[0], auto[1] = auto[0], auto[0] + 1, 1
    elif isinstance(first, int):
        if auto[1] == 1:
            raise ValueError(
                "cannot switch from automatic field numbering to manual field specification"
            )
        auto[1] = 2
    value = args[first] if isinstance(first, int) else kwargs[first]
    for is_attribute, key in parts:
        if is_attribute and isinstance(key, str):
            if (
                (key.startswith("_") and not is_private_name(key))
                or key.endswith("__roles__")
                or key in INSPECT_ATTRIBUTES
            ):
                raise ValueError(
                    f"format field {field!r}: {key!r} is not readable; only positions and "
                    "names, [keys] and public .attributes are allowed in the sandbox"
                )
            value = _guarded_getattr(value, key)
        else:
            value = _guarded_getitem(value, key)
    return value


def safe_str_format(
    template: str, args: tuple[Any, ...], kwargs: dict[str, Any], _auto: list[int] | None = None
) -> str:
    """``template.format(*args, **kwargs)`` with every field part guarded.

    ``{p[x]}`` and ``{p.name}`` read through the item and attribute guards;
    ``{0.__class__}`` is refused (CVE-2023-41039, :func:`_format_field`); widths are
    capped and so is the result size.
    """
    out: list[str] = []
    total = 0
    auto = _auto if _auto is not None else [0, 0]
    for literal, field, spec, conversion in _FORMATTER_PARSE(template):
        out.append(literal)
        total += len(literal)
        if field is None:
            continue
        value = _format_field(field, args, kwargs, auto)
        if conversion == "r":
            value = safe_repr(value)
        elif conversion == "s":
            with RENDERING:
                check_render(value, "str() of this value")
                value = str(value)
        elif conversion == "a":
            value = safe_ascii(value)
        if spec and "{" in spec:
            spec = safe_str_format(spec, args, kwargs, auto)
        piece = safe_format(value, spec or "")
        total += len(piece)
        if total > MAX_SEQUENCE:
            refuse_size(f"formatted string longer than {MAX_SEQUENCE} characters")
        out.append(piece)
    return "".join(out)


def _bound_str_format(template: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        return safe_str_format(template, args, kwargs)

    return format


class _NoPositional(tuple):  # type: ignore[type-arg]
    """``format_map``'s arguments: a positional field is C's ValueError, not an IndexError."""

    __slots__ = ()

    def __getitem__(self, index: Any) -> Any:
        raise ValueError("Format string contains positional fields")


_NO_POSITIONAL: Any = _NoPositional()


def _bound_str_format_map(template: str) -> Callable[[Any], str]:
    def format_map(mapping: Any) -> str:
        # each field is looked up as `mapping[key]`, as C does: a dict subclass's
        # __missing__/__getitem__ runs (script code), not a copy's (findings19 N03)
        return safe_str_format(template, _NO_POSITIONAL, mapping)

    return format_map


# ----------------------------------------------------------------------------- size checks


def _too_big(what: str) -> NoReturn:
    refuse_size(f"{what} would be too large for the sandbox")  # a limit: ends the script


def _seq_len(value: Any) -> int | None:
    # measured through the base type's own __len__: a subclass whose __len__ lies cannot
    # make `x * n` look small (test_boundary_size_parameters_and_lying_len_are_bounded)
    for base in _REPEATABLE:
        if isinstance(value, base):
            length: int = base.__len__(value)
            return length
    return None


_REPEATABLE: tuple[Any, ...] = (str, list, tuple, bytes, bytearray, collections.deque)


def _check_repeat(seq: Any, length: int, count: Any) -> None:
    times = repeat_count(count)
    if times is None:
        return
    if length * times > MAX_SEQUENCE:
        _too_big("a repeated sequence")
    if length * times > CHECK_FROM:
        charge_sequence(seq, length * times)


def guarded_mul(a: Any, b: Any) -> Any:
    """``a * b`` refusing huge results (blocks ``'x' * 10**10``, ``[0] * 10**10``, repeated squaring)."""
    if type(a) is int is type(b) and -0x7FFFFFFF < a < 0x7FFFFFFF > b > -0x7FFFFFFF:
        return a * b  # the common case first: small ints
    ta = type(a)
    tb = type(b)
    if ta is float or tb is float:
        return a * b
    if ta is int and tb is int:
        a_bits, b_bits = a.bit_length(), b.bit_length()
        if a_bits + b_bits > MAX_INT_BITS:
            _too_big("an int product")
        check_product(a_bits, b_bits)  # milliseconds of C: the deadline first (int_work)
        return a * b
    length = _seq_len(a)
    if length is not None:
        _check_repeat(a, length, b)
    length = _seq_len(b)
    if length is not None:
        _check_repeat(b, length, a)
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and int.bit_length(a) + int.bit_length(b) > MAX_INT_BITS  # int's own, not a subclass's
    ):
        _too_big("an int product")
    return a * b


def _check_matmul(a: Any, b: Any) -> None:
    # no builtin type defines `@`: a script class's __matmul__ runs script code (guarded),
    # yet a sequence operand is checked as `*` and `+` check it, whatever method runs
    for seq, other in ((a, b), (b, a)):
        length = _seq_len(seq)
        if length is not None:
            _check_repeat(seq, length, other)
            if length > CHECK_FROM and _seq_len(other) is not None:
                other_length = _seq_len(other) or 0
                if length + other_length > MAX_SEQUENCE:
                    _too_big("a concatenated sequence")


def guarded_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with the size checks of ``*`` and ``+`` on sequence operands (issue 14)."""
    _check_matmul(a, b)
    return a @ b


def guarded_imatmul(a: Any, b: Any) -> Any:
    """``a @= b`` with the size checks of :func:`guarded_matmul`."""
    _check_matmul(a, b)
    a @= b
    return a


def guarded_pow(a: Any, b: Any, mod: Any = None) -> Any:
    """``a ** b`` / ``pow(a, b[, mod])`` refusing huge ints (blocks ``10 ** 10**9``, ``pow(7, 10**9)``).

    A modular power's result is small, but its work is one squaring and one
    quadratic reduction per bit of the exponent: ``pow(3, 10**5000, 10**5000)``
    is one C call of seconds, and the allowed int sizes reach hours. It is
    refused when bits(exponent) x digits(modulus)**2 exceeds
    :data:`MAX_MODPOW_WORK` (a 4096-bit RSA-style power passes).
    """
    if mod is not None:
        if isinstance(b, int) and isinstance(mod, int):
            digits = (abs(mod).bit_length() + 29) // 30  # CPython's 30-bit digits
            if max(abs(b).bit_length(), 1) * digits * digits > MAX_MODPOW_WORK:
                refuse_size("a modular power would take too long for the sandbox")
        return _builtins.pow(a, b, mod)
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and b > 0
        and a not in (0, 1, -1)
        and (b > MAX_INT_BITS or (int.bit_length(a) - 1) * b > MAX_INT_BITS)  # int's own
    ):
        _too_big("an int power")
    return a**b


def guarded_lshift(a: Any, b: Any) -> Any:
    """``a << b`` refusing huge ints (blocks ``1 << 10**11``)."""
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and a
        and b > 0
        and int.bit_length(a) + b > MAX_INT_BITS  # int's own: a subclass's may lie
    ):
        _too_big("an int shift")
    return a << b


def guarded_mod(a: Any, b: Any) -> Any:
    """``a % b``; for strings, printf widths are capped (blocks ``'%*d' % (10**10, 1)``).

    An int by a big int is a quadratic C division: checked first (:func:`check_division`).
    """
    if type(a) is int:
        if type(b) is not int or not -0x7FFFFFFF < b < 0x7FFFFFFF:
            check_division(a, b, "an int remainder")
        return a % b
    if isinstance(a, (str, bytes, bytearray)):  # bytearray too (findings10 F04)
        # checked on an exact copy: a subclass's `__contains__` could hide every `%`
        template = a if type(a) is str else exact_copy(a)
        summary = _check_printf(template, b)
        if type(b) in FLAT_TYPES:
            return a % b
        with RENDERING:
            if isinstance(b, (tuple, str, bytes, bytearray)) or not hasattr(type(b), "__getitem__"):
                # the widths are counted above, the items here (findings12 F04)
                check_render(b, "% formatting of this value", MAX_RENDER - summary.padding)
                return a % b
            return a % resolve_mapping(template, b, summary)  # C's mapping form (findings10 F04)
    check_division(a, b, "an int remainder")
    return a % b


def guarded_ior(a: Any, b: Any) -> Any:
    """``a |= b``; a dict's ``|=`` of an iterable of pairs is fed in chunks (hash flooding).

    ``s |= t`` on sets needs a set ``t`` (its hashes are stored), ints are ints.
    """
    if isinstance(a, dict):
        b = fed(b, "dict")
    a |= b
    return a


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {}


def _script_inplace(kind: type, name: str) -> Callable[..., Any] | None:
    """The script's own in-place method ``name`` of ``kind`` (first on its MRO), else None."""
    for klass in _MRO.__get__(kind):
        method = klass.__dict__.get(name)
        if method is not None:
            return method if script_function(method) else None
    return None


def _in_place(name: str, binary: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``a op= b`` as Python runs it (findings19 N08): the script's own ``__i<op>__`` first,
    then, when it is missing or gives ``NotImplemented``, the guarded binary operator."""

    def inplace(a: Any, b: Any) -> Any:
        method = _script_inplace(type(a), name)
        if method is not None:
            result = method(a, b)
            if result is not NotImplemented:
                return result
        return binary(a, b)

    return inplace


_IN_PLACE_REPEATS = (list, bytearray, collections.deque)
"""Builtin sequences whose ``*=`` repeats in place (``y = x; x *= 2`` grows ``y`` too)."""


def _repeat_in_place(a: Any, b: Any) -> Any:
    if isinstance(a, _IN_PLACE_REPEATS):
        length = _seq_len(a)
        if length is not None:
            _check_repeat(a, length, b)  # the size check of `a * b`, then in place
        return operator.imul(a, b)  # type: ignore[no-untyped-call]
    return guarded_mul(a, b)


def _build_inplace() -> None:
    _INPLACE.update(
        {
            "+=": guarded_iadd,
            "-=": guarded_set_operator(operator.isub),
            "*=": _in_place("__imul__", _repeat_in_place),
            "/=": operator.itruediv,
            "%=": _in_place("__imod__", guarded_mod),
            "**=": _in_place("__ipow__", guarded_pow),
            "<<=": _in_place("__ilshift__", guarded_lshift),
            ">>=": operator.irshift,
            "|=": guarded_set_operator(guarded_ior),
            "^=": guarded_set_operator(operator.ixor),
            "&=": guarded_set_operator(operator.iand),
            "//=": guarded_ifloordiv,
            "@=": guarded_imatmul,
        }
    )


_HASH_CONTAINERS: tuple[type[Any], ...] = (
    set,
    frozenset,
    dict,
    type({}.keys()),
    type({}.items()),
)


def _checked_elements(value: Any) -> None:
    """Refuse (a size limit) unless hashing and comparing the elements of ``value`` is bounded."""
    _elements_ok(list(dict.keys(value) if isinstance(value, dict) else value))


def _charge_table(value: Any) -> None:
    if type(value) in SIZED_VIEWS:
        charge_bytes(base_len(value) * 32)  # d.keys() | x: a new set of the view's items
    else:
        charge_copy(value)


def _table_work(a: Any, b: Any) -> None:
    """The budget checked before an operator over a table (charged for a ``Counter``'s loop).

    ``Counter``'s ``- | & ^`` are host-Python loops over both operands (:func:`counter_work`,
    findings15 E05); ``OrderedDict | OrderedDict`` or ``set | set`` of 300,000 items is
    milliseconds of C, of which a loop of 100 ran 8.8 s past a 1 s deadline: from
    :data:`LARGE_INPUT` items the budget is checked first.
    """
    if isinstance(a, collections.Counter) or isinstance(b, collections.Counter):
        counter_work(a, b)
    elif base_len(a, 0) + base_len(b, 0) >= LARGE_INPUT:
        check_budget()


def guarded_set_operator(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``a op b`` for ``&``, ``|``, ``^``, ``-`` (and ``&=``…), bounded when sets are involved.

    Set operators hash the elements of one side into the other and compare the
    elements whose hashes match; a dict view's operator first builds a set from
    any iterable. A comparison costs at most either element's expansion, so one
    side's elements are checked (:func:`_elements_ok`): the smaller of two sets
    or dicts (their hashes are stored), or else the side that gets hashed, an
    iterable, materialised once. ``{F} & {G}`` of equal frozensets built from
    each other compares in 2**60 steps; ``d.keys() & [t]`` hashes a
    shared-reference tuple. Numbers pay one type test in the compiled code and
    never get here.
    """

    def guarded(a: Any, b: Any) -> Any:
        left = isinstance(a, _HASH_CONTAINERS)
        right = isinstance(b, _HASH_CONTAINERS)
        if not (left or right) and (typing_form(a) or typing_form(b)):
            # `List[int] | x` is typing's cached Union[...]: the same keys as a subscript
            check_opaque_key(a if typing_form(a) else b, (a, b))
        if left:
            _charge_table(a)  # the result's table, before C builds it (findings14 C03)
        if right:
            _charge_table(b)
        if left or right:
            _table_work(a, b)
        if left and right:
            _checked_elements(a if base_len(a) <= base_len(b) else b)
        elif left or right:
            other = b if left else a
            kind = type(other)
            if vars(kind).get(ITEM_WRITABLE_MARK):
                # a stand-in that checks what it holds at every use (ChainMap): its own
                # operators answer (`ChainMap(d) | {}` became `list | dict`, a TypeError)
                return op(a, b)
            if kind not in _SCALARS and kind is not str and hasattr(kind, "__iter__"):
                # hashed into a set by the operator: read once, here, in ticked pieces
                # with its growth read (findings7 F10: {}.keys() | iter(range(3*10**7))
                # grew the host 2.6 GB in one call)
                items = list(growth_checked(ticked(other), "list"))
                _elements_ok(items)
                return op(a, items) if left else op(items, b)
        return op(a, b)

    guarded.__name__ = op.__name__
    return guarded


_build_inplace()


def guarded_inplace(op: str, a: Any, b: Any) -> Any:
    """``x op= y`` for the operators that need a size check (and the item/attribute forms)."""
    return _INPLACE[op](a, b)


# string methods that allocate (center, join… are in guards/allocations.py)
def _translate(s: Any) -> Callable[..., Any]:
    def translate(table: Any) -> Any:
        # C looks each character up in the table once: a dict subclass's __getitem__ or a
        # list of long strings would make it allocate without bound, so the table is read
        # once into an exact dict (base methods, no script code) and its longest value bounds
        # the result
        if isinstance(table, dict):
            table = dict.copy(table)
        elif isinstance(table, (list, tuple)):
            base: Any = list if isinstance(table, list) else tuple
            table = dict(enumerate(base.__iter__(table)))
        else:
            raise TypeError(
                "str.translate takes a dict in the sandbox: build it with str.maketrans(...)"
            )
        values = dict.values(table)
        longest = max((base_len(v) for v in values if isinstance(v, str)), default=1)
        if base_len(s) * longest > MAX_SEQUENCE:
            _too_big("str.translate")
        charge_sequence(s, base_len(s) * longest)  # the new text (findings14 C05)
        return s.translate(table)

    return translate


_COPYING_BYTES_METHODS = frozenset(
    {
        "upper", "lower", "swapcase", "title", "capitalize", "strip", "lstrip", "rstrip",
        "translate", "removeprefix", "removesuffix", "hex",
    }
)  # fmt: skip
"""bytes/bytearray methods whose result is about as long as the receiver (``hex``: three times)."""


def _bytes_hex(data: bytes | bytearray) -> Callable[..., str]:
    """``data.hex(sep, bytes_per_sep)``: the text's length checked and charged before C makes it."""
    base: Any = bytearray if isinstance(data, bytearray) else bytes

    def hex(*args: Any, **kwargs: Any) -> str:
        count = base_len(data)
        length = 2 * count
        if args or kwargs:  # a separator: at most one a byte
            length += max(count - 1, 0)
        if length > MAX_SEQUENCE:
            _too_big(f"{base.__name__}.hex")
        charge_sequence("", length)
        text: str = base.hex(data, *args, **kwargs)
        return text

    return hex


_STR_METHODS: dict[str, Callable[[Any], Callable[..., Any]]] = {
    "format": _bound_str_format,
    "format_map": _bound_str_format_map,
    "translate": _translate,
}


# ----------------------------------------------------------------------------- namespaces


def _guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
    # test_guards_getattr_*: blocks dunder/private names, generator/frame
    # internals (CVE-2023-37271), the str.format family (CVE-2023-41039),
    # `mro`, any attribute of functools.partial/module objects, and checks
    # the value it returns (no modules, frames, code, type/object…).
    if type(name) is not str:
        raise TypeError("attribute name must be a str")
    kind = type(obj)
    calls = _RECEIVER_CALLS.get(name)
    if calls is not None:
        call = calls.get(kind, _NO_CALL)
        if call is not _NO_CALL:
            # d.get(k), s.add(x), lst.index(x), lst.sort()… on exact builtin types (public
            # names): the real bound method, or a wrapper bounding what it compares or
            # hashes (test_compare_calls); first, as these reads are frequent
            if call is None:
                return getattr(obj, name)
            return _METHOD(call, getattr(obj, name))
    if name.startswith("_"):
        if name in READABLE_UNDERSCORE_NAMES:
            return _read_underscore(obj, name, default)
        if is_private_name(name):
            return _read_private(obj, name, default)
        if name in SCRIPT_DUNDER_READS:
            return read_dunder(obj, name, default)  # exc.__cause__, self.__dict__ (issue 14)
        if name in SUPER_DUNDERS and type(obj) is super:
            return _read_super_dunder(obj, name, default)  # findings18 M01/M23
        if _is_dunder(name):
            raise AttributeError(
                f'"{name}" is an invalid attribute name because it starts with "_": scripts '
                "read no dunder attributes; use the builtin or operator that calls it "
                f'(len(x), iter(x), str(x), x + y), or hasattr(x, "{name}") to test for it'
            )
        raise AttributeError(f'"{name}" is an invalid attribute name because it starts with "_"')
    if name in INSPECT_ATTRIBUTES:
        raise AttributeError(
            f'"{name}" is a restricted name, that is forbidden to access in RestrictedPython.'
        )
    sizer = _LARGE_RECEIVERS.get(kind)
    if sizer is not None:
        large = sizer(obj) >= LARGE_INPUT
    else:
        # a script's `class S(str)` or deque subclass: its base's methods do the same work
        # (findings14 A16 residual: `S('\u4e00' * 10**7).upper()` x 200 was 18 s past 1 s)
        large = (
            kind not in _FAST_RECEIVERS
            and isinstance(obj, _LARGE_BASES)
            and base_len(obj, 0) >= LARGE_INPUT
        )
    if large:
        # s.upper() of 10 M characters in a loop of 200: each call is tens of ms that the
        # tick chunk (256) does not see; the read and every call of the method check the
        # budget first (findings14 A16)
        check_budget()
    if kind in _FAST_RECEIVERS:
        if name not in _SLOW_NAMES:
            # exact builtin data types: every public attribute passes check_value
            # (test_guards_fast_receivers_match_check_value), so skip it
            return getattr(obj, name, *default)
        into = _HASHED_RECEIVERS.get(kind)
        if into is not None and name in _HASHING_METHODS:
            # s.update(x), d.update(pairs), {}.fromkeys(x)… (test_hash_feed_*)
            value = getattr(obj, name, *default)
            return _METHOD((_FED_SET_CALLS if into == "set" else _FED_DICT_CALLS)[name], value)
    if kind is OpaqueNamespace:
        if default:
            try:
                return obj.member(name)
            except (AttributeError, TypeError):
                return default[0]
        return obj.member(name)
    if kind is property and name in PROPERTY_COPIERS:
        return property_copier(obj, name)  # @x.setter on the script's own property
    if not attribute_allowed(obj, name):
        # the per-type allow-list (test_boundary_*): send/throw/close/asend/athrow and
        # cr_*/gi_*/ag_* on nothing, and no attribute at all of a value not holdable
        if default:
            return default[0]
        _refuse_attribute(obj, name)
    if name in BOUNDED_NAMES:
        # b'x'.center(10**9), (1).to_bytes(10**9), ''.join(lazy)… (guards/allocations.py)
        bounded = bounded_method(obj, name)
        if bounded is not None:
            # f = s.split; f() in a loop: each call of a large receiver's checks first
            return _METHOD(budget_first, bounded) if large else bounded
    if name in _STR_METHODS and isinstance(obj, str):
        method = _STR_METHODS[name](obj)
        return _METHOD(budget_first, method) if large else method
    if isinstance(obj, type):
        unbound = _container_unbound(obj, name)
        if unbound is not None:
            return unbound  # dict.update(x, pairs): x.update's guard (findings9 F08)
    if (name == "extend" or name == "extendleft") and is_extendable(obj):
        return guarded_extend(obj, name)  # x.extend(x) doubling (memguard)
    if name == "copy" or (name in _COPYING_STR_METHODS and kind is str):
        charge_copy(obj)  # memguard: y.append(x.copy()), s.upper() of large values
        if not large and base_len(obj, 0) >= LARGE_INPUT:
            check_budget()  # big.copy() in a loop (findings14 A16)
    elif name in _COPYING_BYTES_METHODS and isinstance(obj, (bytes, bytearray)):
        if name == "hex":
            hexed = _bytes_hex(obj)  # b.hex(':'): three characters a byte (findings14 C05)
            return _METHOD(budget_first, hexed) if large else hexed
        charge_copy(obj)  # b.upper(), b.translate(t) (findings14 C05)
    if name in _HASHING_METHODS:
        into = _hashing_target(obj, name)
        if into is not None:
            # s.update(x), d.update(pairs), dict.fromkeys(x), Counter(x).update(x),
            # Counter.update(c, x)… (test_hash_feed_*)
            value = getattr(obj, name, *default)
            if type(value) is types.FunctionType:
                if value.__module__ == "collections":
                    return _METHOD(_FED_UNBOUND_CALLS[name], value)  # Counter.update(c, xs)
                return value
            if callable(value) and not isinstance(value, type):
                return _hashing_method(value, into, name)
            return value
    if name in _DENIED_NAMES:
        raise AttributeError(f'"{name}" is not available in the sandbox')
    value = getattr(obj, name, *default)
    if isinstance(obj, BaseException) and not _script_made(kind):
        # e.args, e.value, eg.exceptions: containers the host filled (issue 13, F05)
        return held_data(value)
    if type(value) in _PLAIN:
        return value
    if name == "strptime" and type(value) is types.BuiltinFunctionType:
        return strptime_of(value)  # datetime.strptime, on the class or an instance
    if name == "strftime" and is_date(obj) and type(value) is types.BuiltinFunctionType:
        return strftime_of(obj, value)  # a bounded format (findings14 A06)
    if isinstance(obj, type) and not _script_made(obj):
        if type(value) in _UNBOUND_KINDS:
            return _unbound(obj, name)  # str.lower, Counter.most_common (test_boundary_unbound_*)
        if type(value) is types.BuiltinFunctionType and value.__self__ in (None, obj):
            return value  # str.maketrans, dict.fromkeys, datetime.now: the listed class's own
    if name in _CHECKED_CALL_NAMES:
        call = _checked_call(obj, name, value)
        if call is not None:
            return _METHOD(call, value)  # deque.index(x), Counter.most_common()… (bounded)
    if large and callable(value):
        return _METHOD(budget_first, check_value(value))  # u = s.upper; u() in a loop
    return check_value(value)


def _guarded_hasattr(obj: Any, name: str) -> bool:
    try:
        _guarded_getattr(obj, name)
    except (AttributeError, TypeError):
        if type(name) is str and _is_dunder(name):
            return _has_dunder(obj, name)
        return False
    return True


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


_TYPE_DICT = type.__dict__["__dict__"]


def _has_dunder(obj: Any, name: str) -> bool:
    """Whether ``obj`` has the dunder ``name`` a script may not read (findings18 M31).

    ``hasattr(x, "__iter__")`` and ``hasattr(obj, "__dataclass_fields__")`` are duck-typing
    tests: they answered ``False`` for every value. Only the answer is handed out, found in
    the class dictionaries of ``obj``'s type (and of ``obj`` when it is a class) along the
    real MRO: no attribute is read, so no descriptor, ``__getattr__`` or host code runs.
    """
    classes = list(_MRO.__get__(type(obj)))
    if isinstance(obj, type):
        classes[:0] = _MRO.__get__(obj)
    return name != "__abstractmethods__" and any(
        name in _TYPE_DICT.__get__(klass) for klass in classes
    )


def _guarded_getitem(obj: Any, key: Any) -> Any:
    # test_guards_getitem_checks_value: item access returns checked values
    # and resolves tools["raw-name"].
    if type(key) is slice and type(obj) in _SLICE_COPIES and len(obj) > CHECK_FROM:
        _charge_slice(obj, key)  # memguard: y.append(x[:]) copies charged before the copy
    if type(obj) not in _PLAIN:
        check_opaque_key(obj, key)  # typing.Optional["x" * 10**7] compiles the string
    value = obj[key]  # OpaqueNamespace.__getitem__ resolves tools["raw-name"]
    if type(value) in _PLAIN:
        return value
    return check_value(value)


def _subscript_key(obj: Any, key: Any) -> Any:
    # the key of an inline `o[k]` read that is not a scalar: refused when `o` is a typing
    # form or a class and the key would sit in typing's process-wide cache with code of the
    # script behind its __eq__ (check_opaque_key), then hashed within bounds
    dagguard.hash_ok(key)  # first: a shared-reference key is a limit, whatever `o` is
    if type(obj) not in _PLAIN:
        check_opaque_key(obj, key)
    return key


def _charge_slice(obj: Any, key: slice) -> None:
    # test_memory_guard_large_copies_*: a slice of a large str/list/tuple/bytes
    # copies its items; charge them to the memory budget before the copy is made
    try:
        length = len(range(*key.indices(len(obj))))
    except (TypeError, ValueError):
        return  # the subscript itself raises the error
    if length > CHECK_FROM:
        charge_copy(obj, length=length)


def _guarded_write(obj: Any) -> Any:
    # test_guards_write_*: item/attribute writes only on the script's own
    # dicts and lists (every host value arrives as a JSON copy) and on
    # instances (and classes) of classes the script defined; modules,
    # functions, namespaces, builtins and host classes refuse.
    kind = type(obj)
    if kind is dict or kind is list or kind in _WRITABLE:
        return obj
    if _CLASS_DICT.__get__(kind).get(ITEM_WRITABLE_MARK) is True:
        return obj  # a stand-in mapping that checks what it holds at every use (ChainMap)
    if kind is InstanceDict:
        return obj  # vars(obj)[k] = v: its own __setitem__ applies the attribute-name rules
    if getattr(kind, SCRIPT_CLASS_MARK, False):
        return obj
    if script_function(obj):
        return obj  # `wrapper.calls = 0` on the script's own functions (never a host one's)
    if kind is bytearray:
        return BytearrayWriter(obj)  # ba[i] = v; slice writes bounded (guards/edges.py)
    if isinstance(obj, type) and _MADE_BY_SCRIPT in obj.__dict__:
        # the class object itself: only a class the script's own `class` statement made
        # (a host class marked for writable instances, decimal's Context, stays read-only)
        return obj
    if kind is OpaqueNamespace:
        raise TypeError(f"{obj!r} is read-only")
    hint = _CLASS_DICT.__get__(kind).get(WRITE_HINT_MARK)
    if type(hint) is str:
        raise TypeError(f"{kind.__name__} objects cannot be modified in the sandbox: {hint}")
    raise TypeError(f"{kind.__name__} objects cannot be modified in the sandbox")


guarded_write = _guarded_write
"""The write guard (``obj.x = v`` targets): the builtins' ``setattr``/``delattr`` use it."""

guarded_read = _guarded_getattr
"""The read guard (``obj.x``, ``getattr``): what host helpers read on the script's behalf."""


def guarded_metadata_write(obj: Any) -> Any:
    """The write guard of helpers that write a wrapper's metadata (``functools.wraps``…).

    What :func:`guarded_write` allows (the script's own objects and classes), plus the
    script's own functions; every host object is refused (issue 13, F01: the real
    ``update_wrapper`` renamed the host's ``ToolError`` and planted a list on ``type``).
    """
    if script_function(obj):
        return obj
    return _guarded_write(obj)


def _guarded_aug_item(obj: Any, key: Any, op: str, value: Any) -> None:
    target = _guarded_write(obj)
    target[key] = guarded_inplace(op, _guarded_getitem(obj, key), value)


def _guarded_aug_attr(obj: Any, name: str, op: str, value: Any) -> None:
    target = guarded_private_write(obj) if is_private_name(name) else _guarded_write(obj)
    setattr(target, name, guarded_inplace(op, _guarded_getattr(obj, name), value))


def _guarded_apply(func: Any, *args: Any, **kwargs: Any) -> Any:
    # test_guards_apply_refuses_private_keywords: f(**{"_trusted": True}).
    for key in kwargs:
        if key.startswith("_"):
            raise TypeError(f'keyword argument "{key}" is not allowed because it starts with "_"')
    return func(*args, **kwargs)


_CHECKED_SPECS: set[str] = set()
"""f-string format specs that passed the width check (the fast path skips it)."""


def _guarded_fmtv(value: Any, conversion: int, spec: str) -> str:
    # test_guards_fstring_dynamic_width: f'{1:>{10**10}}'; every f-string field
    # (the policy wraps them all) is render-size checked (test_render_guard_fstring).
    if type(value) in FLAT_TYPES and conversion != 97 and (not spec or spec in _CHECKED_SPECS):
        # scalars: nothing to walk, and the spec's width was checked before
        if conversion == 114:
            value = repr(value)
        text = _builtins.format(value, spec) if spec else str(value)
    else:
        if conversion == 115:
            with RENDERING:
                check_render(value, "str() of this value")
                value = str(value)
        elif conversion == 114:
            value = safe_repr(value)
        elif conversion == 97:
            value = safe_ascii(value)
        text = safe_format(value, spec)
        if spec and len(_CHECKED_SPECS) < 4096:
            _CHECKED_SPECS.add(spec)
    if len(text) > CHECK_FROM:
        check_field(text)  # f'{s}{s}' doubling (memguard)
    return text


def _script_metaclass(name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
    # Classes the script defines are recorded so `self.x = 1` works on their
    # instances only (test_language_class_attribute_writes).
    for base in bases:
        if not isinstance(base, type) or not holdable_class(base) or base is OpaqueNamespace:
            raise TypeError(f"cannot subclass {base!r} in the sandbox")
        if issubclass(base, BaseExceptionGroup):
            refuse_group_subclass(base)  # except* calls a group's own split() (guards/edges.py)
        if not subclassable_class(base):
            # G04/G05/G08: a stand-in's guards call its own methods (tell(), __abs__…)
            shown = base.__qualname__
            raise TypeError(
                f"cannot subclass {shown} in the sandbox: wrap it instead, holding an"
                f" instance as an attribute (self.inner = {shown}(...)) and"
                " calling it from your methods"
            )
    for exit_name in ("__exit__", "__aexit__"):
        if exit_name in namespace:
            namespace[exit_name] = _exit_shield(namespace[exit_name], exit_name)
    if any(issubclass(base, _NUMBERS) for base in bases):
        # before type(): a base's __init_subclass__ (script code) runs inside it and could
        # keep the class even if it were refused afterwards (findings12 F01)
        _refuse_lying_number(name, bases, namespace)
    prepare_namespace(namespace)  # __slots__, __match_args__, __format__ (script_classes)
    # marked before type() makes it: a base's __init_subclass__ (script code) runs inside
    # type() and gets the class as the script's own (cls.tag = ... works)
    namespace[SCRIPT_CLASS_MARK] = True
    namespace[_MADE_BY_SCRIPT] = True
    namespace[SUBCLASSABLE_MARK] = True
    cls = type(name, bases, namespace)
    setattr(cls, SCRIPT_CLASS_MARK, True)  # again: a typing metaclass makes its own class
    setattr(cls, _MADE_BY_SCRIPT, True)
    setattr(cls, SUBCLASSABLE_MARK, True)
    return cls


_NUMBERS = (int, float, complex)
_NUMBER_NAMES = frozenset(name for kind in _NUMBERS for name in vars(kind)) - {
    "__new__",
    "__init__",
    "__repr__",
    "__str__",
    "__format__",
    "__doc__",
}
"""Every attribute a number's own type defines (comparisons, arithmetic, ``abs``, ``hash``,
``bit_length``, ``to_bytes``, ``real``…): a script subclass of a number may not answer any of
them differently. ``__repr__``/``__str__``/``__format__`` stay the script's (renderings are
bounded by the render scope)."""


def _refuse_lying_number(name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> None:
    """Refuse a script class with a number base that redefines what the number answers.

    Every size check of the sandbox compares what it is given with a limit (``count >
    limit``, ``abs(n) > cap``) or asks it its size (``a.bit_length()``): a subclass whose
    ``__lt__``/``__gt__``/``__abs__``/``bit_length`` lie passes such a check while C reads
    the real value (findings11 F12-F14, findings12 F07: ``bytes(N(10**9))``,
    ``random.choices(k=N(...))``, ``N(2**2000 + 1) ** 10**6``). Rather than audit every
    check, a number stays a number: none of its type's names may be given a value by the
    script's classes — whatever the value (a ``def``, a ``property``, an ``lru_cache``
    wrapper: findings12 F02/F06), in the class body or in a script base of any base
    (``class N(Mixin, int)``). Checked before ``type()`` makes the class, so no
    ``__init_subclass__`` can keep a refused one (findings12 F01). What a host stand-in's
    machinery writes (``enum.Flag.__or__`` on an ``IntFlag``) is the host's own function.
    """
    defined = set(_NUMBER_NAMES.intersection(namespace))
    for base in bases:
        mro = base.__mro__
        host = [kind for kind in mro if not vars(kind).get(_MADE_BY_SCRIPT)]
        for kind in mro:
            if not vars(kind).get(_MADE_BY_SCRIPT):
                continue
            own = vars(kind)
            for attr in _NUMBER_NAMES.intersection(own):
                if not any(vars(other).get(attr) is own[attr] for other in host):
                    defined.add(attr)
    if defined:
        shown = ", ".join(sorted(defined))
        raise TypeError(
            f"class {name}: a subclass of a number cannot redefine {shown} in the sandbox: "
            "keep the number as an attribute (self.value = n) and give the class its own methods"
        )


def _exit_shield(method: Any, name: str) -> Callable[..., Any]:
    """The script's ``__exit__``/``__aexit__``, called with no host object (issue 13, F04).

    Python calls it from C with ``(type, exception, traceback)``: the traceback (frames
    behind it) becomes ``None`` and the type the nearest class of its MRO a script may hold
    (``json``'s real ``JSONDecodeError`` → ``ValueError``); the exception is what
    ``except … as e`` would give the script.
    """
    if type(method) is not types.FunctionType:
        raise TypeError(f"{name} must be a plain method in the sandbox")

    def exit_(self: Any, kind: Any, exc: Any, traceback: Any, /) -> Any:
        return method(self, held_exception_type(kind), exc, None)

    exit_.__name__ = exit_.__qualname__ = name
    return exit_


def held_exception_type(kind: Any) -> Any:
    """``kind`` (an exception class or ``None``), or its nearest base a script may hold."""
    if kind is None or not isinstance(kind, type):
        return None
    for base in kind.__mro__:
        if holdable_class(base):
            return base
    return None


_MADE_BY_SCRIPT = "__scriptgate_made_by_script__"
"""Set, in its own ``__dict__``, on each class a script's ``class`` statement makes: the
class objects a script may write to (its instances are writable through SCRIPT_CLASS_MARK,
which a host class may carry too)."""


def _stop_types() -> tuple[type[BaseException], ...]:
    import asyncio

    # GeneratorExit is deliberately absent: it is how close() (and a `break` out
    # of a for loop over a generator) runs the generator's `finally` blocks, which
    # must run as in Python (test_language_generator_finally_runs_on_close).
    types_: tuple[type[BaseException], ...] = (
        ScriptStop,
        asyncio.CancelledError,
        KeyboardInterrupt,
        SystemExit,
    )
    trio = sys.modules.get("trio")
    if trio is not None:
        types_ = (*types_, trio.Cancelled)
    return types_


_STOP_TYPES: list[tuple[type[BaseException], ...]] = []


_END = object()
_islice = itertools.islice
_chain = itertools.chain
_real_of = REAL_OF_STAND_IN.get
_scalars_only = _SCALARS.issuperset


def _ticking(it: Iterator[Any], tick: Callable[[], Any]) -> Iterator[Any]:
    # one tick per item (charge(): an iterable of unknown length read in C)
    for item in it:
        tick()
        yield item


def _chunks(it: Iterator[Any], check_chunk: Callable[[int], int]) -> Iterator[Iterator[Any]]:
    # pieces of 256 items of the same live iterator; Python runs once per piece
    while True:
        first = next(it, _END)
        if first is _END:
            return
        check_chunk(_TICK_CHUNK)
        yield _chain((first,), _islice(it, _TICK_CHUNK - 1))


def _range_chunks(r: range, check_chunk: Callable[[int], int]) -> Iterator[range]:
    # a long range as ranges of 256 items, the run's check between them
    step = r.step * _TICK_CHUNK
    stop = r.stop
    for start in range(r.start, stop, step):
        check_chunk(_TICK_CHUNK)
        end = start + step
        yield range(start, min(end, stop) if step > 0 else max(end, stop), r.step)


def _hashed_input(value: Any, into: str, check_chunk: Callable[[int], int]) -> Any:
    # what a set/dict/frozenset built from `value` may hash (see make_guards' copy)
    kind = type(value)
    if kind is list or kind is tuple:
        if len(value) <= _FEED_FROM:
            if into != "dict" and _scalars_only(map(type, value)):
                return value  # the common case: scalars hash in bounded time
            return hashed_ok(value, into)
    elif kind in _NO_FEED or kind is _KEYS_VIEW or kind is CheckedFeed:
        return value  # stored hashes, keys hashed when inserted, or checked already
    elif not needs_feed(value, into):
        return hashed_whole(value, into)
    return CheckedFeed.from_iterable(_hashed_chunks(iter(value), into, check_chunk))


def _hashed_chunks(
    it: Iterator[Any], into: str, check_chunk: Callable[[int], int]
) -> Iterator[list[Any] | tuple[Any, ...]]:
    # chunks of 256 items of the same live iterator, each checked before C hashes
    # it; an error from the iterator comes after the items it produced (as when
    # C drains the iterator itself: `s.update(gen)` keeps the items before it)
    while True:
        chunk: list[Any] = []
        try:
            chunk.extend(_islice(it, _TICK_CHUNK))
        except Exception:
            if chunk:
                yield hashed_ok(chunk, into)
            raise
        if not chunk:
            return
        check_chunk(_TICK_CHUNK)
        yield hashed_ok(chunk, into)
        if len(chunk) < _TICK_CHUNK:
            return


def make_guards(
    budget: Budget,
    *,
    print_fn: Callable[..., None],
) -> dict[str, Any]:
    """The hook functions for one run, keyed by the names the compiled code uses."""
    tick = budget.make_tick()
    trio = sys.modules.get("trio")
    if not _STOP_TYPES or (trio is not None and trio.Cancelled not in _STOP_TYPES[0]):
        _STOP_TYPES[:] = [_stop_types()]  # trio's Cancelled once trio is imported
    stop_types = _STOP_TYPES[0]

    def check() -> None:
        # test_guards_bare_except_cannot_swallow_limit: a bare `except:` (or
        # `except BaseException` if it were reachable) re-raises limits, aborts
        # and cancellations at the top of the handler.
        exc = sys.exception()
        if budget.stop is not None:
            raise budget.stop
        if isinstance(exc, stop_types):
            raise exc
        if isinstance(exc, BaseExceptionGroup):
            # `except* BaseException:` sees a cancellation wrapped in a group
            stop = group_member(exc, stop_types)
            if stop is not None:
                raise stop

    def stopped(exc: Any) -> bool:
        # the run's stop (a limit, an abort) or the host's cancellation, never the script's
        if budget.stop is not None or isinstance(exc, stop_types):
            return True
        return isinstance(exc, BaseExceptionGroup) and group_member(exc, stop_types) is not None

    def managed(cm: Any) -> Any:
        # `with cm:` (findings19 N05): a script __exit__ never sees the run's stop
        return cm if not _script_made(type(cm)) else _ScriptManaged(cm, stopped, False)

    def amanaged(cm: Any) -> Any:
        return cm if not _script_made(type(cm)) else _ScriptManaged(cm, stopped, True)

    def charge(obj: Any) -> Any:
        # Iteration that happens in C (for loops, comprehensions, sum/sorted/…)
        # is charged to the step budget up front for sized containers; unknown
        # iterables tick per item. Blocks `sum(range(10**12))`-style C loops
        # (test_guards_iteration_charges_steps).
        if obj is TICK_STEPS:
            check_chunk(TICK_EVERY)  # a ticked host loop's piece: the full periodic check
            return obj
        kind = type(obj)
        if kind in _SIZED or kind in _SIZED_VIEWS:
            budget.spend(len(obj))
            return obj
        if kind in _LAZY_SAFE or kind in BOUNDED_LAZY:
            # script generators tick; builtin-container iterators read C-fast; the
            # script's map()/filter() read ticked inputs already
            return obj
        if kind in _HOST_LOOPS:
            # map/filter/zip/enumerate/reversed run a host callable (or a nested
            # iterator) per item: read in ticked pieces (findings7 F06)
            return ticked(obj, charge)
        return _ticking(iter(obj), tick)

    check_chunk = budget._check_chunk

    def getiter(obj: Any) -> Any:
        # `for` loops and comprehensions (they have no tick of their own).
        # Ranges: C-speed chunks of 256 with a check between chunks; small
        # containers: charged up front (the call checks the deadline); large
        # containers and every other iterable: one step per item, so the deadline
        # and abort flag are checked inside long loops and comprehensions
        # (test_guards_comprehension_ticks).
        kind = type(obj)
        if kind is range:
            if len(obj) <= _TICK_CHUNK:
                budget.spend(len(obj))
                return obj
            return _chain_from_iterable(_range_chunks(obj, check_chunk))
        if (kind in _SIZED or kind in _SIZED_VIEWS) and len(obj) <= _SMALL:
            budget.spend(len(obj))
            return obj
        return _chain_from_iterable(_chunks(iter(obj), check_chunk))

    def copy(value: Any, into: str | None = None, make: Any = _NOT_MADE) -> Any:
        # list(x), set(x), dict(x)…: a large copy is charged to the memory budget
        # first (memguard.charge_copy). Building a set or dict hashes every item in
        # one C call, quadratic when the items' hashes collide (a set() of 200k ints
        # n * (2**61 - 1) runs for minutes): a large list or tuple is fed to it in
        # chunks of 256, with the deadline and abort checked between chunks
        # (test_guards_hash_flood_constructor_is_stopped).
        # Every item hashed must also hash in bounded time (a tuple built from shared
        # references stands for 2**50 items): small inputs are checked whole, fed ones
        # chunk by chunk (hashed_ok; test_compare_calls_shared_reference_values_are_refused).
        if make is not _NOT_MADE:
            kind = type(value)
            if kind is list or kind is tuple:
                real = _real_of(id(make))
                if real is not None:  # the common case: a list or tuple copied in C
                    if len(value) > CHECK_FROM:
                        charge_copy(value, into)
                    return real(value)
        charge_copy(value, into)
        if into in _HASHING_COPIES:
            return _hashed_input(value, into, check_chunk)
        fed = growth_checked(value, into or "", budget.memory)  # list(gen): growth read
        if make is _NOT_MADE:
            return fed
        # list(x) / tuple(x) compile to _copy_(x, "list", list): the script's binding of
        # the name makes the value (its stand-in class: the real type, read as fed here)
        if type(fed) is GrowthFeed:
            real = _real_of(id(make))
            if real is not None:
                return real(fed)
        return make(fed)  # another binding, or an input the stand-in reads itself

    def hashed_star(value: Any) -> Any:
        # `{*x}`: a set display hashes every item of x in one C call
        # (test_hash_feed_large_input_is_charged_in_chunks[set-display-star])
        return _hashed_input(guarded_star(value), "set", check_chunk)

    # the run's hooks over the shared ones: one dict display, no per-item stores
    guards = {
        **_STATIC_GUARDS,
        "_getiter_": getiter,
        "_copy_": copy,
        "_hstar_": hashed_star,
        "_tick_": tick,
        "_tk_": budget.first_tick(),  # the tick statement's hook (see Budget)
        "_check_": check,
        "_with_": managed,
        "_awith_": amanaged,
        "_mcheck_": lambda cls, names, positional: class_pattern_check(
            budget, cls, names, positional
        ),
        "_print_": guarded_print(print_fn, budget.limits.max_output_chars, budget.trip),
        "__charge__": charge,  # a helper the curated builtins use
        STOP_NAME: budget.trip,  # found by errors.refuse_size through the globals
        METER_NAME: budget.memory,  # found by memguard.charge_bytes through the globals
        BUDGET_NAME: budget,  # found by the re stand-in (regexguard) through the globals
    }
    if budget.hooks is None:
        budget.hooks = guards  # until the engine binds the script's own globals
    return guards


_STATIC_GUARDS: dict[str, Any] = {
    "_getattr_": _guarded_getattr,
    "_getitem_": _guarded_getitem,
    "_write_": _guarded_write,
    "_pwrite_": guarded_private_write,
    # `case int(n):` compiles to the real type under a name a script cannot rebind
    **{hidden: getattr(builtins, name) for name, hidden in MATCH_SELF_TYPES.items()},
    "_apply_": _guarded_apply,
    "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
    "_unpack_sequence_": guarded_unpack_sequence,
    "_mul_": guarded_mul,
    "_add_": guarded_add,
    "_iadd_": guarded_iadd,
    "_star_": guarded_star,
    "_dstar_": charge_copy,  # `{**d}`: the copy charged first (findings14 C03)
    "_pow_": guarded_pow,
    "_matmul_": guarded_matmul,
    "_lshift_": guarded_lshift,
    "_mod_": guarded_mod,
    "_floordiv_": guarded_floordiv,
    "_inplace_": guarded_inplace,
    "_aug_item_": _guarded_aug_item,
    "_aug_attr_": _guarded_aug_attr,
    "_fmtv_": _guarded_fmtv,
    "_slice_": slice,
    "_yf_": delegate,  # `yield from x` (guards.generators)
    # the inline fast paths of the compiled code (compile.policy.ScriptPolicy._inline_*)
    "_type_": type,
    "_int_": int,
    "_float_": float,
    "_imin_": -(1 << 31),
    "_imax_": 1 << 31,
    "_numfast_": frozenset({int, float}),
    "_pctfast_": frozenset({int, float, str, bool}),  # `'%d' % i` inline (compile policy)
    "_pctnum_": frozenset({int, float, bool}),  # `'%d/%d' % (a, b)` inline: numbers only
    "_plain_": _PLAIN,
    "_fastrecv_": _FAST_RECEIVERS,
    "_checkv_": check_value,
    "_str_": str,
    # the shared-reference bounds of comparisons and hashing (dagguard; compiled sites)
    "_scalar_": dagguard.SCALARS,
    "_haystack_": dagguard.HAYSTACKS,
    "_and_": guarded_set_operator(operator.and_),
    "_or_": guarded_set_operator(operator.or_),
    "_xor_": guarded_set_operator(operator.xor),
    "_sub_": guarded_set_operator(operator.sub),
    "_pos_": guarded_pos,  # `+c`, `-c` of a Counter: host-Python loops (findings15 E05)
    "_neg_": guarded_neg,
    "_cmpok_": dagguard.compare_ok,
    "_inok_": dagguard.contains_ok,
    "_in_": dagguard.searched,
    "_hkey_": dagguard.hash_ok,
    "_skey_": _subscript_key,
    "_cval_": dagguard.operand_ok,
    "__metaclass__": _script_metaclass,
    "__name__": "__script__",
    "__hasattr__": _guarded_hasattr,  # a helper the curated builtins use
}
