"""The error walk: pi's issues, in pi's order, with pi's texts (pi §2.5–2.6).

Owns which errors a failing value gets and where: walk order, the message catalogue, and
which branch of a failing union is blamed (the discriminator of a tagged union, else the
branch that declares most keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from threading import get_ident
from typing import Any

from scriptgate.runtime._jsnum import js_json, js_number_to_string
from scriptgate.runtime.schema._keywords import (
    _all_unique,
    _eval_items_sans_self,
    _eval_props_sans_self,
    _is_multiple,
    _type_fn_cached,
)
from scriptgate.runtime.schema._model import (
    _FALSE,
    _MISSING,
    _NORMAL,
    _TRUE,
    ValidationIssue,
    _actual_type,
    _canon,
    _is_dict,
    _is_list,
    _is_num,
    _Node,
    escape_pointer_segment,
)

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


_ACTIVE: set[tuple[int, int, int]] = set()


def _errors(node: _Node, x: Any, ptr: str, out: list[ValidationIssue], depth: int = 0) -> None:
    """Append the issues of ``x`` against ``node`` in pi's walk order (§2.5).

    A node on an in-place cycle met again with the same value adds nothing (it counts
    as not matching, see ``_mark_reentrant``; its first visit reports).
    """
    if not node.reentrant:
        _node_errors(node, x, ptr, out, depth)
        return
    key = (get_ident(), id(node), id(x))
    if key in _ACTIVE:
        return
    _ACTIVE.add(key)
    try:
        _node_errors(node, x, ptr, out, depth)
    finally:
        _ACTIVE.discard(key)


def _node_errors(node: _Node, x: Any, ptr: str, out: list[ValidationIssue], depth: int) -> None:
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
        if node.pattern is not None and not node.pattern.matches(x):
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
        elif hits > 1 and not (
            _is_dict(x) and _tag_errors(node.one_of, "oneOf", x, ptr, out, d, several=True)
        ):
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
        # ``items: false`` (extra tuple items too) is the ``false`` schema at each item:
        # pi says ``no value is allowed here`` there, not ``unexpected item``.
        for i in range(npre, n):
            if not node.items.v(x[i]):
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


def _declared_props(node: _Node, depth: int = 0) -> dict[str, _Node]:
    """The properties a branch declares: its own, then its ``allOf`` members' and its
    ``$ref`` target's (first declaration wins)."""
    out: dict[str, _Node] = {}
    if node.kind != _NORMAL or depth > 16:
        return out
    if node.properties is not None:
        out.update(node.properties)
    for sub in (*(node.all_of or ()), *((node.ref,) if node.ref is not None else ())):
        for k, v in _declared_props(sub, depth + 1).items():
            out.setdefault(k, v)
    return out


def _literal(node: _Node) -> Any:
    """The one value ``node`` admits by ``const`` or a one-member ``enum``, else missing."""
    node = _deref(node)
    lit = node.const
    if lit is _MISSING and node.enum is not None and len(node.enum) == 1:
        lit = node.enum[0]
    if lit is not _MISSING and not (lit is None or isinstance(lit, (str, int, float))):
        return _MISSING  # only a primitive discriminates
    return lit


def _tag_of(branches: tuple[_Node, ...]) -> tuple[str, list[Any]] | None:
    """A discriminated union: the property every branch pins to its own primitive value.

    Every branch must declare the property (directly, or through ``allOf``/``$ref``)
    with a ``const`` or a one-member ``enum``, and the values must differ. The first
    such property of the first branch is the discriminator. Like pi, the error of a
    failing value is then reported at the discriminator (or by the branch it selects).
    """
    if len(branches) < 2:
        return None
    props = [_declared_props(b) for b in branches]
    if any(not p for p in props):
        return None
    for key in props[0]:
        values: list[Any] = []
        for p in props:
            child = p.get(key)
            lit = _literal(child) if child is not None else _MISSING
            if lit is _MISSING:
                break
            values.append(lit)
        else:
            if len({_canon(v) for v in values}) == len(values):
                return key, values
    return None


def _tag_errors(
    branches: tuple[_Node, ...],
    keyword: str,
    x: dict[str, Any],
    ptr: str,
    out: list[ValidationIssue],
    d: int,
    *,
    several: bool = False,
) -> bool:
    """pi's report for a failing discriminated union; False when the union is not one.

    A known tag value blames the branch it selects; an unknown or absent one is
    ``<tag>: expected one of [<values>]``. ``several``: the value matched more than one
    branch, which a known tag cannot explain (False then).
    """
    tagged = _tag_of(branches)
    if tagged is None:
        return False
    key, values = tagged
    if key in x:
        tag_key = _canon(x[key])
        for branch, value in zip(branches, values, strict=True):
            if _canon(value) == tag_key:
                if several:
                    return False
                errs: list[ValidationIssue] = []
                _errors(branch, x, ptr, errs, d)
                out.extend(errs or [ValidationIssue(ptr, keyword, "matches no alternative")])
                return True
    out.append(ValidationIssue(_ptr(ptr, key), keyword, f"expected one of {_enum_text(values)}"))
    return True


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
    if _is_dict(x) and _tag_errors(branches, keyword, x, ptr, out, d):
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
        errs: list[ValidationIssue] = []
        _errors(b, x, ptr, errs, d)
        depth = errs[0].path.count("/") if errs else -1
        if depth > best_depth:
            best_depth = depth
            best_errs = errs
    if best_errs:
        out.extend(best_errs)
    else:
        out.append(ValidationIssue(ptr, keyword, "matches no alternative"))
