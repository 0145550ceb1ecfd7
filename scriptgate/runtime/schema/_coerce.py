"""pi's three lenient coercion passes (pi §2.2), copy-on-write.

Owns the JavaScript conversions (TypeBox ``Value.Convert`` for pass 2, Ajv
``coerceTypes`` for pass 3), the optional-null pass, the re-entrancy guard, and a fused
single walk for the nodes where running the three passes one after the other is the same
as running them per member.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from scriptgate.runtime._jsnum import js_number_to_string, js_to_number
from scriptgate.runtime.schema._messages import _build_valid_enum
from scriptgate.runtime.schema._model import (
    _MISSING,
    _NOCHANGE,
    _NORMAL,
    _TYPE_CHECKS,
    _canon,
    _is_dict,
    _is_list,
    _is_num,
    _Node,
)

# ----------------------------------------------------------------------------- coercion


_BIGINT = re.compile(r"-?[0-9]+n", re.ASCII)
_SAFE = 2**53


def _finite_number(n: float | int) -> bool:
    return type(n) is int or math.isfinite(n)


def _conv_number(x: Any) -> Any:
    """Pass 2 ``number`` (TypeBox ``Value.Convert``)."""
    if type(x) is str and len(x) < 16 and x.isdigit() and x.isascii():
        return int(x)  # plain decimal digits (exact: below 2^53)
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
    if type(x) is str and len(x) < 16 and x.isdigit() and x.isascii():
        return int(x)  # plain decimal digits (exact: below 2^53)
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
            # pi: array rules, so a non-array is wrapped unless the node is a tuple.
            return _pass2_array(node, x, ctx, wrap=node.prefix is None)
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


# -- the fused walk -----------------------------------------------------------------
#
# Running pass 1, pass 2 and pass 3 one after the other over the whole value is the
# same as running them per member when a node only routes its members (an object or
# array node with no applicator) or converts a scalar: each member slot then goes
# through the member's pass 1, 2 and 3 in that order, and nothing else touches it. So
# ``_fused`` walks such nodes once and runs the three passes of any other node on its
# own value (``_passes``), which is where the general code keeps its exact order. Two
# details keep it exact: a value wrapped into an array by pass 2 never met pass 1 (so
# its item gets passes 2 and 3 only), and the wrap's re-entrancy key stays active
# while the item converts, as in pass 2.

_FK_NONE, _FK_GENERIC, _FK_SCALAR, _FK_OBJECT, _FK_ARRAY = 0, 1, 2, 3, 4


def _fused_kind(node: _Node) -> int:
    """How ``_fused`` treats ``node`` (cached on the node)."""
    if node.kind != _NORMAL:
        fk = _FK_NONE
    elif (
        node.ref is not None
        or node.const is not _MISSING
        or node.enum is not None
        or node.any_of is not None
        or node.one_of is not None
        or node.all_of is not None
        or node.type_array
    ):
        fk = _FK_GENERIC
    elif node.types is not None and node.types[0] in _CONV2:
        fk = _FK_SCALAR
    elif (
        node.types == ("object",) or (node.types is None and node.properties is not None)
    ) and not node.pattern_props:
        fk = _FK_OBJECT
    elif (
        node.types == ("array",)
        and node.prefix is None
        and node.properties is None
        and not node.pattern_props
        and node.additional is None
    ):
        fk = _FK_ARRAY
    else:
        fk = _FK_GENERIC
    node.fk = fk
    return fk


def _passes(node: _Node, x: Any, ctx: _Ctx | None, p1: bool) -> Any:
    """The three passes (pass 1 only when ``p1``) of ``node`` on ``x``, in order."""
    if ctx is None:
        ctx = _Ctx()
    if p1:
        x = _pass1(node, x, ctx)
    return _pass3(node, _pass2(node, x, ctx), ctx)


_DIGITS_TO_INT = frozenset(("integer", "number"))


def _fused(node: _Node, x: Any, ctx: _Ctx | None, p1: bool) -> Any:
    """What ``_passes(node, x, ctx, p1)`` returns, in one walk where the node allows.

    ``ctx`` is made only where a re-entrancy key is needed: a walk that has none yet has
    no key active, so a fresh one per subtree is the same as one shared.
    """
    fk = node.fk
    if fk < 0:
        fk = _fused_kind(node)
    if fk == _FK_NONE:
        return x
    t = type(x)
    if fk == _FK_SCALAR:
        ty = node.types[0]  # type: ignore[index]
        if t is str and ty in _DIGITS_TO_INT and len(x) < 16 and x.isdigit() and x.isascii():
            return int(x)  # what pass 2 gives and pass 3 keeps, without the calls
        if t is dict or t is list or isinstance(x, (dict, list, tuple)):
            return _passes(node, x, ctx, p1)
        c = _CONV2[ty](x)
        if c is not _NOCHANGE:
            x = c
        if _TYPE_CHECKS[ty](x):
            if ty == "integer" and type(x) is float and x.is_integer():
                return int(x)
            return x
        c = _coerce3(ty, x)
        return x if c is _NOCHANGE else c
    if fk == _FK_OBJECT:
        if t is not dict:
            return _passes(node, x, ctx, p1)
        props = node.properties
        addl = node.additional
        required = node.required_set
        out: dict[str, Any] | None = None
        drops: list[str] | None = None
        for k, val in x.items():
            child = props.get(k) if props is not None else None
            if child is None:
                if addl is None:
                    continue
                child = addl
            elif (
                p1
                and val is None
                and k not in required
                and not child.is_ref
                and child.rejects_null()
            ):
                if drops is None:
                    drops = []
                drops.append(k)
                continue
            nv = _fused(child, val, ctx, p1)
            if nv is not val:
                if out is None:
                    out = dict(x)
                out[k] = nv
        if drops is not None:
            if out is None:
                out = dict(x)
            for k in drops:
                del out[k]
        return x if out is None else out
    if fk == _FK_ARRAY:
        item = node.items_coerce
        if t is list:
            if item is None:
                return x
            lst: list[Any] | None = None
            for i, val in enumerate(x):
                nv = _fused(item, val, ctx, p1)
                if nv is not val:
                    if lst is None:
                        lst = list(x)
                    lst[i] = nv
            return x if lst is None else lst
        if isinstance(x, (list, tuple)):
            return _passes(node, x, ctx, p1)
        if ctx is None:
            ctx = _Ctx()
        key = (3, id(node), id(x))
        if key in ctx.active:
            return x
        ctx.active.add(key)
        try:
            return [x if item is None else _fused(item, x, ctx, False)]
        finally:
            ctx.active.discard(key)
    return _passes(node, x, ctx, p1)
