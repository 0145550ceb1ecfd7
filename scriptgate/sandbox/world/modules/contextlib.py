"""The ``contextlib`` stand-in: ``contextmanager``, ``suppress``, ``nullcontext``, ``closing``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

Each is the sandbox's own class (no host ``ContextDecorator`` or ``AbstractContextManager``
behind it). What they promise:

- ``@contextmanager`` takes a generator function the script defines. The context manager
  steps the script's generator on the host side (``next``, and ``throw`` of the exception
  the ``with`` body raised, as CPython does); the script never holds ``send``/``throw``
  (issue 13), and whatever the generator yields at ``__enter__`` passes the value check.
  No traceback reaches the script: the exception is thrown in without one.
- The run's stops (a limit, an abort, a cancellation: anything not an ``Exception`` and
  not the script's own class) are never swallowed: ``suppress(BaseException)`` re-raises
  them, and a generator context manager closes its generator (its ``finally`` runs) and
  lets the stop go on instead of throwing it in.
- ``closing(x)`` calls ``x.close()`` through the attribute guard.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.attributes import check_value, guarded_read, script_function
from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = [
    "HOLDABLE",
    "MEMBERS",
    "NAME",
    "build",
    "closing",
    "contextmanager",
    "nullcontext",
    "suppress",
]

NAME = "contextlib"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("contextmanager", "suppress", "nullcontext", "closing")
"""The members a script may use."""


def _catchable(value: Any) -> bool:
    """Whether the script may handle ``value``: an ``Exception``, or its own exception class
    (never a run's stop: ``ScriptStop``, ``KeyboardInterrupt``, a cancellation…)."""
    return isinstance(value, Exception) or bool(getattr(type(value), SCRIPT_CLASS_MARK, False))


class GeneratorContextManager:
    """What a ``@contextmanager`` function returns: use it in a ``with`` statement."""

    __slots__ = ("_gen",)

    def __init__(self, func: Any, args: tuple[Any, ...], kwds: dict[str, Any]) -> None:
        if not script_function(func):
            raise TypeError("contextmanager decorates a generator function you define")
        gen = func(*args, **kwds)
        if type(gen) is not types.GeneratorType:
            raise TypeError(
                f"@contextmanager needs a generator function (with a yield), "
                f"{getattr(func, '__name__', 'it')}() returned {type(gen).__name__}"
            )
        self._gen = gen

    def __enter__(self) -> Any:
        try:
            return check_value(next(self._gen))
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        gen = self._gen
        if kind is None:
            try:
                next(gen)
            except StopIteration:
                return False
            gen.close()
            raise RuntimeError("generator didn't stop")
        if value is None or not _catchable(value):
            gen.close()  # a stop: the generator's finally runs, the stop goes on
            return False
        try:
            gen.throw(value)
        except StopIteration as exc:
            return exc is not value
        except RuntimeError as exc:
            if exc is value:
                return False
            if isinstance(value, StopIteration) and exc.__cause__ is value:
                return False
            raise
        except BaseException as exc:
            if exc is not value:
                raise
            return False
        gen.close()
        raise RuntimeError("generator didn't stop after throw()")

    def __repr__(self) -> str:
        return "<contextlib.GeneratorContextManager object>"


def contextmanager(func: Any) -> Callable[..., GeneratorContextManager]:
    """``@contextmanager``: a generator function (one ``yield``) as a ``with`` context."""
    if not script_function(func):
        raise TypeError("contextmanager decorates a generator function you define")

    def helper(*args: Any, **kwds: Any) -> GeneratorContextManager:
        return GeneratorContextManager(func, args, kwds)

    helper.__name__ = helper.__qualname__ = func.__name__
    helper.__doc__ = func.__doc__
    return helper


def _exception_classes(exceptions: tuple[Any, ...]) -> tuple[type[BaseException], ...]:
    for kind in exceptions:
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            raise TypeError(f"suppress() takes exception classes, not {kind!r}")
    return exceptions


class suppress:
    """``with suppress(KeyError):`` — the listed exceptions raised in the body are ignored
    (never a limit or an abort of the run)."""

    __slots__ = ("_exceptions",)

    def __init__(self, *exceptions: Any) -> None:
        self._exceptions = _exception_classes(exceptions)

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        if kind is None or not _catchable(value):
            return False
        return issubclass(kind, self._exceptions)


class nullcontext:
    """``with nullcontext(x) as y:`` — ``y`` is ``x``; nothing happens on exit."""

    __slots__ = ("enter_result",)

    def __init__(self, enter_result: Any = None) -> None:
        self.enter_result = enter_result

    def __enter__(self) -> Any:
        return self.enter_result

    def __exit__(self, *excinfo: Any) -> None:
        return None

    async def __aenter__(self) -> Any:
        return self.enter_result

    async def __aexit__(self, *excinfo: Any) -> None:
        return None


class closing:
    """``with closing(thing) as t:`` — ``thing.close()`` is called on exit."""

    __slots__ = ("thing",)

    def __init__(self, thing: Any) -> None:
        self.thing = thing

    def __enter__(self) -> Any:
        return self.thing

    def __exit__(self, *excinfo: Any) -> None:
        guarded_read(self.thing, "close")()


for _cls in (GeneratorContextManager, suppress, nullcontext, closing):
    _cls.__module__ = "contextlib"

HOLDABLE: tuple[type, ...] = (GeneratorContextManager, suppress, nullcontext, closing)
"""Value types this stand-in hands to scripts (not subclassable)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "contextmanager": contextmanager,
        "suppress": suppress,
        "nullcontext": nullcontext,
        "closing": closing,
    }
