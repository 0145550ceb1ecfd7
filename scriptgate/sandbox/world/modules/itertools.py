"""The ``itertools`` stand-in: every iterator charges its input and ticks per item.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The infinite iterators tick per item so a
limit can stop them; ``groupby`` checks each key it compares (dagguard).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from scriptgate.sandbox.guards.comparisons import SCALARS, operand_ok
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "itertools"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "count", "cycle", "repeat", "chain", "islice", "accumulate", "groupby", "product",
    "permutations", "combinations", "combinations_with_replacement", "zip_longest",
    "starmap", "takewhile", "dropwhile", "compress", "pairwise", "filterfalse", "batched",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = tuple(
    value
    for name, value in vars(itertools).items()
    if isinstance(value, type) and not name.startswith("_")
)
"""Value types this stand-in hands to scripts (its iterators are generators)."""


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
        pools = [tuple(charge(it)) for it in iterables]
        if repeat > 64:
            refuse_size("itertools.product repeat above 64 refused in the sandbox")
        return ticking(itertools.product(*pools, repeat=repeat))

    def compared(value: Any) -> Any:
        # a key groupby compares with the next one (==, in C): not amplified (dagguard)
        tick()
        return value if type(value) in SCALARS else operand_ok(value)

    def groupby(iterable: Any, key: Any = None) -> Iterator[Any]:
        # itertools.groupby compares each key with the previous one in C: every key
        # is checked as it is computed (the item itself without a key), and ticks
        if key is None:
            return ticking(itertools.groupby(map(compared, charge(iterable))))
        return ticking(itertools.groupby(charge(iterable), key=lambda item: compared(key(item))))

    return {
        "count": run.lazy(itertools.count),
        "cycle": run.lazy_first(itertools.cycle),
        "repeat": repeat,
        "chain": chain,
        "islice": run.lazy_first(itertools.islice),
        "accumulate": run.lazy_first(itertools.accumulate),
        "groupby": groupby,
        "product": product,
        "permutations": run.lazy_first(itertools.permutations),
        "combinations": run.lazy_first(itertools.combinations),
        "combinations_with_replacement": run.lazy_first(itertools.combinations_with_replacement),
        "zip_longest": run.lazy_over(itertools.zip_longest),
        "starmap": run.lazy_second(itertools.starmap),
        "takewhile": run.lazy_second(itertools.takewhile),
        "dropwhile": run.lazy_second(itertools.dropwhile),
        "compress": run.lazy_over(itertools.compress),
        "pairwise": run.lazy_first(itertools.pairwise),
        "filterfalse": run.lazy_second(itertools.filterfalse),
        "batched": run.lazy_first(_batched),
    }
