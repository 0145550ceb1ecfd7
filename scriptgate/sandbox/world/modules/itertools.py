"""The ``itertools`` stand-in: every iterator charges its input and ticks per item.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The infinite iterators tick per item so a
limit can stop them; ``groupby`` checks each key it compares (dagguard). The members
that read many input items per item they yield (``dropwhile``/``filterfalse`` skipping,
``compress`` over false selectors, ``islice`` skipping to its start, ``batched`` filling
a batch) read that input in ticked pieces too (findings15 E01). ``tee`` is
the sandbox's own: at most :data:`MAX_TEE` branches, and every item buffered for a
lagging branch is charged to the memory budget (at most :data:`MAX_TEE_BUFFER` items).
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Iterator
from typing import Any

from scriptgate.sandbox.guards.comparisons import SCALARS, operand_ok
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_int
from scriptgate.sandbox.guards.memory import charge_bytes, charge_copy, growth_checked, guarded_add
from scriptgate.sandbox.guards.ticking import read_ticked, ticked, ticks_itself
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "itertools"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "count", "cycle", "repeat", "chain", "islice", "accumulate", "groupby", "product",
    "permutations", "combinations", "combinations_with_replacement", "zip_longest",
    "starmap", "takewhile", "dropwhile", "compress", "pairwise", "filterfalse", "batched",
    "tee",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = tuple(
    value
    for name, value in vars(itertools).items()
    if isinstance(value, type) and not name.startswith("_")
)
"""Value types this stand-in hands to scripts (its iterators are generators)."""
MAX_WIDTH = 10_000
"""Longest tuple ``product``/``permutations``/``combinations*`` may yield: the C
constructor allocates (and fills) index arrays of ``r`` (or all pools) up front, so
``combinations([], 10**9)`` was 8 GB in one call before yielding nothing."""


MAX_TEE = 100
"""Most branches ``tee(it, n)`` may make."""
MAX_TEE_BUFFER = 1_000_000
"""Most items ``tee`` may hold for its lagging branches together (about 50 MB):
``tee(count())`` with one branch run ahead buffers every item it passes."""
_BUFFERED_ITEM_BYTES = 48
"""About what one buffered item keeps alive (a deque slot and a small object)."""


def _tee(charge: Any, ticking: Any, iterable: Any, n: Any = 2) -> tuple[Iterator[Any], ...]:
    """``itertools.tee``: ``n`` independent iterators over one iterable, bounded."""
    if type(n) is not int:
        raise TypeError(f"tee() n must be an int, not {type(n).__name__}")
    if n < 0:
        raise ValueError("n must be >= 0")
    if n > MAX_TEE:
        refuse_size(f"itertools.tee of {n} branches refused: the sandbox allows at most {MAX_TEE}")
    source = iter(charge(iterable))
    buffers: list[collections.deque[Any]] = [collections.deque() for _ in range(n)]
    held = [0]

    def branch(mine: collections.deque[Any]) -> Iterator[Any]:
        while True:
            if mine:
                held[0] -= 1
                yield mine.popleft()
                continue
            try:
                item = next(source)
            except StopIteration:
                return
            if n > 1:
                held[0] += n - 1
                if held[0] > MAX_TEE_BUFFER:
                    refuse_size(
                        f"itertools.tee buffering more than {MAX_TEE_BUFFER} items refused "
                        "(advance the branches together, or make a list once)"
                    )
                charge_bytes((n - 1) * _BUFFERED_ITEM_BYTES)
                for other in buffers:
                    if other is not mine:
                        other.append(item)
            yield item

    return tuple(ticking(branch(buffer)) for buffer in buffers)


def _width_ok(name: str, r: Any) -> None:
    r = exact_int(r)  # an int subclass is its int value to C (findings19 N02)
    if type(r) is int and r > MAX_WIDTH:
        refuse_size(
            f"itertools.{name} of tuples of {r} items refused: the sandbox allows at most "
            f"{MAX_WIDTH} per tuple (ask for shorter tuples)"
        )


def _batched(iterable: Any, n: int) -> Iterator[tuple[Any, ...]]:
    if n < 1:
        raise ValueError("n must be at least one")
    it = iter(iterable)
    while batch := tuple(itertools.islice(it, n)):
        yield batch


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    charge, tick, ticking = run.charge, run.tick, run.ticking
    chain = run.lazy_over(itertools.chain)

    def from_iterable(iterables: Any) -> Iterator[Any]:
        return ticking(itertools.chain.from_iterable(charge(it) for it in charge(iterables)))

    chain.from_iterable = from_iterable  # type: ignore[attr-defined]

    def repeat(obj: Any, times: int | None = None) -> Iterator[Any]:
        return ticking(itertools.repeat(obj) if times is None else itertools.repeat(obj, times))

    def product(*iterables: Any, repeat: int = 1) -> Iterator[Any]:
        repeat = exact_int(repeat)
        if type(repeat) is int:
            if repeat > 64:
                refuse_size("itertools.product repeat above 64 refused in the sandbox")
            _width_ok("product", len(iterables) * repeat)
        pools = [
            tuple(growth_checked(charge(charge_copy(it, "tuple")), "tuple")) for it in iterables
        ]  # F09, A10
        return ticking(itertools.product(*pools, repeat=repeat))

    def accumulate(iterable: Any, func: Any = None, *, initial: Any = None) -> Iterator[Any]:
        # the default sum is the script's own `+` (size-checked): accumulate([s] * 200) of
        # an 8 MB string doubled per item in C, 160 GB copied before the next periodic check
        step = guarded_add if func is None else func
        return ticking(itertools.accumulate(charge(iterable), step, initial=initial))

    def sized(name: str, real: Any) -> Any:
        def wrapper(iterable: Any, r: Any = None) -> Iterator[Any]:
            _width_ok(name, r)
            pool = tuple(
                growth_checked(charge(charge_copy(iterable, "tuple")), "tuple")
            )  # F09, A10
            if r is None:
                _width_ok(name, len(pool))  # permutations(x): tuples as long as x
                return ticking(real(pool))  # (combinations(x): the real TypeError)
            return ticking(real(pool, r))

        wrapper.__name__ = name
        return wrapper

    def compared(value: Any) -> Any:
        # a key groupby compares with the next one (==, in C): not amplified (dagguard)
        tick()
        return value if type(value) in SCALARS else operand_ok(value)

    def groupby(iterable: Any, key: Any = None) -> Iterator[Any]:
        # itertools.groupby compares each key with the previous one in C: every key
        # is checked as it is computed (the item itself without a key), and ticks
        if key is None:
            groups = itertools.groupby(map(compared, charge(iterable)))
        else:
            groups = itertools.groupby(charge(iterable), key=lambda item: compared(key(item)))
        # each group is handed out as the sandbox's iterator like every other one here,
        # never as the host's itertools._grouper (held but not nameable: helper-74)
        return ticking((k, ticking(group)) for k, group in groups)

    def tee(iterable: Any, n: Any = 2) -> tuple[Iterator[Any], ...]:
        return _tee(charge, ticking, iterable, n)

    # findings15 E01: the output ticks, but one output item of these may read the whole
    # input in C (next(dropwhile(str, range(3*10**7))) ran 27 s under a 2 s deadline):
    # that input is read in ticked pieces (a host predicate) or READ_EVERY ones (no call)
    def read(iterable: Any) -> Any:
        return read_ticked(charge(iterable), charge)

    def tested(func: Any, iterable: Any) -> Any:
        if func is None:
            return read(iterable)  # filterfalse(None, x): a truth test per item, in C
        if ticks_itself(func):
            return charge(iterable)  # the script's own predicate ticks at every call
        return ticked(charge(iterable), charge)  # a host predicate: as map() reads

    def skipping(real: Any) -> Any:
        def wrapper(func: Any, iterable: Any) -> Iterator[Any]:
            return ticking(real(func, tested(func, iterable)))

        wrapper.__name__ = real.__name__
        return wrapper

    def compress(data: Any, selectors: Any) -> Iterator[Any]:
        # each step reads one of each: the selectors' pieces bound the data's reads too
        fed = charge(data)
        return ticking(itertools.compress(fed, read(selectors)))

    def islice(iterable: Any, *args: Any) -> Iterator[Any]:
        return ticking(itertools.islice(read(iterable), *args))

    def batched(iterable: Any, n: int) -> Iterator[tuple[Any, ...]]:
        return ticking(_batched(read(iterable), n))

    return {
        "count": run.lazy(itertools.count),
        "cycle": run.lazy_first(itertools.cycle),
        "repeat": repeat,
        "chain": chain,
        "islice": islice,
        "accumulate": accumulate,
        "groupby": groupby,
        "product": product,
        "permutations": sized("permutations", itertools.permutations),
        "combinations": sized("combinations", itertools.combinations),
        "combinations_with_replacement": sized(
            "combinations_with_replacement", itertools.combinations_with_replacement
        ),
        "zip_longest": run.lazy_over(itertools.zip_longest),
        "starmap": run.lazy_second(itertools.starmap),
        "takewhile": run.lazy_second(itertools.takewhile),
        "dropwhile": skipping(itertools.dropwhile),
        "compress": compress,
        "pairwise": run.lazy_first(itertools.pairwise),
        "filterfalse": skipping(itertools.filterfalse),
        "batched": batched,
        "tee": tee,
    }
