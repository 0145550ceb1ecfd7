"""G08 (in-process HIGH; process mode bounded by the parent's hard kill): an int subclass
whose `__abs__` returns 0 walks past the Fraction power bound; one `**` runs host big-int
code for minutes.

Mechanism: world/modules/fractions.py `Fraction.__pow__` refuses when
`_bits(self) * abs(other) > MAX_BITS` -- `abs()` calls the script's `__abs__` (0), while the
real `fractions.Fraction.__pow__` uses `other.numerator` (int's C getter: the true value).
`Fraction(3, 2) ** I(2_000_000)` computes 3**2e6 and 2**2e6 and then `_lift` builds the
stand-in instance through `Fraction.__new__`, whose normalising `math.gcd` of two
multi-million-bit ints is quadratic: no tick, no deadline check. (`_bits` has the same
weakness: a Fraction subclass may override `numerator`/`denominator`, an int subclass
`bit_length`.)
Measured here (under load), timeout=1 s: exponent 2,000,000 -> returned after ~18 s;
exponent 30,000,000 -> still running after 300 s (killed).
Expected: the run stops at ~1 s (README: Fraction results above 1,000,000 bits are refused).
Actual: ~18x overrun, unbounded with a larger exponent.
Run: uv run python findings2/g08_fraction_pow_lying_abs.py
"""

from __future__ import annotations

import time

from scriptgate import Limits, Sandbox

SCRIPT = """
import fractions
class I(int):
    def __abs__(self):
        return 0
r = fractions.Fraction(3, 2) ** I(2_000_000)
r.numerator.bit_length()
"""

sandbox = Sandbox([], limits=Limits(timeout=1.0))
sandbox.run_sync("1")
start = time.monotonic()
result = sandbox.run_sync(SCRIPT)
print("ok", result.ok, "value", result.value, "error", result.error)
print(f"returned after {time.monotonic() - start:.1f} s against a 1 s timeout")
