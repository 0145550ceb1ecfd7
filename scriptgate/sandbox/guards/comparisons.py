"""Bounds on single C calls that compare or hash values built from shared references.

Part of ``guards/`` (comparisons and hashing, once ``dagguard``): imports :mod:`.constants`,
:mod:`.errors`, :mod:`.regex`, :mod:`.ticking`; must not import the attribute guard or anything above
``guards/``.

Comparing two lists, or hashing a tuple, is one C call whose work is the size of
the value *expanded as a tree*: every path from the top to an item is visited
once. A value built from shared references has a tree far larger than its memory
— five levels of a list holding 1,000 references to the level below stand for
10**15 items in a few kilobytes, and ``t = (t, t)`` fifty times stands for 2**50 —
so ``a == b``, ``sorted([a, b])``, ``t in {1}`` or ``{t: 1}`` on such values is
a C call that never returns, with no loop, tick or allocation for a budget check
to see. Refusing the construction is not sound (two-item displays are enough),
so the sandbox bounds the operation instead: every site where a script makes C
code compare or hash a value that is not provably scalar first measures the
value's expanded size here, and a value that expands to more than :data:`CAP`
items *through shared references* ends the script with a size limit
(``error.kind == "limit"``, :func:`scriptgate.sandbox.guards.errors.refuse_size`).

The measure (:func:`measure`) walks the value level by level, keeping one
entry per distinct container of a level with the number of paths that reach it,
so its own work is the number of *distinct* items (tens of nanoseconds an item,
the type scan of a level's items runs in C) while the count is the number of
*paths*. Two rules decide:

- a value whose expanded size is at most :data:`CAP` passes;
- a value that expands beyond it passes only while its expanded size stays within
  :data:`RATIO` times its distinct items — data without sharing (a large JSON
  result, a big list of rows) compares in time linear in the memory it occupies,
  which its construction already paid for; the refusal is reserved for
  amplification.

Nesting deeper than :data:`MAX_NESTING` is refused too: CPython 3.11 hashes
nested tuples by C recursion without a depth check, and crashes on a tuple
190,000 levels deep.

What each site measures:

- a comparison ``a OP b`` (``==``, ``<``…) costs at most the expansion of either
  side (the walk through both stops at the shorter path and at identical items),
  so :func:`compare_ok` passes when one side is a scalar, when both are the same
  object, or when one side is not amplified;
- hashing (dict and set keys, ``in`` on a dict or set, ``hash()``) recurses only
  through tuples (a frozenset hashes its stored item hashes; lists and dicts are
  unhashable), so :func:`hash_ok` measures the tuple-only expansion;
- ``x in seq`` compares ``x`` with each item of a list, tuple or deque:
  :func:`contains_ok`;
- sorting, ``min``/``max`` and other C calls that compare many items pairwise:
  :func:`items_ok` bounds the sum of the items' expansions times the number of
  comparisons each item takes part in.

Scalars (``str``, ``int``, ``float``, ``bool``, ``None``, ``bytes``, ``complex``,
``range``) compare and hash in time bounded by their own size; a script class's
``__eq__``/``__hash__`` is script code with its own budget checks. Only values
whose comparison C code recurses into are walked: lists, tuples, dicts (keys and
values), sets, frozensets, deques, slices, dict key and item views, and their
subclasses (``Counter``, ``OrderedDict``, namedtuples, a script's ``class
Row(list)``).
"""

from __future__ import annotations

import collections
import fractions
import itertools
import operator
import sys
import types
from collections.abc import Iterable
from typing import Any, Final

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.regex import BUDGET_NAME
from scriptgate.sandbox.guards.ticking import BOUNDED_LAZY, check_budget

__all__ = [
    "CAP",
    "CHARGE_FROM",
    "COSTLY_FRACTION_BITS",
    "HAYSTACKS",
    "ITEMS_PER_STEP",
    "LONG_SEQUENCE",
    "MAX_NESTING",
    "RATIO",
    "SCALARS",
    "SMALL",
    "BudgetKey",
    "compare_ok",
    "contains",
    "contains_ok",
    "costly_compares",
    "hash_ok",
    "items_ok",
    "light_scalars",
    "log2_ceiling",
    "measure",
    "operand_ok",
    "pieced",
    "scalar_size",
    "scalars_ok",
    "searched",
]

CAP: Final = 5_000_000
"""Expanded items a single comparison or hash may visit regardless of sharing (~0.1 s of C)."""

RATIO: Final = 2
"""Beyond :data:`CAP`, the expanded size may be at most this many times the distinct items."""

MAX_NESTING: Final = 10_000
"""Levels of nesting a compared or hashed value may have (CPython hashes tuples by C recursion)."""

SCALARS: Final = frozenset(
    {str, int, float, bool, type(None), bytes, complex, range, type(Ellipsis)}
)
"""Exact types that compare and hash without recursing into other values."""

HAYSTACKS: Final = frozenset({dict, set, frozenset, str, bytes, type({}.keys()), type({}.items())})
"""Exact container types whose ``in`` hashes the item or scans text: a scalar item is bounded.

Not ``range``: only an int or bool is found in it by arithmetic; any other scalar is
compared with every item (findings15 E02)."""

_SEQUENCES: Final = frozenset({list, tuple, set, frozenset, collections.deque})
_MAPPINGS: Final = frozenset(
    {dict, collections.Counter, collections.OrderedDict, collections.defaultdict}
)
_KEYS_VIEW: Final[type[Any]] = type({}.keys())
_ITEMS_VIEW: Final[type[Any]] = type({}.items())
_RECURSIVE_BASES: Final = (list, tuple, dict, set, frozenset, collections.deque, slice)
_RECURSIVE_VIEWS: Final = (_KEYS_VIEW, _ITEMS_VIEW)
_RECURSIVE_ANY: Final = (*_RECURSIVE_BASES, *_RECURSIVE_VIEWS)

_COMPARE_MESSAGE: Final = (
    "a comparison would take too long for the sandbox: the values expand to more than "
    f"{CAP:,} items through shared references"
)
_HASH_MESSAGE: Final = (
    "hashing this value would take too long for the sandbox: the tuple expands to more "
    f"than {CAP:,} items through shared references"
)
_SORT_MESSAGE: Final = (
    "comparing these items would take too long for the sandbox: together they expand to "
    f"more than {CAP:,} items through shared references"
)
_NESTING_MESSAGE: Final = (
    f"a value nested more than {MAX_NESTING:,} levels deep is too deep to compare or hash in "
    "the sandbox"
)


def _recursive(value: Any, hashing: bool) -> bool:
    """Whether comparing (or hashing) ``value`` makes C code recurse into its items."""
    kind = type(value)
    if kind in SCALARS:
        return False
    if hashing:
        return isinstance(value, tuple)
    if kind in _SEQUENCES or kind in _MAPPINGS:
        return True
    return isinstance(value, _RECURSIVE_ANY)


def _flat(value: Any, hashing: bool) -> bool:
    """Whether ``value`` is a list, tuple or dict of small scalars only (C passes): never amplified."""
    kind = type(value)
    if kind is tuple or (kind is list and not hashing):
        return SCALARS.issuperset(map(type, value)) and _light(value)
    if kind is dict and not hashing:
        return (
            SCALARS.issuperset(map(type, value.values()))
            and SCALARS.issuperset(map(type, value))
            and _light(value.values())
            and _light(value)
        )
    return False


def _light(items: Iterable[Any], kinds: set[type[Any]] | None = None) -> bool:
    """Whether no item of ``items`` (scalars) is a large scalar: C passes by type.

    ``sys.getsizeof`` calls a method per item (several times a ``len``), so
    strings and bytes are measured by ``len``, ints by ``bit_length`` and
    fixed-size types not at all; only other types pay ``getsizeof``.
    """
    values = items if isinstance(items, list) else list(items)
    if kinds is None:
        kinds = set(map(type, values))
    for kind in kinds - _FIXED_SIZE:
        bucket: Iterable[Any] = values
        if len(kinds) > 1:
            bucket = [value for value in values if type(value) is kind]
        if kind is str or kind is bytes:
            if max(map(len, bucket), default=0) > _HEAVY:
                return False
        elif kind is int:
            if _heavy_int_in(bucket):
                return False
        elif max(map(_sizeof, bucket), default=0) > _HEAVY:
            return False
    return True


def scalars_ok(items: list[Any]) -> bool:
    """``True`` when comparing each of ``items`` (exact scalars) once is bounded; refuses otherwise.

    For items a hash table compares at most once each, with an equal-hash partner (the
    contents of short tuples a set operation or a feed hashes). Small scalars pass after
    one C scan. A large one (over 256 bytes) weighs a unit per 64 bytes each time it
    occurs; the total is charged to the running script, and refused (a size limit) when
    it is beyond :data:`CAP` and :data:`RATIO` times the weight of the distinct items — a
    long string shared by many tuples (findings14 D04).
    """
    if _light(items):
        return True
    heavy = list(_compress(items, map(_HEAVY.__lt__, map(_sizeof, items))))
    work = len(items) + (sum(map(_sizeof, heavy)) >> _UNIT_SHIFT)
    if work > CAP:
        unique = dict(zip(map(id, heavy), heavy, strict=True))
        distinct = len(items) + (sum(map(_sizeof, unique.values())) >> _UNIT_SHIFT)
        if work > RATIO * distinct:
            refuse_size(_COMPARE_MESSAGE)
    _charge(work)
    return True


def light_scalars(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether ``items`` are scalars none of which is large: C compares them in bounded time.

    The fast path of ``sorted``/``min``/``max``/``heapify``: ``[a, a - 1] * 10000`` of
    8 M-bit ints is scalars too, and sorted for 8 s in one C call (findings10 F02/F03/F06);
    those go to :func:`items_ok`, which weighs each large scalar by its size.
    """
    kinds = set(map(type, items))
    return kinds <= SCALARS and _light(items if type(items) is list else list(items), kinds)


_FIXED_SIZE: Final = frozenset({float, bool, type(None), complex, range, type(Ellipsis)})
_WEIGHED_BASES: Final = (str, bytes, bytearray, int)
"""Base types whose comparison C code runs in the value's size, subclasses and ``bytearray``
included: a ``class S(str)`` or a ``bytearray`` of a megabyte is a memcmp of a megabyte
(findings14 D02/D03), however its type is spelled."""


def scalar_size(value: Any) -> int | None:
    """The bytes a comparison or hash of ``value`` reads when it is a scalar by its base type.

    ``None`` for anything else. Read through the base type's own ``__sizeof__`` (the real
    type, never ``__class__``), so a script subclass's ``__sizeof__`` or ``__len__`` never
    runs: it is the stored size, whatever the subclass says.
    """
    kind = type(value)
    if kind in SCALARS:
        return _sizeof(value)
    for base in _WEIGHED_BASES:
        if issubclass(kind, base):
            size: Any = base.__sizeof__
            return int(size(value))
    return None


def _weighed(items: list[Any]) -> list[Any]:
    """The items of ``items`` (none an exact scalar) that compare by size: subclasses, bytearrays."""
    return [item for item in items if issubclass(type(item), _WEIGHED_BASES)]


def _sizes(items: list[Any]) -> list[int]:
    """:func:`scalar_size` of each item of ``items`` (each one a scalar by its base type)."""
    return [size for size in map(scalar_size, items) if size is not None]


_NUMBERS: Final = frozenset({int, bool, float})
_JUST_TUPLES: Final = frozenset({tuple})


def _parts(value: Any, hashing: bool) -> tuple[Iterable[Any], ...]:
    """The collections of items C code compares (or hashes) when it recurses into ``value``.

    Read through the base type's own C methods, as the comparison does: a
    script's subclass that overrides ``__iter__`` or ``keys`` runs none of its
    code here.
    """
    for base in _ITERATED_BASES:
        if isinstance(value, base):
            iterate: Any = base.__iter__
            return (iterate(value),)
    if isinstance(value, dict):
        # dict equality compares keys and values
        return (dict.keys(value), dict.values(value))
    if isinstance(value, slice):
        return ((value.start, value.stop, value.step),)
    if isinstance(value, _ITEMS_VIEW):
        return (list(value),)  # fresh (key, value) pairs: kept alive by the list
    return (value,)  # a keys view


_ITERATED_BASES: Final = (tuple, list, set, frozenset, collections.deque)


_ITERATED: Final = frozenset({list, tuple, set, frozenset, collections.deque})
_DICTS: Final = frozenset({dict})
_RECURSIVE_EXACT: Final = _SEQUENCES | _MAPPINGS
_HEAVY: Final = 256
"""Bytes above which a scalar's comparison or hash is weighed by its size."""
_HEAVY_BITS: Final = _HEAVY * 8
"""Ints of this many bits on are weighed."""
_bit_length = int.bit_length


def _heavy_int_in(numbers: Iterable[Any]) -> bool:
    """Whether an int of ``numbers`` (ints and floats; ``TypeError`` for anything else) is heavy.

    Compares sizes, never values: ``max(map(abs, ...))`` compared the ints themselves, and
    ints of millions of bits that differ in their last digit (``[a, a - 1] * 10000``) made
    the check itself the quadratic C work it guards against (findings10 F03), and ``abs``
    of a negative one copies it. ``int.bit_length`` reads the size and the top digit.
    """
    try:
        return max(map(_bit_length, numbers), default=0) > _HEAVY_BITS
    except TypeError:  # a float or a complex among them: weigh the ints alone
        values = numbers if isinstance(numbers, list) else list(numbers)
        ints = [value for value in values if type(value) is not float]
        return max(map(_bit_length, ints), default=0) > _HEAVY_BITS


_UNIT_SHIFT: Final = 6
"""A large scalar weighs one item per 64 bytes (a memcmp or digit scan of that length)."""
_sizeof = sys.getsizeof
_chain_items = itertools.chain.from_iterable
_compress = itertools.compress
_not = operator.not_


def _items(nodes: list[Any], hashing: bool) -> list[Any]:
    """Every item C code visits in ``nodes`` (distinct containers of one level), as one list.

    Built in C for the usual levels (all sequences, or all plain dicts); other
    mixes go node by node.
    """
    kinds = set(map(type, nodes))
    if kinds <= _ITERATED:  # exact types: their own iteration is the C one
        return list(_chain_items(nodes))
    if kinds <= _DICTS:
        return [*_chain_items(nodes), *_chain_items(map(dict.values, nodes))]
    items: list[Any] = []
    for node in nodes:
        for part in _parts(node, hashing):
            items.extend(part)
    return items


def measure(value: Any, *, hashing: bool = False) -> tuple[int, int] | None:
    """``(expanded, distinct)`` items comparing (``hashing``: hashing) ``value`` visits.

    ``expanded`` counts every path from ``value`` to an item once (a shared item
    counts once per path); ``distinct`` counts the items of each distinct
    container of a level once. ``None`` as soon as the value is *amplified*:
    ``expanded`` exceeds :data:`CAP` and :data:`RATIO` times ``distinct``.
    Refuses nesting deeper than :data:`MAX_NESTING` (a size limit). Scalars
    measure ``(0, 0)``.

    A level is a list of groups ``(paths, distinct nodes)``. Without sharing
    (every node reached by one path) a level is one group, and its items are
    listed, typed and filtered in C; Python touches each container once.
    """
    if not _recursive(value, hashing):
        return (0, 0)
    found = _measure(value, hashing)
    # the walk itself is charged: a loop of 200 `fs in s` of a 600,000-item frozenset
    # walked it each time, uncharged, between two tick checks (findings15 E04: 218 s)
    _charge(found[1] if found is not None else CAP)
    return found


def _measure(value: Any, hashing: bool) -> tuple[int, int] | None:
    """:func:`measure` of a value C code recurses into (uncharged)."""
    groups: list[tuple[int, list[Any]]] = [(1, [value])]
    total = 0
    distinct = 0
    depth = 0
    scalars = SCALARS
    while groups:
        depth += 1
        if depth > MAX_NESTING:
            refuse_size(_NESTING_MESSAGE)
        following: dict[int, list[Any]] = {}
        unshared: list[Any] | None = None
        for paths, nodes in groups:
            items = _items(nodes, hashing)
            size = len(items)
            total += paths * size
            distinct += size
            if total > CAP and total > RATIO * distinct:
                return None
            scalar = list(map(scalars.__contains__, map(type, items)))
            plain = list(_compress(items, scalar))
            if plain and not _light(plain):
                # large scalars (long strings, big ints) cost one unit per 64 bytes each time
                # they are compared or hashed: `[s] * 10**6 == [t] * 10**6` is 10**6 memcmps
                heavy = list(_compress(plain, map(_HEAVY.__lt__, map(_sizeof, plain))))
                unique = dict(zip(map(id, heavy), heavy, strict=True))
                total += paths * (sum(map(_sizeof, heavy)) >> _UNIT_SHIFT)
                distinct += sum(map(_sizeof, unique.values())) >> _UNIT_SHIFT
                if total > CAP and total > RATIO * distinct:
                    return None
            if len(plain) == size:
                continue
            inner = list(_compress(items, map(_not, scalar)))
            if not _RECURSIVE_EXACT.issuperset(map(type, inner)):
                weighed = _weighed(inner)
                if weighed:
                    # `class S(str)`, bytearray: compared by C in their size, as a str is
                    sizes = dict(zip(map(id, weighed), _sizes(weighed), strict=True))
                    heavy_sizes = [size for size in sizes.values() if size > _HEAVY]
                    if heavy_sizes:
                        every = [sizes[key] for key in map(id, weighed) if sizes[key] > _HEAVY]
                        total += paths * (sum(every) >> _UNIT_SHIFT)
                        distinct += sum(heavy_sizes) >> _UNIT_SHIFT
                        if total > CAP and total > RATIO * distinct:
                            return None
            if hashing:
                inner = [item for item in inner if isinstance(item, tuple)]
            elif not _RECURSIVE_EXACT.issuperset(map(type, inner)):
                inner = [item for item in inner if _recursive(item, False)]
            if len(groups) > 1:
                for item in inner:
                    seen = following.get(id(item))
                    if seen is None:
                        following[id(item)] = [item, paths]
                    else:
                        seen[1] += paths
                continue
            ids = list(map(id, inner))
            if paths == 1 and len(set(ids)) == len(ids):
                unshared = inner  # no sharing: the next level is one group again
                break
            counts = collections.Counter(ids)  # in C: how many paths lead to each container
            objects = dict(zip(ids, inner, strict=True))
            for key, count in counts.items():
                following[key] = [objects[key], count * paths]
        if unshared is not None:
            groups = [(1, unshared)]
            continue
        by_paths: dict[int, list[Any]] = {}
        for node, paths in following.values():
            by_paths.setdefault(paths, []).append(node)
        groups = list(by_paths.items())
    return (total, distinct)


CHARGE_FROM: Final = 1 << 16
"""Checked work from this many items on is charged to the run's step budget."""
ITEMS_PER_STEP: Final = 64
"""Items a C comparison or hash visits per step charged (a step is about one loop iteration)."""


def _charge(work: int, floor: int = CHARGE_FROM) -> None:
    """Charge ``work`` visited items to the running script's budget when it is large.

    A loop checks its budget only every few hundred iterations, and each checked
    comparison may still visit millions of items: charging them (steps, and the
    deadline check that comes with it) stops a loop of large comparisons in time.
    Without a script on the stack (host code calling a guard) nothing is charged;
    below ``floor`` items (a search of a list: from 1,024) nothing either.
    """
    if work < floor:
        return

    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            budget = frame.f_globals.get(BUDGET_NAME)
            if budget is not None:
                budget.spend(work // ITEMS_PER_STEP)
            return
        frame = frame.f_back


def _base_len(container: Any) -> int:
    """``len(container)`` through its base type (a script subclass's ``__len__`` never runs)."""
    for base in _ITERATED_BASES:
        if isinstance(container, base):
            length: Any = base.__len__
            return int(length(container))
    return 0


def compare_ok(a: Any, b: Any) -> bool:
    """``True`` when ``a OP b`` is bounded; refuses (a size limit) when both sides are amplified.

    The C comparison stops at the shorter path and skips identical items, so its
    work is at most either side's expansion: one side that is not amplified is
    enough.
    """
    if a is b or not _recursive(a, False) or not _recursive(b, False):
        return True  # `a == a` compares items by identity first; a scalar side stops at once
    for side in (a, b):
        if _flat(side, False):
            _charge(len(side))
            return True
    for side in (a, b):
        found = measure(side)
        if found is not None:
            _charge(found[0])
            return True
    refuse_size(_COMPARE_MESSAGE)


def hash_ok(key: Any) -> Any:
    """``key`` itself, once hashing it and comparing it with a stored key are bounded.

    Only tuples hash their items recursively (a frozenset hashes the hashes it
    stored). A lookup whose hash matches a stored key then compares the two with
    ``==``, which recurses into frozensets too: two frozensets built level by level
    from each other (``F = frozenset({(F0, G0)})``, ``G = frozenset({(G0, F0)})``)
    hash cheaply and compare in 2**levels steps. So a tuple or frozenset that holds
    more than scalars is also measured as a comparison operand.
    """
    if type(key) in SCALARS:
        return key
    if isinstance(key, tuple):
        if _flat(key, True):
            _charge(len(key))  # the check's scan and the hash: each linear in the tuple
            return key  # scalars: hashes and compares in its length
        found = measure(key, hashing=True)
        if found is None:
            refuse_size(_HASH_MESSAGE)
        _charge(found[0])
    elif not isinstance(key, frozenset) or SCALARS.issuperset(map(type, key)):
        return key
    # only a stored key with the same hash is compared, rarely: bounded, not charged
    if measure(key) is None:
        refuse_size(_COMPARE_MESSAGE)
    return key


def operand_ok(value: Any) -> Any:
    """``value`` itself, once comparing it with anything is bounded (it is not amplified)."""
    if _recursive(value, False) and not _flat(value, False):
        found = measure(value)
        if found is None:
            refuse_size(_COMPARE_MESSAGE)
        _charge(found[0])
    return value


SMALL: Final = 256
"""An item expanding to at most this many items costs a bounded amount per comparison."""

_HASHED_CONTAINERS: Final = (dict, set, frozenset, _KEYS_VIEW, _ITEMS_VIEW)


def contains_ok(item: Any, container: Any) -> bool:
    """``True`` when C may run ``item in container`` now (bounded); ``False`` to search it here.

    Refuses (a size limit) when the search would be too long. A dict, set or key view
    hashes ``item`` (:func:`hash_ok`; an items view also compares the value); a list,
    tuple or deque compares ``item`` with each of its elements, each comparison costing at
    most the smaller expansion: bounded when ``item`` expands to at most :data:`SMALL`
    items, or when the container is not amplified (the comparisons together visit at most
    its expansion); a dict's values are checked like a list of them. A string, bytes or
    range scans text or computes; a container with its own ``__contains__`` (script code,
    or host code that hashes or compares the needle once) gets a needle that is not
    amplified. Anything else is iterated by C, and comparing a long or nested needle with
    each item is one call that never checks the deadline (findings14 D01: ``b in
    iter(lst)`` of a megabyte string and 600,000 items, 21 s): ``False``, and
    :func:`searched` searches it in Python.
    """
    kind = type(container)
    if kind is not list and kind is not tuple:
        if kind is range:
            # only an exact int or bool is found by arithmetic; anything else is compared
            # with every item in C (`Fraction(1, 3) in range(10**8)`: 10 s, findings15 E02)
            return type(item) is int or type(item) is bool or len(container) < _SEARCH_PIECE
        if isinstance(container, _HASHED_CONTAINERS):
            hash_ok(item)
            if isinstance(container, _ITEMS_VIEW):
                operand_ok(item)
            return True
        if not isinstance(container, (list, tuple, collections.deque)):
            return _other_ok(item, container)
        length = _base_len(container)
    else:
        length = len(container)
    # an item's comparison may be host Python (`0.5 in [Fraction(1, 3)] * 3_000_000`: 12 s,
    # findings15 E03): a long sequence is searched in pieces with the deadline checked
    # between two, and every search of a thousand items or more checks it first (a loop of
    # 250 searches of 60,000 items ran 52 s between two tick checks)
    short = length < LONG_SEQUENCE
    if length >= _CHECK_SEARCH_FROM:
        _charge(length, _CHECK_SEARCH_FROM)
    if not _recursive(item, False):
        size = scalar_size(item)
        if size is None:
            return short  # a script object compares through its own (ticking) code
        # a scalar needle (by its base type): each comparison costs at most its own size
        work = length * (1 + (size >> _UNIT_SHIFT) if size > _HEAVY else 1)
        if size <= _HEAVY or work <= CAP:
            _charge(work)
            return short
        found = measure(container)
        if found is not None:
            _charge(found[0])
            return short
        refuse_size(_COMPARE_MESSAGE)
    own = measure(item)
    if own is not None and own[0] <= SMALL:
        _charge(length * (own[0] + 1))
        return short
    found = measure(container)
    if found is not None:
        _charge(found[0])
        return short
    refuse_size(_COMPARE_MESSAGE)


LONG_SEQUENCE: Final = 1 << 14
"""Items from which ``in``, ``index``, ``count`` and ``remove`` of a list, tuple, deque or
range search in pieces of :data:`_SEARCH_PIECE` (the budget checked between two)."""
_SEARCH_PIECE: Final = 4096
_CHECK_SEARCH_FROM: Final = 1024


_VALUES_VIEW: Final[type[Any]] = type({}.values())
_SEARCH_TICK: Final = 32
"""Items :func:`searched` compares in Python between two budget checks."""


def _other_ok(item: Any, container: Any) -> bool:
    """:func:`contains_ok` of a container that is not a list, tuple, deque, set or dict."""
    if isinstance(container, (str, bytes, bytearray)):
        return True
    if isinstance(container, range):
        return type(item) is int or type(item) is bool
    kind = type(container)
    if isinstance(container, _VALUES_VIEW):
        return contains_ok(item, list(container)) if _needs_search(item) else True
    if not _needs_search(item) and (kind in _SELF_TICKING or _script_generator(container)):
        return True  # each item it yields ran script code or a ticked piece
    if _defines(kind, "__contains__"):
        # its own __contains__: script code ticks; a host one hashes or compares the needle
        operand_ok(item)
        if isinstance(item, tuple):
            hash_ok(item)
        return True
    # not iterable at all: C raises Python's own TypeError
    return not (_defines(kind, "__iter__") or _defines(kind, "__getitem__"))


def _script_generator(value: Any) -> bool:
    """Whether ``value`` is a generator the script wrote (its body checks the budget)."""
    return type(value) is types.GeneratorType and value.gi_code.co_filename == FILENAME


_SELF_TICKING: Final = BOUNDED_LAZY
"""Lazy iterators whose items come in ticked pieces (the script's ``map``/``filter``)."""


def contains(item: Any, container: Any) -> bool:
    """``item in container``, bounded: :func:`contains_ok`, then C or :func:`searched`.

    What ``operator.contains`` runs (the compiled ``in`` calls the two itself).
    """
    return item in container if contains_ok(item, container) else searched(item, container)


def _defines(kind: type[Any], name: str) -> bool:
    """Whether ``kind`` or a base defines ``name`` (read statically: no script code runs)."""
    return any(name in vars(base) for base in kind.__mro__)


def _needs_search(item: Any) -> bool:
    """Whether comparing ``item`` with an item may cost more than a few steps."""
    if _recursive(item, False):
        return True
    size = scalar_size(item)
    return size is not None and size > _HEAVY


def searched(item: Any, container: Any) -> bool:
    """``item in container`` over ``iter(container)`` in Python, each comparison weighed.

    For a container :func:`contains_ok` leaves to this search (an iterator, ``reversed``,
    ``zip``, a generator, a script class with only ``__iter__``) and a long or nested
    needle. The iterator is read exactly as far as C reads it (up to the first equal
    item), and the answer and errors are C's (``element is item or element == item``);
    each comparison's weight is charged to the run's budget, checked every
    :data:`_SEARCH_TICK` items.
    """
    if isinstance(container, _PIECED):
        return bool(pieced(container, item, "in"))
    own = measure(item) if _recursive(item, False) else None
    size = scalar_size(item)
    per = 1 + (own[0] if own is not None else ((size or 0) >> _UNIT_SHIFT))
    amplified = _recursive(item, False) and own is None
    budget = _run_budget()
    work = 0
    count = 0
    for element in container:
        if element is item:
            return True
        if amplified:
            compare_ok(element, item)  # the element bounds the walk
        else:
            work += per
        if element == item:
            return True
        count += 1
        if budget is not None and (count >= _SEARCH_TICK or work >= CHARGE_FROM):
            budget.spend(count + work // ITEMS_PER_STEP)
            count = work = 0
    return False


_PIECED: Final = (list, tuple, collections.deque, range)


def pieced(seq: Any, item: Any, what: str, start: Any = None, stop: Any = None) -> Any:
    """``item in seq`` (``what`` ``"in"``), ``seq.count(item)``, ``seq.index(item[, start,
    stop])`` or ``seq.remove(item)`` of a list, tuple, deque or range, in pieces.

    Each piece of :data:`_SEARCH_PIECE` items is searched by C (a copy of the stored
    items; a range's piece is a range), the run's budget checked between two: an item
    whose comparison is host Python (a ``Fraction``) or a needle a range compares with
    every item made one C call of 10 s (findings15 E02/E03). The answers are C's: the
    same comparisons in the same order, up to the first equal item (found again, item by
    item, in its piece), and the same errors, messages made by the same method of an
    empty container of the base type.
    """
    base = _base_of(seq)
    length = base.__len__(seq)
    first, last = 0, length
    if start is not None or stop is not None:
        first, last, _ = slice(start, stop).indices(length)
    budget = _run_budget()
    total = 0
    offset = first
    items: Any = None
    if base is collections.deque:  # read once, through the base's own iterator
        items = itertools.islice(collections.deque.__iter__(seq), first, last)
    while offset < last:
        end = min(offset + _SEARCH_PIECE, last, base.__len__(seq))
        if end <= offset:
            break
        if base is collections.deque:
            piece: Any = list(itertools.islice(items, end - offset))
        else:
            piece = base.__getitem__(seq, slice(offset, end))
        if what == "count":
            total += piece.count(item)
        elif item in piece:
            if what == "in":
                return True
            at = offset + _position(piece, item)
            if what == "remove":
                base.__delitem__(seq, at)
                return None
            return at
        offset = end
        if budget is not None:
            budget.spend(1 + len(piece) // ITEMS_PER_STEP)
    if what == "count":
        return total
    if what == "in":
        return False
    empty: Any = range(0) if base is range else base()
    if what == "remove":
        return empty.remove(item)  # raises the method's own ValueError
    return empty.index(item)


def _position(piece: Any, item: Any) -> int:
    """The index of the first item of ``piece`` that is ``item`` or equals it."""
    for index, element in enumerate(piece):
        if element is item or element == item:
            return index
    raise ValueError("the item changed while it was searched")


def _base_of(seq: Any) -> Any:
    for base in (list, tuple, collections.deque, range):
        if isinstance(seq, base):
            return base
    raise TypeError(f"not a sequence: {type(seq).__name__}")


def _run_budget() -> Any:
    """The running script's budget (found through the innermost script frame), or ``None``."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            return frame.f_globals.get(BUDGET_NAME)
        frame = frame.f_back
    return None


COSTLY_FRACTION_BITS = 8192
"""Bits (numerator and denominator) from which one ``Fraction`` comparison is slow: it
cross-multiplies them in host Python, ~0.05 s for two of 190,000 bits each."""
_FRACTION_PARTS = (
    vars(fractions.Fraction)["numerator"].fget,
    vars(fractions.Fraction)["denominator"].fget,
)


def costly_compares(items: list[Any] | tuple[Any, ...]) -> bool:
    """Whether comparing ``items`` runs slow host Python per comparison (a large ``Fraction``).

    Read through the base type's own properties (no script code runs). A sort or ``max``
    of a few hundred such values made thousands of comparisons in one C call, 31-75 s
    under a 2 s deadline (findings18 L08): those calls compare through
    :class:`BudgetKey`.
    """
    if not any(
        isinstance(kind, type) and issubclass(kind, fractions.Fraction)
        for kind in set(map(type, items))
    ):
        return False
    numerator, denominator = _FRACTION_PARTS
    for item in items:
        if isinstance(item, fractions.Fraction) and (
            int.bit_length(numerator(item)) + int.bit_length(denominator(item))
            > COSTLY_FRACTION_BITS
        ):
            return True
    return False


class BudgetKey:
    """A sort/``min``/``max`` key that checks the run's budget before each comparison.

    ``sorted(xs, key=BudgetKey)`` compares as ``sorted(xs)`` does (``<`` of the items, the
    same order and stability) with the deadline checked between two comparisons.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: BudgetKey) -> bool:
        check_budget()
        return bool(self.value < other.value)

    def __gt__(self, other: BudgetKey) -> bool:
        check_budget()
        return bool(self.value > other.value)


def items_ok(items: Iterable[Any]) -> bool:
    """``True`` when comparing ``items`` pairwise is bounded; refuses (a size limit) otherwise.

    For C calls that compare many items (``sorted``, ``list.sort``, ``min``,
    ``max``, ``heapq``, ``bisect``): each comparison costs at most the smaller
    item's expansion, so the items measured together as one list must not be
    amplified — a list repeating two large values (``[a, b] * 500``) is, a list
    of distinct rows is not. A sort compares each item about ``log2(n)`` times,
    so its C work stays within ``log2(n)`` times that bound. Items that are
    scalars, or tuples of scalars no longer than :data:`SMALL` (``sorted(d.items())``),
    are checked in C without the walk.
    """
    if type(items) is list or type(items) is tuple:
        values: list[Any] | tuple[Any, ...] = items
    elif isinstance(items, (list, tuple)):
        values = list(_parts(items, False)[0])  # the stored items, as C compares them
    else:
        values = list(items)
    # a sort compares each item about log2(n) times: what the walks below bound per item
    _charge(len(values) * log2_ceiling(max(len(values), 1)))
    kinds = set(map(type, values))
    if kinds == _JUST_TUPLES:
        try:
            # short tuples of numbers (`key=lambda r: (-r['score'], r['id'])`): C passes.
            # `int.bit_length` refuses every item that is not an int (floats are weighed
            # apart); no code of the script's runs here (exact tuples: no `__len__`)
            if max(map(len, values), default=0) <= SMALL and not _heavy_int_in(
                list(_chain_items(values))
            ):
                return True
        except TypeError:
            pass
    if kinds <= SCALARS and _light(values, kinds):
        return True
    if kinds <= _TUPLE_OR_SCALAR:
        tuples, plain = values, []
        if kinds & SCALARS:
            tuples = [value for value in values if type(value) is tuple]
            plain = [value for value in values if type(value) is not tuple]
        if _light(plain) and max(map(len, tuples), default=0) <= SMALL:
            inner_kinds = set(map(type, _chain_items(tuples)))
            if inner_kinds <= _NUMBERS:
                # numbers only (`key=lambda r: (-r['score'], r['id'])`): one pass, no list
                if not _heavy_int_in(list(_chain_items(tuples))):
                    return True
            elif inner_kinds <= SCALARS and _light(list(_chain_items(tuples)), inner_kinds):
                return True  # each comparison visits at most SMALL small plain items
    found = measure(values)
    if found is None:
        refuse_size(_SORT_MESSAGE)
    _charge(found[0])
    return True


_TUPLE_OR_SCALAR: Final = SCALARS | {tuple}


def log2_ceiling(count: int) -> int:
    """``ceil(log2(count))`` for ``count >= 1``: the comparisons each item of a sort takes part in."""
    return max(1, (count - 1).bit_length())
