"""The data model of the compiled validator: issues, results, JSON helpers and ``_Node``.

Owns the value-level helpers every other part shares (JSON type tests with JavaScript
semantics, ``_canon`` equality keys, the ``got <actual>`` word) and the node record the
compiler fills. Imports no other part of the package at module level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scriptgate.runtime._ecma_regex import EcmaPattern

UnresolvedRefs = Literal["reject", "throw"]


@dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One validation error: ``path`` is a JSON Pointer (``""`` = root)."""

    path: str
    keyword: str
    message: str


@dataclass(frozen=True, slots=True)
class ParseResult:
    """The outcome of :meth:`CompiledSchema.parse`.

    ``ok`` → ``value`` is the coerced value; otherwise ``errors`` lists the issues (in
    pi's order) and ``value`` is the coerced value that failed.
    """

    ok: bool
    value: Any
    errors: tuple[ValidationIssue, ...] = ()


def escape_pointer_segment(key: str) -> str:
    """JSON Pointer escaping of one segment (``~`` → ``~0``, ``/`` → ``~1``)."""
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def pointer_to_path(pointer: str) -> str:
    """pi's pointer → dotted path (§2.7): ``""`` → ``root``; ``/a~1b/0`` → ``a/b.0``."""
    if pointer == "":
        return "root"
    segments = pointer[1:].split("/") if pointer.startswith("/") else pointer.split("/")
    return ".".join(s.replace("~1", "/").replace("~0", "~") for s in segments)


# ----------------------------------------------------------------------------- JSON helpers

_MISSING: Any = object()
_NOCHANGE: Any = object()


def _is_num(x: object) -> bool:
    t = type(x)
    if t is int or t is float:
        return True
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_dict(x: object) -> bool:
    return type(x) is dict or isinstance(x, dict)


def _is_list(x: object) -> bool:
    return type(x) is list or isinstance(x, (list, tuple))


def _canon(x: Any) -> Any:
    """A hashable key such that JSON-equal values (``1 == 1.0``, bool ≠ number) share it."""
    t = type(x)
    if t is str or x is None:
        return x
    if t is bool:
        return ("b", x)
    if t is int or t is float:
        return ("n", x)
    if isinstance(x, bool):
        return ("b", bool(x))
    if isinstance(x, (int, float)):
        return ("n", x)
    if isinstance(x, str):
        return str(x)
    if isinstance(x, Mapping):
        return ("o", frozenset((k, _canon(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return ("a", tuple(_canon(v) for v in x))
    return ("?", id(x))


def _actual_type(x: Any) -> str:
    """The ``got <actual>`` word of a type error."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, str):
        return "string"
    if isinstance(x, (int, float)):
        if isinstance(x, float):
            if x != x:
                return "NaN"
            if x in (math.inf, -math.inf):
                return "Infinity" if x > 0 else "-Infinity"
            return "integer" if x.is_integer() else "number"
        return "integer"
    if isinstance(x, Mapping):
        return "object"
    if isinstance(x, (list, tuple)):
        return "array"
    if isinstance(x, (bytes, bytearray)):
        return "bytes"
    return "object"


def _t_null(x: Any) -> bool:
    return x is None


def _t_boolean(x: Any) -> bool:
    return type(x) is bool


def _t_string(x: Any) -> bool:
    return type(x) is str or isinstance(x, str)


def _t_object(x: Any) -> bool:
    return type(x) is dict or isinstance(x, dict)


def _t_array(x: Any) -> bool:
    return type(x) is list or isinstance(x, (list, tuple))


def _t_number(x: Any) -> bool:
    t = type(x)
    if t is int:
        return True
    if t is float:
        return bool(x - x == 0.0)  # finite
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _t_integer(x: Any) -> bool:
    t = type(x)
    if t is int:
        return True
    if t is float:
        return bool(x.is_integer())
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return isinstance(x, float) and x.is_integer()


def _t_integer_strict(x: Any) -> bool:
    """Integer with no coercion pending: an ``int`` (an integral float becomes one)."""
    return type(x) is int or (isinstance(x, int) and not isinstance(x, bool))


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "null": _t_null,
    "boolean": _t_boolean,
    "string": _t_string,
    "object": _t_object,
    "array": _t_array,
    "number": _t_number,
    "integer": _t_integer,
}


def _true(x: Any) -> bool:
    return True


def _false(x: Any) -> bool:
    return False


def _wraps_scalars(node: _Node) -> bool:
    """Whether pass 2 wraps a non-array at ``node`` though no ``type`` names an array.

    pi's pass 2 applies array rules to a node without ``type`` that has ``items`` (and no
    keyword that decides first: ``$ref``, ``const``, ``enum``, a union, ``allOf``,
    ``properties``/``patternProperties``); a tuple never wraps. Mirrors ``_pass2``.
    """
    return (
        node.kind == _NORMAL
        and node.types is None
        and node.items is not None
        and node.prefix is None
        and node.ref is None
        and node.const is _MISSING
        and node.enum is None
        and node.any_of is None
        and node.one_of is None
        and node.all_of is None
        and node.properties is None
        and not node.pattern_props
    )


# ----------------------------------------------------------------------------- nodes

_TRUE, _FALSE, _NORMAL = 1, 2, 0


_VALID_BUILDER: list[Callable[[_Node, bool], Callable[[Any], bool]]] = []
"""The validity compiler, installed by :mod:`._keywords` when it loads (the package's
``__init__`` imports it before any node exists): the model sits below the keywords and
does not import them."""


class _Node:
    """One compiled schema node. Fields mirror keywords; ``None`` = keyword absent."""

    __slots__ = (
        "_p",
        "_v",
        "_vstate",
        "accepts_null",
        "additional",
        "all_of",
        "any_of",
        "const",
        "contains",
        "declared",
        "dep_required",
        "dep_schemas",
        "dyn_ref",
        "else_",
        "enum",
        "enum_keys",
        "enum_list",
        "excl_max",
        "excl_min",
        "false_keyword",
        "false_message",
        "fk",
        "format_check",
        "format_name",
        "has_max_contains",
        "has_min_contains",
        "if_",
        "is_ref",
        "items",
        "items_coerce",
        "kind",
        "max_contains",
        "max_items",
        "max_length",
        "max_props",
        "maximum",
        "min_contains",
        "min_items",
        "min_length",
        "min_props",
        "minimum",
        "multiple_of",
        "not_",
        "one_of",
        "pattern",
        "pattern_props",
        "pattern_text",
        "prefix",
        "properties",
        "property_names",
        "reentrant",
        "ref",
        "required",
        "required_set",
        "tag",
        "then",
        "type_array",
        "types",
        "uneval_items",
        "uneval_props",
        "unique",
    )

    def __init__(self, kind: int = _NORMAL) -> None:
        self.kind = kind
        self._v: Callable[[Any], bool] | None = None
        self._p: Callable[[Any], bool] | None = None
        self._vstate = 0
        self.accepts_null: bool | None = None
        self.types: tuple[str, ...] | None = None
        self.type_array = False
        self.const: Any = _MISSING
        self.enum: tuple[Any, ...] | None = None
        self.enum_list: list[Any] = []
        self.enum_keys: frozenset[Any] = frozenset()
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.pattern: EcmaPattern | None = None
        self.pattern_text: str | None = None
        self.format_name: str | None = None
        self.format_check: Callable[[str], bool] | None = None
        self.minimum: float | None = None
        self.maximum: float | None = None
        self.excl_min: float | None = None
        self.excl_max: float | None = None
        self.multiple_of: float | None = None
        self.properties: dict[str, _Node] | None = None
        #: (key matcher, schema): the matcher is an ECMAScript ``search`` on the key.
        self.pattern_props: tuple[tuple[Callable[[Any], bool], _Node], ...] = ()
        self.additional: _Node | None = None
        self.property_names: _Node | None = None
        self.required: tuple[str, ...] = ()
        self.required_set: frozenset[str] = frozenset()
        self.min_props: int | None = None
        self.max_props: int | None = None
        self.dep_required: tuple[tuple[str, tuple[str, ...]], ...] = ()
        self.dep_schemas: tuple[tuple[str, _Node], ...] = ()
        self.prefix: tuple[_Node, ...] | None = None
        self.items: _Node | None = None
        self.items_coerce: _Node | None = None
        self.contains: _Node | None = None
        self.min_contains = 1
        self.max_contains: int | None = None
        self.has_min_contains = False
        self.has_max_contains = False
        self.min_items: int | None = None
        self.max_items: int | None = None
        self.unique = False
        self.all_of: tuple[_Node, ...] | None = None
        self.any_of: tuple[_Node, ...] | None = None
        self.one_of: tuple[_Node, ...] | None = None
        self.not_: _Node | None = None
        self.if_: _Node | None = None
        self.then: _Node | None = None
        self.else_: _Node | None = None
        self.ref: _Node | None = None
        self.dyn_ref: _Node | None = None
        self.is_ref = False
        self.uneval_props: _Node | None = None
        self.uneval_items: _Node | None = None
        self.false_keyword = "false"
        self.false_message = "no value is allowed here"
        self.declared: frozenset[str] | None = None
        self.tag: Any = _MISSING
        #: On a cycle of in-place applicators (``$ref``, unions, ``allOf``, …): the node
        #: can meet the very same value again without consuming any of it.
        self.reentrant = False
        #: How the fused coercion walk treats the node (``_coerce._fused_kind``; -1 = not yet).
        self.fk = -1

    # -- validity -----------------------------------------------------------------

    def v(self, x: Any) -> bool:
        """Whether ``x`` validates (no coercion)."""
        fn = self._v
        if fn is None:
            fn = _VALID_BUILDER[0](self, False)
        return fn(x)

    def rejects_null(self) -> bool:
        """Whether ``null`` fails this schema (cached)."""
        if self.accepts_null is None:
            self.accepts_null = self.v(None)
        return not self.accepts_null

    def item_node(self, i: int) -> _Node | None:
        """The schema coercion uses for array item ``i`` (pi's ``itemSchemaAt``)."""
        prefix = self.prefix
        if prefix is not None and i < len(prefix):
            return prefix[i]
        return self.items_coerce


_TRUE_NODE = _Node(_TRUE)
_FALSE_NODE = _Node(_FALSE)
