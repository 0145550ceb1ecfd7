"""Bounds on the big-int C calls whose time grows with the square of the size: ``gcd``.

Part of ``guards/`` (the bottom): imports only :mod:`.errors`. ``math.gcd``/``lcm`` and
``Fraction(a, b)`` (which reduces by the gcd) are quadratic C code the deadline cannot
interrupt: two 4.1 M-bit ints ran 65 s under a 1 s deadline, 1 M bits 3.3 s (findings7
F12). :func:`check_gcd` refuses, before the call, a pair whose larger size squared passes
:data:`GCD_WORK` (about 0.1-0.2 s of C on a loaded machine); :func:`check_from_bytes`
keeps ``int.from_bytes`` inside the sandbox's int size bound like ``*`` and ``**``.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size

__all__ = ["GCD_WORK", "MAX_FROM_BYTES", "check_from_bytes", "check_gcd"]

GCD_WORK = 40_000_000_000
"""Most ``bits(larger)**2`` one gcd may cost (ints of up to ~200,000 bits)."""
MAX_FROM_BYTES = 125_000
"""Most bytes ``int.from_bytes`` reads: 1,000,000 bits (the sandbox's int size bound)."""


def check_gcd(a: Any, b: Any, what: str) -> None:
    """Refuse (a size limit) a gcd of two ints whose quadratic cost passes :data:`GCD_WORK`."""
    if isinstance(a, int) and isinstance(b, int):
        bits = max(int.bit_length(a), int.bit_length(b))
        if bits * bits > GCD_WORK:
            refuse_size(
                f"{what} of ints of {bits} bits would take too long in the sandbox "
                f"(at most {int(GCD_WORK**0.5)} bits)"
            )


def check_from_bytes(length: int) -> None:
    """Refuse ``int.from_bytes`` of more than :data:`MAX_FROM_BYTES` bytes."""
    if length > MAX_FROM_BYTES:
        refuse_size(
            f"int.from_bytes of {length} bytes would be too large for the sandbox "
            f"(at most {MAX_FROM_BYTES} bytes: 1,000,000 bits)"
        )
