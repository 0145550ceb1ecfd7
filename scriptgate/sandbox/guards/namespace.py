"""The read-only module object scripts get from ``import``: :class:`OpaqueNamespace`.

Owns only that class (no guard logic); the attribute guard and the chunked feeds both test
for it, so it sits below them. Imports nothing from scriptgate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

__all__ = ["OpaqueNamespace"]


class OpaqueNamespace:
    """An immutable bag of named members (stand-in modules, ``tools``).

    The attribute guard resolves members from the private mapping; nothing else
    about the object is reachable, and it cannot be written to.
    """

    __slots__ = ("_kind", "_members", "_missing", "_name")

    def __init__(
        self,
        name: str,
        members: dict[str, Any],
        *,
        kind: str = "module",
        missing: Callable[[str], Exception] | None = None,
    ) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", dict(members))
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_missing", missing)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise TypeError(f"{self._name} is read-only")

    def __delattr__(self, name: str) -> NoReturn:
        raise TypeError(f"{self._name} is read-only")

    def __getitem__(self, name: object) -> Any:
        """``tools["raw-name"]``: the member by its key (the compiled item read lands here)."""
        if type(name) is not str:
            raise TypeError("namespace keys are strings")
        return self.member(name)

    def member(self, name: str) -> Any:
        """The member ``name`` or the namespace's missing-member error."""
        try:
            return self._members[name]
        except KeyError:
            if self._missing is not None:
                raise self._missing(name) from None
            raise AttributeError(f"{self._kind} {self._name!r} has no attribute {name!r}") from None

    def members(self) -> dict[str, Any]:
        """A copy of the members (host-side use)."""
        return dict(self._members)

    def __getattr__(self, name: str) -> Any:
        # Only reached by `from X import name` (IMPORT_FROM does a real getattr);
        # the import guard has already checked `name` against the member list.
        if name.startswith("_"):
            raise AttributeError(name)
        return self.member(name)

    def __repr__(self) -> str:
        return f"<{self._kind} {self._name!r}>"


# ----------------------------------------------------------------------------- guards


# Guards that need no per-run state: built once, shared by every run (function
# objects a script cannot modify: the write guard refuses them).
