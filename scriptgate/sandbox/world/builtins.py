"""The curated builtins of a script (listed in the README from :data:`SAFE_BUILTIN_NAMES`).

Part of ``world/``: owns the builtins' names and wrappers; uses ``guards/`` and must not
import the engine, isolation or the model-facing text.

Built per run by :func:`make_builtins`. Builtins that iterate in C (``sum``,
``sorted``, ``list``…) run their argument through the run's charging wrapper, so
``sum(range(10**12))`` hits the step limit instead of hanging; ``set``,
``frozenset`` and ``dict`` used as values (``f = set``, ``map(frozenset, rows)``)
feed and check what they hash like the compiled calls do; ``sorted``, ``min``
and ``max`` check the items (or, with ``key=``, the keys: computed once per item,
in order, as Python does) with :func:`dagguard.items_ok` before comparing them,
so values built from shared references end with a size limit instead of a C
call that never returns (issue 5; ``min``/``max`` therefore read the whole
iterable and compute every key before the first comparison, where Python stops
at a comparison that raises); ``pow``, ``format``
and ``range`` are size-checked; ``str``, ``repr`` and ``ascii`` refuse renderings
longer than ``sizeguard.MAX_RENDER``; ``sum`` of lists or tuples is linear; ``getattr``/``hasattr`` are the attribute guard;
``iter(callable, sentinel)`` is a :class:`CallIterator` whose host callable is charged every
few calls (``iter(int, 1)`` is an endless C iterator: a ``for`` loop or ``list()`` over it
ends at the run's limits).
``super``, ``property``, ``staticmethod``, ``classmethod`` and ``object`` are the real ones
(what they make stays behind the allow-list of ``guards/boundary``). ``vars(obj)`` is the
attributes of an instance of the script's own class (a checked snapshot that writes through:
``guards/script_classes``). ``eval`` and ``exec`` compile their string through the script's
own policy (added per run by the engine from ``world.evaluate``). Never available:
``vars()``, ``dir``, ``globals``, ``locals``, ``open``, ``compile``, ``breakpoint``, ``input``, ``help``,
``memoryview``, ``id``. ``hash`` is keyed per process (:func:`hash_`: the real hash of a
str would reveal the host's hash secret); ``setattr``/``delattr`` write as ``obj.x = v``
does: the script's own objects only.

The standard exception classes are names (``except ImportError:`` works); a limit
breach still cannot be caught, not even by ``except BaseException:``: the compiler
puts ``_check_()`` at the top of every handler, which re-raises the run's stop.
``bytes(n)``/``bytearray(n)`` are size-checked and charge what they iterate.
"""

from __future__ import annotations

import builtins as _b
import hashlib
import itertools
import os
import types
import weakref
from collections.abc import Callable
from typing import Any, NoReturn

from scriptgate.sandbox.guards.attributes import (
    MAX_RANGE,
    MAX_SEQUENCE,
    CheckedFeed,
    check_value,
    checked_sort,
    fed,
    guarded_pow,
    guarded_private_write,
    guarded_write,
    safe_format,
)
from scriptgate.sandbox.guards.boundary import exception_base, holdable_class, register_opaque
from scriptgate.sandbox.guards.comparisons import SCALARS as _SCALARS
from scriptgate.sandbox.guards.comparisons import (
    BudgetKey,
    compare_ok,
    costly_compares,
    hash_ok,
    items_ok,
    light_scalars,
)
from scriptgate.sandbox.guards.constants import TICK_CHUNK, is_private_name
from scriptgate.sandbox.guards.edges import SCRIPT_TYPES
from scriptgate.sandbox.guards.errors import ToolDenied, ToolError, refuse_size
from scriptgate.sandbox.guards.int_work import guarded_divmod, guarded_round
from scriptgate.sandbox.guards.lengths import exact_int
from scriptgate.sandbox.guards.memory import charge_copy, growth_checked
from scriptgate.sandbox.guards.script_classes import InstanceDict, script_function, script_vars
from scriptgate.sandbox.guards.sizes import SafeStr, safe_ascii, safe_repr, sequence_sum
from scriptgate.sandbox.guards.text_codecs import encoded
from scriptgate.sandbox.guards.ticking import (
    SUM_PIECE,
    TICK_EVERY,
    TICK_STEPS,
    TickedFilter,
    TickedMap,
    pieced_sum,
    read_ticked,
    ticked,
    ticks_itself,
)
from scriptgate.sandbox.world.naming import name_closures, name_functions
from scriptgate.sandbox.world.sequence_types import growing_type

__all__ = [
    "CHARGING_NAMES",
    "HOLDABLE",
    "SAFE_BUILTIN_NAMES",
    "SAFE_EXCEPTION_NAMES",
    "make_builtins",
]

SAFE_EXCEPTION_NAMES: tuple[str, ...] = (
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "BaseExceptionGroup", "BufferError", "ConnectionError", "EOFError", "Exception",
    "ExceptionGroup", "FileExistsError", "FileNotFoundError", "FloatingPointError",
    "ImportError", "IndexError", "IsADirectoryError", "KeyError", "LookupError",
    "ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplementedError",
    "OSError", "IOError", "EnvironmentError", "OverflowError", "PermissionError",
    "RecursionError", "RuntimeError", "StopAsyncIteration", "StopIteration", "TimeoutError",
    "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeError", "ValueError", "ZeroDivisionError", "Warning", "UserWarning",
    "DeprecationWarning", "RuntimeWarning", "FutureWarning", "PendingDeprecationWarning",
    "SyntaxWarning", "ResourceWarning", "ImportWarning", "UnicodeWarning", "BytesWarning",
    "EncodingWarning",  # warnings.warn's categories
    "SyntaxError",  # eval()/exec() of a string raise it (world.evaluate)
    "ToolError", "ToolDenied",
)  # fmt: skip
"""Exception classes a script can name, raise and catch."""

SAFE_BUILTIN_NAMES: tuple[str, ...] = (
    "abs", "all", "any", "ascii", "bin", "bool", "callable", "chr", "complex", "dict",
    "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr",
    "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min",
    "next", "oct", "ord", "pow", "print", "range", "repr", "reversed", "round", "set",
    "sorted", "str", "sum", "tuple", "type", "zip", "Ellipsis", "NotImplemented", "bytes",
    "bytearray", "slice", "super", "property", "staticmethod", "classmethod", "object",
    "setattr", "delattr", "hash", "vars",
    "eval", "exec",  # made per run by world.evaluate (the engine adds them)
    *SAFE_EXCEPTION_NAMES,
)  # fmt: skip
"""Every builtin name a script can use (``print`` is captured output)."""

_PASS_THROUGH = (
    "abs", "bin", "bool", "callable", "chr", "complex", "float", "hex",
    "int", "len", "next", "oct", "ord",
    "Ellipsis", "NotImplemented",
)  # fmt: skip

MAX_CLASS_INFO = 1_000
"""Most classes (nested tuples counted as expanded) an ``isinstance``/``issubclass`` tuple holds."""


def _check_class_info(info: Any, what: str) -> None:
    """Refuse a class tuple whose nested tuples expand past :data:`MAX_CLASS_INFO` entries.

    C walks a nested tuple recursively, every shared sub-tuple again: ``t = (t, t)`` forty
    times made ``isinstance(1, t)`` 2**40 class checks in one call (findings14 D06). The
    walk here reads the tuples' own storage (a subclass's ``__iter__`` is not asked).
    """
    if not isinstance(info, tuple):
        return
    stack = [info]
    seen = 0
    while stack:
        for entry in tuple.__iter__(stack.pop()):
            seen += 1
            if seen > MAX_CLASS_INFO:
                refuse_size(
                    f"{what}(): a class tuple of more than {MAX_CLASS_INFO} classes (nested "
                    "tuples counted in full) is refused in the sandbox: list the classes in one "
                    "flat tuple"
                )
            if isinstance(entry, tuple):
                stack.append(entry)


_STAND_IN_TYPES: weakref.WeakKeyDictionary[Callable[..., Any], type] = weakref.WeakKeyDictionary()
"""The builtins written as functions (``slice``, a run's ``range``) and the real types an
``isinstance``/``issubclass`` test means by them (findings18 M24: ``isinstance(i, slice)``
in a ``__getitem__`` was "arg 2 must be a type")."""


def _as_types(info: Any) -> Any:
    kind = type(info)
    if kind is types.FunctionType:
        return _STAND_IN_TYPES.get(info, info)
    if kind is tuple and any(type(entry) is types.FunctionType for entry in info):
        return tuple(_as_types(entry) for entry in info)
    return info


def _isinstance(obj: Any, class_or_tuple: Any, /) -> bool:
    if type(class_or_tuple) is not type:
        _check_class_info(class_or_tuple, "isinstance")
        class_or_tuple = _as_types(class_or_tuple)
    return _b.isinstance(obj, class_or_tuple)


def _issubclass(cls: Any, class_or_tuple: Any, /) -> bool:
    cls = _as_types(cls) if type(cls) is types.FunctionType else cls  # issubclass(range, …)
    if type(class_or_tuple) is not type:
        _check_class_info(class_or_tuple, "issubclass")
        class_or_tuple = _as_types(class_or_tuple)
    return _b.issubclass(cls, class_or_tuple)


_isinstance.__name__ = _isinstance.__qualname__ = "isinstance"
_issubclass.__name__ = _issubclass.__qualname__ = "issubclass"


def make_builtins(
    charge: Callable[[Any], Any],
    getattr_: Callable[..., Any],
    hasattr_: Callable[[Any, str], bool],
    import_: Callable[..., Any],
    *,
    max_range: int = MAX_RANGE,
    charging: bool = True,
) -> dict[str, Any]:
    """The ``__builtins__`` dict of one run.

    A new dict every call: a copy of a template made once per ``max_range`` (and hooks),
    which no run ever gets, with the run's own functions written in. ``charging=False``
    (the engine's choice for a one-shot script that names none of
    :data:`CHARGING_NAMES` and cannot evaluate a string) leaves out the builtins that
    charge the run's budget: nothing the script has can reach them by name.

    ``set``, ``frozenset`` and ``dict`` are thin subclasses whose calls check what
    they hash (:func:`_hashing_type`: ``isinstance``, subclassing and the values they
    make are the real types); ``list`` and ``tuple`` likewise read an iterator with a
    checked growth (``world/sequence_types``);
    every lazy iterable a script can build either ticks or is bounded (``range``
    is capped at ``max_range``, normally the step budget).
    """

    key = (max_range, getattr_, hasattr_)
    template = _TEMPLATES.get(key)
    if template is None:
        if len(_TEMPLATES) >= 8:
            _TEMPLATES.clear()
        template = _TEMPLATES[key] = _template(max_range, getattr_, hasattr_)
    table = template.copy()  # never the template itself: a run's dict is its own
    table["__import__"] = import_
    if not charging:
        return table

    def one_or_many(values: tuple[Any, ...]) -> tuple[Any, ...]:
        return (charge(values[0]),) if len(values) == 1 else values

    def sum_(iterable: Any, /, start: Any = 0) -> Any:
        if type(start) is list or type(start) is tuple:
            # sizeguard.sequence_sum: linear, charged, size-checked (not CPython's quadratic loop)
            return sequence_sum(charge(iterable), start, charge, MAX_SEQUENCE)
        if (type(iterable) is list or type(iterable) is tuple) and _b.len(iterable) <= SUM_PIECE:
            return _b.sum(charge(iterable), start)  # the common case: one short C call
        # big ints (or a shared one repeated) add in ticked pieces (findings10 F01)
        return pieced_sum(charge(iterable), start, charge)

    def sorted_(iterable: Any, /, *, key: Any = None, reverse: bool = False) -> list[Any]:
        # a new list sorted in place, as Python's sorted() does; the comparisons
        # (of the items, or of the keys) are bounded first (guards.checked_sort)
        items = _b.list(growth_checked(charge(charge_copy(iterable, "list")), "list"))
        if key is None and light_scalars(items):
            items.sort(reverse=reverse)  # the common case: small scalars compare in bounded time
        else:
            checked_sort(items, items.sort, {"key": key, "reverse": reverse})
        return items

    def min_(*values: Any, **kwargs: Any) -> Any:
        return _selected(_b.min, one_or_many(values), kwargs, charge)

    def max_(*values: Any, **kwargs: Any) -> Any:
        return _selected(_b.max, one_or_many(values), kwargs, charge)

    def any_(iterable: Any, /) -> bool:
        # C reads a range or an iterator whole: in ticked pieces (findings15 E01)
        return _b.any(read_ticked(charge(iterable), charge))

    def all_(iterable: Any, /) -> bool:
        return _b.all(read_ticked(charge(iterable), charge))

    def enumerate_(iterable: Any, start: int = 0) -> Any:
        return _b.enumerate(charge(iterable), start)

    def zip_(*iterables: Any, strict: bool = False) -> Any:
        return _b.zip(*(charge(it) for it in iterables), strict=strict)

    def map_(func: Any, *iterables: Any) -> Any:
        # each item calls func: inputs read in ticked pieces, sized or not (findings7 F06)
        if ticks_itself(func):  # the script's own function ticks at every call
            return TickedMap(func, *(charge(it) for it in iterables))
        return TickedMap(func, *(ticked(charge(it), charge) for it in iterables))

    def filter_(func: Any, iterable: Any) -> Any:
        if ticks_itself(func):
            return TickedFilter(func, charge(iterable))
        return TickedFilter(func, ticked(charge(iterable), charge))

    def reversed_(seq: Any) -> Any:
        if not _own_reversed(seq):
            charge(seq)  # C reads a container's items in reverse, as fast as it can
        return _b.reversed(seq)  # a script's __reversed__ is script code: it ticks

    def iter_(obj: Any, sentinel: Any = _NO_SENTINEL, /) -> Any:
        if sentinel is _NO_SENTINEL:
            return _b.iter(charge(obj))
        if not _b.callable(obj):
            raise TypeError("iter(v, w): v must be callable")
        return CallIterator(obj, sentinel, charge)

    table.update(
        {
            "sum": sum_,
            "sorted": sorted_,
            "min": min_,
            "max": max_,
            "any": any_,
            "all": all_,
            "enumerate": enumerate_,
            "zip": zip_,
            "map": map_,
            "filter": filter_,
            "reversed": reversed_,
            "iter": iter_,
        }
    )
    return table


CHARGING_NAMES = frozenset(
    {"sum", "sorted", "min", "max", "any", "all", "enumerate", "zip", "map", "filter"}
    | {"reversed", "iter"}
)
"""The builtins made per run over the run's charging hook (see :func:`make_builtins`)."""
name_closures(make_builtins, CHARGING_NAMES)  # born as `sum`, not `make_builtins.<locals>.sum_`

_TEMPLATES: dict[tuple[Any, ...], dict[str, Any]] = {}
"""The run-independent part of a run's builtins, per ``(max_range, getattr, hasattr)``."""


def _template(
    max_range: int, getattr_: Callable[..., Any], hasattr_: Callable[[Any, str], bool]
) -> dict[str, Any]:
    """What every run's builtins share for ``max_range``: copied, never handed out."""

    def range_(*args: int) -> range:
        # test_guards_range_cap: range(10**18) cannot feed C loops such as list.extend.
        return checked_range(args, max_range)

    _STAND_IN_TYPES[range_] = range
    table = dict(_STATIC)
    table.update({"range": range_, "getattr": getattr_, "hasattr": hasattr_})
    name_functions(table)  # `hasattr()` in messages, not `_guarded_hasattr()`
    return table


_NO_SENTINEL: Any = object()


class CallIterator:
    """``iter(callable, sentinel)``: calls ``callable()`` until it returns ``sentinel``.

    CPython's ``callable_iterator`` calls its callable from C with no deadline check; here a
    host callable (``int``, ``functools.partial(next, it)``, a bound method) charges the run
    every :data:`TICK_EVERY` calls and what it returns is checked as any host result; the
    script's own function ticks at its entry itself. The sentinel is compared with ``==``
    after :func:`compare_ok` (values built from shared references compare in bounded time).
    A ``StopIteration`` raised by the callable ends the iteration, as in CPython.
    """

    __slots__ = ("_call", "_charge", "_count", "_host", "_sentinel")

    def __init__(self, call: Any, sentinel: Any, charge: Callable[[Any], Any]) -> None:
        self._call: Any = call
        self._sentinel = sentinel
        self._charge = charge
        self._host = not ticks_itself(call)
        self._count = 0

    def __iter__(self) -> CallIterator:
        return self

    def __next__(self) -> Any:
        call = self._call
        if call is None:
            raise StopIteration
        if self._host:
            self._count += 1
            if self._count >= TICK_EVERY:
                self._count = 0
                self._charge(TICK_STEPS)
        try:
            value = call()
        except StopIteration:
            self._call = self._sentinel = None
            raise
        if self._host:
            value = check_value(value)
        sentinel = self._sentinel
        if compare_ok(value, sentinel) and value == sentinel:
            self._call = self._sentinel = None
            raise StopIteration
        return value

    def __repr__(self) -> str:
        return f"<callable_iterator object at {_b.hex(_b.id(self))}>"

    def __reduce__(self) -> NoReturn:
        raise TypeError("cannot pickle 'callable_iterator' object")


CallIterator.__name__ = CallIterator.__qualname__ = "callable_iterator"
CallIterator.__module__ = "builtins"
register_opaque([CallIterator])  # iterable, no attribute readable


def _own_reversed(seq: Any) -> bool:
    """Whether ``reversed(seq)`` calls a ``__reversed__`` the script defined."""
    for klass in type(seq).__mro__:
        method = klass.__dict__.get("__reversed__")
        if method is not None:
            return script_function(method)
    return False


_SELECT_KEYWORDS = frozenset({"key", "default"})
_SEQUENCES = (list, tuple)
SELECT_PIECE = 4096
"""Items ``min``/``max`` compare in one C call before the run's budget is checked: items
whose comparison is host Python (``Fraction.__lt__``) made ``min`` of 3 M of them one 2 s
C call past a 1 s deadline."""


def _pieced_select(
    real: Callable[..., Any], items: Any, charge: Callable[[Any], Any], key: Any = None
) -> Any:
    """``real(items, key=key)`` (``min``/``max``) in pieces, the budget checked between two.

    The best so far leads each next piece: C compares each item with it in the same
    order as one call over all the items would, so the result (the first extreme item),
    the comparisons made and any error raised are the same.
    """
    size = _b.len(items)
    kwargs = {} if key is None else {"key": key}
    best = real(items[:SELECT_PIECE], **kwargs)
    for start in range(SELECT_PIECE, size, SELECT_PIECE):
        charge(TICK_STEPS)
        best = real(itertools.chain((best,), items[start : start + SELECT_PIECE]), **kwargs)
    return best


def _selected(
    real: Callable[..., Any],
    values: tuple[Any, ...],
    kwargs: dict[str, Any],
    charge: Callable[[Any], Any],
) -> Any:
    """``min``/``max`` (``real``) of ``values``, once the comparisons it makes are bounded.

    The items (or, with ``key=``, the keys: computed once per item, in order,
    interleaved with reading the iterable as in Python) are checked together
    (:func:`dagguard.items_ok`) before the first comparison; then the real
    function picks the same item with the same comparisons. Wrong arguments get
    the real function's own error, raised before anything is compared.
    """
    if not kwargs and values:  # the common case: no key, no default
        items = values[0] if _b.len(values) == 1 else values
        if type(items) not in _SEQUENCES:
            items = _b.list(growth_checked(charge_copy(items, "list"), "list"))  # F08
        if light_scalars(items):
            return real(items)
        items_ok(items)
        if costly_compares(items):
            return real(items, key=BudgetKey)  # slow comparisons: checked one by one (L08)
        return _pieced_select(real, items, charge)
    if not values or not kwargs.keys() <= _SELECT_KEYWORDS:
        return real(*values, **kwargs)
    if len(values) > 1:
        if "default" in kwargs:
            return real(*values, **kwargs)  # TypeError: a default with several arguments
        source: Any = values
    else:
        source = values[0]
    key = kwargs.get("key")
    if key is None:
        items = (
            source
            if type(source) in _SEQUENCES
            else _b.list(growth_checked(charge_copy(source, "list"), "list"))  # F08
        )
        if _b.len(items) > 1:
            items_ok(items)
            if costly_compares(items):
                return real(items, key=BudgetKey)
            return _pieced_select(real, items, charge)
        return real(items, **kwargs)
    if type(source) in _SEQUENCES:
        items = source
        # (map() would end silently on StopIteration); a host key per item: ticked (F06)
        keys = [key(item) for item in (items if ticks_itself(key) else ticked(items, charge))]
    else:
        items = []
        keys = []
        for item in ticked(charge_copy(source, "list"), charge):  # read, key computed, next…
            items.append(item)
            keys.append(key(item))
    if not items:
        return real(items, **kwargs)  # the default, or the real error for an empty input
    if _b.len(keys) > 1:
        items_ok(keys)
    if costly_compares(keys):
        return items[real(range(_b.len(keys)), key=lambda index: BudgetKey(keys[index]))]
    return items[_pieced_select(real, range(_b.len(keys)), charge, keys.__getitem__)]


def _hashing_type(real: type, into: str) -> type:
    """``real`` (``set``, ``frozenset``, ``dict``) whose calls check what they hash.

    ``set(x)`` written as a call compiles to ``set(_copy_(x, "set"))`` (fed and
    checked by the guards), but the name can be used as a value — ``f = set``,
    ``map(frozenset, rows)``, ``defaultdict(set)`` — and then it is this class:
    calling it feeds the argument through :func:`guards.fed` (chunked, and what is
    hashed of it checked, dagguard) and returns a real instance. ``isinstance``
    and ``issubclass`` are the real type's checks (C, through the metaclass), a
    script class may subclass it (its construction feeds the same way), and
    ``type()`` of every value stays the real type.
    """
    real_new: Callable[..., Any] = real.__new__
    real_init: Callable[..., None] = real.__init__  # type: ignore[misc]
    hashes_in_new = real is frozenset
    pairs = into == "dict"
    make_instance = type.__call__

    def feed(args: tuple[Any, ...]) -> tuple[Any, ...]:
        return (fed(args[0], into), *args[1:]) if args else args

    def __call__(cls: type, *args: Any, **kwargs: Any) -> Any:
        # the metaclass's call: one Python call for `set(x)`, a real instance back
        if cls is not stand_in:
            return make_instance(cls, *args, **kwargs)  # a script's subclass: see __new__
        if not args:
            return real(**kwargs)
        first = args[0]
        kind = type(first)
        if kind is CheckedFeed or kind in _STORED_OR_SCALAR:
            return real(*args, **kwargs)  # fed by the compiled call already, or stored
        if (
            (kind is list or kind is tuple)
            and not pairs
            and _b.len(first) <= TICK_CHUNK
            and _SCALARS.issuperset(map(type, first))
        ):
            # the common case: a few scalars hash in bounded time; more may collide
            # (60,000 ints that all hash to 0 were 112 s in one C call: findings18 B11)
            return real(*args, **kwargs)
        return real(*feed(args), **kwargs)

    meta = type(
        f"{real.__name__}_type",
        (type,),
        {
            "__call__": __call__,
            "__instancecheck__": staticmethod(real.__instancecheck__),
            "__subclasscheck__": staticmethod(real.__subclasscheck__),
        },
    )

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        return real_new(cls, *feed(args), **kwargs) if hashes_in_new else real_new(cls)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if not hashes_in_new:
            real_init(self, *feed(args), **kwargs)

    stand_in: type = meta(
        real.__name__,
        (real,),
        {
            "__new__": __new__,
            "__init__": __init__,
            "__slots__": (),
            "__module__": "builtins",
            "__qualname__": real.__name__,
            "__doc__": real.__doc__,
        },
    )
    return stand_in


def _slice(*args: Any) -> slice:
    """``slice(start, stop, step)`` of ints and ``None`` only.

    A chain of slices nested in slices (``s = slice(s)`` 100,000 times) crashes
    CPython when it is freed (restrictedpython-notes §7.1), so the parts must be
    plain. ``slice`` is a function here; ``isinstance(x, slice)`` tests the real type.
    """
    for part in args:
        if part is not None and type(part) is not int and type(part) is not bool:
            raise TypeError("slice() parts must be ints or None in the sandbox")
    return _b.slice(*args)


def _sized_bytes(real: type, charge_items: Callable[[Any], Any] | None = None) -> type:
    """``real`` (``bytes``, ``bytearray``) whose calls refuse a huge size.

    ``bytes(10**12)`` allocates in one C call: an int argument above
    ``MAX_SEQUENCE`` is refused before it; an iterable argument is copied through
    :func:`charge_copy` (its length charged). ``isinstance`` and ``type()`` of every
    value stay the real type; class methods (``bytes.fromhex``) return real values.
    """
    make_instance = type.__call__

    def __call__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is not stand_in:
            return make_instance(cls, *args, **kwargs)
        if args:
            first = exact_int(args[0])  # an int subclass is its int value to C (N01)
            if type(first) is int:
                args = (first, *args[1:])
            if type(first) is int and first > MAX_SEQUENCE:
                refuse_size(f"{real.__name__}({first}) refused: larger than the sandbox allows")
            if isinstance(first, str) and (len(args) > 1 or kwargs):
                # bytes(s, encoding): an allowed codec, sized (findings14 A01/A02)
                return real(encoded(first, *args[1:], **kwargs))
            if isinstance(first, (bytes, bytearray)):
                charge_copy(first)  # bytes(bytearray) copies (findings14 C05)
            elif not isinstance(first, (int, str)):
                args = (charge_copy(first, "list"), *args[1:])
        return real(*args, **kwargs)

    meta = type(
        f"{real.__name__}_type",
        (type,),
        {
            "__call__": __call__,
            "__instancecheck__": staticmethod(real.__instancecheck__),
            "__subclasscheck__": staticmethod(real.__subclasscheck__),
            # no holdable mark here (F06): a mark on the metaclass made the metaclass itself
            # holdable, and its 3-argument call built unchecked classes. The stand-in class
            # is listed in HOLDABLE instead (its class methods bytes.fromhex… readable)
        },
    )
    stand_in: type = meta(
        real.__name__,
        (real,),
        {"__module__": "builtins", "__qualname__": real.__name__, "__doc__": real.__doc__},
    )
    return stand_in


_STORED_OR_SCALAR = frozenset({set, frozenset, dict, str, bytes, bytearray})
"""Arguments the stand-in types pass whole: stored hashes, or characters and bytes."""
_HASHING_TYPES = {
    "set": _hashing_type(set, "set"),
    "frozenset": _hashing_type(frozenset, "frozenset"),
    "dict": _hashing_type(dict, "dict"),
}
_SIZED_BYTES = {"bytes": _sized_bytes(bytes), "bytearray": _sized_bytes(bytearray)}
_GROWING_TYPES = {"list": growing_type(list), "tuple": growing_type(tuple)}
"""``list``/``tuple`` as values (``f = list``) read iterators with a checked growth."""


SUBCLASSABLE: tuple[type, ...] = (
    SafeStr, ToolError, ToolDenied, *_HASHING_TYPES.values(), *_SIZED_BYTES.values(),
    *_GROWING_TYPES.values(),
)  # fmt: skip
"""The script's builtin types and tool errors: ``class Row(dict)`` is ordinary code."""
HOLDABLE: tuple[type, ...] = (*SUBCLASSABLE, type(None))
"""The classes the builtins hand to scripts (collected into the allow-list); ``type(None)``
is a class with no public attribute whose call returns ``None`` (not subclassable)."""
HOLDABLE += (InstanceDict,)  # vars(obj) / obj.__dict__: held, never subclassed


MAX_RANGE_BITS = 63
"""Largest magnitude (in bits) of a ``range``'s start, stop and step."""


def checked_range(args: tuple[Any, ...], max_range: int = MAX_RANGE) -> range:
    """``range(*args)`` no longer than ``max_range`` items, its bounds within ±2**63.

    The compiler trusts the items of ``for i in range(...)`` as small numbers (``i * j``,
    ``x // i`` compile to the plain operator) and comparisons take a range for a
    fixed-size scalar; ``range(b, b + 1)`` with a 4 M-bit ``b`` made both false
    (findings11 F01-F03, F09, F10): one quadratic division of seconds, 10 s of sorting.
    """
    result = _b.range(*args)
    if (
        _b.max(_bit_length(result.start), _bit_length(result.stop), _bit_length(result.step))
        > MAX_RANGE_BITS
    ):
        refuse_size("a range with bounds beyond ±2**63 is refused in the sandbox")
    if _b.len(result) > max_range:
        refuse_size(
            f"range of {_b.len(result)} items refused: longer than the sandbox allows ({max_range})"
        )
    return result


_bit_length = int.bit_length


def range_of(*args: Any) -> range:
    """``type(r)(...)`` / ``r.__class__(...)`` of a range: :func:`checked_range` too."""
    return checked_range(args)


_TYPE_OF: dict[type, Any] = {
    str: SafeStr,
    set: _HASHING_TYPES["set"],
    frozenset: _HASHING_TYPES["frozenset"],
    dict: _HASHING_TYPES["dict"],
    InstanceDict: _HASHING_TYPES["dict"],  # type(vars(obj)) is dict
    bytes: _SIZED_BYTES["bytes"],
    bytearray: _SIZED_BYTES["bytearray"],
    list: _GROWING_TYPES["list"],
    tuple: _GROWING_TYPES["tuple"],
    range: range_of,  # the real class would make a range of any bounds and length
}
"""``type(x)`` of these gives the script's own name for the type (``type({}) is dict``,
``type(b'') is bytes``)."""
SCRIPT_TYPES.update(_TYPE_OF)  # x.__class__ too (guards/edges.py)


def type_of(obj: Any, /, *rest: Any) -> type:
    """``type(x)``: the type a value has, when the script may hold it (test_boundary_type_*).

    The one-argument form only (classes are made with ``class``); ``type(x) is dict`` holds
    for the script's ``dict``, ``str``, ``set`` and ``frozenset``; a type the script may not
    hold (a generator's, a host class) is refused as any other value would be.
    """
    if rest:
        raise TypeError("type() takes one argument in the sandbox: define classes with `class`")
    kind = _b.type(obj)
    kind = SCRIPT_TYPES.get(kind, kind)  # _TYPE_OF and the stand-in modules' (deque)
    if isinstance(kind, _b.type) and issubclass(kind, _b.type):
        # the type of a class is a metaclass, whose call builds classes (F06): never handed out
        raise TypeError(
            f"the class {kind.__name__!r} is not available in the sandbox: type() of a class"
            " is a metaclass (define classes with `class`)"
        )
    if isinstance(obj, BaseException) and not holdable_class(kind):
        return exception_base(kind)  # calendar.IllegalMonthError → ValueError (findings17 H01)
    checked: type = check_value(kind)
    return checked


_METACLASS_REFUSED = (
    "metaclasses are not available in the sandbox (class M(type) builds classes): use a class "
    "decorator, __init_subclass__ or a plain base class instead"
)


class TypeBuiltin:
    """``type`` as a script sees it: ``type(x)``, ``isinstance(c, type)``, ``issubclass(C, type)``.

    Not a class (the real ``type`` is a metaclass, whose call builds classes: F06): a script
    cannot subclass it — ``class M(type)`` is refused with what to write instead — or read
    anything of it; calling it is :func:`type_of`; ``isinstance``/``issubclass`` are the real
    type's checks, so ``isinstance(int, type)`` holds as in Python.
    """

    __slots__ = ()
    __call__ = staticmethod(type_of)  # one Python call for `type(x)`, as before

    def __instancecheck__(self, obj: Any) -> bool:
        return obj is self or isinstance(obj, _b.type)  # isinstance(type, type), as in Python

    def __subclasscheck__(self, cls: Any) -> bool:
        return cls is self or issubclass(cls, _b.type)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> NoReturn:
        raise TypeError(_METACLASS_REFUSED)

    def __repr__(self) -> str:
        return "<class 'type'>"


TypeBuiltin.__name__ = TypeBuiltin.__qualname__ = "type"
type_of.__name__ = type_of.__qualname__ = (
    "type"  # `type() takes…` in argument errors  # messages: '"mro" of type is not…'
)
register_opaque([TypeBuiltin])  # holdable (`f = type`, `map(type, xs)`), no attribute readable

_HASH_KEY = os.urandom(16)
"""This process's key for :func:`hash_` (so a script's hashes say nothing of the host's)."""


def hash_(value: Any, /) -> int:
    """``hash(x)``: equal values hash equal, as ``__hash__`` needs; the number is keyed.

    Hashing ``x`` is bounded first (a tuple of shared references refused). CPython's own
    hash of a ``str`` or ``bytes`` is keyed by the host's secret (``PYTHONHASHSEED``),
    which a script must not learn (it would let it build colliding keys for the host's
    dicts), so the real hash is mixed with this process's :data:`_HASH_KEY` through
    keyed BLAKE2b: the same value gives the same number for the life of the process
    (a session's objects keep their hashes), and ``hash(1)`` is not ``1``.
    """
    real = _b.hash(hash_ok(value))
    digest = hashlib.blake2b(
        real.to_bytes(8, "little", signed=True), key=_HASH_KEY, digest_size=8
    ).digest()
    mixed = int.from_bytes(digest, "little", signed=True)
    return -2 if mixed == -1 else mixed  # CPython never hashes to -1


def _make_setattr(write: Callable[[Any], Any]) -> tuple[Callable[..., None], Callable[..., None]]:
    def target(obj: Any, name: Any) -> Any:
        if type(name) is not str:
            raise TypeError("attribute name must be a str")
        if is_private_name(name):
            return guarded_private_write(obj)  # `_x` on the script's own objects only
        if name.startswith("_"):
            raise AttributeError(
                f'"{name}" is an invalid attribute name because it starts with "_"'
            )
        return write(obj)

    def setattr_(obj: Any, name: Any, value: Any, /) -> None:
        """``setattr(obj, name, value)``: as ``obj.name = value`` (the script's own objects)."""
        _b.setattr(target(obj, name), name, value)

    def delattr_(obj: Any, name: Any, /) -> None:
        """``delattr(obj, name)``: as ``del obj.name`` (the script's own objects)."""
        _b.delattr(target(obj, name), name)

    return setattr_, delattr_


_SETATTR = _make_setattr(guarded_write)


def _static() -> dict[str, Any]:
    table: dict[str, Any] = {name: getattr(_b, name) for name in _PASS_THROUGH}
    table["isinstance"] = _isinstance  # nested class tuples bounded (findings14 D06)
    table["issubclass"] = _issubclass
    table.update(_HASHING_TYPES)
    table["slice"] = _slice
    _STAND_IN_TYPES[_slice] = slice
    table.update(_SIZED_BYTES)
    table.update(_GROWING_TYPES)
    table.update(
        {
            "None": None,
            "True": True,
            "False": False,
            "pow": guarded_pow,
            "divmod": guarded_divmod,  # big int divisions are checked (guards.int_work)
            "round": guarded_round,
            "format": safe_format,
            "str": SafeStr,  # str(), repr(), ascii(): render-size checked (sizeguard)
            "repr": safe_repr,
            "ascii": safe_ascii,
            "__build_class__": _b.__build_class__,
            "type": TypeBuiltin(),
            "hash": hash_,
            "vars": script_vars,  # instances of the script's own classes (guards.script_classes)
            "setattr": _SETATTR[0],
            "delattr": _SETATTR[1],
            # classes as models write them (test_boundary_class_idioms): the real ones; the
            # descriptors they make are not holdable, so their fget/__func__ are unreachable
            "super": _b.super,
            "property": _b.property,
            "staticmethod": _b.staticmethod,
            "classmethod": _b.classmethod,
            "object": _b.object,
            "ToolError": ToolError,
            "ToolDenied": ToolDenied,
        }
    )
    for name in SAFE_EXCEPTION_NAMES:
        table.setdefault(name, getattr(_b, name, None))
    return table


_STATIC = _static()
