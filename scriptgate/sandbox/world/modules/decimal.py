"""The ``decimal`` stand-in: ``Decimal`` values under a bounded, per-run context.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The real ``decimal`` computes under the
thread's (contextvar's) current context, which belongs to the host; and its
values are exact, so ``int(Decimal('1e999999'))`` ran for minutes. Here:

- ``Decimal`` is a per-run subclass of the real class (``isinstance`` works); every
  operator and method computes under the run's own context (:class:`Context`,
  ``getcontext``/``setcontext``/``localcontext``), never the host's, and hands back the
  run's class (no plain ``decimal.Decimal`` reaches the script: it would compute under
  the host's context);
- a context's ``prec`` is at most :data:`MAX_PREC` and ``Emax``/``-Emin`` at most
  :data:`MAX_EXPONENT` (``exp``/``ln``/``**`` take time that grows with ``prec``);
- a constructed value has at most :data:`MAX_DIGITS` digits and an exponent within
  ``±MAX_EXPONENT``; ``int()``, ``round()``, ``math.floor``/``ceil`` and
  ``as_integer_ratio`` of a value above ``10**MAX_INT_DIGITS`` are refused (the int
  conversion is quadratic);
- an int operand of an operator, a comparison or a method (``d == x``, ``d + x``,
  ``d.compare(x)``, also reflected: ``x in [d]``, ``x < d``) and a ``Fraction``'s numerator
  and denominator in a comparison are at most :data:`MAX_INT_OPERAND_BITS` bits, the bound of
  ``Decimal(x)``: C converts such an operand to a Decimal in quadratic time first (findings15
  E07: ``1 << 999_000 in [Decimal(1)] * 20`` ran 27.7 s past a 2 s deadline).

Out of reach: ``Context.traps``/``flags`` (C mappings of the host; set traps with the
``Context(traps=[...])`` constructor instead), ``DefaultContext``/``BasicContext``.
"""

from __future__ import annotations

import decimal
import fractions
from typing import Any

from scriptgate.sandbox.guards.boundary import HOLDABLE_MARK
from scriptgate.sandbox.guards.constants import SCRIPT_CLASS_MARK
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = [
    "HOLDABLE",
    "MAX_DIGITS",
    "MAX_EXPONENT",
    "MAX_INT_DIGITS",
    "MAX_INT_OPERAND_BITS",
    "MAX_PREC",
    "MEMBERS",
    "NAME",
    "BoundedDecimal",
    "Context",
    "build",
]

MAX_PREC = 1_000
"""The highest ``prec`` a script's context may have (``ln`` at 5000 digits took seconds)."""
MAX_EXPONENT = 100_000
"""The largest ``Emax`` (and ``-Emin``) of a script's context, and of a constructed value."""
MAX_DIGITS = 10_000
"""The most digits a constructed ``Decimal`` may have."""
MAX_INT_DIGITS = 10_000
"""``int(d)`` and friends are refused for values at or above ``10**MAX_INT_DIGITS``."""
MAX_INT_OPERAND_BITS = int(MAX_DIGITS * 3.33)
"""The most bits of an int a ``Decimal`` is made from or computes or compares with (about
:data:`MAX_DIGITS` digits: C converts the int in time quadratic in its size)."""

_SIGNALS = (
    "DecimalException", "InvalidOperation", "DivisionByZero", "Overflow", "Underflow",
    "Inexact", "Rounded", "Subnormal", "Clamped", "FloatOperation",
)  # fmt: skip
_ROUNDINGS = (
    "ROUND_DOWN", "ROUND_HALF_UP", "ROUND_HALF_EVEN", "ROUND_CEILING", "ROUND_FLOOR",
    "ROUND_UP", "ROUND_HALF_DOWN", "ROUND_05UP",
)  # fmt: skip

NAME = "decimal"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "Decimal", "Context", "getcontext", "setcontext", "localcontext",
    *_ROUNDINGS, *_SIGNALS, "MAX_PREC", "MAX_EMAX", "MIN_EMIN",
)  # fmt: skip
"""The members a script may use."""

_BASE = decimal.Decimal
_SIGNAL_TYPES: tuple[type, ...] = tuple(getattr(decimal, name) for name in _SIGNALS)


def _int_bound(value: Any) -> Any:
    if value.is_finite() and value.adjusted() >= MAX_INT_DIGITS:
        refuse_size(
            f"converting a Decimal of {value.adjusted() + 1} digits to an int is refused in "
            f"the sandbox (at most {MAX_INT_DIGITS} digits)"
        )
    return value


_FRACTION = fractions.Fraction
_numerator = _FRACTION.numerator.__get__  # the stored value (no subclass property answers)
_denominator = _FRACTION.denominator.__get__


def _refuse_int_operand(bits: int) -> None:
    refuse_size(
        f"a Decimal operation with an int of {bits} bits is refused in the sandbox (at most "
        f"{MAX_INT_OPERAND_BITS} bits, about {MAX_DIGITS} digits: converting it is quadratic); "
        "compare or compute with ints instead, or scale the int down first"
    )


def _bounded_operand(value: Any) -> Any:
    """``value`` unless it is an int (or a ``Fraction`` with a numerator or denominator)
    above :data:`MAX_INT_OPERAND_BITS` bits, which C would convert in quadratic time."""
    if isinstance(value, int):
        bits = int.bit_length(value)
        if bits > MAX_INT_OPERAND_BITS:
            _refuse_int_operand(bits)
    elif isinstance(value, _FRACTION):
        bits = max(int.bit_length(_numerator(value)), int.bit_length(_denominator(value)))
        if bits > MAX_INT_OPERAND_BITS:
            _refuse_int_operand(bits)
    return value


def _checked(value: Any) -> Any:
    """A plain ``decimal.Decimal`` for ``value`` if it is within the sandbox's bounds."""
    # a str/int/list/tuple subclass is measured and used as the exact value it holds
    # (its own __len__, bit_length or __getitem__ never answer a bound)
    value = exact_copy(value)
    if isinstance(value, int) and type(value) is not bool:
        value = int.__index__(value)
    if isinstance(value, str) and len(value) > MAX_DIGITS + 64:
        refuse_size(f"a Decimal of more than {MAX_DIGITS} digits is refused in the sandbox")
    if isinstance(value, int) and value.bit_length() > MAX_INT_OPERAND_BITS:
        refuse_size(f"a Decimal of more than {MAX_DIGITS} digits is refused in the sandbox")
    if isinstance(value, list | tuple) and len(value) == 3:
        value = (value[0], exact_copy(value[1]), value[2])
        if isinstance(value[1], list | tuple) and len(value[1]) > MAX_DIGITS:
            refuse_size(f"a Decimal of more than {MAX_DIGITS} digits is refused in the sandbox")
    if isinstance(value, float):
        return _BASE.from_float(value)
    made = value if type(value) is _BASE else _BASE(value)
    if made.is_finite():
        digits = made.as_tuple()[1]
        if len(digits) > MAX_DIGITS:
            refuse_size(f"a Decimal of more than {MAX_DIGITS} digits is refused in the sandbox")
        if not -MAX_EXPONENT - MAX_DIGITS <= made.adjusted() <= MAX_EXPONENT:
            refuse_size(
                f"a Decimal with an exponent beyond ±{MAX_EXPONENT} is refused in the sandbox"
            )
    return made


def _bounded_setting(name: str, value: Any) -> None:
    if name == "prec" and isinstance(value, int) and value > MAX_PREC:
        refuse_size(f"decimal precision above {MAX_PREC} digits is refused in the sandbox")
    if name == "Emax" and isinstance(value, int) and value > MAX_EXPONENT:
        refuse_size(f"decimal Emax above {MAX_EXPONENT} is refused in the sandbox")
    if name == "Emin" and isinstance(value, int) and value < -MAX_EXPONENT:
        refuse_size(f"decimal Emin below -{MAX_EXPONENT} is refused in the sandbox")


_SETTINGS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")


class Context:
    """A script's decimal context: ``prec``, ``rounding``, ``Emin``, ``Emax``, ``capitals``,
    ``clamp`` (bounded), ``copy()``, ``clear_flags()``, ``create_decimal(x)``."""

    __slots__ = ("_decimal", "_real")
    _real: decimal.Context
    _decimal: Any

    def __init__(
        self,
        prec: Any = None,
        rounding: Any = None,
        Emin: Any = None,
        Emax: Any = None,
        capitals: Any = None,
        clamp: Any = None,
        flags: Any = None,
        traps: Any = None,
    ) -> None:
        given = dict(zip(_SETTINGS, (prec, rounding, Emin, Emax, capitals, clamp), strict=True))
        for name, value in given.items():
            _bounded_setting(name, value)
        settings = {
            "prec": 28,
            "Emin": -MAX_EXPONENT,
            "Emax": MAX_EXPONENT,
            **{k: v for k, v in given.items() if v is not None},
        }
        for signals in (flags, traps):
            if signals is not None and not (
                isinstance(signals, list | tuple) and all(s in _SIGNAL_TYPES for s in signals)
            ):
                raise TypeError("flags and traps take a list of decimal signals in the sandbox")
        real = decimal.Context(
            **settings,
            flags=list(flags) if flags is not None else [],
            traps=list(traps) if traps is not None else None,
        )
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_decimal", None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _SETTINGS:
            raise AttributeError(f"decimal contexts have no setting {name!r}")
        _bounded_setting(name, value)
        setattr(object.__getattribute__(self, "_real"), name, value)

    def __repr__(self) -> str:
        return repr(self._real)

    def copy(self) -> Context:
        """A copy of this context (same settings, its own flags)."""
        made = Context()
        object.__setattr__(made, "_real", self._real.copy())
        object.__setattr__(made, "_decimal", self._decimal)
        return made

    def clear_flags(self) -> None:
        """Reset the flags this context has raised."""
        self._real.clear_flags()

    def create_decimal(self, value: Any = "0") -> Any:
        """``value`` as a Decimal rounded to this context."""
        cls = self._decimal
        if cls is None:
            raise TypeError("this context belongs to no run")
        return cls(self._real.create_decimal(_checked(value)))


def _setting(name: str) -> property:
    return property(
        lambda self: getattr(self._real, name),
        lambda self, value: Context.__setattr__(self, name, value),
        doc=f"The context's ``{name}``.",
    )


for _setting_name in _SETTINGS:
    setattr(Context, _setting_name, _setting(_setting_name))
setattr(Context, SCRIPT_CLASS_MARK, True)  # its settings are writable (bounded by __setattr__)


class _RunState:
    """The run's current context (``getcontext``/``setcontext``/``localcontext``)."""

    __slots__ = ("current",)

    def __init__(self, current: Context) -> None:
        self.current = current


class _BoundedDecimal(_BASE):
    """The shared base of each run's ``Decimal`` (the run's state is set per run)."""

    __slots__ = ()
    _state: _RunState

    def __new__(cls, value: Any = "0", context: Any = None) -> Any:
        if context is not None and type(context) is not Context:
            raise TypeError("context must be a decimal Context")
        return _BASE.__new__(cls, _checked(value))

    @classmethod
    def from_float(cls, value: Any) -> Any:
        """The exact value of the float ``value``."""
        return cls(_BASE.from_float(value))

    def as_tuple(self) -> Any:
        """``(sign, digits, exponent)`` (a plain tuple in the sandbox)."""
        sign, digits, exponent = _BASE.as_tuple(self)
        return (sign, digits, exponent)

    def as_integer_ratio(self) -> tuple[int, int]:
        """The value as ``(numerator, denominator)``."""
        _int_bound(self)
        if self.is_finite() and self.adjusted() < -MAX_INT_DIGITS:
            refuse_size("as_integer_ratio of so small a Decimal is refused in the sandbox")
        return _BASE.as_integer_ratio(self)

    def __int__(self) -> int:
        return _BASE.__int__(_int_bound(self))

    def __trunc__(self) -> int:
        return _BASE.__trunc__(_int_bound(self))

    def __floor__(self) -> int:
        return _BASE.__floor__(_int_bound(self))

    def __ceil__(self) -> int:
        return _BASE.__ceil__(_int_bound(self))

    def __round__(self, ndigits: Any = None) -> Any:
        real = type(self)._state.current._real
        if ndigits is None:
            return int(_lift(type(self), _BASE.to_integral_value(
                self, rounding=decimal.ROUND_HALF_EVEN, context=real
            )))  # fmt: skip
        if not isinstance(ndigits, int):
            raise TypeError("round() takes an int number of digits")
        if abs(ndigits) > MAX_EXPONENT:
            refuse_size(f"round() to more than {MAX_EXPONENT} digits is refused in the sandbox")
        return _lift(type(self), real.quantize(self, _BASE((0, (1,), -ndigits))))

    def __reduce__(self) -> Any:
        return (_BASE, (str(self),))


def _lift(cls: Any, value: Any) -> Any:
    if isinstance(value, _BASE):
        return value if type(value) is cls else _BASE.__new__(cls, value)
    if type(value) is tuple:
        return tuple(_lift(cls, item) for item in value)
    return value


def _clear_overflow(real: decimal.Context) -> decimal.Overflow:
    return decimal.Overflow(
        f"decimal overflow: the result's exponent is above Emax={real.Emax} (the sandbox "
        f"caps Emax at {MAX_EXPONENT})"
    )


def _method(name: str) -> Any:
    real_method = getattr(_BASE, name)
    takes_context = "context" in (getattr(real_method, "__text_signature__", None) or "")

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        real = type(self)._state.current._real
        if takes_context:
            given = kwargs.pop("context", None)
            if given is not None and type(given) is not Context:
                raise TypeError("context must be a decimal Context")
            kwargs["context"] = given._real if given is not None else real
        for value in (*args, *kwargs.values()):
            _bounded_operand(value)  # d.compare(1 << 999_000) (findings15 E07)
        try:
            return _lift(type(self), real_method(self, *args, **kwargs))
        except decimal.Overflow:
            raise _clear_overflow(real) from None

    method.__name__ = name
    method.__doc__ = f"``Decimal.{name}`` under the run's context."
    return method


_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "divide_int", "mod": "remainder", "divmod": "divmod", "pow": "power",
}  # fmt: skip
_UNARY = {"__neg__": "minus", "__pos__": "plus", "__abs__": "abs"}


def _operand(value: Any) -> bool:
    return isinstance(value, _BASE | int)


def _binary(op: str, reflected: bool) -> Any:
    def operator(self: Any, other: Any, modulo: Any = None) -> Any:
        if not _operand(other):
            return NotImplemented
        _bounded_operand(other)  # d + (1 << 999_000), also reflected (findings15 E07)
        if modulo is not None:
            _bounded_operand(modulo)
        real = type(self)._state.current._real
        compute = getattr(real, op)
        a, b = (other, self) if reflected else (self, other)
        try:
            if modulo is not None:
                return _lift(type(self), compute(a, b, modulo))
            return _lift(type(self), compute(a, b))
        except decimal.Overflow:
            raise _clear_overflow(real) from None

    return operator


def _comparison(name: str) -> Any:
    real_compare = getattr(_BASE, name)

    def compare(self: Any, other: Any) -> Any:
        # `1 << 999_000 in [d] * 20`: int.__eq__ answers NotImplemented, then this runs
        # and C would convert the int (findings15 E07)
        return real_compare(self, _bounded_operand(other))

    compare.__name__ = name
    return compare


def _unary(op: str) -> Any:
    def operator(self: Any) -> Any:
        return _lift(type(self), getattr(type(self)._state.current._real, op)(self))

    return operator


_NOT_WRAPPED = frozenset({"from_float", "as_tuple", "as_integer_ratio", "real", "imag"})
for _name in dir(_BASE):
    if not _name.startswith("_") and _name not in _NOT_WRAPPED:
        setattr(_BoundedDecimal, _name, _method(_name))
for _short, _op in _OPERATORS.items():
    setattr(_BoundedDecimal, f"__{_short}__", _binary(_op, False))
    setattr(_BoundedDecimal, f"__r{_short}__", _binary(_op, True))
for _dunder, _op in _UNARY.items():
    setattr(_BoundedDecimal, _dunder, _unary(_op))
for _dunder in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(_BoundedDecimal, _dunder, _comparison(_dunder))
_BoundedDecimal.real = property(lambda self: self)  # type: ignore[assignment]
_BoundedDecimal.imag = property(lambda self: type(self)(0))  # type: ignore[assignment]


class _LocalContext:
    """``with localcontext() as ctx:``: a copy of the run's context, current inside the block."""

    __slots__ = ("_context", "_saved", "_state")

    def __init__(self, state: _RunState, context: Context) -> None:
        self._state = state
        self._context = context
        self._saved: list[Context] = []

    def __enter__(self) -> Context:
        self._saved.append(self._state.current)
        self._state.current = self._context
        return self._context

    def __exit__(self, *exc: Any) -> None:
        self._state.current = self._saved.pop()


BoundedDecimal = _BoundedDecimal
"""The base of every run's ``Decimal`` class (other stand-ins recognise a run's decimals)."""

setattr(_LocalContext, HOLDABLE_MARK, True)

HOLDABLE: tuple[type, ...] = (Context, *_SIGNAL_TYPES)
"""Value types this stand-in hands to scripts (each run's ``Decimal`` class is marked holdable)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run: its own ``Decimal`` class and current context."""
    state = _RunState(Context())
    cls: Any = type("Decimal", (_BoundedDecimal,), {"__slots__": (), "_state": state})
    setattr(cls, HOLDABLE_MARK, True)
    cls.__module__ = "decimal"
    object.__setattr__(state.current, "_decimal", cls)

    def getcontext() -> Context:
        """The run's current decimal context."""
        return state.current

    def setcontext(context: Any) -> None:
        """Make ``context`` the run's current decimal context."""
        if type(context) is not Context:
            raise TypeError("setcontext takes a decimal Context")
        object.__setattr__(context, "_decimal", cls)
        state.current = context

    def localcontext(ctx: Any = None, **settings: Any) -> _LocalContext:
        """A context manager making a copy of ``ctx`` (or the current context) current."""
        if ctx is not None and type(ctx) is not Context:
            raise TypeError("localcontext takes a decimal Context")
        made = (ctx or state.current).copy()
        object.__setattr__(made, "_decimal", cls)
        for name, value in settings.items():
            setattr(made, name, value)
        return _LocalContext(state, made)

    table: dict[str, Any] = {
        "Decimal": cls,
        "Context": Context,
        "getcontext": getcontext,
        "setcontext": setcontext,
        "localcontext": localcontext,
        "MAX_PREC": MAX_PREC,
        "MAX_EMAX": MAX_EXPONENT,
        "MIN_EMIN": -MAX_EXPONENT,
    }
    table.update({name: getattr(decimal, name) for name in (*_ROUNDINGS, *_SIGNALS)})
    return table
