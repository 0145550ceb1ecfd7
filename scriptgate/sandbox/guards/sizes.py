"""Size checks for single C-level operations that ignore the wall-clock timeout.

Part of ``guards/`` (sizes and rendering): imports only :mod:`.constants` and
:mod:`.errors`; must not import the attribute guard or anything above ``guards/``.

Rendering a container to text (``str``, ``repr``, ``ascii``, ``format``, ``%``,
``str.format``, f-strings, ``print``, ``json.dumps``) runs in one C call: a
list holding the same million-item list a hundred times renders to 300 MB
before any timeout check can run. :func:`check_render` walks the value first
and refuses (like the other size guards: a limit that ends the script, see
:func:`scriptgate.sandbox.guards.errors.refuse_size`) when the text would be longer
than :data:`MAX_RENDER` characters. The walk counts every occurrence
of a shared reference, as the renderer does, but stops as soon as the estimate
passes the bound, so its own cost is bounded by the bound, not by the value.
Scalars and short flat containers take an O(1) or C-speed path; it runs no
code of the value. Renderings of :data:`CHARGE_FROM` characters or more are
charged to the step budget (1 step per KiB), so a loop of big renderings meets
the deadline check after each one instead of every 256 items.

The host side uses the same walk: a huge script value is refused before it is
copied (:func:`result_too_large`), tool-call arguments above the bound are
refused (:func:`check_arguments`), and a huge exception message is abbreviated
instead of rendered (:func:`exception_text`).

Also here:

- :func:`sequence_sum`: ``sum(lists, [])`` in linear time, charged per item and
  size-checked (CPython's loop copies the growing list each time: quadratic,
  and one C call).
- C iterators drained in C (``list()``, ``sorted()``, ``''.join()``…): every
  stand-in iterator already ticks and every builtin iterator is bounded by a
  container the script holds; calling every public method of every type a
  script can reach finds two host methods that hand out other C iterators:
  ``Counter.elements()`` (length = the sum of the counts: refused above
  ``MAX_SEQUENCE`` by :func:`checked_elements`) and ``Pattern.finditer`` /
  ``re.finditer`` (one match per character: drained through the run's chunked,
  budget-charging ``_getiter_``). :func:`checked_method` is where the value
  check swaps them.

Comparing or hashing such structures (``t = (t, t)`` fifty times stands for
2**50 items) is bounded by :mod:`scriptgate.sandbox.guards.comparisons`, at the compiled
operators and the builtins and methods that compare or hash; their *rendering*
is bounded here: the walk counts every occurrence.
"""

from __future__ import annotations

import collections
import itertools
import re
import reprlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

from scriptgate.sandbox.guards.constants import FILENAME, SCRIPT_CLASS_MARK
from scriptgate.sandbox.guards.errors import Trip, refuse_size
from scriptgate.sandbox.guards.lengths import base_len, exact_int
from scriptgate.sandbox.guards.render_scope import RENDERING, start_rendering
from scriptgate.sandbox.guards.text_codecs import is_decoding_call, str_of_bytes
from scriptgate.sandbox.guards.ticking import check_budget

__all__ = [
    "ARGUMENT_CONTAINERS",
    "ARGUMENT_ITEMS",
    "CHARGE_FROM",
    "CHECKED_METHOD_TYPES",
    "FLAT_TYPES",
    "MAX_RENDER",
    "SafeStr",
    "charge_render",
    "check_arguments",
    "check_json",
    "check_render",
    "checked_default",
    "checked_elements",
    "checked_method",
    "exception_text",
    "guarded_print",
    "render_estimate",
    "render_size",
    "result_too_large",
    "safe_ascii",
    "safe_repr",
    "sequence_sum",
    "too_large_render",
]

MAX_RENDER = 10_000_000
"""Longest text (in characters) a single rendering of a value may produce."""

_NONE = type(None)
_FLAT = frozenset({str, int, float, bool, _NONE, complex, range, bytes})
"""Types whose rendering is bounded by their own size (no walk needed)."""
_SMALL = 16
_CHUNK = 1 << 16
_INT_KINDS = frozenset({int, bool})
_FLOAT_KINDS = frozenset({float})
_STR_KINDS = frozenset({str})
_OTHER = 40
"""Estimated characters of a value the walk does not open (instances, dates…)."""
_chain = itertools.chain.from_iterable
_CHAIN = itertools.chain
_bit_length = int.bit_length


def too_large_render(
    what: str, size: int, limit: int = MAX_RENDER, trip: Trip | None = None
) -> NoReturn:
    """Refuse a rendering estimated at ``size`` characters: a limit that ends the script.

    ``trip`` is the run's ``Budget.trip`` if the caller has it (else
    :func:`~scriptgate.sandbox.guards.errors.refuse_size` finds the run on the stack).
    """
    refuse_size(
        f"{what} would be too large for the sandbox "
        f"(about {size} characters or more; the limit is {limit})",
        trip,
    )


def _scalar(value: Any, kind: type, ascii_only: bool) -> int:
    if kind is str:
        n = len(value) + 2
        if ascii_only and not value.isascii():
            return n * 10
        return n
    if kind is int:
        return (_bit_length(value) * 77 >> 8) + 1
    if kind is bool:
        return 5
    if kind is _NONE:
        return 4
    if kind is float or kind is complex or kind is range:
        return len(repr(value))
    if kind is bytes:
        return len(value) * 4 + 3
    return _OTHER


def _scalar_plain(value: Any) -> int:
    return _scalar(value, type(value), False)


def _scalar_ascii(value: Any) -> int:
    return _scalar(value, type(value), True)


def _flat_run(items: Any, kinds: set[type], ascii_only: bool) -> int:
    """Estimate of a run of scalars: C speed when homogeneous, one small call per item if mixed."""
    if kinds <= _INT_KINDS:
        if bool in kinds:
            return len(items) * 5 + (sum(map(_bit_length, items)) * 77 >> 8)
        return len(items) + (sum(map(_bit_length, items)) * 77 >> 8)
    if kinds == _STR_KINDS:
        n = sum(map(len, items)) + 2 * len(items)
        if ascii_only and not all(map(str.isascii, items)):
            return n * 10
        return n
    if kinds == _FLOAT_KINDS:
        return sum(map(len, map(repr, items)))
    if kinds == {_NONE}:
        return 4 * len(items)
    # mixed scalars (record values: ints and strs…): one small call per item, no walk
    return sum(map(_scalar_ascii if ascii_only else _scalar_plain, items))


def _small_flat(items: Any, mapping: bool, ascii_only: bool) -> int:
    """Summed estimate of a short container of scalars, or -1 when one item is not a scalar."""
    total = 0
    if mapping:
        for key, value in items:
            kind = type(key)
            other = type(value)
            if kind not in _FLAT or other not in _FLAT:
                return -1
            total += _scalar(key, kind, ascii_only) + _scalar(value, other, ascii_only)
        return total
    for item in items:
        kind = type(item)
        if kind not in _FLAT:
            return -1
        total += _scalar(item, kind, ascii_only)
    return total


_ROW_KINDS = frozenset({dict, list, tuple})
_MAX_CELLS = 4 * _CHUNK


def _rows_run(piece: list[Any] | tuple[Any, ...], ascii_only: bool) -> tuple[int, int] | None:
    """``(cells, estimate)`` of a run of plain dicts (or lists/tuples) of scalars, at C speed.

    Records (a list of small dicts) are the common large value; their keys and
    values are gathered with C iterators and estimated as flat runs.
    """
    kinds = set(map(type, piece))
    if not kinds <= _ROW_KINDS or sum(map(len, piece)) > _MAX_CELLS:
        return None  # big rows: the walk opens them one by one and stops at the bound
    if dict in kinds:
        if len(kinds) != 1:
            return None
        keys = list(_chain(piece))
        values = list(_chain(map(dict.values, piece)))
        flat_keys = _flat_kinds(keys, ascii_only)
        if flat_keys is None:
            return None
        flat_values = _flat_kinds(values, ascii_only)
        if flat_values is None:
            return None
        return len(keys), flat_keys + flat_values + 4 * len(keys) + 2 * len(piece)
    cells = list(_chain(piece))
    flat = _flat_kinds(cells, ascii_only)
    if flat is None:
        return None
    return len(cells), flat + 2 * len(cells) + 2 * len(piece)


def _flat_kinds(items: Any, ascii_only: bool) -> int | None:
    kinds = set(map(type, items))
    if kinds <= _FLAT:
        return _flat_run(items, kinds, ascii_only)
    return None


_BASE_SEQUENCES: tuple[Any, ...] = (list, tuple, set, frozenset, collections.deque)
_BASE_TEXT: tuple[Any, ...] = (str, bytes, bytearray)


def _children(value: Any) -> tuple[Any, int, int] | None:
    """``(items, count, overhead)`` of a container the renderers open, else None.

    Exact builtin containers are read as they are; a subclass (a script's class whose
    ``__len__``, ``__iter__``, ``__getitem__``, ``keys`` or ``items`` may lie, and may
    run script code) is read through its base type's own C methods, lazily, so the
    estimate is the real content's and no code of the value runs.
    """
    kind = type(value)
    if kind is dict:
        n = len(value)
        return value, 2 * n, 4 * n + 2
    if kind is list or kind is tuple:
        n = len(value)
        return value, n, 2 * n + 2
    if isinstance(value, dict):
        n = dict.__len__(value)
        return _chain(dict.items(value)), 2 * n, 4 * n + 22
    for base in _BASE_SEQUENCES:
        if isinstance(value, base):
            n = base.__len__(value)
            return _CHAIN(base.__iter__(value)), n, 2 * n + 14
    if isinstance(value, BaseException):
        args = _EXCEPTION_ARGS(value)
        if type(args) is not tuple:
            return None
        return args, len(args), 2 * len(args) + 2 + len(kind.__name__)
    if kind is type({}.keys()) or kind is type({}.values()):
        return value, len(value), 2 * len(value) + 14
    if kind is type({}.items()):
        return _chain(value), 2 * len(value), 6 * len(value) + 14
    return None


_EXCEPTION_ARGS = BaseException.args.__get__  # type: ignore[attr-defined]


def _other(value: Any, ascii_only: bool) -> int:
    """Estimate of a value the walk does not open: a str/bytes/bytearray/int (or subclass)
    by its base type's own length, anything else :data:`_OTHER`."""
    if isinstance(value, _BASE_TEXT):
        for base in _BASE_TEXT:
            if isinstance(value, base):
                n: int = base.__len__(value)
                return n * (4 if base is not str or ascii_only else 1) + 14
    if isinstance(value, int):
        return (_bit_length(value) * 77 >> 8) + 1
    return _OTHER


def render_size(
    value: Any,
    limit: int = MAX_RENDER,
    *,
    ascii_only: bool = False,
    item_extra: int = 0,
    indent: int = 0,
) -> int:
    """Estimated characters of ``str``/``repr``/``json.dumps`` of ``value``.

    Counts every occurrence of shared references, stops as soon as the estimate
    passes ``limit`` (the returned number is then only known to exceed it).
    ``item_extra`` is added per element (longer separators), and ``indent``
    times the nesting depth plus one (a newline) for JSON indentation.
    Runs no code of the value (no ``__repr__``/``__eq__``/``__hash__`` calls).
    Every guarded rendering measures first, so this also opens the rendering's
    cumulative scope: the script dunders C calls next take their results off what
    is left (:mod:`.render_scope`, findings7 F01).
    """
    size = _render_size(value, limit, ascii_only, item_extra, indent)
    start_rendering(size, limit)
    return size


def render_estimate(value: Any, limit: int = MAX_RENDER) -> int:
    """:func:`render_size` of ``value`` without opening a rendering scope (a part of one)."""
    return _render_size(value, limit, False, 0, 0)


def _render_size(
    value: Any,
    limit: int,
    ascii_only: bool,
    item_extra: int,
    indent: int,
    nodes: list[int] | None = None,
) -> int:
    """The render walk; ``nodes`` (``[containers, items, most containers, most items]``)
    also counts every container and item met, counted as often as it is referenced, and
    ends the walk (a result past ``limit``) once either count passes its bound."""
    kind = type(value)
    if kind in _FLAT:
        return _scalar(value, kind, ascii_only)
    opened = _children(value)
    if opened is None:
        return _other(value, ascii_only)
    total = 0
    # depth-first over live iterators; `active` holds the containers on the current
    # path (a container inside itself renders as `[...]`, as repr does)
    stack: list[Iterator[Any]] = []
    path: list[int] = []
    active: set[int] = set()

    def counted(containers: int, items: int) -> bool:
        # whether the node counts passed their bounds (nodes given)
        assert nodes is not None
        nodes[0] += containers
        nodes[1] += items
        return nodes[0] > nodes[2] or nodes[1] > nodes[3]

    def enter(container: Any, opened: tuple[Any, int, int], base: int) -> int:
        items, count, overhead = opened
        if nodes is not None and counted(1, count):
            return limit + 1
        iterator: Iterator[Any] | None = None
        added = overhead + count * item_extra
        if indent:
            added += count * (indent * (len(stack) + 1) + 1) + indent * len(stack) + 1
        mapping = isinstance(items, dict)
        if type(items) is _CHAIN:
            pass  # a lazy read (a view, a subclass through its base): walked item by item
        elif count <= _SMALL:
            # short rows (small dicts, tuples) of scalars: summed inline, no iterator pushed
            inline = _small_flat(items.items() if mapping else items, mapping, ascii_only)
            if inline >= 0:
                return added + inline
        elif count > _SMALL:
            if mapping:
                keys = _flat_kinds(items, ascii_only)
                if keys is not None:
                    values = _flat_kinds(items.values(), ascii_only)
                    if values is not None:
                        return added + keys + values
            elif isinstance(items, (list, tuple)):
                # C-speed pieces, so a huge flat list stops at the bound
                start = 0
                while start < count:
                    piece = items[start : start + _CHUNK]
                    flat = _flat_kinds(piece, ascii_only)
                    if flat is None:
                        rows = _rows_run(piece, ascii_only)
                        if rows is None:
                            iterator = itertools.islice(items, start, None)
                            break
                        cells, flat = rows
                        if nodes is not None and counted(len(piece), cells):
                            return limit + 1
                        if item_extra:
                            flat += cells * item_extra
                        if indent:
                            depth = len(stack) + 2
                            flat += cells * (indent * depth + 1) + len(piece) * indent * depth
                    added += flat
                    start += _CHUNK
                    if base + added > limit:
                        return added
                else:
                    return added
            elif type(items) is not _CHAIN:
                flat = _flat_kinds(items, ascii_only)
                if flat is not None:
                    return added + flat
        if iterator is None:
            iterator = _chain(items.items()) if mapping else iter(items)
        stack.append(iterator)
        path.append(id(container))
        active.add(id(container))
        return added

    total += enter(value, opened, 0)
    descents = 0
    while stack:
        if total > limit:
            return total
        descents += 1
        if not descents & _WALK_CHECK_MASK:
            # a shared-reference value (`a = [a, a]` 40 times) is walked for seconds before
            # its text passes the bound: the run's deadline is checked (findings18 L03)
            check_budget()
        for item in stack[-1]:
            if total > limit:
                return total
            kind = type(item)
            if kind in _FLAT:
                total += _scalar(item, kind, ascii_only)
                continue
            if id(item) in active:
                total += 5
                continue
            sub = _children(item)
            if sub is None:
                total += _other(item, ascii_only)
                continue
            total += enter(item, sub, total)
            break  # descend: the new iterator is on top of the stack
        else:
            stack.pop()
            active.discard(path.pop())
    return total


_WALK_CHECK_MASK = (1 << 12) - 1
"""The render walk checks the run's budget every 4,096 containers it enters."""


def check_render(value: Any, what: str = "the text of this value", limit: int = MAX_RENDER) -> None:
    """Refuse (a size limit: ends the script) a value whose rendering would pass ``limit`` characters."""
    if type(value) in _FLAT:
        return
    size = render_size(value, limit)
    if size > limit:
        too_large_render(what, size, limit)
    if size >= CHARGE_FROM:
        charge_render(size)


CHARGE_FROM = 1 << 16
"""Renderings from this many characters on are charged to the step budget."""


def charge_render(size: int) -> None:
    """Charge a large rendering to the running script's step budget (1 step per KiB).

    Each rendering is bounded by :data:`MAX_RENDER`, but a loop rendering a 3 MB
    value per item would run ~256 items (seconds) between two periodic checks;
    charging through the run's ``__charge__`` (found in the script's globals)
    checks the deadline and the step limit after every large rendering.
    """
    hooks = _script_globals()
    if hooks is not None:
        charge = hooks.get("__charge__")
        if charge is not None:
            charge(range(size >> 10))


def safe_repr(obj: Any, /) -> str:
    """``repr(obj)`` refusing a rendering longer than :data:`MAX_RENDER` characters."""
    if type(obj) in _FLAT:
        return repr(obj)
    with RENDERING:  # nested scope starts join this rendering (findings9 F03)
        check_render(obj, "repr() of this value")
        return repr(obj)


def safe_ascii(obj: Any, /) -> str:
    """``ascii(obj)`` refusing a rendering longer than :data:`MAX_RENDER` characters."""
    kind = type(obj)
    if kind is int or kind is float:
        return ascii(obj)
    with RENDERING:
        size = render_size(obj, MAX_RENDER, ascii_only=True)
        if size > MAX_RENDER:
            too_large_render("ascii() of this value", size)
        if size >= CHARGE_FROM:
            charge_render(size)
        return ascii(obj)


def check_json(
    obj: Any,
    *,
    indent: int | str | None,
    separators: tuple[str, str] | None,
    ensure_ascii: bool,
    default: Callable[[Any], Any] | None,
) -> Callable[[Any], Any] | None:
    """Refuse a ``json.dumps`` whose text would pass :data:`MAX_RENDER` characters.

    Returns the ``default`` hook to use: the script's ``default`` results are
    counted too (each may stand for a large value), so the bound holds overall.
    """
    width = 0
    if type(indent) is int:
        width = max(indent, 0)
    elif type(indent) is str:
        width = len(indent)
    extra = 0
    if separators is not None:
        extra = sum(len(sep) for sep in separators if type(sep) is str)
        extra = max(extra - 3, 0)
    start = render_size(obj, MAX_RENDER, ascii_only=ensure_ascii, item_extra=extra, indent=width)
    if start > MAX_RENDER:
        too_large_render("json.dumps of this value", start)
    if start >= CHARGE_FROM:
        charge_render(start)
    if default is None:
        return None
    return checked_default(default, start, ensure_ascii)


def checked_default(
    default: Callable[[Any], Any], start: int, ascii_only: bool = False
) -> Callable[[Any], Any]:
    """A ``json.dumps`` ``default=`` hook whose results count towards the render bound."""
    spent = [start]

    def hook(obj: Any) -> Any:
        result = default(obj)
        spent[0] += render_size(result, MAX_RENDER, ascii_only=ascii_only)
        if spent[0] > MAX_RENDER:
            too_large_render("json.dumps of this value", spent[0])
        return result

    return hook


def sequence_sum(
    iterable: Iterable[Any],
    start: list[Any] | tuple[Any, ...],
    charge: Callable[[Any], Any],
    max_length: int,
) -> Any:
    """``sum(iterable, start)`` for a list or tuple ``start``, in linear time.

    CPython adds sequences one by one, copying the growing result each time (a
    quadratic C loop the timeout cannot stop: ``sum([[1]] * 100000, [])``). Here
    each item of the exact type of ``start`` extends one accumulator; ``charge``
    (the run's charging wrapper: it spends ``len`` of a list or tuple) is applied
    to every item and the result may not pass ``max_length``. Any other item
    falls back to ``acc + item`` (same result, same errors as ``sum``), charged
    by the length of ``acc``.
    """
    kind = type(start)
    acc: Any = list(start)
    exact = True  # acc is a plain list standing for a `kind` value
    for item in iterable:
        if exact and type(item) is kind:
            charge(item)
            if len(acc) + len(item) > max_length:
                refuse_size("sum() of these sequences would be too large for the sandbox")
            acc.extend(item)
            continue
        if exact:
            acc = acc if kind is list else tuple(acc)
            exact = False
        if type(acc) is list or type(acc) is tuple:
            charge(acc)
        acc = acc + item
        if isinstance(acc, (list, tuple)) and base_len(acc) > max_length:
            refuse_size("sum() of these sequences would be too large for the sandbox")
    if exact and kind is tuple:
        return tuple(acc)
    return acc


def checked_elements(counter: collections.Counter[Any], max_length: int) -> Callable[[], Any]:
    """``counter.elements`` refusing more than ``max_length`` elements in total.

    ``Counter(a=10**18).elements()`` is a C iterator ``list()`` would consume
    without any step or deadline check (it is no stand-in iterator that ticks).
    """

    def elements() -> Iterator[Any]:
        total = 0
        for count in map(exact_int, counter.values()):
            if type(count) is int and count > 0:
                total += count
                if total > max_length:
                    refuse_size(
                        f"Counter.elements() of more than {max_length} items "
                        "would be too large for the sandbox"
                    )
        return counter.elements()

    elements.__name__ = "elements"
    return elements


class _StrType(type):
    """Metaclass of :class:`SafeStr`: ``isinstance(x, str)`` keeps meaning the real ``str``."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is SafeStr:
            return isinstance(obj, str)
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        if cls is SafeStr:
            return issubclass(sub, str)
        return type.__subclasscheck__(cls, sub)


class SafeStr(str, metaclass=_StrType):
    """The script's ``str``: ``str(value)`` refuses a rendering above :data:`MAX_RENDER`.

    Calling it returns a real ``str``; ``isinstance(x, str)`` and
    ``issubclass(C, str)`` behave as with the builtin; script classes may
    subclass it (their instances are real ``str`` subclasses).
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """``str(*args, **kwargs)`` after the render-size check of the object."""
        obj = args[0] if args else kwargs.get("object", "")
        if is_decoding_call(args, kwargs) and isinstance(obj, (bytes, bytearray)):
            text = str_of_bytes(*args, **kwargs)  # an allowed codec, sized (findings14 A01)
            return text if cls is SafeStr else str.__new__(cls, text)
        if type(obj) in _FLAT:
            if cls is SafeStr:
                return str(*args, **kwargs)
            return str.__new__(cls, *args, **kwargs)
        with RENDERING:
            check_render(obj, "str() of this value")
            if cls is SafeStr:
                return str(*args, **kwargs)
            return str.__new__(cls, *args, **kwargs)


SafeStr.__name__ = "str"
SafeStr.__qualname__ = "str"
SafeStr.__module__ = "builtins"


FLAT_TYPES = _FLAT
"""Types :func:`check_render` accepts at once (their text is bounded by their size)."""

_COUNTER_ELEMENTS = collections.Counter.elements
_PATTERN = re.Pattern
_C_METHOD_TYPES = (types.BuiltinMethodType, type(re.compile("").finditer))
CHECKED_METHOD_TYPES = frozenset({types.MethodType, types.FunctionType, *_C_METHOD_TYPES})
"""Callable types :func:`checked_method` may replace (the value check sends them there)."""


def _script_globals() -> dict[str, Any] | None:
    """The globals of the innermost script frame on the stack (the run's hooks live there)."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            return frame.f_globals
        frame = frame.f_back
    return None


def _counted_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` whose iterator goes through the run's chunked, budget-charging ``_getiter_``.

    ``list(pattern.finditer('', big))`` drains a C iterator in one call; routed
    through ``_getiter_`` it charges a step per item and checks the deadline and
    the stop flag every 256 items, like every other iterator a script drains.
    """

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = method(*args, **kwargs)
        hooks = _script_globals()  # the calling run's (a stored method may outlive a run)
        getiter = None if hooks is None else hooks.get("_getiter_")
        return result if getiter is None else getiter(result)

    counted.__name__ = getattr(method, "__name__", "method")
    return counted


def checked_method(value: Any, max_length: int) -> Any:
    """``value``, or a size-checked or budget-charged stand-in for it.

    Called by the attribute guard's value check on functions and bound methods.
    The host methods a script can reach that hand out a C iterator not bounded
    by a container the script already holds (found by calling every public
    method of every reachable type): ``Counter.elements`` (``c.elements`` and the
    unbound ``Counter.elements``: its length is the sum of the counts, refused
    above ``max_length``) and ``Pattern.finditer`` (up to one match per
    character: charged per item).
    """
    kind = type(value)
    if kind in _C_METHOD_TYPES:
        if type(value.__self__) is _PATTERN and value.__name__ == "finditer":
            return _counted_method(value)
        return value
    if kind is types.MethodType:
        if value.__func__ is _COUNTER_ELEMENTS:
            return checked_elements(value.__self__, max_length)
    elif value is _COUNTER_ELEMENTS:

        def elements(counter: collections.Counter[Any]) -> Any:
            if not isinstance(counter, collections.Counter):
                raise TypeError("elements() needs a Counter")
            return checked_elements(counter, max_length)()

        return elements
    return value


def guarded_print(
    print_fn: Callable[..., None],
    output_limit: int | None,
    trip: Callable[[str, str], BaseException],
) -> Callable[..., None]:
    """``print`` that estimates the text BEFORE rendering it.

    Past :data:`MAX_RENDER` characters the run stops with the output limit
    (``error.kind == "limit"``) when one is set, else the print is refused (a
    size limit, also ``"limit"``); below, ``print_fn`` renders and applies the exact cap.
    """

    def print_(*objects: Any, sep: Any = " ", end: Any = "\n", **kwargs: Any) -> None:
        for obj in objects:
            if type(obj) not in _FLAT:
                break
        else:
            if type(sep) is not str or len(sep) * len(objects) <= MAX_RENDER:
                return print_fn(*objects, sep=sep, end=end, **kwargs)
        extra = len(sep) if type(sep) is str else 0
        with RENDERING:
            size = render_size(objects, MAX_RENDER, item_extra=extra)
            if size > MAX_RENDER:
                if output_limit is not None:
                    raise trip(
                        "limit", f"Script output exceeded the limit of {output_limit} characters"
                    )
                too_large_render("print() of these values", size)
            if size >= CHARGE_FROM:
                charge_render(size)
            return print_fn(*objects, sep=sep, end=end, **kwargs)

    return print_


_PLAIN_SCALARS = frozenset({str, int, float, bool, _NONE, complex, bytes})
_PLAIN_SEQUENCES = frozenset({tuple, list, set, frozenset})
_PLAIN_ITEMS = 1_000
"""At most this many values are looked at to decide an exception's arguments are plain."""
_type_name = type.__dict__["__name__"].__get__
_type_mro = type.__dict__["__mro__"].__get__
_type_dict = type.__dict__["__dict__"].__get__
_exc_args = BaseException.__dict__["args"].__get__
_group_message = BaseExceptionGroup.__dict__["message"].__get__
_os_filename = OSError.__dict__["filename"].__get__
_os_filename2 = OSError.__dict__["filename2"].__get__


def _plain(value: Any, seen: list[int]) -> bool:
    """Whether ``value`` is built only of exact builtin data types (so rendering it runs no
    code of the script); ``seen`` counts the values looked at, and too many is not plain."""
    seen[0] += 1
    if seen[0] > _PLAIN_ITEMS:
        return False
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return True
    if kind in _PLAIN_SEQUENCES:
        return all(_plain(item, seen) for item in value)
    if kind is dict:
        return all(_plain(k, seen) and _plain(v, seen) for k, v in dict.items(value))
    return False


def _placeholder_repr(value: Any, depth: int = 0) -> str:
    """A repr that runs no code of the value: plain scalars as ``repr`` gives them (long
    ones cut), exact builtin containers a few levels deep, everything else
    ``<TypeName object>`` (the name read through ``type``'s own descriptor)."""
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        text = repr(value) if kind is not int or value.bit_length() < 3000 else "<int>"
        return text if len(text) <= 200 else text[:200] + "…"
    if depth < 3 and kind in (tuple, list):
        items = [_placeholder_repr(item, depth + 1) for item in itertools.islice(value, 10)]
        if len(value) > 10:
            items.append("...")
        if kind is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if depth < 3 and kind is dict:
        pairs = list(dict.items(value))
        parts = [
            f"{_placeholder_repr(k, depth + 1)}: {_placeholder_repr(v, depth + 1)}"
            for k, v in pairs[:10]
        ]
        if len(pairs) > 10:
            parts.append("...")
        return "{" + ", ".join(parts) + "}"
    return f"<{_type_name(kind)} object>"  # type's own __name__: no code of the value


def exception_text(exc: BaseException, max_chars: int) -> str:
    """``str(exc)`` for the run's error message, built without running script code.

    It is rendered in the host after the run has ended, where no deadline applies,
    so no ``__str__``/``__repr__`` of the script may run (the engine's own
    guarantee: rendering never runs script code after the run). An exception is
    rendered by its class's own ``__str__`` only when no class in its MRO is the
    script's and every argument (and ``OSError``'s file names) is built of exact
    builtin data types; the script's own exception classes render through
    ``BaseException.__str__`` on such arguments. Anything else (``raise
    ValueError(obj)``, the ``KeyError`` C raises for ``d[obj]``) renders its
    arguments with ``<TypeName object>`` placeholders. A huge message is abbreviated
    instead of rendered (``raise ValueError(big_list)`` would otherwise render
    hundreds of megabytes in the host).
    """
    kind = type(exc)
    if isinstance(exc, BaseExceptionGroup):
        # its own __str__ reads only the message and the count of sub-exceptions
        message = _group_message(exc)
        if type(message) is not str:
            return str(_type_name(kind))
        return BaseExceptionGroup.__str__(exc)
    args = _exc_args(exc)
    script_class = any(_marked(k) for k in _type_mro(kind))
    plain = type(args) is tuple and _plain(args, [0])
    if plain and isinstance(exc, OSError):
        plain = _plain((_os_filename(exc), _os_filename2(exc)), [0])
    if not plain:
        if type(args) is not tuple:
            return str(_type_name(kind))
        if len(args) == 1 and type(args[0]) is str:
            return args[0][:max_chars]
        return _placeholder_repr(args[0] if len(args) == 1 else args)[:max_chars]
    bound = max_chars * 4
    if render_size(args, bound) > bound:
        short = reprlib.Repr()
        short.maxlevel = 3
        short.maxstring = max_chars
        short.maxother = 200
        if len(args) == 1:
            only = args[0]
            return only[:max_chars] if type(only) is str else short.repr(only)
        return short.repr(args)
    if script_class:
        # the script's own exception class: BaseException's own __str__, never the script's
        return BaseException.__str__(exc)
    return str(exc)


def _marked(cls: type) -> bool:
    """Whether the class's own namespace carries the script-class mark (read statically)."""
    return bool(_type_dict(cls).get(SCRIPT_CLASS_MARK, False))


def result_too_large(
    value: Any, max_bytes: int, node_caps: tuple[int, int] | None = None
) -> tuple[str, int] | None:
    """Why a value is refused before its copy: ``("bytes", estimate)`` above ``2 *
    max_bytes`` of JSON, ``("containers", n)``/``("values", n)`` past ``node_caps``; else
    None.

    Lets the engine refuse a huge script value (a list holding one big list a hundred
    times, ``b = [b, b]`` twenty times: 2 M lists once copied) before copying it;
    borderline values get the exact check.
    """
    if type(value) in _FLAT:
        return None
    bound = 2 * max_bytes + 1024
    nodes = None if node_caps is None else [0, 0, *node_caps]
    size = _render_size(value, bound, False, 0, 0, nodes)
    return _refusal(size, bound, nodes)


def _refusal(size: int, bound: int, nodes: list[int] | None) -> tuple[str, int] | None:
    if nodes is not None and nodes[0] > nodes[2]:
        return "containers", nodes[0]
    if nodes is not None and nodes[1] > nodes[3]:
        return "values", nodes[1]
    return ("bytes", size) if size > bound else None


ARGUMENT_CONTAINERS = MAX_RENDER // 50
"""Most lists and dicts one tool call's arguments may hold (each counted per reference)."""
ARGUMENT_ITEMS = MAX_RENDER // 5
"""Most items (list items and dict entries) one tool call's arguments may hold."""


def check_arguments(raw: Any, trip: Trip | None = None) -> None:
    """Refuse tool-call arguments whose JSON text would pass :data:`MAX_RENDER` characters,
    or that hold more than :data:`ARGUMENT_CONTAINERS` lists and dicts or
    :data:`ARGUMENT_ITEMS` items.

    Building such arguments is a resource attack like any other oversized value:
    the refusal is a limit that ends the script (``trip``: the run's ``Budget.trip``).
    The counts bound what the copy and the host's decode make of them: ``[{}] * 2_400_000``
    is 9.6 M characters of JSON, but 2.4 M dicts (550 MiB in the host; findings18 L10).
    """
    nodes = [0, 0, ARGUMENT_CONTAINERS, ARGUMENT_ITEMS]
    size = _render_size(raw, MAX_RENDER, False, 0, 0, nodes)
    start_rendering(size, MAX_RENDER)
    refusal = _refusal(size, MAX_RENDER, nodes)
    if refusal is None:
        return
    what, count = refusal
    if what == "bytes":
        too_large_render("these tool-call arguments", size, MAX_RENDER, trip)
    most = ARGUMENT_CONTAINERS if what == "containers" else ARGUMENT_ITEMS
    noun = "lists and dicts" if what == "containers" else "items"
    refuse_size(
        f"these tool-call arguments would be too large for the sandbox: they hold more than "
        f"{most:,} {noun} ({count:,} counted, each as often as it is referenced); pass less "
        "data per call, or text (a str) of it",
        trip,
    )
