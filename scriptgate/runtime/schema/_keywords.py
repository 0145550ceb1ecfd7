"""Validity closures: each node's keywords compiled once into a ``bool`` check.

Owns the plain check (``is_valid``) and the *strict* check the fast path uses (it also
rejects what coercion would still change). Also owns the keyword arithmetic shared by the
error walk (``multipleOf`` as pi computes it, uniqueness, ``unevaluated*`` bookkeeping).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from threading import get_ident
from typing import Any

from scriptgate.runtime._ecma_regex import EcmaPattern, PatternTimeout
from scriptgate.runtime.schema._model import (
    _FALSE,
    _MISSING,
    _NORMAL,
    _TRUE,
    _TYPE_CHECKS,
    _VALID_BUILDER,
    _canon,
    _false,
    _is_dict,
    _is_list,
    _Node,
    _t_array,
    _t_integer_strict,
    _true,
    _wraps_scalars,
)

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
        if node.reentrant:
            fn = _guarded(fn)
    if strict:
        node._p = fn
    else:
        node._v = fn
    return fn


def _guarded(inner: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``inner``, counting as not matching when re-entered with the same value (pi).

    Keyed by thread and value identity, so concurrent checks in threads stay apart.
    """
    active: set[tuple[int, int]] = set()

    def guarded(x: Any) -> bool:
        key = (get_ident(), id(x))
        if key in active:
            return False
        active.add(key)
        try:
            return inner(x)
        finally:
            active.discard(key)

    return guarded


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
    if tfn is None and strict and _wraps_scalars(node):
        tfn = _t_array  # pass 2 would wrap anything else

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
    matches = rx.matches if rx is not None else None

    def string_check(x: Any) -> bool:
        if type(x) is not str and not isinstance(x, str):
            return True
        n = len(x)
        if n < lo or n > hi:
            return False
        if matches is not None and not matches(x):
            return False
        return fmt is None or fmt(x)

    return string_check


_SAFE = 2**53


def _is_multiple(x: float | int, m: float | int) -> bool:
    """``multipleOf`` as pi computes it: ``Number.isInteger(x / m)`` in double arithmetic.

    So ``multipleOf: 0`` rejects every number (``x / 0`` is ±Infinity or NaN),
    ``0.30000000000000004`` is not a multiple of ``0.1`` (the quotient is
    ``3.0000000000000004``) while ``1e22`` is a multiple of ``3`` (every double that
    large is integral). Divergence kept on purpose: an ``int`` beyond 2^53 is exact
    here (pi rounds it to a double first), so its test is exact too.
    """
    if type(x) is int and type(m) is int and m != 0 and not -_SAFE <= x <= _SAFE:
        return x % m == 0
    try:
        return (float(x) / float(m)).is_integer()
    except (ZeroDivisionError, OverflowError):
        return False


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


def _key_matcher(rx: EcmaPattern | None) -> Callable[[Any], bool]:
    """A ``patternProperties`` key test; a pattern Python cannot express matches all."""
    if rx is None:
        return _always_match
    search = rx.search

    def match(key: Any) -> bool:
        try:
            return search(key if type(key) is str else str(key)) is not None
        except PatternTimeout:
            return True  # its schema applies: a slow key never skips a check

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


_VALID_BUILDER.append(_build_valid)
