"""Locating new AST nodes in time linear in what was built, and the policy's deadline ticks.

Owns :func:`copy_locations` and :func:`locate_new` (what the policy uses instead of
RestrictedPython's ``copy_locations``, which runs ``ast.fix_missing_locations`` over the
whole subtree of every node it locates: a guard built around an operand re-walked the
operand's subtree, so a chain of subscripts, attributes or calls compiled in time
quadratic in its length), and :class:`LinearTransformer`, RestrictedPython's transformer
with its own methods rebound to that linear ``copy_locations`` and a deadline tick in
``visit``. It must not change what the policy accepts or emits; RestrictedPython's module
is never patched (another user of it in the process keeps the original).
"""

from __future__ import annotations

import ast
import types
from typing import Any, TypeVar

import RestrictedPython.transformer as _rp
from RestrictedPython.transformer import RestrictingNodeTransformer

from scriptgate.sandbox.compile.deadline import tick

__all__ = ["LinearTransformer", "copy_locations", "fix_locations", "locate_new"]

_N = TypeVar("_N", bound=ast.AST)

_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def locate_new(new: _N) -> _N:
    """Give every node under ``new`` without a location its nearest located parent's.

    Descends only through nodes without a location: a located node's subtree is the
    parser's or was located when it was built, so it is not walked again. (The script's
    whole tree gets one ``ast.fix_missing_locations`` before ``compile``, the safety net.)
    """
    pending: list[tuple[ast.AST, ast.AST]] = [(child, new) for child in ast.iter_child_nodes(new)]
    while pending:
        child, parent = pending.pop()
        if "lineno" not in child._attributes:
            pending.extend((grand, parent) for grand in ast.iter_child_nodes(child))
            continue
        if getattr(child, "lineno", None) is not None:
            continue
        for field in _LOCATION:
            setattr(child, field, getattr(parent, field, None))
        pending.extend((grand, child) for grand in ast.iter_child_nodes(child))
    return new


def copy_locations(new_node: Any, old_node: Any) -> None:
    """RestrictedPython's ``copy_locations`` (``new_node`` gets ``old_node``'s place), linearly."""
    for field in _LOCATION:
        setattr(new_node, field, getattr(old_node, field, None))
    locate_new(new_node)


def fix_locations(tree: _N) -> _N:
    """``ast.fix_missing_locations`` without recursion, ticking at every node."""
    todo: list[tuple[ast.AST, tuple[Any, ...]]] = [(tree, (1, 0, 1, 0))]
    while todo:
        node, place = todo.pop()
        tick()
        if "lineno" in node._attributes:
            mine = tuple(getattr(node, field, None) for field in _LOCATION)
            if None in mine:
                mine = tuple(
                    given if given is not None else inherited
                    for given, inherited in zip(mine, place, strict=True)
                )
                for field, value in zip(_LOCATION, mine, strict=True):
                    setattr(node, field, value)
            place = mine
        todo.extend((child, place) for child in ast.iter_child_nodes(node))
    return tree


def _rebound(function: types.FunctionType, space: dict[str, Any]) -> types.FunctionType:
    new = types.FunctionType(
        function.__code__, space, function.__name__, function.__defaults__, function.__closure__
    )
    new.__kwdefaults__ = function.__kwdefaults__
    new.__qualname__ = function.__qualname__
    new.__doc__ = function.__doc__
    return new


class LinearTransformer(RestrictingNodeTransformer):
    """RestrictedPython's transformer, locating new nodes linearly and ticking at every node.

    (:func:`~.deadline.tick`: the compile's real check, of the deadline and the abort
    signal, runs every few hundred nodes.)
    """

    def visit(self, node: ast.AST) -> Any:
        """Tick the compile's clock, then visit ``node`` as RestrictedPython does.

        (``ast.NodeVisitor.visit`` inlined: no frame more per level of the tree, so a
        script nests as deep as before.)
        """
        tick()
        return getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)(node)


_SPACE = {**vars(_rp), "copy_locations": copy_locations}
for _attr, _value in list(vars(RestrictingNodeTransformer).items()):
    if isinstance(_value, types.FunctionType) and "copy_locations" in _value.__code__.co_names:
        setattr(LinearTransformer, _attr, _rebound(_value, _SPACE))
del _attr, _value
