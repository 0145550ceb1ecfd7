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
- ``ExitStack`` (``enter_context``, ``callback``, ``pop_all``, ``close``) holds at most
  :data:`MAX_EXITS` exits; each exit gets no traceback, a callback's keywords follow the
  call rule (no ``_name=``), and once a stop is in flight no further exit of the script runs
  (the run is ending; a stop is never suppressed).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.attributes import check_value, guarded_read, script_function
from scriptgate.sandbox.guards.boundary import HOLDABLE_MARK
from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = [
    "HOLDABLE",
    "MAX_EXITS",
    "MEMBERS",
    "NAME",
    "ExitStack",
    "build",
    "closing",
    "contextmanager",
    "nullcontext",
    "suppress",
]

NAME = "contextlib"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("contextmanager", "suppress", "nullcontext", "closing", "ExitStack")
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
            # the type's name, never its repr: a script's nested tuple renders 2**40 items
            # (findings14 D06)
            raise TypeError(f"suppress() takes exception classes, not {type(kind).__name__}")
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


MAX_EXITS = 10_000
"""Most exits one ``ExitStack`` may hold."""


class ExitStack:
    """``with ExitStack() as stack:`` — ``stack.enter_context(cm)`` and
    ``stack.callback(fn, *args)`` are unwound in reverse order on exit."""

    __slots__ = ("_exits",)

    def __init__(self) -> None:
        self._exits: list[tuple[Any, Any, tuple[Any, ...], dict[str, Any]]] = []

    def _push(self, entry: tuple[Any, Any, tuple[Any, ...], dict[str, Any]]) -> None:
        if len(self._exits) >= MAX_EXITS:
            raise ValueError(f"an ExitStack holds at most {MAX_EXITS} exits in the sandbox")
        self._exits.append(entry)

    def enter_context(self, cm: Any) -> Any:
        """Enter ``cm`` and push its exit; returns what its ``__enter__`` returns."""
        kind = type(cm)
        try:
            enter, exit_ = kind.__enter__, kind.__exit__
        except AttributeError:
            raise TypeError(
                f"{kind.__name__!r} object does not support the context manager protocol"
            ) from None
        result = check_value(enter(cm))
        self._push((exit_, cm, (), {}))
        return result

    def callback(self, callback: Any, /, *args: Any, **kwds: Any) -> Any:
        """Push ``callback(*args, **kwds)`` to run on exit; returns ``callback``."""
        if not callable(callback):
            raise TypeError("callback() takes a callable")
        for key in kwds:
            if key.startswith("_"):
                raise TypeError(
                    f'keyword argument "{key}" is not allowed because it starts with "_"'
                )
        self._push((None, callback, args, kwds))
        return callback

    def pop_all(self) -> ExitStack:
        """A new ExitStack with this one's exits (this one is left empty)."""
        moved = ExitStack()
        moved._exits, self._exits = self._exits, []
        return moved

    def close(self) -> None:
        """Unwind every exit now."""
        self.__exit__(None, None, None)

    def __enter__(self) -> ExitStack:
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool:
        original = value
        pending = value
        exits = self._exits
        while exits:
            if pending is not None and not _catchable(pending):
                exits.clear()  # a stop: the run is ending, no more script code
                break
            exit_, target, args, kwds = exits.pop()
            try:
                if exit_ is None:
                    target(*args, **kwds)
                elif exit_(target, None if pending is None else type(pending), pending, None):
                    pending = None
            except BaseException as exc:
                pending = exc
        if pending is None:
            return original is not None
        if pending is original:
            return False
        raise pending

    def __repr__(self) -> str:
        return f"<contextlib.ExitStack of {len(self._exits)} exits>"


for _cls in (GeneratorContextManager, suppress, nullcontext, closing, ExitStack):
    _cls.__module__ = "contextlib"

# `stack.close()`: the allow-list of listed types leaves out every stepping name (close
# among them), so ExitStack is marked holdable instead (all its public names are its own)
setattr(ExitStack, HOLDABLE_MARK, True)

HOLDABLE: tuple[type, ...] = (GeneratorContextManager, suppress, nullcontext, closing)
"""Value types this stand-in hands to scripts (not subclassable)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {
        "contextmanager": contextmanager,
        "suppress": suppress,
        "nullcontext": nullcontext,
        "closing": closing,
        "ExitStack": ExitStack,
    }
