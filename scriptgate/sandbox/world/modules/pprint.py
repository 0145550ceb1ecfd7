"""The ``pprint`` stand-in: ``pprint``, ``pformat``, ``pp`` and ``saferepr``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The value's rendering is measured before it is
made (a value whose text would pass the render limit is refused, as for ``print``);
``pprint``/``pp`` write through the script's own ``print`` (captured, counted against
the output limit), found in the calling script frame's globals; ``stream=`` is not
available. Cycles print as ``<Recursion on …>`` as in CPython; a script class's
``__repr__`` runs inside the run (its ticks count, the deadline stops it).
"""

from __future__ import annotations

import pprint
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.render_scope import RENDERING
from scriptgate.sandbox.guards.sizes import check_render
from scriptgate.sandbox.guards.ticking import TICK_EVERY, run_charge
from scriptgate.sandbox.world.modules.common import RunWorld, script_print

__all__ = ["HOLDABLE", "MAX_WIDTH", "MEMBERS", "NAME", "build"]

NAME = "pprint"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("pprint", "pformat", "pp", "saferepr")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (str only)."""
MAX_WIDTH = 10_000
"""The widest ``width`` and deepest ``indent`` the pprint stand-in takes."""


def _options(indent: Any, width: Any, depth: Any) -> None:
    for name, value in (("indent", indent), ("width", width)):
        if not isinstance(value, int) or value > MAX_WIDTH:
            raise ValueError(f"pprint {name} must be an int of at most {MAX_WIDTH}")
    if depth is not None and not isinstance(depth, int):
        raise TypeError("pprint depth must be an int or None")


def _pformat(
    obj: Any,
    indent: int = 1,
    width: int = 80,
    depth: int | None = None,
    *,
    compact: bool = False,
    sort_dicts: bool = True,
    underscore_numbers: bool = False,
) -> str:
    _options(indent, width, depth)
    with RENDERING:  # nested scope starts join this rendering (findings9 F03)
        check_render(obj, "pprint of this value")
        return _TickingPrinter(
            run_charge(),
            indent=indent,
            width=width,
            depth=depth,
            compact=bool(compact),
            sort_dicts=bool(sort_dicts),
            underscore_numbers=bool(underscore_numbers),
        ).pformat(obj)


class _TickingPrinter(pprint.PrettyPrinter):
    """The host's ``PrettyPrinter``, charging the run every :data:`TICK_EVERY` objects.

    Its recursion is pure Python with no tick of its own: 2,000 references to one
    1,000-item list render under the text bound but ran 8 s under a 1 s deadline
    (findings7 F04). Every nested object passes through :meth:`format`.
    """

    def __init__(self, charge: Callable[[Any], Any] | None, **options: Any) -> None:
        super().__init__(**options)
        self._charge = charge
        self._count = 0

    def format(self, obj: Any, context: Any, maxlevels: Any, level: Any) -> Any:
        """The host's ``format``, after a charge every :data:`TICK_EVERY` calls."""
        self._count += 1
        if self._count >= TICK_EVERY and self._charge is not None:
            self._count = 0
            self._charge(_STEPS)
        return super().format(obj, context, maxlevels, level)


_STEPS = range(TICK_EVERY)


def _pprint(obj: Any, stream: Any = None, *args: Any, **kwargs: Any) -> None:
    if stream is not None:
        raise TypeError("pprint(stream=...) is not available in the sandbox (it prints)")
    out = script_print("pprint.pprint")
    out(_pformat(obj, *args, **kwargs))


def _pp(obj: Any, *args: Any, sort_dicts: bool = False, **kwargs: Any) -> None:
    if args and args[0] is not None:
        raise TypeError("pp(stream=...) is not available in the sandbox (it prints)")
    out = script_print("pprint.pprint")
    out(_pformat(obj, *args[1:], sort_dicts=sort_dicts, **kwargs))


def _saferepr(obj: Any) -> str:
    with RENDERING:
        check_render(obj, "pprint of this value")
        printer = _TickingPrinter(run_charge())
        return str(printer._safe_repr(obj, {}, None, 0)[0])  # type: ignore[arg-type]


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"pprint": _pprint, "pformat": _pformat, "pp": _pp, "saferepr": _saferepr}
