"""Names shared by the compiler policy and the run-time guards: the bottom of ``guards/``.

Owns the script's file name and entry point, the format-width limit and the attribute
names the compiled fast paths leave to the full guard. Imports nothing from scriptgate, so
both :mod:`scriptgate.sandbox.compile` and every guard can import it without a circle.
"""

from __future__ import annotations

import re

__all__ = [
    "CLASS_BODY_NAMES",
    "COMPARING_NAMES",
    "DENIED_NAMES",
    "ENTRY",
    "FAST_RECEIVER_SLOW_NAMES",
    "FILENAME",
    "HASHING_METHODS",
    "MATCH_SELF_TYPES",
    "MAX_FORMAT_WIDTH",
    "READABLE_UNDERSCORE_NAMES",
    "SCRIPT_CLASS_MARK",
    "SCRIPT_DUNDER_READS",
    "SIZED_VIEWS",
    "TICK_CHUNK",
    "format_spec_too_wide",
    "is_private_name",
]

FILENAME = "<script>"
"""The file name of compiled scripts (tracebacks are filtered on it)."""

MAX_FORMAT_WIDTH = 10_000
"""Largest width or precision a format spec may ask for."""

ENTRY = "__script__"
"""The name of the function a script's body is compiled into."""

_DIGITS = re.compile(r"\d+")


def format_spec_too_wide(spec: str) -> bool:
    """Whether a format spec asks for a width or precision above :data:`MAX_FORMAT_WIDTH`."""
    return any(len(run) > 5 or int(run) > MAX_FORMAT_WIDTH for run in _DIGITS.findall(spec))


DENIED_NAMES = frozenset({"format", "format_map", "mro", "vformat", "get_field", "get_value"})
"""Attribute names refused on every object (they reach string formatting internals or the MRO)."""
HASHING_METHODS = frozenset(
    {
        "update", "fromkeys", "subtract", "union", "intersection", "intersection_update",
        "difference", "difference_update", "symmetric_difference",
        "symmetric_difference_update", "issubset", "issuperset", "isdisjoint",
    }
)  # fmt: skip
"""set/dict/Counter methods that hash every item of an argument.

The attribute guard hands out wrappers for them, which feed a large argument in chunks
(``s.update(x)`` of ints that all hash alike is one quadratic C call otherwise)."""
COMPARING_NAMES = frozenset(
    {"index", "count", "remove", "sort", "get", "setdefault", "pop", "add", "discard"}
)
"""Methods of the fast receivers that compare or hash their argument in C (list.index,
dict.get, set.add…): the attribute guard hands out checking wrappers for them."""
FAST_RECEIVER_SLOW_NAMES = DENIED_NAMES | COMPARING_NAMES | {
    "extend", "copy", "to_bytes", *HASHING_METHODS
}  # fmt: skip
"""The policy compiles ``o.name`` inline for fast receivers unless ``name`` is one of these
(``extend``, ``copy``, ``to_bytes`` are size-checked, the hashing methods fed in chunks, the
comparing methods bounded)."""

TICK_CHUNK = 256
"""Items a guarded loop or feed handles between two budget checks."""
READABLE_UNDERSCORE_NAMES = frozenset(
    {
        "__name__",
        "__doc__",
        "__class__",
        "__qualname__",
        "__init__",
        "__init_subclass__",
        "__mro__",
        "_asdict",
        "_replace",
        "_fields",
        "_make",
    }
)
"""Underscore names a script may read: read-only names that reveal nothing of the host
(``type(x).__name__``, ``x.__class__.__name__``, ``f.__doc__``) and the namedtuple API
(the attribute guard allows the ``_`` ones on namedtuples only, ``__init__`` on the
script's own classes, instances and ``super()`` only)."""

SCRIPT_DUNDER_READS = frozenset({"__cause__", "__context__", "__suppress_context__", "__dict__"})
"""Dunder names a script may read, each decided per object by :mod:`.script_classes`: an
exception's chain (``exc.__cause__``; never ``__traceback__``) and the instance ``__dict__``
of the script's own objects."""
SUPER_DUNDERS = frozenset(
    {
        "__repr__", "__str__", "__format__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
        "__ge__", "__hash__", "__bool__", "__len__", "__iter__", "__next__", "__contains__",
        "__getitem__", "__setitem__", "__delitem__", "__missing__", "__post_init__",
        "__enter__", "__exit__", "__call__", "__getattr__",
        "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
        "__radd__", "__rsub__", "__rmul__", "__neg__", "__abs__",
    }
)  # fmt: skip
"""Dunder methods a script may reach as ``super().__name__`` (findings18 M01/M23), each
decided by the attribute guard: a script base's method as it is, a few of ``object``'s,
an exception's and a ``dict``'s behind their checks, nothing else of a host base."""
CLASS_BODY_NAMES = frozenset({"__slots__", "__match_args__"})
"""Dunder names a script's class body may assign (checked when the class is made)."""


MATCH_SELF_TYPES = {
    name: f"_mc_{name}_"
    for name in (
        "bool", "bytearray", "bytes", "dict", "float", "frozenset", "int", "list", "set",
        "str", "tuple",
    )
}  # fmt: skip
"""Builtin types a class pattern may bind whole (``case int(n):``), and the hidden name each
is compiled to (bound to the real type in the run's namespace; a script cannot rebind it)."""


def is_private_name(name: str) -> bool:
    """``_x``: a private name a script may give its own things (``self._cache``, ``def _helper``).

    One leading underscore and no trailing one: every hook the compiler injects ends with
    ``_`` (``_getattr_``, ``_tk_``), as do enum's ``_value_`` family, and ``__x`` is a
    dunder or a mangled name; those stay refused. The attribute guard allows a private name
    only on objects whose classes the script defined (:func:`.script_classes.private_ok`).
    """
    return len(name) > 1 and name[0] == "_" and name[1] != "_" and name[-1] != "_"


SCRIPT_CLASS_MARK = "__scriptgate_script_class__"
"""Class attribute marking classes a script defined (scripts cannot read or write it)."""
SIZED_VIEWS = frozenset({type({}.keys()), type({}.values()), type({}.items())})
"""The dict view types (sized, iterated lazily)."""
