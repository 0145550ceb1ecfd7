"""What every stand-in module builds on: the run's charging and ticking wrappers.

Part of ``world/modules/``: owns :class:`RunWorld` (the per-run hooks a stand-in's
``build`` receives) and the wrappers that make a C iterator tick per item; uses
``guards/`` and must not import the engine, isolation or the model-facing text.

A stand-in module (one file in this package) declares ``NAME``, ``MEMBERS`` (the
names a script may use), ``HOLDABLE`` (the value types it hands to scripts, which
the object boundary allows) and ``build(run) -> dict`` (the members of one run).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.ticking import ticked

__all__ = ["RunWorld", "own_methods", "script_print"]


@dataclass(frozen=True)
class RunWorld:
    """The per-run hooks of the stand-ins: ``charge`` an iterable, ``tick`` one step; and
    from the engine: ``sleep`` (the run's bounded wait), ``async_sleep`` (its awaitable
    form, ``(seconds, result)``), ``gather`` (the run's own), ``spawn`` (start
    ``runner(aw)`` in the run's task group: ``(aw, runner, name, trusted=False)``) and
    ``check`` (refuse a caller that is not this live run, ``(name)``)."""

    charge: Callable[[Any], Any]
    tick: Callable[[], None]
    sleep: Callable[[float], None]
    async_sleep: Callable[[float, Any], Any]
    gather: Callable[..., Any]
    spawn: Callable[..., None] | None = None
    check: Callable[[str], None] | None = None

    def ticking(self, it: Iterator[Any]) -> Iterator[Any]:
        """``it``, charged in pieces of 32 items (a limit stops an endless iterator, and a
        C iterator of slow calls — ``starmap(s.count, …)`` — within 32 of them: findings7 F06)."""
        yield from ticked(it, self.charge)

    def lazy(self, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        """``fn`` whose iterator ticks per item."""

        def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            return self.ticking(fn(*args, **kwargs))

        wrapper.__name__ = fn.__name__
        return wrapper

    def lazy_over(self, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        """``fn`` over several iterables, each charged, whose iterator ticks per item."""

        def wrapper(*iterables: Any, **kwargs: Any) -> Iterator[Any]:
            return self.ticking(fn(*(self.charge(it) for it in iterables), **kwargs))

        wrapper.__name__ = fn.__name__
        return wrapper

    def lazy_first(self, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        """``fn`` whose first argument (an iterable) is charged and whose iterator ticks."""

        def wrapper(iterable: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            return self.ticking(fn(self.charge(iterable), *args, **kwargs))

        wrapper.__name__ = fn.__name__
        return wrapper

    def lazy_second(self, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        """``fn(func, iterable, ...)`` with the iterable charged and a ticking iterator."""

        def wrapper(func: Any, iterable: Any, *args: Any) -> Iterator[Any]:
            return self.ticking(fn(func, self.charge(iterable), *args))

        wrapper.__name__ = fn.__name__
        return wrapper


def own_methods(cls: type, names: tuple[str, ...]) -> None:
    """Give ``cls`` its own (sandbox-defined) function for each inherited method in ``names``.

    The object boundary lets a script hold bound methods of sandbox functions only: a
    stand-in subclass of a real pure-Python class (``difflib.SequenceMatcher``) calls
    through to the real method from a function of this package.
    """
    for name in names:
        real = getattr(cls, name)

        def method(self: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            return _real(self, *args, **kwargs)

        method.__name__ = name
        method.__qualname__ = f"{cls.__name__}.{name}"
        method.__doc__ = getattr(real, "__doc__", None)
        setattr(cls, name, method)


def script_print(what: str) -> Callable[..., None]:
    """The calling script's own ``print`` (captured, counted against the output limit): the
    ``_print_`` of the nearest script frame up the stack (``pprint.pprint``, ``warnings.warn``
    write through it); ``RuntimeError`` naming ``what`` outside a script."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            found = frame.f_globals.get("_print_")
            if callable(found):
                return found  # type: ignore[no-any-return]
            break
        frame = frame.f_back  # type: ignore[assignment]
    raise RuntimeError(f"{what} is only available inside a script")
