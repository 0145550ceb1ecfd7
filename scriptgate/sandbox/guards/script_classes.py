"""The dunders of the script's own classes, functions and exceptions (issue 14).

Owns what a script class body may set besides methods (``__slots__``, ``__match_args__``,
checked when the class is made: :func:`prepare_namespace`), the ``__format__`` shield, the
dunder reads of :data:`~.constants.SCRIPT_DUNDER_READS` (``exc.__cause__``/``__context__``/
``__suppress_context__`` and ``obj.__dict__``: :func:`read_dunder`), ``vars(obj)``
(:func:`script_vars`) and :func:`private_ok` / :func:`script_function` (which objects are
the script's own). Sits in ``guards/`` below :mod:`.attributes`: imports only
:mod:`.boundary`, :mod:`.constants` and :mod:`.errors`, never the world, the engine,
isolation or the model.

The rules keep the boundary as it was: a slot or a ``__match_args__`` name follows the
attribute-name rules (public names, private ``_x`` names for slots; never a dunder); a
``__getattr__`` is never consulted for a dunder or after the run; a
``__format__`` result is a real ``str`` as a ``__str__``'s must be; an exception's chained
exception passes the value check, and what a host exception holds is read through
:func:`~.boundary.held_data` (``__traceback__`` stays refused: frames); an instance ``__dict__`` is a snapshot
of the script's own object whose values pass the value check and whose writes go through
the attribute-name rules to the object (:class:`InstanceDict`). A class's ``__dict__``
(a mappingproxy of functions), a function's and anything not the script's own are refused
with a one-line hint. Tests: ``tests/sandbox/world/test_classes_dunders.py``; attacks in
``tests/sandbox/attacks_boundary.py`` (``b-dunder-*``).
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from scriptgate.sandbox.compile.shared import INSPECT_ATTRIBUTES
from scriptgate.sandbox.guards.boundary import check_value, held_data, holdable
from scriptgate.sandbox.guards.constants import DENIED_NAMES, FILENAME, is_private_name
from scriptgate.sandbox.guards.errors import RunEnded
from scriptgate.sandbox.guards.render_scope import measured, measured_number

__all__ = [
    "MAX_CLASS_NAMES",
    "STATELESS_BASE_MARK",
    "InstanceDict",
    "prepare_namespace",
    "private_ok",
    "read_dunder",
    "script_function",
    "script_vars",
]

MAX_CLASS_NAMES = 1_000
"""Most names a ``__slots__`` or ``__match_args__`` may list (``type()`` builds one
descriptor per slot in a single C call)."""

_MRO = type.__dict__["__mro__"]
_CLASS_DICT = type.__dict__["__dict__"]
_MODULE = type.__dict__["__module__"]
_CAUSE = BaseException.__dict__["__cause__"]
_CONTEXT = BaseException.__dict__["__context__"]
_SUPPRESS = BaseException.__dict__["__suppress_context__"]


def private_ok(obj: Any) -> bool:
    """Whether ``obj``'s private names (``_x``) are the script's own to read and write.

    True for an instance or class whose classes are all the script's own (defined by a
    ``class`` statement of the script) or builtins (``object``, ``dict``, ``Exception``…,
    which keep no private state in an instance), or stateless stand-in bases
    (:data:`STATELESS_BASE_MARK`: ``ABC``, ``Protocol``). A stand-in's class, a host base written
    in Python (``Fraction`` and its ``_numerator``), a module or a function refuses: their
    private names are the host's.
    """
    owner = obj if isinstance(obj, type) else type(obj)
    script = False
    for klass in _MRO.__get__(owner):
        module = _CLASS_DICT.__get__(klass).get("__module__")
        if module == "__script__":
            script = True
        elif (
            _MODULE.__get__(klass) != "builtins"
            and _CLASS_DICT.__get__(klass).get(STATELESS_BASE_MARK) is not True
        ):
            return False
    return script


STATELESS_BASE_MARK = "__scriptgate_stateless_base__"
"""Set (``True``) in its own ``__dict__`` on a stand-in base class that defines no private
name and keeps no state in an instance (``abc.ABC``, ``typing.Protocol``): it counts as a
builtin for :func:`private_ok`, so ``self._x`` works in a script class that subclasses it."""


def script_function(obj: Any) -> bool:
    """Whether ``obj`` is a function the script itself defined (its code is the script's)."""
    return type(obj) is types.FunctionType and obj.__code__.co_filename == FILENAME


# ----------------------------------------------------------------------------- class bodies


def _bad_name(name: str, *, private: bool) -> bool:
    if not name.isidentifier() or name in INSPECT_ATTRIBUTES or name in DENIED_NAMES:
        return True
    if name.startswith("_"):
        return not (private and is_private_name(name))
    return False


def _names(value: Any, what: str, *, private: bool, strings: bool) -> tuple[str, ...]:
    allowed = "public names or private `_names`" if private else "public attribute names"
    if strings and type(value) is str:
        value = (value,)
    if type(value) not in ((tuple, list) if strings else (tuple,)):
        kind = "a tuple of str" if not strings else "a str or a tuple/list of str"
        raise TypeError(f"{what} must be {kind} in the sandbox, not {type(value).__name__}")
    if len(value) > MAX_CLASS_NAMES:
        raise ValueError(f"{what} may list at most {MAX_CLASS_NAMES} names in the sandbox")
    for name in value:
        if type(name) is not str:
            raise TypeError(f"{what} must hold str names, not {type(name).__name__}")
        if _bad_name(name, private=private):
            raise TypeError(f"{what} may not name {name!r} in the sandbox: it holds {allowed}")
    return tuple(value)


def _mangled_slots(slots: Any, qualname: Any) -> Any:
    """``__slots__`` with ``__x`` names mangled to ``_Class__x``, as ``type()`` does (S07).

    CPython mangles slot names with the class's name when it makes the class, so
    ``__slots__ = ('__v',)`` and ``self.__v`` (mangled by the compiler) meet at ``_A__v``.
    Anything but a str or a tuple/list of str is returned as it is (checked after).
    """
    if type(qualname) is not str:
        return slots
    stripped = qualname.rpartition(".")[2].lstrip("_")
    if not stripped:
        return slots  # a class named only with underscores mangles nothing
    single = type(slots) is str
    items = (slots,) if single else slots
    if type(items) not in (tuple, list) or len(items) > MAX_CLASS_NAMES:
        return slots
    if not any(type(n) is str and n.startswith("__") and not n.endswith("__") for n in items):
        return slots
    mangled = tuple(
        "_" + stripped + n if type(n) is str and n.startswith("__") and not n.endswith("__") else n
        for n in items
    )
    return mangled[0] if single else mangled


def prepare_namespace(namespace: dict[str, Any]) -> None:
    """Check (and shield) what a script's class body set besides plain methods.

    ``__slots__``: a str or a tuple/list of public or private (``_x``) names, never a
    dunder (``__dict__``, ``__class__``, ``__weakref__``); ``__match_args__``: a tuple of
    public attribute names (a class pattern reads them in C); ``__format__``: a method
    written with ``def``, whose result must be a ``str`` (returned as a real ``str``).
    """
    if "__slots__" in namespace:
        namespace["__slots__"] = _names(
            _mangled_slots(namespace["__slots__"], namespace.get("__qualname__")),
            "__slots__",
            private=True,
            strings=True,
        )
    if "__match_args__" in namespace:
        _names(namespace["__match_args__"], "__match_args__", private=False, strings=False)
    if "__format__" in namespace:
        namespace["__format__"] = measured(_format_shield(namespace["__format__"]), "__format__")
    if "__getattr__" in namespace:
        namespace["__getattr__"] = _getattr_shield(namespace["__getattr__"])
    for name, wrap in _MEASURED_DUNDERS.items():
        method = namespace.get(name)
        if method is None:
            continue
        if not script_function(method):
            # a decorated one (`@staticmethod def __repr__()`) would return unmeasured text
            # (ninth attack F04: 450 M characters under the 10 M render bound)
            raise TypeError(
                f"{name} must be a plain method written with def (no decorator) in the sandbox"
            )
        # C joins every result of one rendering: measured cumulatively (F01); `%d`/`%s`
        # render an `__int__`/`__bytes__` result (findings18 M22)
        namespace[name] = wrap(method, name)


_EXACT_NUMBERS: dict[str, tuple[type, Callable[[Any], Any]]] = {
    "__int__": (int, operator.index),
    "__float__": (float, float.__float__),
    "__complex__": (complex, complex.__complex__),
}


def _exact_number(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The script's ``__int__``/``__float__``/``__complex__``, a strict subclass of the
    number it returns made the exact type: CPython's C code warns for one
    (``DeprecationWarning`` into the host's ``warnings``: a host recording warnings kept
    366,000 records of one run, findings19 N06), and uses its value all the same."""
    base, exact = _EXACT_NUMBERS[name]

    def shield(self: Any, /) -> Any:
        value = method(self)
        if type(value) is not base and isinstance(value, base):
            return exact(value)
        return value

    shield.__name__ = name
    shield.__qualname__ = getattr(method, "__qualname__", name)
    return shield


_MEASURED_DUNDERS: dict[str, Callable[[Callable[..., Any], str], Callable[..., Any]]] = {
    "__repr__": measured,
    "__str__": measured,
    "__int__": lambda method, name: measured_number(_exact_number(method, name), name),
    "__float__": _exact_number,
    "__complex__": _exact_number,
    "__bytes__": measured_number,
}


def _getattr_shield(method: Any) -> Callable[[Any, Any], Any]:
    """The script's ``__getattr__``, consulted for public and private (``_x``) names only.

    Python calls it for any name normal lookup misses, host code's too
    (``copy.deepcopy`` reads ``x.__deepcopy__``): a dunder, an inspect name or a name that
    is not an exact ``str`` is missing without running it, and after the run (its first
    tick raises :class:`RunEnded`) every name is missing, so host code that looks an
    attribute up later gets its default.
    """
    if not script_function(method):
        raise TypeError("__getattr__ must be a method written with def in the sandbox")

    def __getattr__(self: Any, name: Any, /) -> Any:
        if type(name) is not str or _bad_name(name, private=True):
            raise AttributeError(name)
        try:
            return method(self, name)
        except RunEnded:
            raise AttributeError(name) from None

    __getattr__.__qualname__ = method.__qualname__
    return __getattr__


def _format_shield(method: Any) -> Callable[[Any, Any], str]:
    """The script's ``__format__``, whose result must be a ``str`` (a real one comes back).

    A ``str`` subclass of the script's (its ``__len__`` may lie to the f-string's size
    check) becomes the plain ``str`` of its characters, as ``str.__str__`` gives it.
    """
    if not script_function(method):
        raise TypeError("__format__ must be a method written with def in the sandbox")

    def __format__(self: Any, spec: Any, /) -> str:
        text = method(self, spec)
        if not isinstance(text, str):
            raise TypeError(f"__format__ must return a str, not {type(text).__name__}")
        plain: str = str.__str__(text)
        return plain

    __format__.__qualname__ = method.__qualname__
    return __format__


# ----------------------------------------------------------------------------- dunder reads


def _refuse(message: str) -> NoReturn:
    raise AttributeError(message)


def read_dunder(obj: Any, name: str, default: tuple[Any, ...] = ()) -> Any:
    """``exc.__cause__``, ``exc.__context__``, ``exc.__suppress_context__``, ``obj.__dict__``."""
    if name == "__dict__":
        if default and not _has_instance_dict(obj):
            return default[0]
        return instance_dict(obj)
    if not isinstance(obj, BaseException) or not holdable(obj):
        if default:
            return default[0]
        _refuse(
            f'"{name}" is available on exceptions only in the sandbox, not on '
            f"{type(obj).__name__} objects"
        )
    if name == "__suppress_context__":
        return bool(_SUPPRESS.__get__(obj))
    link = (_CAUSE if name == "__cause__" else _CONTEXT).__get__(obj)
    if link is None:
        return None
    # what a host exception holds is handed out through attribute reads, each through
    # held_data (F05)
    return check_value(link)


# ----------------------------------------------------------------------------- instance dicts

_TOKEN = object()


def _real_dict(obj: Any) -> dict[str, Any] | None:
    try:
        real = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return None
    return real if type(real) is dict else None


def _has_instance_dict(obj: Any) -> bool:
    return not isinstance(obj, type) and private_ok(obj) and _real_dict(obj) is not None


def instance_dict(obj: Any, what: str = "__dict__") -> InstanceDict:
    """The ``__dict__`` of an instance of the script's own class, as an :class:`InstanceDict`."""
    # an attribute read refuses as one (AttributeError, so hasattr() is False); vars() as
    # Python's does (TypeError)
    error = TypeError if what == "vars()" else AttributeError
    if isinstance(obj, type):
        raise error(
            f"{what} of a class is not available in the sandbox: read class attributes with "
            "getattr(cls, name), or use vars(instance) for an instance's attributes"
        )
    if not private_ok(obj):
        raise error(
            f"{what} of {type(obj).__name__} objects is not available in the sandbox: it "
            "works on instances of your own classes; read attributes with getattr(obj, name)"
        )
    real = _real_dict(obj)
    if real is None:
        if what == "vars()":
            raise TypeError("vars() argument must have __dict__ attribute")
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute '__dict__'")
    return InstanceDict(_TOKEN, obj, real)


def script_vars(*args: Any) -> InstanceDict:
    """``vars(obj)``: the attributes of an instance of the script's own class (a dict).

    A snapshot of ``obj.__dict__`` whose values passed the value check; writing to it
    writes to the object (:class:`InstanceDict`). ``vars()`` without an argument and
    ``vars()`` of a class, module, function or tool are refused with a hint.
    """
    if len(args) != 1:
        raise TypeError(
            "vars() needs one object in the sandbox (locals are not available): "
            "write vars(obj) for an instance of your own class"
        )
    return instance_dict(args[0], "vars()")


def _key(key: Any) -> str | None:
    """The exact ``str`` a lookup key stands for, or ``None`` (no key can match it)."""
    if type(key) is str:
        return key
    if isinstance(key, str):
        plain: str = str.__str__(key)
        return plain
    return None


_MISSING = object()


class InstanceDict(dict[str, Any]):
    """``obj.__dict__`` / ``vars(obj)`` of the script's own object: a checked snapshot.

    A real ``dict`` (``isinstance(d, dict)``, JSON, ``dict(d)``) holding the object's
    attributes at the time of the read, dunder keys left out, every value through the
    value check. Writes (``d[k] = v``, ``update``, ``setdefault``, ``pop``, ``del``…) go
    to the object too, under the rules of ``obj.k = v``: exact ``str`` keys, public or
    private (``_x``) names only. Lookups with a key that is not a ``str`` find nothing
    without hashing it. Scripts cannot make one.
    """

    __slots__ = ("_sg_real",)

    def __new__(cls, token: Any = None, *args: Any, **kwargs: Any) -> InstanceDict:
        """Made by the guards only (``type(vars(x))(...)`` is refused)."""
        if token is not _TOKEN:
            raise TypeError("instance dicts cannot be created in the sandbox: use dict(...)")
        return dict.__new__(cls)

    def __init__(self, token: Any, obj: Any, real: dict[str, Any]) -> None:
        """Fill the snapshot from ``real`` (the object's own ``__dict__``)."""
        if token is not _TOKEN:
            raise TypeError("instance dicts cannot be created in the sandbox: use dict(...)")
        _REAL.__set__(self, real)
        for key, value in dict.items(real):
            if type(key) is str and not key.startswith("__"):
                # a host exception's attributes are host-filled containers (F05)
                held = held_data(value) if isinstance(obj, BaseException) else check_value(value)
                dict.__setitem__(self, key, held)

    @classmethod
    def fromkeys(cls, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: use ``dict.fromkeys``."""
        raise TypeError("use dict.fromkeys(...) in the sandbox")

    def _write(self, key: Any) -> str:
        if type(key) is not str:
            raise TypeError(f"attribute names must be str in the sandbox, not {type(key).__name__}")
        if _bad_name(key, private=True):
            raise AttributeError(f'"{key}" cannot be set through __dict__ in the sandbox')
        return key

    def __setitem__(self, key: Any, value: Any, /) -> None:
        """``d[k] = v``: also ``obj.k = v`` (public or private names)."""
        name = self._write(key)
        _REAL.__get__(self)[name] = value
        dict.__setitem__(self, name, value)

    def __delitem__(self, key: Any, /) -> None:
        """``del d[k]``: also ``del obj.k``."""
        name = self._write(key)
        dict.__delitem__(self, name)
        _REAL.__get__(self).pop(name, None)

    def __getitem__(self, key: Any, /) -> Any:
        """``d[k]``; a key that is not a str is missing."""
        name = _key(key)
        if name is None:
            raise KeyError(key)
        return dict.__getitem__(self, name)

    def __contains__(self, key: Any, /) -> bool:
        """``k in d``; a key that is not a str is not in it."""
        name = _key(key)
        return name is not None and dict.__contains__(self, name)

    def get(self, key: Any, default: Any = None, /) -> Any:
        """``d.get(k[, default])``."""
        name = _key(key)
        return default if name is None else dict.get(self, name, default)

    def pop(self, key: Any, default: Any = _MISSING, /) -> Any:
        """``d.pop(k[, default])``: also removes the attribute."""
        name = _key(key)
        if name is None or not dict.__contains__(self, name):
            if default is _MISSING:
                raise KeyError(key)
            return default
        value = dict.__getitem__(self, name)
        del self[name]
        return value

    def popitem(self) -> tuple[str, Any]:
        """``d.popitem()``: also removes the attribute."""
        key, value = dict.popitem(self)
        _REAL.__get__(self).pop(key, None)
        return key, value

    def setdefault(self, key: Any, default: Any = None, /) -> Any:
        """``d.setdefault(k[, default])``: a new key is also set on the object."""
        name = self._write(key)
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        self[name] = default
        return default

    def clear(self) -> None:
        """``d.clear()``: also removes the attributes it showed."""
        real = _REAL.__get__(self)
        for key in list(dict.keys(self)):
            real.pop(key, None)
        dict.clear(self)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """``d.update(...)``: each pair as ``d[k] = v``, keys checked before any is hashed."""
        for key, value in _pairs(other):
            self[key] = value
        for key, value in kwargs.items():
            self[key] = value

    def __ior__(self, other: Any, /) -> InstanceDict:  # type: ignore[override,misc]
        """``d |= other``: as :meth:`update`."""
        self.update(other)
        return self


_REAL = InstanceDict.__dict__["_sg_real"]


def _pairs(other: Any) -> Iterable[tuple[Any, Any]]:
    if isinstance(other, dict):
        return list(dict.items(other))  # stored hashes: nothing is hashed again
    if hasattr(type(other), "keys"):
        return [(key, other[key]) for key in other.keys()]  # noqa: SIM118 (the mapping protocol)
    pairs: list[tuple[Any, Any]] = []
    for item in other:
        key, value = item
        pairs.append((key, value))
    return pairs
