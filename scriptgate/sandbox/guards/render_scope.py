"""The cumulative bound of one rendering: a script class's ``__repr__``/``__str__`` results.

Part of ``guards/`` (the bottom, beside :mod:`.constants`): imports only :mod:`.errors`.
The render guards (:func:`.sizes.render_size`) estimate a value's text without running
its code, so a script object counts as a short fixed estimate; but CPython's container
``repr``/``str``, ``%`` formatting, ``print`` and ``pprint`` then call every script
``__repr__``/``__str__`` and join the results in one C call (findings7 F01: 100
references to an object whose ``__repr__`` returns 9 MB rendered 900 M characters under
the 10 M bound, growing the host ~870 MB). So the bound is made cumulative:

- every guarded rendering starts a *scope* (:func:`start_rendering`, called by
  ``render_size`` when no script dunder is running): the allowance left is the limit minus
  the estimate;
- a script class's ``__repr__``/``__str__``/``__format__`` is wrapped when the class is
  made (:func:`measured`, from ``script_classes.prepare_namespace``): each result's length
  (read through ``str.__len__``) is taken off the allowance as it returns, and a result
  past it is refused (a size limit that ends the script) before C can join it;
- renderings inside a script dunder (its own ``repr(inner)``) stay in the outer scope;
- the guarded entry points (``repr``/``ascii``/``str``/``format``/``%``/``print``/
  ``pprint``/``json.dumps``) hold :data:`RENDERING` for the whole C call, so a scope start
  made while it runs (a host stand-in's ``__repr__`` that C calls between two items, e.g.
  ChainMap's ``check_render``) *joins* the rendering in progress: its estimate is taken off
  what is left instead of resetting it (findings9 F03: ``repr([o, ChainMap()] * 50)`` gave
  every ``o.__repr__`` a fresh allowance, 450 M characters in one call).

The state is a :mod:`contextvars` variable, so interleaved runs (greenlets, tasks) never
share an allowance.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size

__all__ = ["MAX_RENDER_TOTAL", "RENDERING", "measured", "measured_number", "start_rendering"]

MAX_RENDER_TOTAL = 10_000_000
"""Characters one rendering may take from script dunders (= ``sizes.MAX_RENDER``)."""

_STATE: contextvars.ContextVar[list[int]] = contextvars.ContextVar("scriptgate_render_scope")
"""``[allowance left, script dunders running, entry points open, scope started]`` of the
current context."""


def _state() -> list[int]:
    state = _STATE.get(None)
    if state is None:
        state = [MAX_RENDER_TOTAL, 0, 0, 0]
        _STATE.set(state)
    return state


def start_rendering(estimate: int, limit: int = MAX_RENDER_TOTAL) -> None:
    """Open a new rendering's scope: ``limit - estimate`` left.

    Inside a script dunder nothing changes (the dunder's result is measured); inside a
    guarded entry point's C call (:data:`RENDERING`) whose scope is already started, the
    estimate is taken off what is left (refused past it) and the scope is never reset (an
    estimate past ``limit`` alone is left to the caller, which refuses it in its own words).
    """
    state = _state()
    if state[1] != 0:
        return
    if state[2] != 0 and state[3] != 0:
        if estimate > min(limit, MAX_RENDER_TOTAL):
            return  # too large alone: the caller refuses it with its own words
        state[0] -= max(estimate, 0)
        if state[0] < 0:
            state[0] = 0
            refuse_size(
                "rendering would be too large for the sandbox "
                f"(more than {MAX_RENDER_TOTAL} characters in one rendering)"
            )
        return
    state[0] = min(limit, MAX_RENDER_TOTAL) - max(estimate, 0)
    if state[2] != 0:
        state[3] = 1


class _Rendering:
    """``with RENDERING:`` around a guarded entry point's check and C call (see module doc)."""

    __slots__ = ()

    def __enter__(self) -> None:
        state = _state()
        if state[2] == 0:
            state[3] = 0
        state[2] += 1

    def __exit__(self, *exc: object) -> None:
        state = _state()
        state[2] -= 1
        if state[2] == 0:
            state[3] = 0


RENDERING = _Rendering()
"""Held by a guarded rendering entry point for its whole C call: nested scope starts join it."""


def measured(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The script's ``name`` dunder (``__repr__``/``__str__``/``__format__``), its result
    taken off the allowance of the rendering in progress."""

    def shield(self: Any, /, *args: Any) -> Any:
        state = _state()
        state[1] += 1
        try:
            text = method(self, *args)
        finally:
            state[1] -= 1
        if isinstance(text, str):
            _take(state, str.__len__(text), name)
        return text

    return _named(shield, method, name)


def _take(state: list[int], size: int, name: str) -> None:
    """Take ``size`` characters of a ``name`` result off the allowance; refuse past it."""
    state[0] -= size
    if state[0] < 0:
        state[0] = 0
        refuse_size(
            f"rendering {name} results would be too large for the sandbox "
            f"(more than {MAX_RENDER_TOTAL} characters in one rendering)"
        )


def _named(shield: Callable[..., Any], method: Any, name: str) -> Callable[..., Any]:
    shield.__name__ = name
    shield.__qualname__ = getattr(method, "__qualname__", name)
    return shield


def _text_bound(value: Any) -> int:
    """The most characters C renders of ``value`` in one ``%`` conversion (``%d``, ``%x``)."""
    if isinstance(value, int):
        return int.bit_length(value) // 3 + 2  # decimal, hex and octal digits, and a sign
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    return 0


def measured_number(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The script's ``__int__``/``__bytes__``: inside a rendering, the text C makes of its
    result is taken off the allowance (``'%d' * n % ((obj,) * n)`` rendered 4,000 digits per
    conversion from an object the render walk counts as a few characters)."""

    def shield(self: Any, /) -> Any:
        value = method(self)
        state = _STATE.get(None)
        if state is not None and state[2] > 0:  # only inside a guarded rendering
            _take(state, _text_bound(value), name)
        return value

    return _named(shield, method, name)
