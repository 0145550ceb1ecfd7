"""The generated fast path: the strict check of a schema as one straight-line function.

Owns the code generator; schema data enters the generated source only as ``repr()`` of
property names and numbers. Nodes it does not inline call their compiled closure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriptgate.runtime.schema._keywords import _all_unique, _build_valid
from scriptgate.runtime.schema._model import (
    _FALSE,
    _MISSING,
    _NORMAL,
    _TRUE,
    _TYPE_CHECKS,
    _canon,
    _is_num,
    _Node,
    _t_array,
    _t_boolean,
    _t_integer_strict,
    _t_number,
    _t_object,
    _t_string,
    _wraps_scalars,
)

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
        if types is None and _wraps_scalars(node):
            types = ("array",)  # pass 2 would wrap anything else
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
            rx = self.name("r", node.pattern.matches)
            self.emit(ind, f"if not {rx}({v}): return False")
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
