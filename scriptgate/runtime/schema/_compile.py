"""Schema → ``_Node`` tree: keyword reading, ``$id``/``$anchor`` scanning, ``$ref`` resolution.

Owns how a JSON Schema document becomes nodes (memoised per schema object and base URI),
remote documents, unresolved-reference handling and ``$dynamicRef`` rebinding, and the
marking of nodes that can re-enter themselves without consuming the value. It never
validates or coerces.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from scriptgate.errors import SchemaCompileError
from scriptgate.runtime._ecma_regex import compile_ecma
from scriptgate.runtime._formats import FORMATS
from scriptgate.runtime._jsnum import js_json
from scriptgate.runtime.schema._keywords import _key_matcher
from scriptgate.runtime.schema._model import (
    _FALSE,
    _FALSE_NODE,
    _MISSING,
    _TRUE_NODE,
    _canon,
    _Node,
)

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
        # Any number applies, as in pi: ``multipleOf: 0`` (or a negative) is not ignored.
        node.multiple_of = mult
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
        _mark_reentrant(list(self.memo.values()))


def _in_place(node: _Node) -> list[_Node]:
    """The subschemas ``node`` applies to the very value it is given (not to members)."""
    out: list[_Node] = []
    for one in (node.ref, node.dyn_ref, node.not_, node.if_, node.then, node.else_):
        if one is not None:
            out.append(one)
    for many in (node.all_of, node.any_of, node.one_of):
        if many:
            out.extend(many)
    out.extend(n for _, n in node.dep_schemas)
    return out


def _mark_reentrant(nodes: list[_Node]) -> None:
    """Set ``reentrant`` on every node of a cycle of in-place applicators.

    Such a cycle (``A → B → anyOf[A, integer]``) re-enters a node with the same value and
    would recurse forever; pi resolves it, a re-entered node counting as not matching
    (the least fixed point), so ``"1"`` still coerces to ``1`` by the ``integer`` branch.
    Tarjan's strongly connected components, iteratively.
    """
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[_Node] = []
    counter = 0
    for start in nodes:
        if id(start) in index:
            continue
        work: list[tuple[_Node, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            key = id(node)
            if i == 0:
                index[key] = low[key] = counter
                counter += 1
                stack.append(node)
                on_stack.add(key)
            succ = _in_place(node)
            if i < len(succ):
                work.append((node, i + 1))
                child = succ[i]
                ckey = id(child)
                if ckey not in index:
                    work.append((child, 0))
                elif ckey in on_stack:
                    low[key] = min(low[key], index[ckey])
                continue
            if work:
                parent = work[-1][0]
                low[id(parent)] = min(low[id(parent)], low[key])
            if low[key] == index[key]:
                component: list[_Node] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(id(member))
                    component.append(member)
                    if member is node:
                        break
                if len(component) > 1 or node in _in_place(node):
                    for member in component:
                        member.reentrant = True


def _join(base: str, ref: str) -> str:
    if not base:
        return ref
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)
