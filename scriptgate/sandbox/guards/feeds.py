"""Iteration and chunked feeds: hashing and comparing C calls fed a large input in pieces.

Owns :class:`CheckedFeed`, :func:`needs_feed`/:func:`fed` (``set(x)``, ``dict(x)``,
``s.update(x)`` … of a large or unsized input go through the budget in chunks),
the checking wrappers of the hashing/comparing container methods and
:func:`hash_bounded`/:func:`hashed_ok`. Below :mod:`.attributes` (which hands these out);
it must not import the attribute guard, the engine or anything above ``guards/``.
"""

from __future__ import annotations

import collections
import functools
import itertools
import operator
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scriptgate.sandbox.guards import comparisons as dagguard
from scriptgate.sandbox.guards.constants import (
    COMPARING_NAMES as _COMPARING_NAMES,
)
from scriptgate.sandbox.guards.constants import (
    FILENAME,
    SCRIPT_CLASS_MARK,
)
from scriptgate.sandbox.guards.constants import (
    HASHING_METHODS as _HASHING_METHODS,
)
from scriptgate.sandbox.guards.constants import SIZED_VIEWS as _SIZED_VIEWS
from scriptgate.sandbox.guards.constants import TICK_CHUNK as _TICK_CHUNK
from scriptgate.sandbox.guards.lengths import base_len
from scriptgate.sandbox.guards.memory import charge_copy
from scriptgate.sandbox.guards.namespace import OpaqueNamespace
from scriptgate.sandbox.guards.ticking import (
    LARGE_INPUT,
    check_budget,
    counter_work,
    ticked,
    ticks_itself,
)

_chain_from_iterable = itertools.chain.from_iterable


class CheckedFeed(itertools.chain[Any]):
    """The chunked, checked feed ``_copy_`` makes of a large input (iterated in C).

    Only the guards make these (a script cannot name or build one), so a feed
    handed on — ``set(x)`` compiles to ``set(_copy_(x, "set"))`` and the ``set``
    a script sees checks its argument too — is not fed and checked twice.
    """

    __slots__ = ()


_HASHING_COPIES = frozenset({"set", "frozenset", "dict", "counter"})
"""What ``_copy_`` feeds and checks: builtins (and ``"counter"``: ``Counter(x)``,
``c.update(x)``) that hash every item of their argument (``"dict"``: the key of every
pair, or a mapping's keys)."""

# ----------------------------------------------------------------------------- hash feeding
#
# Building or updating a set or dict hashes every item of the input in one C
# call; when the items' hashes collide (ints n * (2**61 - 1) all hash to 0) the
# call is quadratic: 60,000 items run for minutes with no budget check. Every
# entry point that hashes a whole input (set()/frozenset()/dict() through
# `_copy_`, `{*x}` through `_hstar_`, the set/dict/Counter methods below through
# the attribute guard, the collections constructors through the stand-in
# module) feeds a large or unsized input in chunks of _TICK_CHUNK items with a
# budget check between chunks, so the deadline and an abort stop it. Every input
# (small ones whole, fed ones per chunk) is also checked before C hashes it:
# what is hashed of the items (`hashed_ok`: the items, or each pair's key for a
# dict) must hash in bounded time, all the chunk's items together — a tuple
# built from shared references, or a chunk repeating one large tuple, is refused
# with a size limit (see "comparing and hashing calls").

_FEED_FROM = _TICK_CHUNK
"""Inputs longer than this are fed in chunks: a single chunk's worst case is small."""
_NO_FEED = frozenset({set, frozenset, dict, str, bytes, bytearray})
"""Inputs passed through whole: sets and dicts reuse their stored hashes (their own
building was fed in chunks), strings and bytes have few distinct items."""
_FEED_SIZED = frozenset({range, collections.deque, *_SIZED_VIEWS})


def needs_feed(value: Any, into: str) -> bool:
    """Whether hashing ``value`` whole into a ``into`` (``"set"``/``"dict"``…) needs the chunked feed.

    Lists and tuples of up to :data:`_FEED_FROM` items (and sets, dicts, strings)
    pay one type check and a ``len``; iterators and generators are always fed
    (``yield from xs`` or ``map(f, xs)`` drain a list in C).
    """
    kind = type(value)
    if kind is list or kind is tuple:
        return len(value) > _FEED_FROM
    if kind in _NO_FEED:
        return False
    if kind in _FEED_SIZED:
        return len(value) > _FEED_FROM
    if isinstance(value, (dict, set, frozenset, str, bytes, OpaqueNamespace)):
        return False
    if into == "dict" and hasattr(value, "keys"):
        return False  # the mapping protocol: dict() reads keys() and items, not pairs
    if isinstance(value, (list, tuple)):
        return base_len(value) > _FEED_FROM  # namedtuples and other subclasses (base length)
    # iterators, generators, script iterables; not None or numbers (`Counter(None)` is
    # valid, `set(5)` keeps its own error)
    return hasattr(kind, "__iter__") or hasattr(kind, "__getitem__")


def _hashing_target(obj: Any, name: str) -> str | None:
    """``"set"``/``"dict"`` when ``obj.name`` is a host method that hashes its argument."""
    if isinstance(obj, (set, frozenset)):
        return "set"
    if isinstance(obj, dict):
        return "dict"
    if isinstance(obj, type) and issubclass(obj, dict):
        return "dict"  # dict.fromkeys(x), Counter.update(c, x)
    return None


def fed(value: Any, into: str) -> Any:
    """``value``, or the running script's chunked feed of it when hashing it whole needs one.

    For host code a script calls (the collections stand-ins): the feed is the
    run's ``_copy_`` (found through the innermost script frame's globals). Either
    way what ``into`` hashes of the items is checked first (:func:`hashed_ok`):
    ``"set"`` (and ``"counter"``, ``fromkeys``) the items, ``"dict"`` each pair's key.
    """
    kind = type(value)
    if (kind is list or kind is tuple) and len(value) <= _FEED_FROM:
        return hashed_ok(value, into)  # the common case: checked here, no run needed
    if kind in _NO_FEED or kind is CheckedFeed:
        return value
    copy = _run_copy()
    if copy is not None:
        return copy(value, into)  # fed in chunks and checked (or checked whole)
    return hashed_whole(value, into) if not needs_feed(value, into) else value


def _run_copy() -> Callable[[Any, str], Any] | None:
    """The ``_copy_`` hook of the innermost script frame's run (None: no script on the stack)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            hook = frame.f_globals.get("_copy_")
            return hook if callable(hook) else None
        frame = frame.f_back
    return None


def _hashing_method(method: Callable[..., Any], into: str, name: str) -> Callable[..., Any]:
    """``method`` whose hashed positional arguments go through the run's ``_copy_``.

    A set method hashes every positional argument (``s.update(a, b)``); a dict's
    (``update``, ``fromkeys``, ``Counter.subtract``…) only the first.
    ``_copy_`` charges a large input to the memory budget and feeds it in chunks
    with a budget check between them (see :func:`needs_feed`), after checking
    that what is hashed of its items hashes in bounded time (:func:`hashed_ok`);
    a script's own override (a plain function of a script class) is returned unchanged.
    """
    if isinstance(method, types.MethodType) and getattr(
        method.__func__, "__module__", None
    ) not in ("collections", "builtins"):
        return method  # a script class's own method: it ticks by itself
    if into == "set":
        return _METHOD(_FED_SET_CALLS[name], method)
    owner = getattr(method, "__self__", None)
    if name != "fromkeys" and (
        isinstance(owner, collections.Counter)
        or (isinstance(owner, type) and issubclass(owner, collections.Counter))
    ):
        return _METHOD(_FED_COUNTER_CALLS[name], method)  # c.update(xs) hashes the items
    return _METHOD(_FED_DICT_CALLS[name], method)


_NEW_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference"})
"""Set methods that build a new set (about as large as the receiver and the arguments)."""


def _fed_set_call(method: Callable[..., Any], *args: Any) -> Any:
    # every positional argument is hashed: s.union(a, b), s.update(a); the new table is
    # charged first (findings14 C03: 30 copies of a 2 M-item set ended `ok` at 2 GB)
    for arg in args:
        charge_copy(arg, "set")
    if getattr(method, "__name__", None) in _NEW_SET_METHODS:
        charge_copy(getattr(method, "__self__", None), "set")
    for arg in args:
        if type(arg) not in _NO_FEED:
            return method(*[fed(arg, "set") for arg in args])
    return method(*args)  # sets, dicts, strings: stored hashes or scalars


def _fed_dict_call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # the first positional argument's pairs (or a mapping's keys) are hashed: d.update(pairs, **kw)
    if args:
        charge_copy(args[0], "dict")  # dict.fromkeys(s): a table of s (findings14 C03)
    if args and type(args[0]) not in _NO_FEED:
        return method(fed(args[0], "dict"), *args[1:], **kwargs)
    return method(*args, **kwargs)


def _fed_keys_call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # the first positional argument's items are hashed: d.fromkeys(keys, value)
    if args:
        charge_copy(args[0], "dict")  # the new table of the keys (findings14 C03)
    if args and type(args[0]) not in _NO_FEED:
        return method(fed(args[0], "set"), *args[1:], **kwargs)
    return method(*args, **kwargs)


def _fed_counter_call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # Counter's update/subtract hash the items of an iterable (a mapping's keys were hashed)
    if args and isinstance(args[0], dict):
        # ... and loop over a mapping's items in host Python, which a small receiver's
        # attribute read did not check (findings15 E05: Counter().subtract(big) x 100)
        counter_work(getattr(method, "__self__", None), args[0])
    if args and type(args[0]) not in _NO_FEED:
        return method(fed(args[0], "counter"), *args[1:], **kwargs)
    return method(*args, **kwargs)


def _fed_unbound_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # a class's plain function: Counter.update(counter, xs), the input comes second
    if len(args) > 1 and isinstance(args[1], dict):
        counter_work(*args[:2])  # a mapping's items: a host-Python loop (findings15 E05)
    if len(args) > 1 and type(args[1]) not in _NO_FEED:
        return function(args[0], fed(args[1], "counter"), *args[2:], **kwargs)
    return function(*args, **kwargs)


def _named(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A copy of ``function`` called ``name`` (the wrapper of ``s.update`` is named ``update``)."""
    assert isinstance(function, types.FunctionType)
    copy = types.FunctionType(function.__code__, function.__globals__, name, function.__defaults__)
    copy.__qualname__ = name
    return copy


_HASHED_RECEIVERS: dict[type, str] = {set: "set", frozenset: "set", dict: "dict"}
_METHOD = types.MethodType
"""The wrappers are bound methods of the feeding calls (made in C: cheaper than a closure)."""
_FED_SET_CALLS = {name: _named(_fed_set_call, name) for name in _HASHING_METHODS}
_FED_DICT_CALLS = {
    name: _named(_fed_keys_call if name == "fromkeys" else _fed_dict_call, name)
    for name in _HASHING_METHODS
}
_FED_COUNTER_CALLS = {name: _named(_fed_counter_call, name) for name in _HASHING_METHODS}
_FED_UNBOUND_CALLS = {name: _named(_fed_unbound_call, name) for name in _HASHING_METHODS}


def charged(guards: dict[str, Any], iterable: Iterable[Any]) -> Any:
    """Run ``iterable`` through the run's charging wrapper (used by curated builtins)."""
    return guards["__charge__"](iterable)


# ----------------------------------------------------------------------------- comparing and hashing calls
#
# Comparing two lists or hashing a tuple is one C call whose work is the value's
# size expanded as a tree: a value built from shared references stands for 2**50
# items in a few kilobytes, and the call never returns (dagguard). The compiled
# operators (`==`, `in`, displays, subscripts) are bounded by the policy; the C
# calls a script reaches through builtins, methods and stand-in modules are
# bounded here and in builtins/modules, each checking with dagguard, before the
# real call, exactly what that call compares or hashes:
#
# - methods of builtin containers, handed out by the attribute guard as wrappers
#   around the real bound method (`_RECEIVER_CALLS` for the exact types, whose
#   `o.name` reads the policy leaves to the guard because the names are in
#   `_SLOW_NAMES`; `_checked_call` for subclasses, deques, Counter, OrderedDict,
#   namedtuples and dict views): `lst.index(x)`, `count`, `remove` compare `x`
#   with each item (dagguard.contains_ok), `d.get(k)`, `setdefault`, `pop`,
#   `s.add(x)`, `discard`, `remove`, `od.move_to_end(k)` hash their first argument
#   (dagguard.hash_ok), `lst.sort()` compares the items or the keys
#   (dagguard.items_ok, :func:`checked_sort`), `Counter.most_common` sorts the
#   counts, a view's `isdisjoint(x)` hashes (and, for items, compares) x's items.
#   A scalar first argument costs one inline type test before the real call.
# - every hash feed (set()/frozenset()/dict(), `{*x}`, the set/dict/Counter
#   methods that hash a whole input, the collections constructors): what is hashed
#   of the items, checked together per chunk of 256 (:func:`hashed_ok`), so a
#   chunk repeating one large tuple is refused as well as one amplified tuple.

_SCALARS = dagguard.SCALARS
_TUPLE_OR_SCALAR = _SCALARS | {tuple}
_KEYS_VIEW: type[Any] = type({}.keys())
_ITEMS_VIEW: type[Any] = type({}.items())
_first = operator.itemgetter(0)
_PAIR_TYPES = frozenset({tuple, list})
_STORED = (set, frozenset, dict)
"""Containers whose items were hashed when they were stored (hashing them again is bounded)."""


def hash_bounded(key: Any) -> Any:
    """``key``, once hashing it and comparing it with a stored key of the same hash are bounded.

    :func:`dagguard.hash_ok` bounds the hash (only tuples hash their items). A
    lookup whose hash matches a stored key also compares the two with ``==``,
    which recurses into frozensets too: two frozensets built level by level from
    each other (``F = frozenset({(F0, G0)})``, ``G = frozenset({(G0, F0)})``) are
    equal with equal hashes, cheap to hash and exponential to compare. So a key
    that is not a tuple or frozenset of scalars is also measured as a comparison
    operand.
    """
    dagguard.hash_ok(key)
    kind = type(key)
    if (kind is not tuple and kind is not frozenset) or not _SCALARS.issuperset(map(type, key)):
        dagguard.operand_ok(key)  # (a tuple or frozenset of scalars compares in its length)
    return key


def _elements_ok(items: list[Any] | tuple[Any, ...]) -> None:
    """Refuse (a size limit) unless hashing every item of ``items`` is bounded, all together.

    Only tuples hash their items (a frozenset hashes the hashes it stored, lists
    and dicts are unhashable) and only tuples and frozensets compare theirs when
    a stored key has the same hash (:func:`hash_bounded`), so items with neither
    pass after one C scan of their types; short tuples of small scalars (``(row, col)``
    keys) pass after a second.
    """
    kinds = set(map(type, items))
    if kinds <= _SCALARS:
        return
    if kinds <= _TUPLE_OR_SCALAR:
        tuples = [item for item in items if type(item) is tuple] if kinds & _SCALARS else items
        if max(map(len, tuples), default=0) <= dagguard.SMALL:
            inner = list(_chain_from_iterable(tuples))
            if _SCALARS.issuperset(map(type, inner)) and dagguard.scalars_ok(inner):
                # short tuples of scalars: their long strings or big ints, compared once
                # per pair with equal hashes, are weighed (and refused when shared by many
                # tuples: `set(d1.items()) & set(d2.items())` of equal values was 600,000
                # memcmps of a megabyte, findings14 D04, 17 s)
                return
    elif not any(issubclass(kind, (tuple, frozenset)) for kind in kinds):
        return
    hash_bounded(tuple(items))  # measured as one tuple: shared items count once per path


def _converted_pairs(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    """``items`` with each pair dict() would turn into a sequence itself turned into a tuple.

    ``dict(pairs)`` takes the key of a pair that is not a tuple or list by iterating
    it (a generator, a script iterable); the copy lets the key be checked first and
    gives dict() the same pair. Subclasses of tuple and list give their stored items
    (as dict() reads them); anything not iterable is left for dict()'s own error.
    """
    converted = list(items)
    for index, pair in enumerate(converted):
        kind = type(pair)
        if kind in _PAIR_TYPES or kind in _SCALARS or kind in _NO_FEED:
            continue
        if isinstance(pair, tuple):
            converted[index] = tuple.__getitem__(pair, slice(None))
        elif isinstance(pair, list):
            converted[index] = tuple(list.copy(pair))
        elif not isinstance(pair, _STORED):
            try:
                source = iter(pair)
            except TypeError:
                continue  # dict() raises its own error for it
            converted[index] = tuple(source)
    return converted


def hashed_ok(items: list[Any] | tuple[Any, ...], into: str) -> list[Any] | tuple[Any, ...]:
    """``items`` (or an equal list), once hashing what ``into`` hashes of them is bounded.

    ``"dict"``: the key of each pair (a pair that is neither a tuple nor a list is
    turned into a tuple first, see :func:`_converted_pairs`); otherwise (``"set"``,
    ``"frozenset"``, ``"counter"``) the items themselves. Refuses with a size limit.
    """
    if into != "dict":
        _elements_ok(items)
        return items
    kinds = set(map(type, items))
    if kinds <= _SCALARS:
        return items  # strings of two characters, or dict()'s own error
    pairs = items
    if not kinds <= _PAIR_TYPES:
        items = _converted_pairs(items)
        pairs = [pair for pair in items if type(pair) in _PAIR_TYPES]  # dicts, sets: stored
    _elements_ok(list(map(_first, filter(None, pairs))))
    return items


def hashed_whole(value: Any, into: str) -> Any:
    """A small or stored input hashed whole: ``value``, or a checked copy of its items.

    Sets and dicts (their items were hashed when stored), strings and
    non-iterables (the real call raises its own error) pass; a mapping given to
    a dict (the mapping protocol: its ``keys()`` are hashed) becomes checked
    pairs; other small inputs (deques, dict views, namedtuples) become a checked list.
    """
    kind = type(value)
    if kind in _NO_FEED or kind in _SCALARS or kind is _KEYS_VIEW or kind is OpaqueNamespace:
        return value
    script = getattr(kind, SCRIPT_CLASS_MARK, False)
    if isinstance(value, _STORED) and (not script or isinstance(value, (set, frozenset))):
        return value
    if isinstance(value, dict):  # a script's dict subclass: its own keys() or __iter__
        if into == "dict":
            return value if kind.__iter__ is dict.__iter__ else _checked_pairs(value)
        if into == "counter":
            return dict(_checked_pairs(value))
        return hashed_ok(list(value), into)
    if into == "dict" and hasattr(value, "keys"):
        return _checked_pairs(value)
    if not (hasattr(kind, "__iter__") or hasattr(kind, "__getitem__")):
        return value
    return hashed_ok(list(value), into)


def _checked_pairs(mapping: Any) -> Iterator[tuple[Any, Any]]:
    """The pairs dict() reads from a mapping (``keys()``, then an item per key), keys checked."""
    keys = list(mapping.keys())
    _elements_ok(keys)
    return ((key, mapping[key]) for key in keys)


_NO_ARG: Any = object()
"""The default of the wrappers' first parameter: the call had no argument at all."""


def _compared_call(method: Any, item: Any = _NO_ARG, /, *rest: Any, **kwargs: Any) -> Any:
    # lst.index(x), lst.count(x), lst.remove(x), t.index(x), dq.count(x), r.index(x): x
    # against each item
    receiver = method.__self__
    if base_len(receiver, 0) >= LARGE_INPUT:
        check_budget()  # a loop of scans of a long list (findings14 A16)
    # scalars too: a long string or big int is compared with every item, a memcmp each; a
    # long sequence (or a range and a needle that is not an int) is searched in pieces,
    # the budget checked between two (findings15 E02/E03)
    if (
        item is not _NO_ARG
        and not dagguard.contains_ok(item, receiver)
        and not kwargs
        and len(rest) <= (2 if method.__name__ == "index" and type(receiver) is not range else 0)
    ):
        return dagguard.pieced(receiver, item, method.__name__, *rest)
    if rest or kwargs:
        return method(*rest, **kwargs) if item is _NO_ARG else method(item, *rest, **kwargs)
    return method() if item is _NO_ARG else method(item)  # the common case: one argument


def _hashed_call(method: Any, key: Any = _NO_ARG, /, *rest: Any, **kwargs: Any) -> Any:
    # d.get(k), d.setdefault(k), d.pop(k), s.add(x), s.discard(x), od.move_to_end(k): hash x
    if type(key) not in _SCALARS and key is not _NO_ARG:
        hash_bounded(key)
    if rest or kwargs:
        return method(*rest, **kwargs) if key is _NO_ARG else method(key, *rest, **kwargs)
    return method() if key is _NO_ARG else method(key)  # the common case: one argument


_SORT_KEYWORDS = frozenset({"key", "reverse"})


class _KeyStopped(Exception):
    """A sort's key function raised StopIteration (which ``map`` takes for its end)."""


def checked_sort(items: list[Any], sort: Callable[..., None], options: dict[str, Any]) -> None:
    """``sort(**options)`` (``items.sort`` itself), once its comparisons are bounded.

    Without a key the items are checked (:func:`dagguard.items_ok`). With a key the
    real sort runs with a key that computes the script's key of each item in
    order, once, inside the sort (so the list looks empty to it and a change to
    it is reported, as in Python) — in C for every item but the last: ``next`` on
    ``map(key, items)`` through a ``tee`` that keeps the keys — and the last call
    checks all the keys before the sort compares any of them. Results, stability,
    ``reverse`` and exceptions are the real sort's; a key that raises
    StopIteration before the last item (``map`` ends there silently) is called
    once more for that item to raise it again.
    """
    key = options.get("key")
    count = base_len(items)  # a list subclass's __len__ never runs
    if count < 2:
        sort(**options)
        return
    if key is None:
        dagguard.items_ok(items)
        if dagguard.costly_compares(items):
            # each comparison is slow host Python: the budget is checked between two
            sort(**{**options, "key": dagguard.BudgetKey})
            return
        sort(**options)
        return
    snapshot = list.copy(items)  # the same items, readable while the sort empties the list
    # a host key runs once per item inside the sort's C loop: read in ticked pieces (F06);
    # the script's own function ticks at every call
    source: Any = itertools.islice(snapshot, count - 1)
    if not ticks_itself(key):
        source = ticked(source)
    computed, kept = itertools.tee(map(key, source))

    def last() -> Iterator[Any]:
        keys = list(kept)
        if len(keys) < count - 1:
            raise _KeyStopped(len(keys))  # map() ended early: that item's key raised StopIteration
        try:
            value = key(snapshot[-1])
        except StopIteration as stop:
            raise _KeyStopped(stop) from None
        keys.append(value)
        dagguard.items_ok(keys)  # after the last key, before the first comparison
        yield value

    try:
        sort(**{**options, "key": functools.partial(next, itertools.chain(computed, last()))})
    except _KeyStopped as stopped:
        reason = stopped.args[0]
        if isinstance(reason, StopIteration):
            raise reason from None
        key(snapshot[reason])  # raises the StopIteration again, as the sort would have
        raise StopIteration from None


def _sort_call(method: Any, *args: Any, **kwargs: Any) -> Any:
    # lst.sort(key=…, reverse=…)
    if args or not kwargs.keys() <= _SORT_KEYWORDS:
        return method(*args, **kwargs)  # list.sort's own TypeError, before any comparison
    if list.__len__(method.__self__) >= LARGE_INPUT:
        check_budget()  # a loop of sorts of a long list (findings14 A16)
    checked_sort(method.__self__, method, kwargs)
    return None


def _most_common_call(method: Any, *args: Any, **kwargs: Any) -> Any:
    # Counter.most_common() sorts the counts (heapq.nlargest with n): a script may store lists
    dagguard.items_ok(list(method.__self__.values()))
    return method(*args, **kwargs)


def _isdisjoint_call(method: Any, *args: Any) -> Any:
    # d.keys().isdisjoint(x) hashes x's items; d.items().isdisjoint(x) hashes each pair's key
    # and compares its value: fed like a set's input (hashed_ok measures the pairs whole)
    if len(args) != 1 or isinstance(args[0], (*_STORED, _KEYS_VIEW)):
        return method(*args)
    return method(fed(args[0], "set"))


_NO_CALL: Any = object()
_RECEIVER_CALLS: dict[str, dict[type, Callable[..., Any] | None]] = {
    "index": {list: _compared_call, tuple: _compared_call, range: _compared_call},
    "count": {list: _compared_call, tuple: _compared_call, range: _compared_call},
    "remove": {list: _compared_call, set: _hashed_call},
    "sort": {list: _sort_call},
    "get": {dict: _hashed_call},
    "setdefault": {dict: _hashed_call},
    "pop": {dict: _hashed_call, list: None, set: None},
    "add": {set: _hashed_call},
    "discard": {set: _hashed_call},
}
"""For ``o.name`` on an exact builtin type: the wrapper of the bound method (``None``:
the bound method itself, nothing compared or hashed: ``lst.pop()``)."""
_RECEIVER_CALLS = {
    name: {kind: None if call is None else _named(call, name) for kind, call in calls.items()}
    for name, calls in _RECEIVER_CALLS.items()
}
_CHECKED_CALL_NAMES = _COMPARING_NAMES | {"move_to_end", "most_common", "isdisjoint"}
_COMPARED_BY: tuple[type, ...] = (list, tuple, collections.deque)
_HASHED_BY: dict[str, type | tuple[type, ...]] = {
    "get": dict, "setdefault": dict, "pop": dict, "move_to_end": dict,
    "add": (set, frozenset), "discard": (set, frozenset), "remove": (set, frozenset),
}  # fmt: skip
_BUILTIN_METHOD = types.BuiltinMethodType
_WRAPPERS = {
    name: _named(call, name)
    for call, names in (
        (_compared_call, ("index", "count", "remove")),
        (_hashed_call, tuple(_HASHED_BY)),
        (_sort_call, ("sort",)),
        (_most_common_call, ("most_common",)),
        (_isdisjoint_call, ("isdisjoint",)),
    )
    for name in names
    if name != "remove" or call is _compared_call
}
_HASHED_REMOVE = _named(_hashed_call, "remove")


def _checked_call(obj: Any, name: str, value: Any) -> Callable[..., Any] | None:
    """The checking wrapper for ``obj.name`` (``value``) off the fast path, or ``None``.

    Only the real methods are wrapped: a C method bound to ``obj`` itself (not a
    script's override, which is script code), or ``Counter.most_common``.
    """
    if type(value) is not _BUILTIN_METHOD or value.__self__ is not obj:
        if (
            name == "most_common"
            and isinstance(value, types.MethodType)
            and value.__func__ is collections.Counter.most_common
        ):
            return _WRAPPERS[name]
        return None
    if name == "isdisjoint":
        return _WRAPPERS[name] if isinstance(obj, (_KEYS_VIEW, _ITEMS_VIEW)) else None
    if name == "sort":
        return _WRAPPERS[name] if isinstance(obj, list) else None
    if name == "index" or name == "count":
        return _WRAPPERS[name] if isinstance(obj, _COMPARED_BY) else None
    if name == "remove":
        if isinstance(obj, _COMPARED_BY):
            return _WRAPPERS[name]
        return _HASHED_REMOVE if isinstance(obj, set) else None
    hashed_by = _HASHED_BY.get(name)
    if hashed_by is not None and isinstance(obj, hashed_by):
        return _WRAPPERS[name]  # get, setdefault, pop, move_to_end (dicts); add, discard (sets)
    return None
