"""Strict, bounded JSON for records the host must always be able to write (the audit log).

:func:`bounded` turns any value a tool call carries into plain JSON data that
``json.dumps(..., allow_nan=False)`` accepts, of bounded size, and lists the
places where a value was *replaced* by a description of it:

- a string longer than ``max_chars`` code points → ``{"type": "str", "length": N,
  "head": <its first 100 characters>, "sha256": ...}``;
- an int of more than 100 decimal digits (bit length over 332) →
  ``{"type": "int", "bits": N, "sha256": ...}``;
- ``NaN`` / ``Infinity`` / ``-Infinity`` → ``{"type": "float", "value": "NaN"}``;
- a value that is not JSON data (bytes, objects...) → ``{"type": <type name>, "sha256": ...}``;
- a container nested deeper than 32 levels, or with more than 1,000 items →
  ``{"type": "list"|"dict", "length": N, "sha256": ...}``.

``sha256`` is always the digest of the *full* value's canonical JSON
(:func:`canonical_bytes`), so a capped value can still be compared with a copy.
A description is a plain object; only the JSON pointers in the returned list say
that it stands for something else (a script cannot make data look capped).

:func:`dumps_line` renders one record as one line of strict JSON: no ``NaN``
tokens, lone surrogates, C1 controls, bidirectional controls and the line
separators U+2028/U+2029 escaped as ``\\uXXXX`` (so the line is valid UTF-8 and
cannot rearrange a terminal), other characters as themselves.

:func:`finite_floats` replaces only the non-finite floats of JSON data by the same
description (``ScriptResult.to_json()``: everything else is kept as it is).

This module owns no I/O and imports nothing from the rest of scriptgate.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

__all__ = [
    "bounded",
    "canonical_bytes",
    "digest",
    "dumps_line",
    "escape_unsafe",
    "finite_floats",
]

MAX_DEPTH = 32
MAX_ITEMS = 1_000
MAX_INT_BITS = 332  # 100 decimal digits
HEAD_CHARS = 100
_NODE_BUDGET = 200_000

_UNSAFE = re.compile("[\ud800-\udfff\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape_match(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_unsafe(text: str) -> str:
    """``text`` (JSON text) with surrogates, C1/bidi controls and U+2028/9 as ``\\uXXXX``."""
    return _UNSAFE.sub(_escape_match, text)


def _canonical_plain(value: Any, budget: list[int]) -> Any:
    """``value`` with big ints as hex strings and non-JSON leaves as ``repr``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise OverflowError("value too large to digest")
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 13_000 else hex(value)
    if isinstance(value, float):
        return value
    if isinstance(value, dict):
        return {str(k): _canonical_plain(v, budget) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical_plain(v, budget) for v in value]
    return f"<{type(value).__name__}>{value!r}"


def canonical_bytes(value: Any) -> bytes:
    """The canonical JSON of ``value`` (sorted keys, no spaces, UTF-8).

    Lone surrogates are encoded with ``surrogatepass``, ``NaN``/``Infinity`` as
    those words, an int over 13,000 bits as its ``hex()`` string, a value that is
    not JSON data as ``"<type>repr"``.
    """
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        try:
            plain = _canonical_plain(value, [_NODE_BUDGET * 10])
        except (OverflowError, RecursionError):
            return repr(type(value)).encode()
        text = json.dumps(
            plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr
        )
    return text.encode("utf-8", "surrogatepass")


def digest(value: Any) -> str:
    """``sha256:<hex>`` of :func:`canonical_bytes`."""
    return "sha256:" + hashlib.sha256(canonical_bytes(value)).hexdigest()


class _Walk:
    __slots__ = ("max_chars", "nodes", "replaced")

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.replaced: list[str] = []
        self.nodes = 0

    def describe(self, path: str, description: dict[str, Any]) -> dict[str, Any]:
        self.replaced.append(path)
        return description

    def convert(self, value: Any, path: str, depth: int) -> Any:
        self.nodes += 1
        kind = type(value)
        if kind is str:
            if len(value) > self.max_chars:
                return self.describe(
                    path,
                    {
                        "type": "str",
                        "length": len(value),
                        "head": value[:HEAD_CHARS],
                        "sha256": digest(value)[7:],
                    },
                )
            return value
        if value is None or kind is bool:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if value.bit_length() > MAX_INT_BITS:
                return self.describe(
                    path, {"type": "int", "bits": value.bit_length(), "sha256": digest(value)[7:]}
                )
            return int(value)
        if isinstance(value, float):
            if math.isfinite(value):
                return float(value)
            return self.describe(path, _float_description(value))
        if isinstance(value, dict | list | tuple):
            size = len(value)
            if depth >= MAX_DEPTH or size > MAX_ITEMS or self.nodes + size > _NODE_BUDGET:
                return self.describe(
                    path,
                    {
                        "type": "dict" if isinstance(value, dict) else "list",
                        "length": size,
                        "sha256": digest(value)[7:],
                    },
                )
            if isinstance(value, dict):
                out: dict[str, Any] = {}
                for key, item in value.items():
                    name = key if type(key) is str else str(key)
                    out[name] = self.convert(item, f"{path}/{_pointer(name)}", depth + 1)
                return out
            return [self.convert(item, f"{path}/{i}", depth + 1) for i, item in enumerate(value)]
        return self.describe(path, {"type": type(value).__name__, "sha256": digest(value)[7:]})


def _float_description(value: float) -> dict[str, Any]:
    text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return {"type": "float", "value": text}


def finite_floats(value: Any) -> Any:
    """``value`` (JSON data) with each NaN/infinity as ``{"type": "float", "value": "NaN"}``.

    Nothing else changes, and ``value`` itself is returned when it holds none (no copy);
    a container holding one is copied along its path only. ``json.dumps(..., allow_nan=False)``
    accepts the result (findings15 E08: a script's last ``float('nan')`` made
    ``ScriptResult.to_json()`` unwritable as strict JSON).
    """
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else _float_description(value)
    if kind is list:
        copy: list[Any] | None = None
        for index, item in enumerate(value):
            if type(item) in _WALKED:
                new = finite_floats(item)
                if new is not item:
                    if copy is None:
                        copy = list(value)
                    copy[index] = new
        return value if copy is None else copy
    if kind is dict:
        changed: dict[str, Any] | None = None
        for key, item in value.items():
            if type(item) in _WALKED:
                new = finite_floats(item)
                if new is not item:
                    if changed is None:
                        changed = dict(value)
                    changed[key] = new
        return value if changed is None else changed
    return value


_WALKED = frozenset({float, list, dict})


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def bounded(value: Any, *, path: str = "", max_chars: int = 1_000) -> tuple[Any, list[str]]:
    """``(JSON data, JSON pointers of replaced values)`` for ``value``; see the module docstring."""
    walk = _Walk(max_chars)
    try:
        converted = walk.convert(value, path, 0)
    except RecursionError:  # pragma: no cover - depth is capped at MAX_DEPTH
        walk.replaced = [path]
        converted = {"type": type(value).__name__, "sha256": digest(value)[7:]}
    return converted, walk.replaced


def dumps_line(record: dict[str, Any], *, ascii_only: bool = False) -> str:
    """One line of strict JSON (no trailing newline) for a record made by :func:`bounded`."""
    text = json.dumps(record, ensure_ascii=ascii_only, allow_nan=False)
    return text if ascii_only else escape_unsafe(text)
