"""The ``random`` stand-in: a fresh ``random.Random`` per run (no shared state).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``seed`` takes scalars only.

``shuffle``, ``sample`` and ``choices`` are host-Python loops over their items: each checks
the run's budget and charges its items first, and ``shuffle`` runs CPython 3.11's own
Fisher-Yates loop (the same ``_randbelow`` calls, so the same order for the same seed) and
``choices`` its draws in pieces of :data:`DRAW_PIECE` with a budget check between two
(findings15 E06).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from scriptgate.sandbox.guards.attributes import MAX_SEQUENCE
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import base_len, exact_int
from scriptgate.sandbox.guards.memory import charge_bytes, charge_copy, growth_checked
from scriptgate.sandbox.guards.ticking import charge_host_loop
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "random"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
    "gauss", "seed", "getrandbits", "Random",
)  # fmt: skip
"""The members a script may use."""
MAX_RANDBITS = 1_000_000
"""The most bits ``getrandbits`` draws (the sandbox's int size bound)."""
MAX_DRAWS = 1_000_000
"""Most items ``shuffle``, ``sample`` and ``choices`` handle in one call: each is one host
loop per item (about 0.5 s at this bound); each call checks the budget first."""
DRAW_PIECE = 1 << 14
"""Swaps ``shuffle`` makes (draws ``choices`` makes) between two budget checks (about
10 ms): one shuffle of a million items was 0.6-0.9 s of host Python with no check inside,
and 50 of them ran 43.5 s past a 1 s deadline (findings15 E06)."""


def _sized(population: Any) -> Any:
    """``population`` as ``sample`` reads it: a range as it is, anything else copied (charged)."""
    if type(population) is range:
        return population
    charge_copy(population, "list")  # a str's characters are new objects (findings14 A10)
    return list(growth_checked(population, "list"))  # an iterator's growth read (F09)


class Random:
    """``random.Random`` for scripts: a real generator behind listed, size-checked methods.

    The real class's ``choices(k=...)``, ``sample`` and ``getrandbits`` allocate
    what their argument asks for in one C call, so each is bounded here; the
    generator itself is not reachable (``_rng`` starts with ``_``).
    """

    __slots__ = ("_rng",)

    def __init__(self, x: Any = None) -> None:
        self._rng = random.Random()
        self.seed(x)

    def seed(self, a: Any = None) -> None:
        """Seed the generator (``None``, an int, a float, a str or bytes)."""
        if a is not None and type(a) not in (int, float, str, bytes, bytearray):
            raise TypeError("seed takes None, an int, a float, a str or bytes in the sandbox")
        self._rng.seed(a)

    def random(self) -> float:
        """A float in [0, 1)."""
        return self._rng.random()

    def randint(self, a: int, b: int) -> int:
        """An int in [a, b]."""
        return self._rng.randint(a, b)

    def randrange(self, *args: int) -> int:
        """An int from ``range(*args)``."""
        return self._rng.randrange(*args)

    def uniform(self, a: float, b: float) -> float:
        """A float between ``a`` and ``b``."""
        return self._rng.uniform(a, b)

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        """A normally distributed float."""
        return self._rng.gauss(mu, sigma)

    def choice(self, seq: Any) -> Any:
        """One item of the sequence ``seq``."""
        return self._rng.choice(seq)

    def choices(
        self, population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1
    ) -> list[Any]:
        """``k`` items drawn with replacement (``k`` at most :data:`MAX_DRAWS`)."""
        k = exact_int(k)  # an int subclass is its int value to C (findings19 N02)
        if type(k) is int and k > MAX_DRAWS:
            refuse_size(
                f"random.choices k too large for the sandbox ({k}): at most {MAX_DRAWS} draws in one call "
                "(draw in smaller batches)"
            )
        if type(k) is int and k > 0:
            charge_bytes(8 * k)  # the result list, before it is built
            if k > DRAW_PIECE:
                return self._pieced_choices(population, weights, cum_weights, k)
            charge_host_loop(k)  # a host-Python loop of k draws (findings15 E06)
        return self._rng.choices(population, weights, cum_weights=cum_weights, k=k)

    def _pieced_choices(self, population: Any, weights: Any, cum_weights: Any, k: int) -> list[Any]:
        # a million draws were about a second of host Python with no check inside
        # (findings15 E06); each draw is one random() (and a bisect of the same cumulative
        # weights, made once here as the real choices makes them), so pieces of draws
        # give the list one call gives, and its errors
        if weights is not None and cum_weights is None:
            try:
                cum_weights = list(itertools.accumulate(weights))
            except TypeError:
                return self._rng.choices(population, weights, k=k)  # its own message
            weights = None
        drawn: list[Any] = []
        while len(drawn) < k:
            piece = min(DRAW_PIECE, k - len(drawn))
            charge_host_loop(piece)
            drawn += self._rng.choices(population, weights, cum_weights=cum_weights, k=piece)
        return drawn

    def sample(self, population: Any, k: int, *, counts: Any = None) -> list[Any]:
        """``k`` distinct items (the population is copied, as the real one does)."""
        if counts is not None:
            total = sum(counts)
            if total > MAX_SEQUENCE:
                refuse_size("random.sample counts too large for the sandbox")
        k = exact_int(k)
        if type(k) is int and (k > MAX_DRAWS or base_len(population, 0) > MAX_SEQUENCE):
            refuse_size(  # before the population is copied (findings14 A10)
                f"random.sample of {k} from {base_len(population, 0)} items refused: at most "
                f"{MAX_DRAWS} in one call (sample fewer, or pick indices with random.randrange)"
            )
        pool = _sized(population)
        n = len(pool)
        if type(k) is int and (k > MAX_DRAWS or n > MAX_SEQUENCE):
            refuse_size(
                f"random.sample of {k} from {n} items refused: at most {MAX_DRAWS} in one "
                "call (sample fewer, or pick indices with random.randrange)"
            )
        if type(k) is int and 0 < k <= n:
            charge_bytes(8 * (k + n))  # the result and the pool the real sample copies
            charge_host_loop(k)  # a host-Python loop of k draws (findings15 E06)
        return self._rng.sample(pool, k, counts=counts)

    def shuffle(self, x: list[Any]) -> None:
        """Shuffle the list ``x`` in place (at most :data:`MAX_DRAWS` items)."""
        if base_len(x, 0) > MAX_DRAWS:
            refuse_size(
                f"random.shuffle of {base_len(x, 0)} items refused: at most {MAX_DRAWS} in one call "
                "(shuffle a list of indices you need, or use random.sample)"
            )
        # CPython 3.11's Random.shuffle, in pieces: the same swaps from the same
        # _randbelow calls (the same order as plain Python for the same seed), with the
        # budget checked and charged before each piece (findings15 E06)
        randbelow = self._rng._randbelow  # type: ignore[attr-defined]  # (untyped in typeshed)
        i = len(x) - 1
        while i > 0:
            stop = max(0, i - DRAW_PIECE)
            charge_host_loop(i - stop)
            for at in range(i, stop, -1):
                j = randbelow(at + 1)
                x[at], x[j] = x[j], x[at]
            i = stop

    def getrandbits(self, k: int) -> int:
        """An int of ``k`` random bits (at most :data:`MAX_RANDBITS`)."""
        if k > MAX_RANDBITS:
            refuse_size(f"random.getrandbits above {MAX_RANDBITS} bits refused in the sandbox")
        return self._rng.getrandbits(k)


HOLDABLE: tuple[type, ...] = (Random,)
"""Value types this stand-in hands to scripts (beyond numbers)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run (built on first import: one generator per run)."""
    charge = run.charge
    rng = Random()

    def choices(
        population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1
    ) -> list[Any]:
        return rng.choices(charge(population), weights, cum_weights=cum_weights, k=k)

    def sample(population: Any, k: int, *, counts: Any = None) -> list[Any]:
        return rng.sample(charge(population), k, counts=counts)

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
        "getrandbits": rng.getrandbits,
        "Random": Random,
    }
