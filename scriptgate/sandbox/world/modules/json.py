"""The ``json`` stand-in: ``dumps`` (size-checked before rendering) and ``loads``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.render_scope import RENDERING
from scriptgate.sandbox.guards.sizes import check_json
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
) -> str:
    if isinstance(indent, int) and indent > 64:
        refuse_size("indent above 64 refused in the sandbox")
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
        )


def _json_loads(text: str | bytes) -> Any:
    return json.loads(text)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"dumps": _json_dumps, "loads": _json_loads, "JSONDecodeError": json.JSONDecodeError}
