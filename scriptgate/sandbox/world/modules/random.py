"""The ``random`` stand-in: a fresh ``random.Random`` per run (no shared state).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``seed`` takes scalars only.
"""

from __future__ import annotations

import random
from typing import Any

from scriptgate.sandbox.guards.attributes import MAX_SEQUENCE
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "random"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
    "gauss", "seed",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (beyond numbers)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run (built on first import: one generator per run)."""
    charge = run.charge
    rng = random.Random()

    def choices(
        population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1
    ) -> list[Any]:
        if k > MAX_SEQUENCE:
            refuse_size("random.choices k too large for the sandbox")
        return rng.choices(charge(population), weights, cum_weights=cum_weights, k=k)

    def sample(population: Any, k: int, *, counts: Any = None) -> list[Any]:
        return rng.sample(list(charge(population)), k, counts=counts)

    return {
        "random": rng.random,
        "randint": rng.randint,
        "randrange": rng.randrange,
        "choice": rng.choice,
        "choices": choices,
        "shuffle": rng.shuffle,
        "sample": sample,
        "uniform": rng.uniform,
        "gauss": rng.gauss,
        "seed": rng.seed,
    }
