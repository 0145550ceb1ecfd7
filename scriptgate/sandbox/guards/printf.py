"""The size estimate of ``template % mapping`` (``'%(a)s' * 100000 % {'a': s}``) before the C call.

Part of ``guards/`` (sizes and rendering): imports :mod:`.constants`, :mod:`.errors`,
:mod:`.printf_spec`, :mod:`.render_scope` and :mod:`.sizes`; must not import the attribute guard or anything
above ``guards/``.

The tuple form of ``%`` is bounded by the render walk of the tuple (every item counted
as often as it is referenced). The mapping form renders ``mapping[key]`` once per
``%(key)…`` conversion, so the walk of the mapping alone (each value once) misses the
repetition (findings10 F04: 100,000 ``%(a)s`` of a 5,000-character value built 500 M
characters in one call). :func:`resolve_mapping` parses the template's conversions, reads
each distinct key once (``mapping[key]``, as C would), estimates every conversion's text
(the value's rendering, or the width when wider; widths are already capped) times the
number of conversions that name the key, and refuses past :data:`.sizes.MAX_RENDER` with
the usual "too large" message. The estimate opens the rendering's cumulative scope
(:mod:`.render_scope`), so script ``__str__``/``__repr__`` results called once per
conversion are taken off one allowance. The C call then formats against an exact ``dict``
of the values read (a script ``__getitem__`` cannot hand C bigger values than were
estimated), unless the template also has key-less conversions: then the mapping itself
is their argument and goes to C as is, so it must be an exact ``dict``, whose lookups
run no script code (findings12 F08). Templates are read by :mod:`.printf_spec`.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.guards.printf_spec import PrintfSummary, summarize
from scriptgate.sandbox.guards.render_scope import start_rendering
from scriptgate.sandbox.guards.sizes import (
    CHARGE_FROM,
    MAX_RENDER,
    charge_render,
    check_render,
    render_estimate,
    too_large_render,
)

__all__ = ["resolve_mapping"]


def _value_size(value: Any, limit: int) -> int:
    kind = type(value)
    if kind is str or kind is bytes or kind is bytearray:
        return len(value)
    return render_estimate(value, limit)


def resolve_mapping(
    template: str | bytes | bytearray, mapping: Any, summary: PrintfSummary | None = None
) -> Any:
    """The right operand to give C for ``template % mapping``, after the size estimate.

    ``mapping`` is any non-tuple right operand with ``__getitem__`` (C's mapping form);
    ``summary`` is the template's :func:`.printf_spec.summarize` if the caller has it.
    A template that names no key renders the mapping itself once: bounded by
    :func:`.sizes.check_render`, ``mapping`` returned unchanged. Refuses (a size limit:
    ends the script) when the conversions would render more than
    :data:`.sizes.MAX_RENDER` characters. A template mixing key-less and keyed
    conversions hands C the mapping itself, so it must be an exact ``dict`` (C would
    call a script ``__getitem__`` again per conversion, past the estimate; findings12
    F08): anything else is refused. Call it inside ``with RENDERING:``.
    """
    text = template if isinstance(template, str) else template.decode("latin-1")
    if summary is None:
        summary = summarize(text)
    counts = summary.keys
    if not counts:
        check_render(mapping, "% formatting of this value")
        return mapping
    keyless = summary.keyless
    if keyless and type(mapping) is not dict:
        raise TypeError(
            "a % template mixing %s and %(key)s conversions needs a plain dict in the "
            "sandbox: pass dict(...) of the values"
        )
    # the literal text, plus each conversion's width (and numeric precision), plus
    # each conversion's value estimate: an upper bound
    total = len(text) + summary.padding
    values: dict[Any, Any] = {}
    what = "% formatting of this mapping"
    if keyless:
        total += keyless * render_estimate(mapping, MAX_RENDER // keyless + 1)
    if total > MAX_RENDER:
        too_large_render(what, total)
    for key, count in counts.items():
        name: Any = key if isinstance(template, str) else key.encode("latin-1")
        value = mapping[name]  # read once, as C would (a KeyError is the script's)
        values[name] = value
        total += count * _value_size(value, (MAX_RENDER - total) // count + 1)
        if total > MAX_RENDER:
            too_large_render(what, total)
    # the estimate opens this rendering's cumulative scope: script dunders C calls once
    # per conversion take their results off one allowance (render_scope)
    start_rendering(total)
    if total >= CHARGE_FROM:
        charge_render(total)
    return mapping if keyless else values
