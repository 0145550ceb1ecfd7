"""The ``json`` stand-in: ``dumps`` (size-checked before rendering) and ``loads``.

``loads``' hooks (``object_hook``, ``object_pairs_hook``, ``parse_float``, ``parse_int``,
``parse_constant``) are called by the C scanner once per item: the script's own function
ticks at its entry; any other callable (``decimal.Decimal``, ``OrderedDict``, a script
class) is called through :func:`_host_hook`, which checks the run's budget every few
calls and checks what it returns, so no hook result the script could not hold itself
ends up in the decoded value.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.boundary import check_value
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.render_scope import RENDERING
from scriptgate.sandbox.guards.sizes import check_json
from scriptgate.sandbox.guards.ticking import ticked_calls, ticks_itself
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "json"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("dumps", "loads", "JSONDecodeError")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (json.JSONDecodeError,)
"""Value types this stand-in hands to scripts (beyond JSON data)."""


def _json_dumps(
    obj: Any,
    *,
    indent: int | str | None = None,
    sort_keys: bool = False,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    default: Callable[[Any], Any] | None = None,
    skipkeys: bool = False,
    allow_nan: bool = True,
    check_circular: bool = True,
) -> str:
    indent, separators = _plain_layout(indent, separators)
    with RENDERING:  # nested scope starts join this rendering (findings9 F03)
        default = check_json(  # sizeguard: the text's size is checked before rendering
            obj, indent=indent, separators=separators, ensure_ascii=ensure_ascii, default=default
        )
        return json.dumps(
            obj,
            indent=indent,
            sort_keys=sort_keys,
            ensure_ascii=ensure_ascii,
            separators=separators,
            default=default,
            skipkeys=skipkeys,
            allow_nan=allow_nan,
            check_circular=check_circular,
        )


MAX_INDENT = 64
"""Widest ``indent`` (spaces, or characters of an indent string)."""
MAX_SEPARATOR = 64
"""Longest ``separators`` item."""


def _plain_layout(indent: Any, separators: Any) -> tuple[Any, Any]:
    """``indent`` and ``separators`` as exact ints and strs, bounded (findings14 A03).

    The size estimate reads their lengths, and json's encoder takes any ``str`` subclass
    (so a subclass must be measured by its base type: its own ``__len__`` may lie), and
    builds one piece per item with the indent in it before it joins them.
    """
    if isinstance(indent, int) and not isinstance(indent, bool):
        indent = int.__index__(indent)
        if indent > MAX_INDENT:
            refuse_size(f"indent above {MAX_INDENT} refused in the sandbox")
    elif isinstance(indent, str):
        indent = exact_copy(indent)
        if len(indent) > MAX_INDENT:
            refuse_size(f"an indent string longer than {MAX_INDENT} characters is refused")
    if separators is not None:
        item, key = separators  # json unpacks it too (a TypeError or ValueError as there)
        pair = (exact_copy(item), exact_copy(key))
        if any(isinstance(sep, str) and len(sep) > MAX_SEPARATOR for sep in pair):
            refuse_size(f"a separator longer than {MAX_SEPARATOR} characters is refused")
        separators = pair
    return indent, separators


_HOOKS = ("object_hook", "object_pairs_hook", "parse_float", "parse_int", "parse_constant")


def _host_hook(hook: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``hook`` for the C scanner: the budget checked every few calls, its results checked."""
    counted = ticked_calls(hook)

    def call(value: Any) -> Any:
        return check_value(counted(value))

    return call


def _json_loads(
    text: str | bytes,
    *,
    object_hook: Callable[[Any], Any] | None = None,
    object_pairs_hook: Callable[[Any], Any] | None = None,
    parse_float: Callable[[Any], Any] | None = None,
    parse_int: Callable[[Any], Any] | None = None,
    parse_constant: Callable[[Any], Any] | None = None,
) -> Any:
    given = (object_hook, object_pairs_hook, parse_float, parse_int, parse_constant)
    if all(hook is None for hook in given):
        return json.loads(text)
    hooks: dict[str, Any] = {
        name: hook if hook is None or ticks_itself(hook) else _host_hook(hook)
        for name, hook in zip(_HOOKS, given, strict=True)
    }
    return json.loads(text, **hooks)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"dumps": _json_dumps, "loads": _json_loads, "JSONDecodeError": json.JSONDecodeError}
