"""Stand-in modules: what ``import json`` (and friends) gives a script.

Part of ``world/``: owns the stand-in modules and ``import``; uses ``guards/`` (the ``re``
stand-in is :mod:`scriptgate.sandbox.guards.regex`) and must not import the engine,
isolation or the model-facing text.

A script never receives a real module object (``datetime.sys``, ``json.codecs``
and ``re.enum.bltns`` lead to the host, restrictedpython-notes §7.3). ``import X``
returns an immutable :class:`~scriptgate.sandbox.guards.attributes.OpaqueNamespace` that
exposes only the members listed in :data:`MODULE_NAMES`; ``from X import name``
is checked against the same list (``IMPORT_FROM`` bypasses the attribute guard).
Members that iterate in C are wrapped so the iteration is charged to the step
budget; ``random`` is a fresh ``random.Random`` per run (no shared state); the
infinite ``itertools`` iterators tick per item so a limit can stop them. ``re`` is
:mod:`scriptgate.sandbox.guards.regex`: the ``regex`` engine behind ``re``'s surface,
so a catastrophic pattern stops at the run's deadline instead of blocking the loop.

Members that compare or hash script values in C check them first (issue 5,
:mod:`scriptgate.sandbox.guards.comparisons`): ``functools.lru_cache``/``cache`` check the
arguments' hashing (:func:`guards.hash_bounded`) before the cached call,
``itertools.groupby`` each key it compares, the ``statistics`` functions that
sort (``median*``, ``quantiles``) their data and those that count (``mode``,
``multimode``) what they hash, and the ``collections`` constructors what they
hash (:func:`guards.fed`). The rest need nothing: ``cmp_to_key`` compares with
the script's own function; ``json.dumps(sort_keys=True)`` compares dict keys
(distinct, so the values are never reached) after the render guard bounded the
whole value; the other ``statistics`` functions add or compare with numbers;
``random.seed`` takes scalars only; namedtuples are tuples (their ``index``
and ``count`` are wrapped by the attribute guard); ``heapq``, ``bisect`` and
``operator`` are not exposed.
"""

from __future__ import annotations

import collections
import datetime
import functools
import itertools
import json
import math
import random
import re
import statistics
import string
import time
import typing
from collections.abc import Callable, Iterator
from typing import Any

from scriptgate.sandbox.guards.attributes import MAX_SEQUENCE, OpaqueNamespace, fed, hash_bounded
from scriptgate.sandbox.guards.boundary import HOLDABLE_MARK
from scriptgate.sandbox.guards.comparisons import SCALARS, items_ok, operand_ok
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.memory import charge_copy
from scriptgate.sandbox.guards.regex import Match as _Match
from scriptgate.sandbox.guards.regex import Pattern as _Pattern
from scriptgate.sandbox.guards.regex import make_re
from scriptgate.sandbox.guards.sizes import check_json

__all__ = ["HOLDABLE", "MODULE_NAMES", "make_import", "make_modules"]

MODULE_NAMES: dict[str, tuple[str, ...]] = {
    "json": ("dumps", "loads", "JSONDecodeError"),
    "math": (
        "pi", "e", "tau", "inf", "nan", "sqrt", "isqrt", "floor", "ceil", "trunc", "log",
        "log2", "log10", "log1p", "exp", "expm1", "pow", "sin", "cos", "tan", "asin", "acos",
        "atan", "atan2", "sinh", "cosh", "tanh", "hypot", "dist", "fabs", "fmod", "modf",
        "frexp", "ldexp", "copysign", "isclose", "isfinite", "isinf", "isnan", "gcd", "lcm",
        "degrees", "radians", "fsum", "prod", "factorial", "comb", "perm",
    ),
    "re": (
        "compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall",
        "finditer", "escape", "error", "IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE",
        "ASCII", "I", "M", "S", "X", "A",
    ),
    "datetime": ("datetime", "date", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR"),
    "time": ("time", "monotonic", "perf_counter"),
    "itertools": (
        "count", "cycle", "repeat", "chain", "islice", "accumulate", "groupby", "product",
        "permutations", "combinations", "combinations_with_replacement", "zip_longest",
        "starmap", "takewhile", "dropwhile", "compress", "pairwise", "filterfalse", "batched",
    ),
    "collections": ("Counter", "defaultdict", "OrderedDict", "deque", "namedtuple"),
    "statistics": (
        "mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low",
        "median_high", "mode", "multimode", "quantiles", "stdev", "pstdev", "variance",
        "pvariance", "StatisticsError",
    ),
    "random": (
        "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
        "gauss", "seed",
    ),
    "string": (
        "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
        "octdigits", "punctuation", "whitespace", "printable",
    ),
    "functools": ("reduce", "lru_cache", "cache", "cmp_to_key"),
    "typing": (
        "Any", "Optional", "Union", "List", "Dict", "Tuple", "Set", "FrozenSet", "Iterable",
        "Iterator", "Callable", "Sequence", "Mapping", "Literal", "TypedDict",
    ),
}  # fmt: skip
"""Every importable stand-in module and the members it exposes (for the README)."""

_MAX_FACTORIAL = 5_000
_IMPORTABLE = frozenset({*MODULE_NAMES, "__future__"})


def _json_dumps(
    obj: Any,
    *,
    indent: int | str | None = None,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    default: Callable[[Any], Any] | None = None,
) -> str:
    if isinstance(indent, int) and indent > 64:
        refuse_size("indent above 64 refused in the sandbox")
    default = check_json(  # sizeguard: the text's size is checked before rendering
        obj, indent=indent, separators=separators, ensure_ascii=ensure_ascii, default=default
    )
    return json.dumps(
        obj,
        indent=indent,
        sort_keys=sort_keys,
        ensure_ascii=ensure_ascii,
        separators=separators,
        default=default,
    )


def _json_loads(text: str | bytes) -> Any:
    return json.loads(text)


def _capped(fn: Callable[..., Any], limit: int, name: str) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, int) and abs(arg) > limit:
                refuse_size(f"math.{name} argument above {limit} refused in the sandbox")
        return fn(*args)

    wrapper.__name__ = name
    return wrapper


def make_modules(
    charge: Callable[[Any], Any], tick: Callable[[], None]
) -> Callable[[str], OpaqueNamespace | None]:
    """The stand-in modules of one run, built on first import (fresh per run: no shared state)."""

    def ticking(it: Iterator[Any]) -> Iterator[Any]:
        for item in it:
            tick()
            yield item

    def lazy(fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return ticking(fn(*args, **kwargs))

        wrapper.__name__ = fn.__name__
        return wrapper

    def lazy_over(fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def wrapper(*iterables: Any, **kwargs: Any) -> Iterator[Any]:
            return ticking(fn(*(charge(it) for it in iterables), **kwargs))

        wrapper.__name__ = fn.__name__
        return wrapper

    def lazy_first(fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def wrapper(iterable: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            return ticking(fn(charge(iterable), *args, **kwargs))

        wrapper.__name__ = fn.__name__
        return wrapper

    def lazy_second(fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def wrapper(func: Any, iterable: Any, *args: Any) -> Iterator[Any]:
            return ticking(fn(func, charge(iterable), *args))

        wrapper.__name__ = fn.__name__
        return wrapper

    def eager_first(fn: Callable[..., Any]) -> Callable[..., Any]:
        hashes = fn.__name__ in _COUNTING_STATISTICS
        sorts = fn.__name__ in _SORTING_STATISTICS

        def wrapper(data: Any, *args: Any, **kwargs: Any) -> Any:
            items = list(charge(charge_copy(data, "list")))
            if hashes:
                # mode()/multimode() count the items in a Counter: one hashing C call
                # (guards: hash feeding), fed in chunks like Counter(x), each chunk's
                # hashing bounded (guards.hashed_ok)
                return fn(fed(items, "counter"), *args, **kwargs)
            if sorts and len(items) > 1:
                items_ok(items)  # median()/quantiles() sort the data (dagguard)
            if fn.__name__ == "quantiles":
                # quantiles(data, n=10**7) built 10**7 cut points in one host call past the
                # deadline (test_boundary_statistics_quantiles_n_is_bounded)
                n = kwargs.get("n", args[0] if args else 4)
                if type(n) is int and n > _MAX_QUANTILES:
                    refuse_size(f"statistics.quantiles n above {_MAX_QUANTILES} refused")
            return fn(items, *args, **kwargs)

        wrapper.__name__ = fn.__name__
        return wrapper

    chain = lazy_over(itertools.chain)

    def from_iterable(iterables: Any) -> Iterator[Any]:
        return ticking(itertools.chain.from_iterable(charge(it) for it in charge(iterables)))

    chain.from_iterable = from_iterable  # type: ignore[attr-defined]

    def repeat(obj: Any, times: int | None = None) -> Iterator[Any]:
        return ticking(itertools.repeat(obj) if times is None else itertools.repeat(obj, times))

    def product(*iterables: Any, repeat: int = 1) -> Iterator[Any]:
        pools = [tuple(charge(it)) for it in iterables]
        size = 1
        for pool in pools:
            size *= max(len(pool), 1)
        if repeat > 64:
            refuse_size("itertools.product repeat above 64 refused in the sandbox")
        return ticking(itertools.product(*pools, repeat=repeat))

    rngs: list[random.Random] = []

    def rng() -> random.Random:
        if not rngs:
            rngs.append(random.Random())
        return rngs[0]

    def choices(
        population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1
    ) -> list[Any]:
        if k > MAX_SEQUENCE:
            refuse_size("random.choices k too large for the sandbox")
        return rng().choices(charge(population), weights, cum_weights=cum_weights, k=k)

    def sample(population: Any, k: int, *, counts: Any = None) -> list[Any]:
        return rng().sample(list(charge(population)), k, counts=counts)

    def reduce(function: Any, iterable: Any, *initial: Any) -> Any:
        # every item ticks (not one charge up front): a builtin function does C work per
        # item that can grow with the accumulated value (test_modules_reduce_ticks_per_item)
        return functools.reduce(function, ticking(iter(charge(iterable))), *initial)

    def compared(value: Any) -> Any:
        # a key groupby compares with the next one (==, in C): not amplified (dagguard)
        tick()
        return value if type(value) in SCALARS else operand_ok(value)

    def groupby(iterable: Any, key: Any = None) -> Iterator[Any]:
        # itertools.groupby compares each key with the previous one in C: every key
        # is checked as it is computed (the item itself without a key), and ticks
        if key is None:
            return ticking(itertools.groupby(map(compared, charge(iterable))))
        return ticking(itertools.groupby(charge(iterable), key=lambda item: compared(key(item))))

    builders: dict[str, Callable[[], dict[str, Any]]] = {
        "json": lambda: {
            "dumps": _json_dumps,
            "loads": _json_loads,
            "JSONDecodeError": json.JSONDecodeError,
        },
        "math": lambda: {
            **{name: getattr(math, name) for name in MODULE_NAMES["math"]},
            "fsum": lambda data: math.fsum(charge(data)),
            # products, lcm and gcd of many ints are one C call whose steps grow with the
            # result (math.lcm(*range(1, 200000)) ran 11 s unchecked): reduced pairwise,
            # every item ticking (test_modules_math_reductions_stop_at_the_deadline)
            "prod": lambda data, *, start=1: functools.reduce(
                _mul_checked, ticking(iter(charge(data))), start
            ),
            "lcm": lambda *integers: functools.reduce(_lcm_checked, ticking(iter(integers)), 1),
            "gcd": lambda *integers: functools.reduce(math.gcd, ticking(iter(integers)), 0),
            "factorial": _capped(math.factorial, _MAX_FACTORIAL, "factorial"),
            "comb": _capped(math.comb, _MAX_FACTORIAL, "comb"),
            "perm": _capped(math.perm, _MAX_FACTORIAL, "perm"),
            "pow": math.pow,
        },
        "re": make_re,  # regexguard: the regex engine, stopped at the deadline
        "datetime": lambda: {name: getattr(datetime, name) for name in MODULE_NAMES["datetime"]},
        "time": lambda: {
            "time": time.time,
            "monotonic": time.monotonic,
            "perf_counter": time.perf_counter,
        },
        "itertools": lambda: {
            "count": lazy(itertools.count),
            "cycle": lazy_first(itertools.cycle),
            "repeat": repeat,
            "chain": chain,
            "islice": lazy_first(itertools.islice),
            "accumulate": lazy_first(itertools.accumulate),
            "groupby": groupby,
            "product": product,
            "permutations": lazy_first(itertools.permutations),
            "combinations": lazy_first(itertools.combinations),
            "combinations_with_replacement": lazy_first(itertools.combinations_with_replacement),
            "zip_longest": lazy_over(itertools.zip_longest),
            "starmap": lazy_second(itertools.starmap),
            "takewhile": lazy_second(itertools.takewhile),
            "dropwhile": lazy_second(itertools.dropwhile),
            "compress": lazy_over(itertools.compress),
            "pairwise": lazy_first(itertools.pairwise),
            "filterfalse": lazy_second(itertools.filterfalse),
            "batched": lazy_first(_batched),
        },
        "collections": lambda: {
            "Counter": _FED_COUNTER,
            "defaultdict": _FED_DEFAULTDICT,
            "OrderedDict": _FED_ORDERED_DICT,
            "deque": collections.deque,
            "namedtuple": _namedtuple,
        },
        "statistics": lambda: {
            **{
                name: eager_first(getattr(statistics, name))
                for name in MODULE_NAMES["statistics"]
                if name != "StatisticsError"
            },
            "StatisticsError": statistics.StatisticsError,
        },
        "random": lambda: {
            "random": rng().random,
            "randint": rng().randint,
            "randrange": rng().randrange,
            "choice": rng().choice,
            "choices": choices,
            "shuffle": rng().shuffle,
            "sample": sample,
            "uniform": rng().uniform,
            "gauss": rng().gauss,
            "seed": rng().seed,
        },
        "string": lambda: {name: getattr(string, name) for name in MODULE_NAMES["string"]},
        "functools": lambda: {
            "reduce": reduce,
            "lru_cache": _lru_cache,
            "cache": _cache,
            "cmp_to_key": functools.cmp_to_key,
        },
        "typing": lambda: {name: getattr(typing, name) for name in MODULE_NAMES["typing"]},
        "__future__": lambda: {"annotations": None},
    }
    built: dict[str, OpaqueNamespace] = {}

    def get(name: str) -> OpaqueNamespace | None:
        module = built.get(name)
        if module is None:
            builder = builders.get(name)
            if builder is None:
                return None
            module = built[name] = OpaqueNamespace(name, builder())
        return module

    return get


def _lcm_checked(a: Any, b: Any) -> Any:
    from scriptgate.sandbox.guards.attributes import MAX_INT_BITS

    result = math.lcm(a, b)
    if result.bit_length() > MAX_INT_BITS:
        refuse_size("an int lcm would be too large for the sandbox")
    return result


def _mul_checked(a: Any, b: Any) -> Any:
    from scriptgate.sandbox.guards.attributes import guarded_mul

    return guarded_mul(a, b)


def _batched(iterable: Any, n: int) -> Iterator[tuple[Any, ...]]:
    if n < 1:
        raise ValueError("n must be at least one")
    it = iter(iterable)
    while batch := tuple(itertools.islice(it, n)):
        yield batch


def _namedtuple(typename: str, field_names: Any, *, defaults: Any = None) -> type:
    names = (
        field_names.replace(",", " ").split() if isinstance(field_names, str) else list(field_names)
    )
    for name in [typename, *names]:
        if not isinstance(name, str) or name.startswith("_"):
            raise ValueError(f"invalid namedtuple name {name!r} in the sandbox")
    made: type = collections.namedtuple(typename, names, defaults=defaults)  # type: ignore[misc]
    setattr(made, HOLDABLE_MARK, True)  # the run's own class: holdable, _asdict() readable
    return made


_COUNTING_STATISTICS = frozenset({"mode", "multimode"})
"""statistics functions that hash every item of their data (through a Counter)."""
_MAX_QUANTILES = 10_000
"""Most cut points ``statistics.quantiles`` may compute in one call."""
_SORTING_STATISTICS = frozenset({"median", "median_low", "median_high", "quantiles"})
"""statistics functions that sort their data (the others add, or compare items with 0)."""


def _lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
    """``functools.lru_cache`` whose cached function checks its arguments' hashing first.

    The cache hashes the tuple of arguments (and compares it with a stored key
    whose hash matches): a tuple argument built from shared references would
    never finish, so the arguments are checked together (dagguard) before the call.
    """
    if callable(maxsize) and isinstance(typed, bool):
        return _checked_cache(functools.lru_cache(maxsize, typed))  # @lru_cache without ()
    decorate = functools.lru_cache(maxsize, typed)  # its own TypeError for a bad maxsize

    def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
        return _checked_cache(decorate(function))

    return decorator


def _cache(function: Callable[..., Any]) -> Callable[..., Any]:
    """``functools.cache``: an unbounded :func:`_lru_cache`."""
    return _checked_cache(functools.lru_cache(maxsize=None)(function))


def _checked_cache(cached: Any) -> Callable[..., Any]:
    """A function calling ``cached`` (an lru_cache wrapper) once its key hashes in bounded time.

    A plain function (so it binds as a method, like the real wrapper) with the
    wrapper's ``cache_info``, ``cache_clear`` and ``cache_parameters``.
    """

    def cached_call(*args: Any, **kwargs: Any) -> Any:
        if not SCALARS.issuperset(map(type, args)) or (
            kwargs and not SCALARS.issuperset(map(type, kwargs.values()))
        ):
            hash_bounded((*args, *kwargs.values()))
        return cached(*args, **kwargs)

    cached_call.cache_info = cached.cache_info  # type: ignore[attr-defined]
    cached_call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    cached_call.cache_parameters = cached.cache_parameters  # type: ignore[attr-defined]
    cached_call.__name__ = getattr(cached, "__name__", "cached_call")
    cached_call.__qualname__ = cached_call.__name__
    return cached_call


class _FedMeta(type):
    """Metaclass of the collections stand-ins: ``isinstance``/``issubclass`` mean the real class."""

    def __instancecheck__(cls, obj: Any) -> bool:
        real = cls.__dict__.get("_real_")
        return isinstance(obj, real) if real is not None else type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        real = cls.__dict__.get("_real_")
        return issubclass(sub, real) if real is not None else type.__subclasscheck__(cls, sub)


def _fed_class(real: type, position: int, into: str = "dict") -> type:
    """``real`` whose constructor feeds its iterable argument in chunks (hash flooding).

    ``Counter(xs)``, ``OrderedDict(pairs)`` and ``defaultdict(f, pairs)`` hash a
    whole input in one C call (quadratic when the hashes collide); the argument
    at ``position`` goes through the run's chunked feed (:func:`guards.fed`), which
    also checks that what is hashed of it (``into``: ``"dict"`` a pair's key,
    ``"counter"`` an item) hashes in bounded time. Calling the stand-in returns a real instance; a script class may subclass
    it (its ``__init__`` feeds the same way).
    """

    def feed(args: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(args) > position:
            return (*args[:position], fed(args[position], into), *args[position + 1 :])
        return args

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls is stand_in:
            return real(*feed(args), **kwargs)
        return real.__new__(cls, *args, **kwargs)

    real_init: Callable[..., None] = real.__init__  # type: ignore[misc]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *feed(args), **kwargs)

    stand_in = _FedMeta(
        real.__name__,
        (real,),
        {
            "__new__": __new__,
            "__init__": __init__,
            "__slots__": (),
            "__module__": "collections",
            "__qualname__": real.__name__,
            "__doc__": real.__doc__,
            "_real_": real,
        },
    )
    return stand_in


_FED_COUNTER = _fed_class(collections.Counter, 0, "counter")  # hashes items, not pairs
_FED_ORDERED_DICT = _fed_class(collections.OrderedDict, 0)
_FED_DEFAULTDICT = _fed_class(collections.defaultdict, 1)


_ITERTOOLS = tuple(
    value
    for name, value in vars(itertools).items()
    if isinstance(value, type) and not name.startswith("_")
)

HOLDABLE: tuple[type, ...] = (
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.timezone,
    collections.deque,
    collections.Counter,
    collections.OrderedDict,
    collections.defaultdict,
    _FED_COUNTER,
    _FED_ORDERED_DICT,
    _FED_DEFAULTDICT,
    type({}.keys().__iter__()),
    type(collections.OrderedDict().keys()),
    type(collections.OrderedDict().values()),
    type(collections.OrderedDict().items()),
    type(iter(collections.OrderedDict())),
    type(iter(collections.OrderedDict().values())),
    type(iter(collections.OrderedDict().items())),
    type(functools.cmp_to_key(lambda a, b: 0)),
    functools._lru_cache_wrapper,  # fib.cache_info(), fib.cache_clear()
    type(functools.lru_cache(maxsize=None)(len).cache_info()),
    json.JSONDecodeError,
    statistics.StatisticsError,
    _Pattern,
    _Match,
    re.RegexFlag,
    *_ITERTOOLS,
)
"""The value types this module's members hand to scripts (collected into the allow-list)."""

OPAQUE_HOLDABLE: tuple[type, ...] = tuple(
    {
        type(typing.Optional),
        type(typing.Optional[int]),  # noqa: UP045
        type(typing.List),  # noqa: UP006
        type(typing.List[int]),  # noqa: UP006
        type(typing.Callable),
        type(typing.Callable[[int], int]),
        type(typing.Literal[1]),
        type(typing.Union[int, str]),  # noqa: UP007
        type(typing.Any),
        type(list[int]),
        type(int | str),
    }
)
"""Values a script may hold and pass (``typing`` aliases in annotations) but not look into:
their attributes forward to ``collections.abc`` (``typing.Mapping.register(list)``)."""


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
        if level != 0 or type(name) is not str:
            raise ImportError("relative imports are not available in the sandbox")
        module = modules(name) if name in _IMPORTABLE else None
        if module is None:
            available = ", ".join(sorted(n for n in MODULE_NAMES))
            raise ImportError(
                f"module {name!r} is not available in the sandbox (available: {available})"
            )
        allowed = MODULE_NAMES.get(name, ("annotations",))
        for item in fromlist or ():
            if item not in allowed:
                raise ImportError(
                    f"cannot import name {item!r} from {name!r} (the sandbox's {name} exposes: "
                    f"{', '.join(allowed)})"
                )
        return module

    return import_
