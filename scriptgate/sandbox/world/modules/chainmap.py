"""``collections.ChainMap`` for the ``collections`` stand-in: lookups over a list of dicts.

Part of ``world/modules/`` (used by the ``collections`` stand-in, not importable itself);
uses ``guards/`` and must not import the engine, isolation or the model-facing text.

The sandbox's own class (the real one inherits its views and mixins from
``collections.abc``, whose methods and classes are the host's). Its ``maps`` is a plain
list the script may change, so every use checks what the list holds: dicts (and their
subclasses), other ``ChainMap``\\ s or instances of the script's own classes — never a host
object whose ``__getitem__`` would skip the item guard. Keys are hashed through
:func:`guards.hash_bounded`; walks over many maps or keys are charged to the calling run
(one step per map and per key), and ``keys()``/``values()``/``items()`` are views of a
fresh ``dict``. Not subclassable.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scriptgate.sandbox.guards.attributes import ITEM_WRITABLE_MARK, check_value, fed, hash_bounded
from scriptgate.sandbox.guards.comparisons import SCALARS
from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK
from scriptgate.sandbox.guards.memory import charge_copy
from scriptgate.sandbox.guards.regex import _current_budget
from scriptgate.sandbox.guards.sizes import check_render, safe_repr

__all__ = ["ChainMap", "mapping_ok"]

_CHARGE_FROM = 64
_NOTHING: Any = object()


def _spend(steps: int) -> None:
    if steps >= _CHARGE_FROM:
        budget: Any = _current_budget()
        if budget is not None:
            budget.spend(steps)


def mapping_ok(value: Any, who: str = "a ChainMap holds") -> Any:
    """``value`` if a stand-in may look keys up in it from the host side (a dict, a ChainMap,
    an instance of the script's own class), else ``TypeError`` (``who`` opens its message)."""
    if isinstance(value, (dict, ChainMap)) or getattr(type(value), SCRIPT_CLASS_MARK, False):
        return value
    raise TypeError(f"{who} dicts (or your own mapping classes), not {type(value).__name__}")


def _key(key: Any) -> Any:
    return key if type(key) in SCALARS else hash_bounded(key)


class ChainMap:
    """``ChainMap(*maps)``: one view of several dicts, looked up in order; writes go to
    ``maps[0]``. Has ``maps``, ``new_child()``, ``parents`` and the dict methods."""

    __slots__ = ("maps",)

    def __init__(self, *maps: Any) -> None:
        _spend(len(maps))
        self.maps: list[Any] = [mapping_ok(m) for m in maps] or [{}]

    def _maps(self) -> list[Any]:
        maps = self.maps
        if type(maps) is not list:
            raise TypeError("ChainMap.maps must be a list")
        _spend(list.__len__(maps))
        return [mapping_ok(m) for m in maps]

    def _first(self) -> Any:
        maps = self._maps()
        if not maps:
            raise KeyError("ChainMap has no maps")
        return maps[0]

    def _union(self) -> dict[Any, None]:
        seen: dict[Any, None] = {}
        for mapping in reversed(self._maps()):
            if type(mapping) is dict:
                _spend(dict.__len__(mapping))
                charge_copy(mapping, "dict")
                seen.update(dict.fromkeys(mapping))
            else:
                for key in mapping:
                    seen[_key(key)] = None
        return seen

    def __getitem__(self, key: Any) -> Any:
        key = _key(key)
        for mapping in self._maps():
            try:
                return check_value(mapping[key])
            except KeyError:
                pass
        raise KeyError(key)

    def get(self, key: Any, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when no map has it."""
        key = _key(key)
        for mapping in self._maps():
            if key in mapping:
                return check_value(mapping[key])
        return default

    def __contains__(self, key: Any) -> bool:
        key = _key(key)
        return any(key in mapping for mapping in self._maps())

    def __len__(self) -> int:
        return len(self._union())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._union())

    def __bool__(self) -> bool:
        return any(self._maps())

    def keys(self) -> Any:
        """The keys of every map, once each (first seen in the last map)."""
        return self._union().keys()

    def _items(self) -> dict[Any, Any]:
        return {key: self[key] for key in self._union()}

    def values(self) -> Any:
        """The value of each key (as looked up)."""
        return self._items().values()

    def items(self) -> Any:
        """The ``(key, value)`` pairs (as looked up)."""
        return self._items().items()

    def __setitem__(self, key: Any, value: Any) -> None:
        self._first()[_key(key)] = value

    def __delitem__(self, key: Any) -> None:
        first = self._first()
        try:
            del first[_key(key)]
        except KeyError:
            raise KeyError(f"Key not found in the first mapping: {key!r}") from None

    def pop(self, key: Any, default: Any = _NOTHING) -> Any:
        """Remove ``key`` from ``maps[0]`` and return its value."""
        first = self._first()
        try:
            return first.pop(_key(key))
        except KeyError:
            if default is _NOTHING:
                raise KeyError(f"Key not found in the first mapping: {key!r}") from None
            return default

    def popitem(self) -> tuple[Any, Any]:
        """Remove and return a pair of ``maps[0]``."""
        try:
            pair: tuple[Any, Any] = self._first().popitem()
        except KeyError:
            raise KeyError("No keys found in the first mapping.") from None
        return pair

    def clear(self) -> None:
        """Empty ``maps[0]``."""
        self._first().clear()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """``self[key]``, setting it in ``maps[0]`` to ``default`` first if missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Update ``maps[0]`` (as ``dict.update``)."""
        first = self._first()
        if isinstance(other, ChainMap):
            other = other._items()
        if type(first) is dict:
            first.update(fed(other, "dict"), **kwargs)  # hashed in checked chunks
        else:
            _update(first, other, kwargs)

    def copy(self) -> ChainMap:
        """A new ChainMap with a copy of ``maps[0]`` and the same other maps."""
        first, *rest = self._maps()
        charge_copy(first)
        return ChainMap(first.copy(), *rest)

    __copy__ = copy

    def new_child(self, m: Any = None, **kwargs: Any) -> ChainMap:
        """A ChainMap with ``m`` (default a new dict, updated with ``kwargs``) in front."""
        if m is None:
            m = kwargs
        elif kwargs:
            mapping_ok(m).update(kwargs)
        return ChainMap(m, *self._maps())

    @property
    def parents(self) -> ChainMap:
        """A ChainMap of every map but the first."""
        return ChainMap(*self._maps()[1:])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChainMap):
            return self._items() == other._items()
        if isinstance(other, dict):
            return self._items() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Any) -> Any:
        if not isinstance(other, (dict, ChainMap)):
            return NotImplemented
        made = self.copy()
        made.update(other)
        return made

    def __ror__(self, other: Any) -> Any:
        if not isinstance(other, dict):
            return NotImplemented
        charge_copy(other)
        made = dict(other)  # `{...} | cm`: the dict's pairs, then the chain's (as Python's)
        made.update(self._items())
        return ChainMap(made)

    def __ior__(self, other: Any) -> Any:
        if not isinstance(other, (dict, ChainMap)):
            return NotImplemented
        self.update(other)
        return self

    def __repr__(self) -> str:
        maps = self._maps()
        check_render(maps, "repr() of this ChainMap")  # all maps together, not each alone
        return f"ChainMap({', '.join(safe_repr(m) for m in maps)})"


def _update(target: Any, other: Any, kwargs: dict[str, Any]) -> None:
    pairs = other.items() if isinstance(other, (dict, ChainMap)) else other
    for key, value in pairs:
        target[key] = value
    for key, value in kwargs.items():
        target[key] = value


ChainMap.__module__ = "collections"
setattr(ChainMap, ITEM_WRITABLE_MARK, True)  # cfg[k] = v (maps are checked at every use)
