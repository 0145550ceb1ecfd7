"""The ``unicodedata`` stand-in: the Unicode database lookups.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Each member wraps the real C function (one
character, or a text of at most :data:`MAX_TEXT` characters for ``normalize``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_TEXT", "MEMBERS", "NAME", "build"]

_LOOKUPS = (
    "name", "lookup", "category", "bidirectional", "combining", "east_asian_width",
    "mirrored", "decomposition", "decimal", "digit", "numeric",
)  # fmt: skip
NAME = "unicodedata"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (*_LOOKUPS, "normalize", "is_normalized", "unidata_version")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (str and numbers)."""
MAX_TEXT = 10_000_000
"""The longest text ``normalize`` takes (a form may grow it a few times)."""
MAX_OUTPUT = 20_000_000
"""The most characters one ``normalize`` may produce, counted at the worst expansion."""
_EXPANSION = {"NFC": 4, "NFD": 4, "NFKC": 18, "NFKD": 18}
"""The most characters one character decomposes into, per form (U+1F82 gives 4 under NFD,
U+FDFA 18 under NFKD; NFC/NFKC build the decomposition first): measured over every code
point of Python 3.11's database."""


def _lookup(name: str) -> Callable[..., Any]:
    real = getattr(unicodedata, name)

    def lookup(value: Any, *default: Any) -> Any:
        value = exact_copy(value)
        if isinstance(value, str) and len(value) > 1000:
            raise ValueError(f"unicodedata.{name} takes one character or a short name")
        return real(value, *default)

    lookup.__name__ = name
    return lookup


def _checked(form: Any, text: Any) -> None:
    if not isinstance(text, str):
        raise TypeError(f"normalize() argument 2 must be str, not {type(text).__name__}")
    if str.__len__(text) > MAX_TEXT:
        refuse_size(f"normalizing more than {MAX_TEXT} characters refused in the sandbox")


def _expansion_checked(form: Any, text: Any) -> bool:
    """Whether ``text`` is ASCII (every form leaves it as it is); refuses a text whose worst
    expansion under ``form`` passes :data:`MAX_OUTPUT` (finding G07: NFKD of
    ``"\ufdfa" * 10**7`` made 180M characters in one C call)."""
    _checked(form, text)
    if str.isascii(text):
        return True
    factor = _EXPANSION.get(form, 1) if isinstance(form, str) else 1
    if str.__len__(text) * factor > MAX_OUTPUT:
        refuse_size(
            f"normalize({form!r}) of a {str.__len__(text)}-character text could make it"
            f" {factor}x longer (more than {MAX_OUTPUT} characters): normalize it in pieces"
        )
    return False


def _normalize(form: Any, text: Any) -> str:
    if _expansion_checked(form, text) and isinstance(form, str) and form in _EXPANSION:
        return exact_copy(text)  # type: ignore[no-any-return]  # never the script's __str__
    return unicodedata.normalize(form, text)


def _is_normalized(form: Any, text: Any) -> bool:
    # the C check normalizes the whole text when its quick check says "maybe"
    if _expansion_checked(form, text) and isinstance(form, str) and form in _EXPANSION:
        return True
    return unicodedata.is_normalized(form, text)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: _lookup(name) for name in _LOOKUPS}
    table["normalize"] = _normalize
    table["is_normalized"] = _is_normalized
    table["unidata_version"] = unicodedata.unidata_version
    return table
