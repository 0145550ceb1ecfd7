"""The ``dataclasses`` stand-in: ``@dataclass`` and its helpers, written without ``exec``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

Why a stand-in of our own rather than a wrapper of the real module: the real
``dataclass`` generates its methods with ``exec`` in the globals of
``sys.modules[cls.__module__]`` and those methods compare, hash and ``repr`` the
fields in C with no budget check (``P(dag) == P(dag)`` would hash or compare a
shared-reference DAG unguarded) and accept any object as ``self`` (``P.__init__(x, 1)``
would write attributes on whatever ``x`` is). Here every generated method is an
ordinary closure of this module (a curated function for the object boundary) that

- accepts only instances of the script's own class as ``self``,
- ticks the run's budget once per call (a DAG of instances is stopped by the deadline),
- compares with :func:`guards.comparisons.compare_ok`, hashes through
  :func:`guards.hash_bounded` and renders with :func:`guards.safe_repr`,
- checks a ``default_factory``'s result and every default with the object boundary,

and ``@dataclass`` takes only a class the script defined (never a host class).
``asdict``/``astuple`` walk the value themselves: one tick per container (charged by
its length), a depth limit, and a one-line error for a value that contains itself.
Other objects inside them (a script instance that is not a dataclass) are kept, not
deep-copied (no ``__reduce_ex__`` of anything is reached). ``Field.metadata`` is a
plain ``dict`` copy. ``slots=True`` rebuilds the class (as the real one does).
"""

from __future__ import annotations

import dataclasses as _real
import reprlib
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, cast

from scriptgate.sandbox.guards.attributes import check_value, fed, hash_bounded
from scriptgate.sandbox.guards.boundary import HOLDABLE_MARK
from scriptgate.sandbox.guards.comparisons import compare_ok
from scriptgate.sandbox.guards.constants import FILENAME, SCRIPT_CLASS_MARK
from scriptgate.sandbox.guards.sizes import MAX_RENDER, safe_repr, too_large_render
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "Field", "InitVar", "build"]

NAME = "dataclasses"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "dataclass", "field", "fields", "asdict", "astuple", "replace", "is_dataclass",
    "FrozenInstanceError", "InitVar", "KW_ONLY", "MISSING",
)  # fmt: skip
"""The members a script may use."""

MAX_DEPTH = 500
"""Deepest nesting ``asdict``/``astuple`` walk (deeper values are refused in one line)."""

_FIELDS = "__dataclass_fields__"
_PARAMS = "__dataclass_params__"
FrozenInstanceError = _real.FrozenInstanceError


class _Missing:
    """The ``MISSING`` sentinel: no default given."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


class _KwOnly:
    """The ``KW_ONLY`` sentinel: fields annotated after it are keyword-only."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "KW_ONLY"


MISSING: Any = _Missing()
KW_ONLY: Any = _KwOnly()


class InitVar:
    """``InitVar[T]``: an ``__init__`` argument handed to ``__post_init__``, not a field."""

    __slots__ = ("type",)

    def __init__(self, type: Any) -> None:
        self.type = type

    def __class_getitem__(cls, type: Any) -> InitVar:
        return InitVar(type)

    def __repr__(self) -> str:
        return f"dataclasses.InitVar[{safe_repr(self.type)}]"


_FIELD, _CLASSVAR, _INITVAR = "field", "classvar", "initvar"


class Field:
    """One field of a dataclass (what ``field()`` returns and ``fields()`` lists)."""

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "kind",
        "kw_only",
        "metadata",
        "name",
        "repr",
        "type",
    )  # fmt: skip

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        hash: Any,
        compare: bool,
        metadata: Any,
        kw_only: Any,
    ) -> None:
        self.name: str = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = bool(init)
        self.repr = bool(repr)
        self.hash = hash
        self.compare = bool(compare)
        self.metadata: dict[Any, Any] = {} if metadata is None else dict(fed(metadata, "dict"))
        self.kw_only = kw_only
        self.kind = _FIELD

    def __repr__(self) -> str:
        return (
            f"Field(name={self.name!r},type={safe_repr(self.type)},default={safe_repr(self.default)},"
            f"default_factory={safe_repr(self.default_factory)},init={self.init},repr={self.repr},"
            f"hash={self.hash!r},compare={self.compare},kw_only={self.kw_only!r})"
        )


HOLDABLE: tuple[type, ...] = (Field, _Missing, _KwOnly, InitVar, FrozenInstanceError)
"""Value types this stand-in hands to scripts."""


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    hash: Any = None,
    compare: bool = True,
    metadata: Any = None,
    kw_only: Any = MISSING,
) -> Any:
    """``field(...)``: a field's options (``default_factory`` is called per instance)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    if default_factory is not MISSING and not callable(default_factory):
        raise TypeError("default_factory must be callable (a class or a function)")
    if metadata is not None and not isinstance(metadata, dict):
        raise TypeError("metadata must be a dict")
    return Field(
        check_value(default), default_factory, init, repr, hash, compare, metadata, kw_only
    )


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is typing.ClassVar or typing.get_origin(annotation) is typing.ClassVar


def _is_initvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("InitVar", "dataclasses.InitVar"))
    return annotation is InitVar or type(annotation) is InitVar


def _own_class(cls: Any) -> type:
    if not isinstance(cls, type) or not cls.__dict__.get(SCRIPT_CLASS_MARK, False):
        raise TypeError(
            "@dataclass takes a class the script defines (write `@dataclass` above `class ...:`)"
        )
    return cls


def _class_fields(cls: Any) -> dict[str, Field] | None:
    for klass in cls.__mro__ if isinstance(cls, type) else ():
        found = klass.__dict__.get(_FIELDS)
        if type(found) is dict:
            return found
    return None


def _collect(cls: type, kw_only: bool) -> dict[str, Field]:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        inherited = base.__dict__.get(_FIELDS)
        if type(inherited) is dict:
            fields.update(inherited)
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (the own body only)
    if type(annotations) is not dict:
        annotations = {}
    keyword_only = kw_only
    for name, annotation in annotations.items():
        if annotation is KW_ONLY or (isinstance(annotation, str) and annotation == "KW_ONLY"):
            keyword_only = True
            continue
        default = cls.__dict__.get(name, MISSING)
        if type(default) is Field:
            made = default
        else:
            made = Field(check_value(default), MISSING, True, True, None, True, None, MISSING)
        made.name = name
        made.type = annotation
        if _is_classvar(annotation):
            made.kind = _CLASSVAR
        elif _is_initvar(annotation):
            made.kind = _INITVAR
        if made.kw_only is MISSING:
            made.kw_only = keyword_only
        if made.kind == _FIELD and type(made.default) in (list, dict, set):
            raise ValueError(
                f"mutable default {type(made.default).__name__} for field {name} is not allowed: "
                "use default_factory (x: list = field(default_factory=list))"
            )
        if type(default) is Field:
            if made.default is MISSING:
                type.__delattr__(cls, name)
            else:
                type.__setattr__(cls, name, made.default)
        fields[name] = made
    for name, value in cls.__dict__.items():
        if type(value) is Field and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    return fields


class _Options:
    """The options of one ``@dataclass`` (kept on the class for ``replace`` and inheritance)."""

    __slots__ = ("eq", "frozen", "init", "order", "repr", "unsafe_hash")

    def __init__(
        self, *, init: bool, repr: bool, eq: bool, order: bool, unsafe_hash: bool, frozen: bool
    ) -> None:
        self.init, self.repr, self.eq, self.order = init, repr, eq, order
        self.unsafe_hash, self.frozen = unsafe_hash, frozen


def _setter(cls: type, name: str, value: Any, *, overwrite: bool = False) -> bool:
    if not overwrite and name in cls.__dict__:
        return False
    type.__setattr__(cls, name, value)
    return True


def _method(cls: type, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__name__ = name
    fn.__qualname__ = f"{cls.__qualname__}.{name}"
    return fn


def _next_in_mro(cls: type, name: str) -> Any:
    for klass in cls.__mro__[1:]:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return getattr(object, name)


def _make_methods(cls: type, fields: dict[str, Field], opts: _Options, tick: Any) -> None:
    """Attach the generated methods to ``cls`` (closures of this module, see the docstring)."""
    all_fields = [f for f in fields.values() if f.kind != _CLASSVAR]
    real = [f for f in all_fields if f.kind == _FIELD]
    init_fields = [f for f in all_fields if f.init]
    positional = [f for f in init_fields if not f.kw_only]
    by_name = {f.name: f for f in init_fields}
    initvars = [f.name for f in all_fields if f.kind == _INITVAR]
    late = [
        f
        for f in real
        if not f.init and (f.default is not MISSING or f.default_factory is not MISSING)
    ]
    seen_default = False
    for f in positional:
        has = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has
    qualname = cls.__qualname__
    frozen = opts.frozen
    field_names = frozenset(f.name for f in real)

    def own(self: Any, what: str) -> None:
        if not issubclass(type(self), cls):
            raise TypeError(f"{qualname}.{what} takes an instance of {qualname}")

    def value_of(f: Field) -> Any:
        if f.default is not MISSING:
            return f.default
        return check_value(f.default_factory())

    write = object.__setattr__ if frozen else setattr
    has_post = hasattr(cls, "__post_init__")
    names = tuple(f.name for f in positional)
    # the common call: every field given by position, nothing computed afterwards
    plain_call = len(positional) == len(init_fields) and not late and not initvars
    count = len(positional)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        tick()
        if not issubclass(type(self), cls):
            own(self, "__init__")
        if plain_call and not kwargs and len(args) == count:
            for name, arg in zip(names, args, strict=True):
                write(self, name, arg)
            if has_post:
                self.__post_init__()
            return
        if len(args) > count:
            raise TypeError(
                f"{qualname}.__init__() takes {count + 1} positional arguments "
                f"but {len(args) + 1} were given"
            )
        values = dict(zip(names, args, strict=False))
        for key, arg in kwargs.items():
            if key not in by_name:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {key!r}")
            values[key] = arg
        missing = []
        for f in init_fields:
            if f.name not in values:
                if f.default is MISSING and f.default_factory is MISSING:
                    missing.append(repr(f.name))
                else:
                    values[f.name] = value_of(f)
        if missing:
            s = "s" if len(missing) > 1 else ""
            raise TypeError(
                f"{qualname}.__init__() missing {len(missing)} required argument{s}: "
                + ", ".join(missing)
            )
        for f in init_fields:
            if f.kind == _FIELD:
                write(self, f.name, values[f.name])
        for f in late:
            write(self, f.name, value_of(f))
        if has_post:
            self.__post_init__(*(values[name] for name in initvars))

    def astuple_of(self: Any, which: list[Field]) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in which)

    repr_fields = [f for f in real if f.repr]

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        tick()
        own(self, "__repr__")
        inner = ", ".join(f"{f.name}={safe_repr(getattr(self, f.name))}" for f in repr_fields)
        text = f"{type(self).__qualname__}({inner})"
        if len(text) > MAX_RENDER:
            too_large_render("repr() of this dataclass", len(text))
        return text

    compared = [f for f in real if f.compare]

    def comparer(name: str, op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
        def compare(self: Any, other: Any) -> Any:
            tick()
            own(self, name)
            if type(other) is not type(self):
                return NotImplemented
            a, b = astuple_of(self, compared), astuple_of(other, compared)
            compare_ok(a, b)
            return op(a, b)

        return _method(cls, name, compare)

    hashed = [f for f in real if (f.compare if f.hash is None else f.hash)]

    def __hash__(self: Any) -> int:
        tick()
        own(self, "__hash__")
        return hash(hash_bounded(astuple_of(self, hashed)))

    base_setattr, base_delattr = _next_in_mro(cls, "__setattr__"), _next_in_mro(cls, "__delattr__")

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in field_names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value) if base_setattr is None else base_setattr(
            self, name, value
        )

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in field_names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        base_delattr(self, name)

    if opts.init:
        _setter(cls, "__init__", _method(cls, "__init__", __init__))
    if opts.repr:
        _setter(cls, "__repr__", _method(cls, "__repr__", __repr__))
    if opts.eq:
        _setter(cls, "__eq__", comparer("__eq__", lambda a, b: a == b))
    if opts.order:
        if not opts.eq:
            raise ValueError("eq must be true if order is true")
        for name, op in (
            ("__lt__", lambda a, b: a < b),
            ("__le__", lambda a, b: a <= b),
            ("__gt__", lambda a, b: a > b),
            ("__ge__", lambda a, b: a >= b),
        ):
            if not _setter(cls, name, comparer(name, op)):
                raise TypeError(
                    f"Cannot overwrite attribute {name} in class {qualname}. "
                    "Consider using functools.total_ordering"
                )
    if frozen:
        for name, fn in (("__setattr__", __setattr__), ("__delattr__", __delattr__)):
            if not _setter(cls, name, _method(cls, name, fn)):
                raise TypeError(f"Cannot overwrite attribute {name} in class {qualname}")
    class_hash = cls.__dict__.get("__hash__", MISSING)
    explicit_hash = class_hash is not MISSING and not (
        class_hash is None and "__eq__" in cls.__dict__
    )
    if opts.unsafe_hash:
        if explicit_hash:
            raise TypeError(f"Cannot overwrite attribute __hash__ in class {qualname}")
        type.__setattr__(cls, "__hash__", _method(cls, "__hash__", __hash__))
    elif opts.eq and frozen and not explicit_hash:
        type.__setattr__(cls, "__hash__", _method(cls, "__hash__", __hash__))
    elif opts.eq and not explicit_hash:
        type.__setattr__(cls, "__hash__", None)
    if "__match_args__" not in cls.__dict__:
        type.__setattr__(
            cls, "__match_args__", tuple(f.name for f in positional if f.kind == _FIELD)
        )


def _with_slots(cls: type, fields: dict[str, Field]) -> type:
    if type(cls) is not type:
        raise TypeError("slots=True is available on plain classes only")
    names = tuple(f.name for f in fields.values() if f.kind == _FIELD)
    namespace = dict(cls.__dict__)
    for name in (*names, "__dict__", "__weakref__"):
        namespace.pop(name, None)
    inherited = {n for base in cls.__mro__[1:] for n in base.__dict__.get("__slots__", ())}
    namespace["__slots__"] = tuple(n for n in names if n not in inherited)
    made = type(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def _decorate(cls: Any, tick: Any, options: dict[str, Any]) -> type:
    cls = _own_class(cls)
    for base in cls.__mro__[1:]:
        params = base.__dict__.get(_PARAMS)
        if type(params) is _Options and params.frozen != bool(options["frozen"]):
            which = "frozen" if options["frozen"] else "non-frozen"
            other = "non-frozen" if options["frozen"] else "frozen"
            raise TypeError(f"cannot inherit {which} dataclass from a {other} one")
    fields = _collect(cls, bool(options["kw_only"]))
    cls = cast("type", cls)
    if options["slots"]:
        cls = _with_slots(cls, fields)
    opts = _Options(
        init=bool(options["init"]),
        repr=bool(options["repr"]),
        eq=bool(options["eq"]),
        order=bool(options["order"]),
        unsafe_hash=bool(options["unsafe_hash"]),
        frozen=bool(options["frozen"]),
    )
    type.__setattr__(cls, _FIELDS, fields)
    type.__setattr__(cls, _PARAMS, opts)
    _make_methods(cls, fields, opts, tick)
    return cast("type", cls)


def _fields_of(obj: Any) -> list[Field]:
    found = _class_fields(obj if isinstance(obj, type) else type(obj))
    if found is None:
        raise TypeError("must be called with a dataclass type or instance")
    return [f for f in found.values() if f.kind == _FIELD]


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """``fields(x)``: the fields of a dataclass or of an instance of one, in order."""
    return tuple(_fields_of(class_or_instance))


def is_dataclass(obj: Any) -> bool:
    """``is_dataclass(x)``: whether ``x`` is a dataclass or an instance of one."""
    return _class_fields(obj if isinstance(obj, type) else type(obj)) is not None


def _instance(obj: Any, what: str) -> None:
    if isinstance(obj, type) or _class_fields(type(obj)) is None:
        raise TypeError(f"{what}() should be called on dataclass instances")


def replace(obj: Any, /, **changes: Any) -> Any:
    """``replace(obj, **changes)``: a new instance with some fields changed."""
    _instance(obj, "replace")
    found = _class_fields(type(obj)) or {}
    for f in found.values():
        if f.kind == _CLASSVAR:
            continue
        if not f.init:
            if f.name in changes:
                raise ValueError(
                    f"field {f.name} is declared with init=False, it cannot be specified with "
                    "replace()"
                )
            continue
        if f.name not in changes:
            if f.kind == _INITVAR and f.default is MISSING:
                raise ValueError(f"InitVar {f.name!r} must be specified with replace()")
            if f.kind == _FIELD:
                changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)


_SCALARS = frozenset({str, int, float, bool, type(None), bytes, complex})


def _walker(run: RunWorld, as_dict: bool, factory: Any) -> Callable[[Any], Any]:
    """The bounded walk of ``asdict`` (``as_dict``) or ``astuple`` (charging the calling run)."""
    on_path: set[int] = set()
    scope = _script_globals()
    charge = run.charge if scope is None else scope.get("__charge__", run.charge)

    def inner(obj: Any, depth: int) -> Any:
        kind = type(obj)
        if kind in _SCALARS:
            return obj
        if depth > MAX_DEPTH:
            raise ValueError(f"the value nests deeper than {MAX_DEPTH} levels")
        key = id(obj)
        if key in on_path:
            raise ValueError("the value contains itself (a cycle): it has no dict/tuple form")
        charge(_ONE_STEP)
        on_path.add(key)
        try:
            found = None if isinstance(obj, type) else _class_fields(kind)
            if found is not None:
                parts = [
                    (f.name, inner(getattr(obj, f.name), depth + 1))
                    for f in found.values()
                    if f.kind == _FIELD
                ]
                if as_dict:
                    return factory(fed(parts, "dict") if factory is dict else parts)
                return factory([value for _, value in parts])
            if isinstance(obj, tuple) and getattr(kind, HOLDABLE_MARK, False):
                charge(obj)
                return kind(*[inner(v, depth + 1) for v in obj])  # a namedtuple
            if kind in (list, tuple):
                charge(obj)
                return kind(inner(v, depth + 1) for v in obj)
            if kind is dict:
                charge(obj)
                pairs = [(inner(k, depth + 1), inner(v, depth + 1)) for k, v in obj.items()]
                return dict(fed(pairs, "dict"))
            if kind in (set, frozenset):
                charge(obj)
                return kind(fed([inner(v, depth + 1) for v in obj], "set"))
            return check_value(obj)  # kept as it is (not deep-copied: see the docstring)
        finally:
            on_path.discard(key)

    return lambda obj: inner(obj, 0)


_ONE_STEP = (None,)


def _script_globals() -> dict[str, Any] | None:
    """The globals of the innermost script frame (where the current run's hooks live)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            return frame.f_globals
        frame = frame.f_back
    return None


def _ticker(run: RunWorld) -> Callable[[], None]:
    """One step of the *current* run's ticker (steps, deadline, stop flag every few hundred).

    A generated method may run many times inside one C call (a list of instances
    compared) with no script line in between, so each call ticks. The run is found through the script's globals at decoration
    time: in a session a class outlives the run that made it, and its methods must
    charge the run that calls them (the globals get each run's hooks).
    """
    scope = _script_globals()
    fallback = run.tick
    if scope is None:
        return fallback
    get = scope.get

    def tick() -> None:
        # the globals' `_tick_` is the run's ticker, replaced by one that raises at once
        # when the budget trips (so a tripped run is seen at the very next call)
        get("_tick_", fallback)()

    return tick


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""

    def dataclass(
        cls: Any = None,
        /,
        *,
        init: bool = True,
        repr: bool = True,
        eq: bool = True,
        order: bool = False,
        unsafe_hash: bool = False,
        frozen: bool = False,
        match_args: bool = True,
        kw_only: bool = False,
        slots: bool = False,
    ) -> Any:
        """``@dataclass`` / ``@dataclass(frozen=True, order=True, ...)`` on the script's class."""
        options = {
            "init": init, "repr": repr, "eq": eq, "order": order, "unsafe_hash": unsafe_hash,
            "frozen": frozen, "kw_only": kw_only, "slots": slots,
        }  # fmt: skip
        if cls is None:
            return lambda target: _decorate(target, _ticker(run), options)
        return _decorate(cls, _ticker(run), options)

    def asdict(obj: Any, *, dict_factory: Any = dict) -> Any:
        """``asdict(obj)``: the instance as nested dicts (bounded, cycles refused)."""
        _instance(obj, "asdict")
        return _walker(run, True, dict_factory)(obj)

    def astuple(obj: Any, *, tuple_factory: Any = tuple) -> Any:
        """``astuple(obj)``: the instance as nested tuples (bounded, cycles refused)."""
        _instance(obj, "astuple")
        return _walker(run, False, tuple_factory)(obj)

    return {
        "dataclass": dataclass,
        "field": field,
        "fields": fields,
        "asdict": asdict,
        "astuple": astuple,
        "replace": replace,
        "is_dataclass": is_dataclass,
        "FrozenInstanceError": FrozenInstanceError,
        "InitVar": InitVar,
        "KW_ONLY": KW_ONLY,
        "MISSING": MISSING,
    }
