"""The coercing JSON-Schema validator (pi §2).

:func:`compile_schema` turns a JSON Schema (draft 2020-12, draft-7 forms accepted) into a
:class:`CompiledSchema`: a tree of small node objects whose validity checks are Python
closures built once. A :class:`CompiledSchema` offers

- :meth:`CompiledSchema.coerce`: pi's three lenient coercion passes (§2.2), copy-on-write;
- :meth:`CompiledSchema.check`: the error list (§2.5–2.6) without coercion;
- :meth:`CompiledSchema.parse`: coerce, then check → :class:`ParseResult`.

Semantics follow pi-schema 1.6.0 with pi-ai's options, with JavaScript number and string
rules (:mod:`scriptgate.runtime._jsnum`) and ECMAScript ``pattern``
(:mod:`scriptgate.runtime._ecma_regex`).

Deliberate divergences from upstream (documented, each named by a test):

- pass 1 (optional nulls) also looks through ``$ref`` targets, ``allOf`` members and
  ``anyOf``/``oneOf`` branches, so an optional ``null`` there is dropped instead of being
  fabricated into ``"null"`` or ``0`` (the ``fitchmultz/pi`` fix, §2.2);
- for a union in pass 1, a value some branch already accepts is left alone; otherwise the
  first branch whose drop-then-coerce result it accepts decides;
- an integral float under ``type: "integer"`` comes out as a Python ``int``;
- a node with no ``type`` but ``items`` converts the items of an array yet never wraps a
  non-array (wrapping would change a value the node already accepts);
- ``$dynamicRef`` resolves against the outermost (root) resource's ``$dynamicAnchor`` of
  that name, else statically — the dynamic scope of a single compiled document.

Invariants (property-tested): coercion never mutates its input; a value that already
validates comes back unchanged (the very same object — no copy is made); parsing a coerced
value again changes nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urldefrag, urljoin

from scriptgate.errors import SchemaCompileError
from scriptgate.runtime._ecma_regex import compile_ecma
from scriptgate.runtime._formats import FORMATS
from scriptgate.runtime._jsnum import (
    js_json,
    js_number_to_string,
    js_to_number,
)

__all__ = [
    "CompiledSchema",
    "ParseResult",
    "ValidationIssue",
    "compile_schema",
    "escape_pointer_segment",
    "pointer_to_path",
]

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


# ----------------------------------------------------------------------------- nodes

_TRUE, _FALSE, _NORMAL = 1, 2, 0


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
        self.pattern: re.Pattern[str] | None = None
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

    # -- validity -----------------------------------------------------------------

    def v(self, x: Any) -> bool:
        """Whether ``x`` validates (no coercion)."""
        fn = self._v
        if fn is None:
            fn = _build_valid(self, False)
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


# ----------------------------------------------------------------------------- compiler

_SUB_ONE = (
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "items",
)
_SUB_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SUB_MAP = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
)


class _Unresolved(Exception):
    pass


def _bad_schema(schema: object) -> SchemaCompileError:
    try:
        text = js_json(schema)
    except (TypeError, ValueError, RecursionError):
        text = repr(schema)
    return SchemaCompileError(f"A schema must be an object or a boolean, got {text}")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _count(value: object) -> int | None:
    n = _number(value)
    if n is None:
        return None
    return math.ceil(n) if isinstance(n, float) and math.isfinite(n) else int(n)


class _Compiler:
    def __init__(
        self,
        root: Any,
        *,
        formats: bool,
        unresolved_refs: str,
        schemas: Mapping[str, Any] | None,
    ) -> None:
        self.formats = formats
        self.reject = unresolved_refs == "reject"
        self.remote = dict(schemas or {})
        self.docs: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self.dyn_anchors: dict[str, Any] = {}
        self.bases: dict[int, str] = {}
        self.memo: dict[tuple[int, str], _Node] = {}
        self.keep: list[Any] = []
        self.root_base = ""
        self.dyn_pending: list[tuple[_Node, str, str]] = []
        if isinstance(root, Mapping):
            rid = root.get("$id")
            if isinstance(rid, str):
                self.root_base = urldefrag(urljoin("", rid))[0]
        self.docs[""] = root
        self._scan(root, "")

    # -- scanning for $id / $anchor ------------------------------------------------

    def _scan(self, schema: Any, base: str) -> None:
        stack: list[tuple[Any, str]] = [(schema, base)]
        seen: set[int] = set()
        while stack:
            node, parent_base = stack.pop()
            if not isinstance(node, Mapping) or id(node) in seen:
                continue
            seen.add(id(node))
            self.bases.setdefault(id(node), parent_base)
            node_base = parent_base
            sid = node.get("$id")
            if isinstance(sid, str):
                node_base = urldefrag(_join(parent_base, sid))[0]
                self.docs.setdefault(node_base, node)
            anchor = node.get("$anchor")
            if isinstance(anchor, str):
                self.anchors.setdefault(node_base + "#" + anchor, node)
            dyn = node.get("$dynamicAnchor")
            if isinstance(dyn, str):
                self.anchors.setdefault(node_base + "#" + dyn, node)
                self.dyn_anchors.setdefault(node_base + "#" + dyn, node)
            for key in _SUB_ONE:
                sub = node.get(key)
                if isinstance(sub, Mapping):
                    stack.append((sub, node_base))
            for key in _SUB_LIST:
                sub = node.get(key)
                if isinstance(sub, (list, tuple)):
                    stack.extend((s, node_base) for s in sub)
            for key in _SUB_MAP:
                sub = node.get(key)
                if isinstance(sub, Mapping):
                    stack.extend((s, node_base) for s in sub.values())

    # -- references -------------------------------------------------------------

    def _resolve(self, ref: str, base: str) -> tuple[Any, str]:
        full = _join(base, ref)
        doc_uri, frag = urldefrag(full)
        doc = self.docs.get(doc_uri, _MISSING)
        if doc is _MISSING:
            remote = self.remote.get(doc_uri, _MISSING)
            if remote is _MISSING:
                raise _Unresolved(f"Unresolved $ref {ref} (no schema registered for {doc_uri})")
            self.docs[doc_uri] = remote
            self.keep.append(remote)
            if isinstance(remote, Mapping):
                rid = remote.get("$id")
                if not isinstance(rid, str):
                    self.bases.setdefault(id(remote), doc_uri)
            self._scan(remote, doc_uri)
            doc = remote
        if frag == "":
            return doc, self.bases.get(id(doc), doc_uri)
        if frag.startswith("/"):
            cur = doc
            for raw in frag[1:].split("/"):
                seg = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(cur, Mapping) and seg in cur:
                    cur = cur[seg]
                elif (
                    isinstance(cur, (list, tuple))
                    and seg.isdigit()
                    and (seg == "0" or not seg.startswith("0"))
                    and int(seg) < len(cur)
                ):
                    cur = cur[int(seg)]
                else:
                    raise _Unresolved(f"Unresolved $ref #{frag} in {doc_uri}")
            return cur, self.bases.get(id(cur), doc_uri)
        target = self.anchors.get(doc_uri + "#" + unquote(frag), _MISSING)
        if target is _MISSING:
            raise _Unresolved(f"Unresolved $ref {ref} (no anchor {frag} in {doc_uri})")
        return target, self.bases.get(id(target), doc_uri)

    def _ref_node(self, ref: Any, base: str) -> _Node:
        if not isinstance(ref, str):
            raise SchemaCompileError(f"$ref must be a string, got {js_json(ref)}")
        try:
            target, tbase = self._resolve(ref, base)
        except _Unresolved as exc:
            if not self.reject:
                raise SchemaCompileError(str(exc)) from None
            node = _Node(_FALSE)
            node.false_keyword = "$ref"
            node.false_message = f"unresolved reference {ref}"
            return node
        return self.node(target, tbase)

    # -- nodes ------------------------------------------------------------------

    def node(self, schema: Any, base: str) -> _Node:
        if schema is True:
            return _TRUE_NODE
        if schema is False:
            return _FALSE_NODE
        if not isinstance(schema, Mapping):
            raise _bad_schema(schema)
        key = (id(schema), base)
        found = self.memo.get(key)
        if found is not None:
            return found
        node = _Node()
        self.memo[key] = node
        self.keep.append(schema)
        sid = schema.get("$id")
        if isinstance(sid, str):
            base = urldefrag(_join(base, sid))[0]
        self._fill(node, schema, base)
        return node

    def _sub(self, schema: Any, base: str) -> _Node:
        return self.node(schema, base)

    def _subs(self, value: Any, base: str) -> tuple[_Node, ...]:
        if not isinstance(value, (list, tuple)):
            raise SchemaCompileError(f"expected an array of schemas, got {js_json(value)}")
        return tuple(self.node(s, base) for s in value)

    def _fill(self, node: _Node, s: Mapping[str, Any], base: str) -> None:
        get = s.get
        t = get("type")
        if isinstance(t, str):
            node.types = (t,)
        elif isinstance(t, (list, tuple)) and all(isinstance(x, str) for x in t):
            node.types = tuple(t)
            node.type_array = True
        if "const" in s:
            node.const = s["const"]
        enum = get("enum")
        if isinstance(enum, (list, tuple)):
            node.enum = tuple(enum)
            node.enum_list = list(enum)
            node.enum_keys = frozenset(_canon(v) for v in enum)
        node.min_length = _count(get("minLength"))
        node.max_length = _count(get("maxLength"))
        pattern = get("pattern")
        if isinstance(pattern, str):
            node.pattern_text = pattern
            node.pattern = compile_ecma(pattern)
        fmt = get("format")
        if self.formats and isinstance(fmt, str) and fmt in FORMATS:
            node.format_name = fmt
            node.format_check = FORMATS[fmt]
        node.minimum = _number(get("minimum"))
        node.maximum = _number(get("maximum"))
        node.excl_min = _number(get("exclusiveMinimum"))
        node.excl_max = _number(get("exclusiveMaximum"))
        mult = _number(get("multipleOf"))
        node.multiple_of = mult if mult is not None and mult > 0 else None
        # object keywords
        props = get("properties")
        if isinstance(props, Mapping):
            node.properties = {str(k): self._sub(v, base) for k, v in props.items()}
        pprops = get("patternProperties")
        if isinstance(pprops, Mapping):
            node.pattern_props = tuple(
                (_key_matcher(compile_ecma(str(k))), self._sub(v, base)) for k, v in pprops.items()
            )
        if "additionalProperties" in s:
            node.additional = self._sub(s["additionalProperties"], base)
        if "propertyNames" in s:
            node.property_names = self._sub(s["propertyNames"], base)
        req = get("required")
        if isinstance(req, (list, tuple)):
            node.required = tuple(str(r) for r in req)
            node.required_set = frozenset(node.required)
        node.min_props = _count(get("minProperties"))
        node.max_props = _count(get("maxProperties"))
        dep_req: list[tuple[str, tuple[str, ...]]] = []
        dep_sch: list[tuple[str, _Node]] = []
        dreq = get("dependentRequired")
        if isinstance(dreq, Mapping):
            for k, v in dreq.items():
                if isinstance(v, (list, tuple)):
                    dep_req.append((str(k), tuple(str(x) for x in v)))
        dsch = get("dependentSchemas")
        if isinstance(dsch, Mapping):
            for k, v in dsch.items():
                dep_sch.append((str(k), self._sub(v, base)))
        deps = get("dependencies")
        if isinstance(deps, Mapping):
            for k, v in deps.items():
                if isinstance(v, (list, tuple)):
                    dep_req.append((str(k), tuple(str(x) for x in v)))
                else:
                    dep_sch.append((str(k), self._sub(v, base)))
        node.dep_required = tuple(dep_req)
        node.dep_schemas = tuple(dep_sch)
        # array keywords
        items = get("items", _MISSING)
        if "prefixItems" in s:
            node.prefix = self._subs(s["prefixItems"], base)
        if isinstance(items, (list, tuple)):
            node.prefix = self._subs(items, base)
            if "additionalItems" in s:
                node.items = self._sub(s["additionalItems"], base)
            node.items_coerce = None
        elif items is not _MISSING:
            node.items = self._sub(items, base)
            node.items_coerce = node.items
        if "contains" in s:
            node.contains = self._sub(s["contains"], base)
            mn = _count(get("minContains"))
            mx = _count(get("maxContains"))
            if mn is not None:
                node.min_contains = mn
                node.has_min_contains = True
            if mx is not None:
                node.max_contains = mx
                node.has_max_contains = True
        node.min_items = _count(get("minItems"))
        node.max_items = _count(get("maxItems"))
        node.unique = get("uniqueItems") is True
        # applicators
        if "allOf" in s:
            node.all_of = self._subs(s["allOf"], base)
        if "anyOf" in s:
            node.any_of = self._subs(s["anyOf"], base)
        if "oneOf" in s:
            node.one_of = self._subs(s["oneOf"], base)
        if "not" in s:
            node.not_ = self._sub(s["not"], base)
        if "if" in s:
            node.if_ = self._sub(s["if"], base)
            if "then" in s:
                node.then = self._sub(s["then"], base)
            if "else" in s:
                node.else_ = self._sub(s["else"], base)
        if "$ref" in s:
            node.is_ref = True
            node.ref = self._ref_node(s["$ref"], base)
        if "$dynamicRef" in s:
            ref = s["$dynamicRef"]
            node.dyn_ref = self._ref_node(ref, base)
            if isinstance(ref, str):
                self.dyn_pending.append((node, ref, base))
        if "unevaluatedProperties" in s:
            node.uneval_props = self._sub(s["unevaluatedProperties"], base)
        if "unevaluatedItems" in s:
            node.uneval_items = self._sub(s["unevaluatedItems"], base)

    def finish(self) -> None:
        """Rebind ``$dynamicRef`` to the outermost resource's matching ``$dynamicAnchor``."""
        for node, ref, base in self.dyn_pending:
            frag = urldefrag(_join(base, ref))[1]
            if not frag or frag.startswith("/"):
                continue
            try:
                target, _ = self._resolve(ref, base)
            except _Unresolved:
                continue
            if not (isinstance(target, Mapping) and target.get("$dynamicAnchor") == frag):
                continue
            outer = self.dyn_anchors.get(self.root_base + "#" + frag)
            if outer is not None:
                node.dyn_ref = self.node(outer, self.bases.get(id(outer), self.root_base))


def _join(base: str, ref: str) -> str:
    if not base:
        return ref
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


# ----------------------------------------------------------------------------- validity


def _build_valid(node: _Node, strict: bool) -> Callable[[Any], bool]:
    """Compile (once) the validity closure of ``node``.

    ``strict`` additionally rejects what coercion would still change (an integral float
    under ``integer``); it propagates only through monotonic keywords so that a strict
    success always implies a plain success.
    """
    cached = node._p if strict else node._v
    if cached is not None:
        return cached
    if node.kind == _TRUE:
        fn: Callable[[Any], bool] = _true
    elif node.kind == _FALSE:
        fn = _false
    else:
        flag = 2 if strict else 1
        if node._vstate & flag:
            # Recursive schema: defer to the closure once it exists.
            def trampoline(x: Any) -> bool:
                return _build_valid(node, strict)(x)

            return trampoline
        node._vstate |= flag
        try:
            fn = _assemble(node, strict)
        finally:
            node._vstate &= ~flag
    if strict:
        node._p = fn
    else:
        node._v = fn
    return fn


def _type_fn(types: tuple[str, ...], strict: bool) -> Callable[[Any], bool]:
    checks = [
        (_t_integer_strict if strict and t == "integer" else _TYPE_CHECKS[t])
        for t in types
        if t in _TYPE_CHECKS
    ]
    if not checks:
        return _false
    if len(checks) == 1:
        return checks[0]
    tup = tuple(checks)

    def any_type(x: Any) -> bool:
        for c in tup:  # noqa: SIM110 - a plain loop is faster here
            if c(x):
                return True
        return False

    return any_type


_TYPE_FN_CACHE: dict[tuple[str, ...], Callable[[Any], bool]] = {}


def _type_fn_cached(types: tuple[str, ...]) -> Callable[[Any], bool]:
    fn = _TYPE_FN_CACHE.get(types)
    if fn is None:
        fn = _type_fn(types, False)
        if len(_TYPE_FN_CACHE) < 256:
            _TYPE_FN_CACHE[types] = fn
    return fn


def _assemble(node: _Node, strict: bool) -> Callable[[Any], bool]:
    def sub(n: _Node) -> Callable[[Any], bool]:
        return _build_valid(n, strict)

    def loose(n: _Node) -> Callable[[Any], bool]:
        return _build_valid(n, False)

    checks: list[Callable[[Any], bool]] = []
    tfn = _type_fn(node.types, strict) if node.types is not None else None

    if node.enum is not None:
        keys = node.enum_keys

        def enum_check(x: Any) -> bool:
            if type(x) is str:
                return x in keys
            try:
                return _canon(x) in keys
            except TypeError:
                return False

        checks.append(enum_check)
    if node.const is not _MISSING:
        ckey = _canon(node.const)

        def const_check(x: Any) -> bool:
            return bool(_canon(x) == ckey)

        checks.append(const_check)
    string_fn = _string_check(node)
    if string_fn is not None:
        checks.append(string_fn)
    number_fn = _number_check(node)
    if number_fn is not None:
        checks.append(number_fn)
    object_fn = _object_check(node, sub)
    if object_fn is not None:
        checks.append(object_fn)
    array_fn = _array_check(node, sub, loose)
    if array_fn is not None:
        checks.append(array_fn)
    if node.all_of is not None:
        all_fns = tuple(sub(m) for m in node.all_of)

        def all_of(x: Any) -> bool:
            for f in all_fns:  # noqa: SIM110 - a plain loop is faster here
                if not f(x):
                    return False
            return True

        checks.append(all_of)
    if node.any_of is not None:
        any_fns = tuple(sub(m) for m in node.any_of)

        def any_of(x: Any) -> bool:
            for f in any_fns:  # noqa: SIM110 - a plain loop is faster here
                if f(x):
                    return True
            return False

        checks.append(any_of)
    if node.one_of is not None:
        one_fns = tuple(loose(m) for m in node.one_of)

        def one_of(x: Any) -> bool:
            hits = 0
            for f in one_fns:
                if f(x):
                    hits += 1
                    if hits > 1:
                        return False
            return hits == 1

        checks.append(one_of)
    if node.not_ is not None:
        not_fn = loose(node.not_)
        checks.append(lambda x: not not_fn(x))
    if node.if_ is not None:
        if_fn = loose(node.if_)
        then_fn = sub(node.then) if node.then is not None else _true
        else_fn = sub(node.else_) if node.else_ is not None else _true
        checks.append(lambda x: then_fn(x) if if_fn(x) else else_fn(x))
    if node.ref is not None:
        checks.append(sub(node.ref))
    if node.dyn_ref is not None:
        checks.append(sub(node.dyn_ref))
    if node.uneval_props is not None:
        checks.append(_uneval_props_check(node, loose(node.uneval_props)))
    if node.uneval_items is not None:
        checks.append(_uneval_items_check(node, loose(node.uneval_items)))

    if not checks:
        return tfn if tfn is not None else _true
    if len(checks) == 1:
        only = checks[0]
        if tfn is None:
            return only
        t1 = tfn

        def typed_one(x: Any) -> bool:
            return t1(x) and only(x)

        return typed_one
    all_checks = tuple(checks)
    if tfn is None:

        def untyped(x: Any) -> bool:
            for c in all_checks:  # noqa: SIM110 - a plain loop is faster here
                if not c(x):
                    return False
            return True

        return untyped
    t2 = tfn

    def typed(x: Any) -> bool:
        if not t2(x):
            return False
        for c in all_checks:  # noqa: SIM110 - a plain loop is faster here
            if not c(x):
                return False
        return True

    return typed


def _string_check(node: _Node) -> Callable[[Any], bool] | None:
    mn, mx, rx, fmt = node.min_length, node.max_length, node.pattern, node.format_check
    if mn is None and mx is None and rx is None and fmt is None:
        return None
    lo = mn if mn is not None else 0
    hi = mx if mx is not None else math.inf
    search = rx.search if rx is not None else None

    def string_check(x: Any) -> bool:
        if type(x) is not str and not isinstance(x, str):
            return True
        n = len(x)
        if n < lo or n > hi:
            return False
        if search is not None and search(x) is None:
            return False
        return fmt is None or fmt(x)

    return string_check


def _is_multiple(x: float | int, m: float | int) -> bool:
    if type(x) is int and type(m) is int:
        return x % m == 0
    try:
        q = x / m
    except OverflowError:
        return False
    if not math.isfinite(q):
        return False
    if q.is_integer():
        return True
    return abs(q - round(q)) < 1e-9 * max(1.0, abs(q)) and abs(x - round(q) * m) < 1e-9


def _number_check(node: _Node) -> Callable[[Any], bool] | None:
    mn, mx, emn, emx, mult = (
        node.minimum,
        node.maximum,
        node.excl_min,
        node.excl_max,
        node.multiple_of,
    )
    if mn is None and mx is None and emn is None and emx is None and mult is None:
        return None
    lo = mn if mn is not None else -math.inf
    hi = mx if mx is not None else math.inf
    elo = emn if emn is not None else -math.inf
    ehi = emx if emx is not None else math.inf

    def number_check(x: Any) -> bool:
        t = type(x)
        if (t is not int and t is not float) and (
            isinstance(x, bool) or not isinstance(x, (int, float))
        ):
            return True
        if x < lo or x > hi or x <= elo or x >= ehi:
            return False
        return mult is None or _is_multiple(x, mult)

    return number_check


def _object_check(
    node: _Node, sub: Callable[[_Node], Callable[[Any], bool]]
) -> Callable[[Any], bool] | None:
    has_any = (
        node.properties is not None
        or node.pattern_props
        or node.additional is not None
        or node.property_names is not None
        or node.required
        or node.min_props is not None
        or node.max_props is not None
        or node.dep_required
        or node.dep_schemas
    )
    if not has_any:
        return None
    props = {k: sub(n) for k, n in (node.properties or {}).items()}
    props_get = props.get
    pats = tuple((match, sub(n)) for match, n in node.pattern_props)
    addl = sub(node.additional) if node.additional is not None else None
    pnames = sub(node.property_names) if node.property_names is not None else None
    required = node.required
    lo = node.min_props if node.min_props is not None else 0
    hi = node.max_props if node.max_props is not None else math.inf
    dep_req = node.dep_required
    dep_sch = tuple((k, sub(n)) for k, n in node.dep_schemas)
    simple = not pats and pnames is None

    def object_check(x: Any) -> bool:
        if type(x) is not dict and not isinstance(x, dict):
            return True
        for r in required:
            if r not in x:
                return False
        if simple:
            for k, val in x.items():
                pf = props_get(k)
                if pf is not None:
                    if not pf(val):
                        return False
                elif addl is not None and not addl(val):
                    return False
        else:
            for k, val in x.items():
                pf = props_get(k)
                matched = pf is not None
                if matched and not pf(val):  # type: ignore[misc]
                    return False
                for match, fn in pats:
                    if match(k):
                        matched = True
                        if not fn(val):
                            return False
                if not matched and addl is not None and not addl(val):
                    return False
                if pnames is not None and not pnames(k):
                    return False
        n = len(x)
        if n < lo or n > hi:
            return False
        for k, deps in dep_req:
            if k in x:
                for d in deps:
                    if d not in x:
                        return False
        for k, fn in dep_sch:  # noqa: SIM110 - a plain loop is faster here
            if k in x and not fn(x):
                return False
        return True

    return object_check


def _always_match(_: Any) -> bool:
    return True


def _key_matcher(rx: re.Pattern[str] | None) -> Callable[[Any], bool]:
    """A ``patternProperties`` key test; a pattern Python cannot express matches all."""
    if rx is None:
        return _always_match
    search = rx.search

    def match(key: Any) -> bool:
        return search(key if type(key) is str else str(key)) is not None

    return match


def _array_check(
    node: _Node,
    sub: Callable[[_Node], Callable[[Any], bool]],
    loose: Callable[[_Node], Callable[[Any], bool]],
) -> Callable[[Any], bool] | None:
    if (
        node.prefix is None
        and node.items is None
        and node.contains is None
        and node.min_items is None
        and node.max_items is None
        and not node.unique
    ):
        return None
    prefix = tuple(sub(n) for n in node.prefix) if node.prefix is not None else ()
    npre = len(prefix)
    items = sub(node.items) if node.items is not None else None
    lo = node.min_items if node.min_items is not None else 0
    hi = node.max_items if node.max_items is not None else math.inf
    unique = node.unique
    contains = loose(node.contains) if node.contains is not None else None
    cmin = node.min_contains
    cmax = node.max_contains if node.max_contains is not None else math.inf

    def array_check(x: Any) -> bool:
        if type(x) is not list and not isinstance(x, (list, tuple)):
            return True
        n = len(x)
        if n < lo or n > hi:
            return False
        for i in range(min(n, npre)):
            if not prefix[i](x[i]):
                return False
        if items is not None:
            for i in range(npre, n):
                if not items(x[i]):
                    return False
        if unique and n > 1 and not _all_unique(x):
            return False
        if contains is not None:
            hits = 0
            for item in x:
                if contains(item):
                    hits += 1
            if hits < cmin or hits > cmax:
                return False
        return True

    return array_check


def _all_unique(x: Sequence[Any]) -> bool:
    try:
        return len({_canon(v) for v in x}) == len(x)
    except TypeError:
        return True


# -- unevaluated* -------------------------------------------------------------------

_ALL: Any = True


def _eval_props(
    node: _Node, x: dict[str, Any], depth: int = 0, *, skip_own: bool = False
) -> set[str] | bool:
    """Property names ``node`` evaluates on the (valid) object ``x``; ``True`` = all.

    ``skip_own`` ignores the node's own ``unevaluatedProperties`` (the keyword asking).
    """
    if node.kind != _NORMAL or depth > 64:
        return set()
    if node.additional is not None or (node.uneval_props is not None and not skip_own):
        return True
    out: set[str] = set()
    if node.properties is not None:
        out.update(k for k in x if k in node.properties)
    for match, _ in node.pattern_props:
        out.update(k for k in x if match(k))
    subs = _applied_subschemas(node, x)
    subs.extend(n for k, n in node.dep_schemas if k in x)
    for s in subs:
        got = _eval_props(s, x, depth + 1)
        if got is True:
            return True
        if got is not False:
            out |= got
    return out


def _applied_subschemas(node: _Node, x: Any) -> list[_Node]:
    """The in-place applicators of ``node`` that apply to ``x`` (for ``unevaluated*``).

    ``allOf`` members, the union branches ``x`` matches, the taken ``if``/``then``
    or ``else``, and the ``$ref``/``$dynamicRef`` targets.
    """
    subs: list[_Node] = []
    if node.all_of:
        subs.extend(node.all_of)
    for union in (node.any_of, node.one_of):
        if union:
            subs.extend(b for b in union if b.v(x))
    if node.if_ is not None:
        if node.if_.v(x):
            subs.append(node.if_)
            if node.then is not None:
                subs.append(node.then)
        elif node.else_ is not None:
            subs.append(node.else_)
    if node.ref is not None:
        subs.append(node.ref)
    if node.dyn_ref is not None:
        subs.append(node.dyn_ref)
    return subs


def _eval_items(
    node: _Node, x: Sequence[Any], depth: int = 0, *, skip_own: bool = False
) -> set[int] | bool:
    """Indices ``node`` evaluates on the (valid) array ``x``; ``True`` = all.

    ``skip_own`` ignores the node's own ``unevaluatedItems`` (the keyword asking).
    """
    if node.kind != _NORMAL or depth > 64:
        return set()
    if node.items is not None or (node.uneval_items is not None and not skip_own):
        return True
    out: set[int] = set()
    if node.prefix is not None:
        out.update(range(min(len(x), len(node.prefix))))
    if node.contains is not None:
        out.update(i for i, item in enumerate(x) if node.contains.v(item))
    for s in _applied_subschemas(node, x):
        got = _eval_items(s, x, depth + 1)
        if got is True:
            return True
        if got is not False:
            out |= got
    return out


def _uneval_props_check(node: _Node, fn: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check(x: Any) -> bool:
        if not _is_dict(x):
            return True
        seen = _eval_props_sans_self(node, x)
        if seen is True:
            return True
        return all(fn(v) for k, v in x.items() if k not in seen)  # type: ignore[operator]

    return check


def _uneval_items_check(node: _Node, fn: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check(x: Any) -> bool:
        if not _is_list(x):
            return True
        seen = _eval_items_sans_self(node, x)
        if seen is True:
            return True
        return all(fn(v) for i, v in enumerate(x) if i not in seen)  # type: ignore[operator]

    return check


def _eval_props_sans_self(node: _Node, x: dict[str, Any]) -> set[str] | bool:
    return _eval_props(node, x, skip_own=True)


def _eval_items_sans_self(node: _Node, x: Sequence[Any]) -> set[int] | bool:
    return _eval_items(node, x, skip_own=True)


# ----------------------------------------------------------------------------- errors


def _ptr(base: str, key: str | int) -> str:
    return base + "/" + (escape_pointer_segment(key) if isinstance(key, str) else str(key))


def _enum_text(values: Sequence[Any]) -> str:
    if len(values) > 20:
        head = ",".join(js_json(v) for v in values[:20])
        return f"[{head}, ... and {len(values) - 20} more]"
    return "[" + ",".join(js_json(v) for v in values) + "]"


def _num_text(n: float | int) -> str:
    return js_number_to_string(n)


def _errors(node: _Node, x: Any, ptr: str, out: list[ValidationIssue], depth: int = 0) -> None:
    """Append the issues of ``x`` against ``node`` in pi's walk order (§2.5)."""
    if node.kind == _TRUE:
        return
    if node.kind == _FALSE:
        out.append(ValidationIssue(ptr, node.false_keyword, node.false_message))
        return
    if depth > 200:
        return
    d = depth + 1
    if node.types is not None and not _type_fn_cached(node.types)(x):
        names = " or ".join(node.types)
        out.append(ValidationIssue(ptr, "type", f"expected {names}, got {_actual_type(x)}"))
        return
    if node.enum is not None and not _build_valid_enum(node, x):
        out.append(ValidationIssue(ptr, "enum", f"expected one of {_enum_text(node.enum)}"))
    if node.const is not _MISSING and _canon(x) != _canon(node.const):
        out.append(ValidationIssue(ptr, "const", f"expected {js_json(node.const)}"))
    if isinstance(x, str):
        n = len(x)
        if node.min_length is not None and n < node.min_length:
            out.append(
                ValidationIssue(ptr, "minLength", f"expected at least {node.min_length} characters")
            )
        if node.max_length is not None and n > node.max_length:
            out.append(
                ValidationIssue(ptr, "maxLength", f"expected at most {node.max_length} characters")
            )
        if node.pattern is not None and node.pattern.search(x) is None:
            out.append(ValidationIssue(ptr, "pattern", f"expected to match {node.pattern_text}"))
        if node.format_check is not None and not node.format_check(x):
            out.append(ValidationIssue(ptr, "format", f"expected format {node.format_name}"))
    elif _is_num(x):
        if node.minimum is not None and x < node.minimum:
            out.append(ValidationIssue(ptr, "minimum", f"expected >= {_num_text(node.minimum)}"))
        if node.maximum is not None and x > node.maximum:
            out.append(ValidationIssue(ptr, "maximum", f"expected <= {_num_text(node.maximum)}"))
        if node.excl_min is not None and x <= node.excl_min:
            out.append(
                ValidationIssue(ptr, "exclusiveMinimum", f"expected > {_num_text(node.excl_min)}")
            )
        if node.excl_max is not None and x >= node.excl_max:
            out.append(
                ValidationIssue(ptr, "exclusiveMaximum", f"expected < {_num_text(node.excl_max)}")
            )
        if node.multiple_of is not None and not _is_multiple(x, node.multiple_of):
            out.append(
                ValidationIssue(
                    ptr, "multipleOf", f"expected a multiple of {_num_text(node.multiple_of)}"
                )
            )
    elif _is_dict(x):
        _object_errors(node, x, ptr, out, d)
    if _is_list(x):
        _array_errors(node, x, ptr, out, d)
    if node.all_of is not None:
        for m in node.all_of:
            _errors(m, x, ptr, out, d)
    if node.any_of is not None and not any(b.v(x) for b in node.any_of):
        _union_errors(node, node.any_of, "anyOf", x, ptr, out, d)
    if node.one_of is not None:
        hits = sum(1 for b in node.one_of if b.v(x))
        if hits == 0:
            _union_errors(node, node.one_of, "oneOf", x, ptr, out, d)
        elif hits > 1:
            out.append(ValidationIssue(ptr, "oneOf", "matches more than one alternative"))
    if node.not_ is not None and node.not_.v(x):
        out.append(ValidationIssue(ptr, "not", "must not match the schema in not"))
    if node.if_ is not None:
        branch = node.then if node.if_.v(x) else node.else_
        if branch is not None:
            _errors(branch, x, ptr, out, d)
    if node.ref is not None:
        _errors(node.ref, x, ptr, out, d)
    if node.dyn_ref is not None and not node.dyn_ref.v(x):
        out.append(
            ValidationIssue(ptr, "$dynamicRef", "does not match the dynamically referenced schema")
        )
    if node.uneval_props is not None and _is_dict(x):
        seen = _eval_props_sans_self(node, x)
        if seen is not True:
            for k, val in x.items():
                if k in seen:  # type: ignore[operator]
                    continue
                if node.uneval_props.kind == _FALSE:
                    out.append(
                        ValidationIssue(_ptr(ptr, k), "unevaluatedProperties", "unknown field")
                    )
                else:
                    _errors(node.uneval_props, val, _ptr(ptr, k), out, d)
    if node.uneval_items is not None and _is_list(x):
        seen_i = _eval_items_sans_self(node, x)
        if seen_i is not True:
            for i, val in enumerate(x):
                if i in seen_i:  # type: ignore[operator]
                    continue
                if node.uneval_items.kind == _FALSE:
                    out.append(ValidationIssue(_ptr(ptr, i), "unevaluatedItems", "unexpected item"))
                else:
                    _errors(node.uneval_items, val, _ptr(ptr, i), out, d)


def _build_valid_enum(node: _Node, x: Any) -> bool:
    try:
        return _canon(x) in node.enum_keys
    except TypeError:
        return False


def _object_errors(
    node: _Node, x: dict[str, Any], ptr: str, out: list[ValidationIssue], d: int
) -> None:
    for r in node.required:
        if r not in x:
            out.append(ValidationIssue(_ptr(ptr, r), "required", "missing"))
    props = node.properties
    if props is not None:
        for k, child in props.items():
            if k in x and not child.v(x[k]):
                _errors(child, x[k], _ptr(ptr, k), out, d)
    for k, val in x.items():
        matched = props is not None and k in props
        for match, child in node.pattern_props:
            if match(k):
                matched = True
                if not child.v(val):
                    _errors(child, val, _ptr(ptr, k), out, d)
        if not matched and node.additional is not None:
            if node.additional.kind == _FALSE:
                out.append(ValidationIssue(_ptr(ptr, k), "additionalProperties", "unknown field"))
            elif not node.additional.v(val):
                _errors(node.additional, val, _ptr(ptr, k), out, d)
        if node.property_names is not None and not node.property_names.v(k):
            out.append(ValidationIssue(_ptr(ptr, k), "propertyNames", "invalid property name"))
    n = len(x)
    if node.min_props is not None and n < node.min_props:
        out.append(
            ValidationIssue(ptr, "minProperties", f"expected at least {node.min_props} properties")
        )
    if node.max_props is not None and n > node.max_props:
        out.append(
            ValidationIssue(ptr, "maxProperties", f"expected at most {node.max_props} properties")
        )
    for k, deps in node.dep_required:
        if k in x:
            for dep in deps:
                if dep not in x:
                    out.append(
                        ValidationIssue(
                            _ptr(ptr, dep), "dependentRequired", f"required when {k} is present"
                        )
                    )
    for k, child in node.dep_schemas:
        if k in x:
            _errors(child, x, ptr, out, d)


def _array_errors(
    node: _Node, x: Sequence[Any], ptr: str, out: list[ValidationIssue], d: int
) -> None:
    n = len(x)
    npre = 0
    if node.prefix is not None:
        npre = len(node.prefix)
        for i in range(min(n, npre)):
            if not node.prefix[i].v(x[i]):
                _errors(node.prefix[i], x[i], _ptr(ptr, i), out, d)
    if node.items is not None:
        kw_false = node.items.kind == _FALSE and node.prefix is not None
        for i in range(npre, n):
            if kw_false:
                out.append(ValidationIssue(_ptr(ptr, i), "items", "unexpected item"))
            elif not node.items.v(x[i]):
                _errors(node.items, x[i], _ptr(ptr, i), out, d)
    if node.min_items is not None and n < node.min_items:
        out.append(ValidationIssue(ptr, "minItems", f"expected at least {node.min_items} items"))
    if node.max_items is not None and n > node.max_items:
        out.append(ValidationIssue(ptr, "maxItems", f"expected at most {node.max_items} items"))
    if node.unique and n > 1 and not _all_unique(x):
        out.append(ValidationIssue(ptr, "uniqueItems", "expected unique items"))
    if node.contains is not None:
        hits = sum(1 for item in x if node.contains.v(item))
        cmin = node.min_contains
        cmax = node.max_contains
        if hits < cmin or (cmax is not None and hits > cmax):
            if node.has_min_contains and node.has_max_contains:
                msg = f"expected between {cmin} and {cmax} matching items"
            elif hits < cmin:
                msg = f"expected at least {cmin} matching {'item' if cmin == 1 else 'items'}"
            else:
                msg = f"expected at most {cmax} matching {'item' if cmax == 1 else 'items'}"
            out.append(ValidationIssue(ptr, "contains", msg))


def _deref(node: _Node) -> _Node:
    seen = 0
    while node.ref is not None and node.kind == _NORMAL and seen < 32:
        if node.properties is not None:
            break
        node = node.ref
        seen += 1
    return node


def _declared_keys(node: _Node, depth: int = 0) -> frozenset[str]:
    if node.declared is not None:
        return node.declared
    keys: set[str] = set()
    if node.kind == _NORMAL and depth < 16:
        if node.properties is not None:
            keys.update(node.properties)
        for m in node.all_of or ():
            keys |= _declared_keys(m, depth + 1)
        if node.ref is not None:
            keys |= _declared_keys(node.ref, depth + 1)
    result = frozenset(keys)
    if depth == 0:
        node.declared = result
    return result


def _tag_of(branches: tuple[_Node, ...]) -> tuple[str, list[Any]] | None:
    """The tag property and values when every branch has a distinct primitive ``const`` on it."""
    resolved = [_deref(b) for b in branches]
    if len(resolved) < 2 or any(b.properties is None for b in resolved):
        return None
    first = resolved[0].properties or {}
    for key in first:
        values: list[Any] = []
        for b in resolved:
            c = (b.properties or {}).get(key)
            if c is None:
                break
            c = _deref(c)
            lit = c.const
            if lit is _MISSING and c.enum is not None and len(c.enum) == 1:
                lit = c.enum[0]
            if lit is _MISSING or not isinstance(lit, (str, int, float)):
                break
            values.append(lit)
        else:
            if len({_canon(v) for v in values}) == len(values):
                return key, values
    return None


def _union_errors(
    node: _Node,
    branches: tuple[_Node, ...],
    keyword: str,
    x: Any,
    ptr: str,
    out: list[ValidationIssue],
    d: int,
) -> None:
    if not branches:
        out.append(ValidationIssue(ptr, keyword, "matches no alternative"))
        return
    if _is_dict(x):
        tagged = _tag_of(branches)
        if tagged is not None and tagged[0] in x:
            key, values = tagged
            tag_key = _canon(x[key])
            for branch, value in zip(branches, values, strict=True):
                if _canon(value) == tag_key:
                    errs: list[ValidationIssue] = []
                    _errors(branch, x, ptr, errs, d)
                    if errs:
                        out.extend(errs)
                    else:
                        out.append(ValidationIssue(ptr, keyword, "matches no alternative"))
                    return
            out.append(
                ValidationIssue(_ptr(ptr, key), keyword, f"expected one of {_enum_text(values)}")
            )
            return
    scores: list[int] = []
    for b in branches:
        if _is_dict(x):
            declared = _declared_keys(b)
            scores.append(sum(1 for k in x if k in declared))
        else:
            scores.append(0)
    best = max(scores)
    best_errs: list[ValidationIssue] | None = None
    best_depth = -1
    for b, score in zip(branches, scores, strict=True):
        if score != best:
            continue
        errs = []
        _errors(b, x, ptr, errs, d)
        depth = errs[0].path.count("/") if errs else -1
        if depth > best_depth:
            best_depth = depth
            best_errs = errs
    if best_errs:
        out.extend(best_errs)
    else:
        out.append(ValidationIssue(ptr, keyword, "matches no alternative"))


# ----------------------------------------------------------------------------- coercion


_BIGINT = re.compile(r"-?[0-9]+n", re.ASCII)
_SAFE = 2**53


def _finite_number(n: float | int) -> bool:
    return type(n) is int or math.isfinite(n)


def _conv_number(x: Any) -> Any:
    """Pass 2 ``number`` (TypeBox ``Value.Convert``)."""
    if x is None:
        return 0
    if isinstance(x, bool):
        return 1 if x else 0
    if isinstance(x, str):
        n = js_to_number(x)
        if _finite_number(n):
            return n
        lower = x.lower()
        if lower == "true":
            return 1
        if lower == "false":
            return 0
        if _BIGINT.fullmatch(x):
            return int(x[:-1])
        return _NOCHANGE
    return _NOCHANGE


def _trunc(n: float | int) -> Any:
    if type(n) is int:
        return n
    if not math.isfinite(n):
        return _NOCHANGE
    return int(n)


def _conv_integer(x: Any) -> Any:
    """Pass 2 ``integer``: as ``number``, then truncated toward zero (an ``int``)."""
    if _is_num(x):
        if type(x) is int or isinstance(x, int):
            return _NOCHANGE
        return _trunc(x)
    n = _conv_number(x)
    if n is _NOCHANGE:
        return n
    return _trunc(n)


def _conv_boolean(x: Any) -> Any:
    if x is None:
        return False
    if isinstance(x, bool):
        return _NOCHANGE
    if isinstance(x, str):
        lower = x.lower()
        if lower in ("true", "1"):
            return True
        if lower in ("false", "0"):
            return False
        return _NOCHANGE
    if _is_num(x):
        if x == 1:
            return True
        if x == 0:
            return False
    return _NOCHANGE


def _conv_null(x: Any) -> Any:
    if x is None:
        return _NOCHANGE
    if isinstance(x, str):
        if x.lower() in ("null", "undefined", "", "0"):
            return None
        return _NOCHANGE
    if x is False:
        return None
    if _is_num(x) and x == 0:
        return None
    return _NOCHANGE


def _conv_string(x: Any) -> Any:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "true" if x else "false"
    if _is_num(x) and _finite_number(x):
        return js_number_to_string(x)
    return _NOCHANGE


_CONV2: dict[str, Callable[[Any], Any]] = {
    "number": _conv_number,
    "integer": _conv_integer,
    "boolean": _conv_boolean,
    "null": _conv_null,
    "string": _conv_string,
}


def _convert_to_literal(literal: Any, x: Any) -> Any:
    """pi's ``const`` conversion: ``x`` converted to ``literal``'s type if it then equals it."""
    if literal is None:
        return _NOCHANGE
    if isinstance(literal, bool):
        c = _conv_boolean(x)
    elif isinstance(literal, str):
        c = _conv_string(x)
    elif isinstance(literal, (int, float)):
        c = _conv_number(x)
    else:
        return _NOCHANGE
    if c is _NOCHANGE or _canon(c) != _canon(literal):
        return _NOCHANGE
    return c


class _Ctx:
    """Per-``coerce()`` state: the re-entrancy guard."""

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active: set[tuple[int, int, int]] = set()


def _map_members(
    node: _Node, x: Any, fn: Callable[[_Node, Any], Any], *, drop_nulls: bool = False
) -> Any:
    """Copy-on-write walk of object members / array items with ``fn(child, value)``."""
    if _is_dict(x):
        props = node.properties
        pats = node.pattern_props
        addl = node.additional
        if props is None and not pats and addl is None:
            return x
        out: dict[str, Any] | None = None
        for k, val in x.items():
            child = props.get(k) if props is not None else None
            nv = val
            if child is not None:
                nv = fn(child, val)
            else:
                matched = False
                for match, pchild in pats:
                    if match(k):
                        matched = True
                        nv = fn(pchild, nv)
                if not matched and addl is not None:
                    nv = fn(addl, nv)
            if nv is not val:
                if out is None:
                    out = dict(x)
                out[k] = nv
        return x if out is None else out
    if _is_list(x):
        if node.prefix is None and node.items_coerce is None:
            return x
        lst: list[Any] | None = None
        for i, val in enumerate(x):
            child = node.item_node(i)
            if child is None:
                continue
            nv = fn(child, val)
            if nv is not val:
                if lst is None:
                    lst = list(x)
                lst[i] = nv
        return x if lst is None else lst
    return x


# -- pass 1: optional nulls ---------------------------------------------------------


def _pass1(node: _Node, x: Any, ctx: _Ctx, extra_required: frozenset[str] = frozenset()) -> Any:
    if node.kind != _NORMAL or not (_is_dict(x) or _is_list(x)):
        return x
    key = (1, id(node), id(x))
    if key in ctx.active:
        return x
    ctx.active.add(key)
    try:
        required = node.required_set | extra_required if extra_required else node.required_set
        if node.ref is not None:
            x = _pass1(node.ref, x, ctx, required)
        if node.all_of is not None:
            for m in node.all_of:
                x = _pass1(m, x, ctx, required)
        for union in (node.any_of, node.one_of):
            if union and not any(b.v(x) for b in union):
                x = _pass1_union(union, x, ctx, required)
        return _pass1_members(node, x, ctx, required)
    finally:
        ctx.active.discard(key)


def _pass1_union(union: tuple[_Node, ...], x: Any, ctx: _Ctx, required: frozenset[str]) -> Any:
    for b in union:
        cand = _pass1(b, x, ctx, required)
        if cand is x:
            continue
        if b.v(_pass3(b, _pass2(b, cand, ctx), ctx)):
            return cand
    return x


def _pass1_members(node: _Node, x: Any, ctx: _Ctx, required: frozenset[str]) -> Any:
    if _is_dict(x):
        props = node.properties
        out: dict[str, Any] | None = None
        drops: list[str] = []
        for k, val in x.items():
            child = props.get(k) if props is not None else None
            if child is not None:
                if val is None and k not in required and not child.is_ref and child.rejects_null():
                    drops.append(k)
                    continue
                nv = _pass1(child, val, ctx)
            else:
                nv = val
                matched = False
                for match, pchild in node.pattern_props:
                    if match(k):
                        matched = True
                        nv = _pass1(pchild, nv, ctx)
                if not matched and node.additional is not None:
                    nv = _pass1(node.additional, nv, ctx)
            if nv is not val:
                if out is None:
                    out = dict(x)
                out[k] = nv
        if drops:
            if out is None:
                out = dict(x)
            for k in drops:
                del out[k]
        return x if out is None else out
    return _map_members(node, x, lambda c, v: _pass1(c, v, ctx))


# -- pass 2: conversions ------------------------------------------------------------


def _pass2(node: _Node, x: Any, ctx: _Ctx) -> Any:
    if node.kind != _NORMAL:
        return x
    if node.ref is not None:
        key = (2, id(node), id(x))
        if key in ctx.active:
            return x
        ctx.active.add(key)
        try:
            return _pass2(node.ref, x, ctx)
        finally:
            ctx.active.discard(key)
    if node.const is not _MISSING:
        if _canon(x) == _canon(node.const):
            return x
        c = _convert_to_literal(node.const, x)
        return x if c is _NOCHANGE else c
    if node.enum is not None:
        if _build_valid_enum(node, x):
            return x
        for member in node.enum:
            c = _convert_to_literal(member, x)
            if c is not _NOCHANGE and node.v(c):
                return c
        return x
    union = node.any_of if node.any_of is not None else node.one_of
    if union is not None:
        if any(b.v(x) for b in union):
            return x
        has_members = node.properties is not None or node.pattern_props or node.additional
        for b in union:
            cand = _pass2(b, x, ctx)
            if has_members:
                cand = _map_members(node, cand, lambda c, v: _pass2(c, v, ctx))
            if node.v(cand):
                return cand
        return x
    if node.all_of is not None:
        for m in node.all_of:
            x = _pass2(m, x, ctx)
        return _map_members(node, x, lambda c, v: _pass2(c, v, ctx))
    types = node.types
    if types is not None and not node.type_array:
        t = types[0]
        conv = _CONV2.get(t)
        if conv is not None:
            c = conv(x)
            return x if c is _NOCHANGE else c
        if t == "array":
            return _pass2_array(node, x, ctx, wrap=node.prefix is None)
        if t == "object":
            if not _is_dict(x):
                return x
            return _map_members(node, x, lambda c, v: _pass2(c, v, ctx))
        return x
    if types is None:
        if node.properties is not None or node.pattern_props:
            if _is_dict(x):
                return _map_members(node, x, lambda c, v: _pass2(c, v, ctx))
            return x
        if node.items is not None or node.prefix is not None:
            return _pass2_array(node, x, ctx, wrap=False)
    return x


def _pass2_array(node: _Node, x: Any, ctx: _Ctx, *, wrap: bool) -> Any:
    if not _is_list(x):
        if not wrap:
            return x
        key = (3, id(node), id(x))
        if key in ctx.active:
            return x
        ctx.active.add(key)
        try:
            wrapped = [x]
            return _map_members(node, wrapped, lambda c, v: _pass2(c, v, ctx))
        finally:
            ctx.active.discard(key)
    return _map_members(node, x, lambda c, v: _pass2(c, v, ctx))


# -- pass 3: primitive coercion by type (Ajv coerceTypes style) --------------------


def _coerce3(t: str, x: Any) -> Any:
    if t in ("number", "integer"):
        if x is None:
            return 0
        if isinstance(x, bool):
            return 1 if x else 0
        if isinstance(x, str):
            s = x.strip()
            if not s:
                return _NOCHANGE
            n = js_to_number(s)
            if not _finite_number(n):
                return _NOCHANGE
            if t == "integer" and not (type(n) is int or float(n).is_integer()):
                return _NOCHANGE
            return int(n) if t == "integer" else n
        return _NOCHANGE
    if t == "boolean":
        if x is None or x == "false" or (_is_num(x) and x == 0):
            return False
        if x == "true" or (_is_num(x) and x == 1):
            return True
        return _NOCHANGE
    if t == "string":
        if x is None:
            return ""
        if isinstance(x, bool) or (_is_num(x) and _finite_number(x)):
            return _conv_string(x)
        return _NOCHANGE
    if t == "null":
        if x == "" or x is False or (_is_num(x) and x == 0):
            return None
        return _NOCHANGE
    return _NOCHANGE


def _pass3(node: _Node, x: Any, ctx: _Ctx) -> Any:
    if node.kind != _NORMAL:
        return x
    if node.ref is not None:
        key = (4, id(node), id(x))
        if key not in ctx.active:
            ctx.active.add(key)
            try:
                x = _pass3(node.ref, x, ctx)
            finally:
                ctx.active.discard(key)
    if node.all_of is not None:
        for m in node.all_of:
            x = _pass3(m, x, ctx)
    for union in (node.any_of, node.one_of):
        if union and not any(b.v(x) for b in union):
            for b in union:
                cand = _pass3(b, x, ctx)
                if b.v(cand):
                    x = cand
                    break
    types = node.types
    if types:
        has = False
        if len(types) > 1:
            for t in types:
                check = _TYPE_CHECKS.get(t)
                if check is not None and check(x):
                    has = True
                    break
        elif (check := _TYPE_CHECKS.get(types[0])) is not None and check(x):
            has = True
        if has:
            if type(x) is float and "integer" in types and "number" not in types and x.is_integer():
                x = int(x)
        else:
            for t in types:
                c = _coerce3(t, x)
                if c is not _NOCHANGE and (c is not x):
                    x = c
                    break
    return _map_members(node, x, lambda c, v: _pass3(c, v, ctx))


# ----------------------------------------------------------------------------- fast path
#
# The fast path (``parse`` of a value that needs nothing) runs a *generated* Python
# function: the common keywords of nested nodes are inlined as straight-line statements
# (no per-call keyword lookups, no calls per scalar). Schema data never enters the
# source text except as ``repr()`` of property-name strings and numbers; every other
# constant (enum sets, regexes, format checkers, fallback closures) is bound by name in
# the function's namespace. Nodes using keywords not handled here (applicators, refs,
# ``patternProperties``, ``unevaluated*``, …) call their compiled closure instead.

_GEN_MAX_DEPTH = 8


def _gen_supported(node: _Node) -> bool:
    if node.kind != _NORMAL:
        return True
    return (
        node.const is _MISSING
        and node.multiple_of is None
        and not node.pattern_props
        and node.property_names is None
        and node.min_props is None
        and node.max_props is None
        and not node.dep_required
        and not node.dep_schemas
        and node.prefix is None
        and node.contains is None
        and node.all_of is None
        and node.any_of is None
        and node.one_of is None
        and node.not_ is None
        and node.if_ is None
        and node.ref is None
        and node.dyn_ref is None
        and node.uneval_props is None
        and node.uneval_items is None
        and (node.types is None or all(t in _TYPE_CHECKS for t in node.types))
    )


class _Gen:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_MISSING": _MISSING,
            "_is_num": _is_num,
            "_canon_in": _canon_in,
            "_all_unique": _all_unique,
            "_t_number": _t_number,
            "_t_string": _t_string,
            "_t_object": _t_object,
            "_t_array": _t_array,
            "_t_integer_strict": _t_integer_strict,
            "_t_boolean": _t_boolean,
        }
        self.n = 0

    def name(self, prefix: str, value: Any) -> str:
        self.n += 1
        key = f"{prefix}{self.n}"
        self.ns[key] = value
        return key

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def node(self, node: _Node, v: str, ind: int, depth: int) -> None:
        if node.kind == _TRUE:
            return
        if node.kind == _FALSE or depth > _GEN_MAX_DEPTH or not _gen_supported(node):
            fn = self.name("f", _build_valid(node, True))
            self.emit(ind, f"if not {fn}({v}): return False")
            return
        types = node.types
        single = types[0] if types is not None and len(types) == 1 else None
        if types is not None:
            self.emit(ind, f"if not ({_type_expr(types, v)}): return False")
        if node.enum is not None:
            keys = self.name("e", node.enum_keys)
            if single == "string":
                self.emit(ind, f"if {v} not in {keys}: return False")
            else:
                self.emit(ind, f"if not _canon_in({v}, {keys}): return False")
        self.strings(node, v, ind, single)
        self.numbers(node, v, ind, single)
        self.objects(node, v, ind, single, depth)
        self.arrays(node, v, ind, single, depth)

    def strings(self, node: _Node, v: str, ind: int, single: str | None) -> None:
        if (
            node.min_length is None
            and node.max_length is None
            and node.pattern is None
            and node.format_check is None
        ):
            return
        if single != "string":
            self.emit(ind, f"if _t_string({v}):")
            ind += 1
        if node.min_length is not None or node.max_length is not None:
            n = self.var()
            self.emit(ind, f"{n} = len({v})")
            if node.min_length is not None:
                self.emit(ind, f"if {n} < {int(node.min_length)!r}: return False")
            if node.max_length is not None:
                self.emit(ind, f"if {n} > {int(node.max_length)!r}: return False")
        if node.pattern is not None:
            rx = self.name("r", node.pattern.search)
            self.emit(ind, f"if {rx}({v}) is None: return False")
        if node.format_check is not None:
            fmt = self.name("fmt", node.format_check)
            self.emit(ind, f"if not {fmt}({v}): return False")

    def numbers(self, node: _Node, v: str, ind: int, single: str | None) -> None:
        bounds = [
            (node.minimum, "<"),
            (node.maximum, ">"),
            (node.excl_min, "<="),
            (node.excl_max, ">="),
        ]
        bounds = [(b, op) for b, op in bounds if b is not None]
        if not bounds:
            return
        if single not in ("number", "integer"):
            self.emit(ind, f"if _is_num({v}):")
            ind += 1
        for bound, op in bounds:
            name = self.name("b", bound)
            self.emit(ind, f"if {v} {op} {name}: return False")

    def objects(self, node: _Node, v: str, ind: int, single: str | None, depth: int) -> None:
        props = node.properties or {}
        if not props and not node.required and node.additional is None:
            return
        if single != "object":
            self.emit(ind, f"if _t_object({v}):")
            ind += 1
        for r in node.required:
            self.emit(ind, f"if {r!r} not in {v}: return False")
        additional = node.additional
        count = None
        if additional is not None and additional.kind == _FALSE:
            count = self.var()
            self.emit(ind, f"{count} = 0")
        for key, child in props.items():
            c = self.var()
            self.emit(ind, f"{c} = {v}.get({key!r}, _MISSING)")
            self.emit(ind, f"if {c} is not _MISSING:")
            if count is not None:
                self.emit(ind + 1, f"{count} += 1")
            before = len(self.lines)
            self.node(child, c, ind + 1, depth + 1)
            if len(self.lines) == before:
                self.emit(ind + 1, "pass")
        if count is not None:
            self.emit(ind, f"if {count} != len({v}): return False")
        elif additional is not None and additional.kind != _TRUE:
            names = self.name("p", frozenset(props))
            k, item = self.var(), self.var()
            self.emit(ind, f"for {k}, {item} in {v}.items():")
            self.emit(ind + 1, f"if {k} in {names}: continue")
            self.node(additional, item, ind + 1, depth + 1)

    def arrays(self, node: _Node, v: str, ind: int, single: str | None, depth: int) -> None:
        items = node.items
        if items is None and node.min_items is None and node.max_items is None and not node.unique:
            return
        if single != "array":
            self.emit(ind, f"if _t_array({v}):")
            ind += 1
        if node.min_items is not None:
            self.emit(ind, f"if len({v}) < {int(node.min_items)!r}: return False")
        if node.max_items is not None:
            self.emit(ind, f"if len({v}) > {int(node.max_items)!r}: return False")
        if items is not None and items.kind != _TRUE:
            item = self.var()
            self.emit(ind, f"for {item} in {v}:")
            before = len(self.lines)
            self.node(items, item, ind + 1, depth + 1)
            if len(self.lines) == before:
                self.emit(ind + 1, "pass")
        if node.unique:
            self.emit(ind, f"if len({v}) > 1 and not _all_unique({v}): return False")


_TYPE_EXPR = {
    "null": "{v} is None",
    "boolean": "type({v}) is bool",
    "string": "type({v}) is str or _t_string({v})",
    "object": "type({v}) is dict or _t_object({v})",
    "array": "type({v}) is list or _t_array({v})",
    "number": "type({v}) is int or _t_number({v})",
    "integer": "type({v}) is int or _t_integer_strict({v})",
}


def _type_expr(types: tuple[str, ...], v: str) -> str:
    return " or ".join("(" + _TYPE_EXPR[t].format(v=v) + ")" for t in types)


def _canon_in(x: Any, keys: frozenset[Any]) -> bool:
    if type(x) is str:
        return x in keys
    try:
        return _canon(x) in keys
    except TypeError:
        return False


def _generate_fast(root: _Node) -> Callable[[Any], bool]:
    """The strict validity check of ``root`` as one generated function (see above)."""
    gen = _Gen()
    gen.emit(0, "def check(x):")
    gen.node(root, "x", 1, 0)
    gen.emit(1, "return True")
    source = "\n".join(gen.lines)
    try:
        code = compile(source, "<scriptgate schema>", "exec")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return _build_valid(root, True)
    exec(code, gen.ns)
    fn: Callable[[Any], bool] = gen.ns["check"]
    return fn


# ----------------------------------------------------------------------------- public


class CompiledSchema:
    """A compiled JSON Schema: validate, coerce (pi §2.2) and report errors (pi §2.5)."""

    __slots__ = ("__weakref__", "_coerce", "_fast", "_root", "_source", "_valid")

    def __init__(self, root: _Node, *, coerce: bool) -> None:
        #: Set by caches that key on the schema's identity (see ``validation``).
        self._source: Any = None
        self._root = root
        self._coerce = coerce
        self._valid = _build_valid(root, False)
        self._fast = _generate_fast(root)

    def is_valid(self, value: Any) -> bool:
        """Whether ``value`` validates as it is (no coercion)."""
        return self._valid(value)

    def coerce(self, value: Any) -> Any:
        """Apply the three coercion passes; copy-on-write, the input is never mutated.

        A value that already validates is returned as is (the same object).
        """
        if self._fast(value):
            return value
        ctx = _Ctx()
        root = self._root
        out = _pass1(root, value, ctx)
        out = _pass2(root, out, ctx)
        return _pass3(root, out, ctx)

    def check(self, value: Any) -> list[ValidationIssue]:
        """The validation issues of ``value`` as it is, in pi's order (empty = valid)."""
        if self._valid(value):
            return []
        out: list[ValidationIssue] = []
        _errors(self._root, value, "", out)
        if not out:
            out.append(ValidationIssue("", "schema", "invalid"))
        return out

    def parse(self, value: Any) -> ParseResult:
        """Coerce (when enabled), then check: the coerced value or the errors.

        A schema that recurses without consuming the value (``{"anyOf": [{"$ref": "#"}]}``)
        or a value nested beyond Python's recursion limit yields the generic
        ``invalid`` error instead of an exception.
        """
        try:
            if self._fast(value):
                return ParseResult(True, value)
            coerced = self.coerce(value) if self._coerce else value
            if self._valid(coerced):
                return ParseResult(True, coerced)
            return ParseResult(False, coerced, tuple(self.check(coerced)))
        except RecursionError:
            return ParseResult(False, value, (ValidationIssue("", "schema", "invalid"),))


def compile_schema(
    schema: Any,
    *,
    coerce: bool = True,
    formats: bool = True,
    unresolved_refs: UnresolvedRefs = "reject",
    schemas: Mapping[str, Any] | None = None,
) -> CompiledSchema:
    """Compile a JSON Schema (a mapping or a boolean) into a :class:`CompiledSchema`.

    - ``coerce``: :meth:`CompiledSchema.parse` applies pi's coercion passes first;
    - ``formats``: check the standard ``format`` names (unknown names always pass);
    - ``unresolved_refs="reject"``: a ``$ref`` naming nothing validates as the ``false``
      schema at its place (error ``unresolved reference <ref>``); ``"throw"`` raises
      :class:`~scriptgate.errors.SchemaCompileError` at compile time instead;
    - ``schemas``: documents for remote ``$ref`` URIs.

    Raises :class:`~scriptgate.errors.SchemaCompileError` for a malformed schema
    (``A schema must be an object or a boolean, got <json>``). The schema is never
    mutated and the compiled object keeps no reference to the root schema object.
    """
    if unresolved_refs not in ("reject", "throw"):
        raise SchemaCompileError(
            f"unresolved_refs must be 'reject' or 'throw', got {unresolved_refs!r}"
        )
    compiler = _Compiler(schema, formats=formats, unresolved_refs=unresolved_refs, schemas=schemas)
    try:
        root = compiler.node(schema, "")
        compiler.finish()
    except RecursionError:
        raise SchemaCompileError("schema is nested too deeply") from None
    return CompiledSchema(root, coerce=coerce)
