"""Sharp edges of issue 14 the attribute guard hands out: ``@x.setter`` on a script property,
the class ``x.__class__`` gives, bytearray item writes, and what ``except*`` needs.

Owns :func:`property_copier` (``prop.setter``/``getter``/``deleter`` of a property whose
functions are the script's own), :data:`SCRIPT_TYPES` and :class:`BytearrayWriter` (what
the write guard returns for ``ba[i] = v``). It sits below :mod:`.attributes` (which calls
it) and imports only :mod:`.constants`, :mod:`.errors` and :mod:`.memory`; it must not
widen what a script may hold: the property it returns again has only script functions (or
``None``) for ``fget``/``fset``/``fdel``, and a bytearray never grows past
:data:`~.memory.MAX_SEQUENCE` bytes through a write.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Callable
from typing import Any, NoReturn

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.memory import CHECK_FROM, MAX_SEQUENCE, charge_bytes

__all__ = [
    "PROPERTY_COPIERS",
    "SCRIPT_TYPES",
    "BytearrayWriter",
    "group_member",
    "property_copier",
    "refuse_group_subclass",
    "script_property",
    "script_type",
]

SCRIPT_TYPES: dict[type, type] = {}
"""Real builtin type → the class the script knows by that name (``str`` → the size-checked
``str``, ``bytes`` → the size-checked ``bytes``…), filled by ``world/builtins``: ``type(x)``
and ``x.__class__`` hand out the checked class, never the real one (``b''.__class__(10**9)``
would allocate in one call)."""


def script_type(kind: type) -> type:
    """The class a script gets for ``type(x)`` / ``x.__class__`` when ``x``'s type is ``kind``."""
    return SCRIPT_TYPES.get(kind, kind)


PROPERTY_COPIERS = frozenset({"setter", "getter", "deleter"})
"""The ``property`` methods a script may read on its own properties."""


def _script_function(obj: Any) -> bool:
    return type(obj) is types.FunctionType and obj.__code__.co_filename == FILENAME


def script_property(obj: Any) -> bool:
    """Whether ``obj`` is exactly a ``property`` whose functions are all the script's own."""
    if type(obj) is not property:
        return False
    return all(part is None or _script_function(part) for part in (obj.fget, obj.fset, obj.fdel))


def property_copier(prop: Any, name: str) -> Callable[[Any], Any]:
    """``prop.setter`` (``getter``, ``deleter``) of a script property, taking a script function.

    test_names_edges_property_*: the copy is made by the real method, so ``@x.setter``
    behaves as in Python; a host function, a builtin or a callable object as the new
    accessor is refused, as is a property with any host function in it.
    """
    if not script_property(prop):
        raise AttributeError(
            f'"{name}" of a property is available only when its functions are your own '
            "(define the getter with `def` in the class)"
        )
    method = getattr(prop, name)

    def copier(function: Any) -> Any:
        if not _script_function(function):
            raise TypeError(
                f"property.{name}() takes a function you defined (def or lambda), "
                f"not a {type(function).__name__} from outside the script"
            )
        return method(function)

    copier.__name__ = name
    copier.__qualname__ = f"property.{name}"
    return copier


class BytearrayWriter:
    """The write target of ``ba[i] = v``, ``ba[i:j] = v`` and ``del ba[i]`` on a bytearray.

    test_names_edges_bytearray_*: a slice write may not make the bytearray longer than
    :data:`MAX_SEQUENCE` bytes (``ba[0:0] = ba`` doubling, ``ba[len(ba):] = big`` in a
    loop); a value that is not ``bytes``/``bytearray`` is copied to bytes first, so its
    length is the real one (a script ``__len__`` cannot lie about it), and a large one is
    charged to the memory budget. Attributes of a bytearray stay unwritable.
    """

    __slots__ = ("_target",)

    def __init__(self, target: bytearray) -> None:
        object.__setattr__(self, "_target", target)

    def __setitem__(self, key: Any, value: Any) -> None:
        target: bytearray = object.__getattribute__(self, "_target")
        if type(key) is slice:
            if type(value) is not bytes and type(value) is not bytearray:
                if isinstance(value, int):
                    raise TypeError(
                        "can assign only bytes, buffers, or iterables of ints in range(0, 256)"
                    )
                # at most one item past the bound is read (a lying __len__ proves nothing)
                items = list(itertools.islice(value, MAX_SEQUENCE + 1))
                if len(items) > MAX_SEQUENCE:
                    refuse_size("a bytearray slice value would be too large for the sandbox")
                if len(items) > CHECK_FROM:
                    charge_bytes(len(items) * 8)
                value = bytes(items)
            size = len(target)
            removed = len(range(*key.indices(size)))
            added = len(value)
            if size - removed + added > MAX_SEQUENCE:
                refuse_size(
                    f"a bytearray longer than {MAX_SEQUENCE} bytes would be too large "
                    "for the sandbox"
                )
            if added > CHECK_FROM:
                charge_bytes(added)
        target[key] = value

    def __delitem__(self, key: Any) -> None:
        target: bytearray = object.__getattribute__(self, "_target")
        del target[key]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"'bytearray' object attribute {name!r} cannot be written")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"'bytearray' object attribute {name!r} cannot be deleted")


def refuse_group_subclass(base: type) -> NoReturn:
    """A script class may not derive from ``BaseExceptionGroup`` (``except*`` support).

    ``except*`` calls the matched group's own ``split()`` and, on CPython 3.11, trusts
    what it returns (CVE-2025-22153, CPython gh-128049: type confusion, a segfault); the
    builtin ``split`` also calls a subclass's ``derive()``, whose result the next
    ``except*`` clause splits. With no script subclass every group a script can raise is
    a builtin ``ExceptionGroup``/``BaseExceptionGroup`` (whose attributes a script cannot
    write), so both methods are CPython's own.
    """
    raise TypeError(
        f"cannot subclass {base.__name__} in the sandbox (except* relies on its own split): "
        f"raise {base.__name__}(message, [errors]) itself, or subclass Exception for the "
        "errors inside it"
    )


def group_member(
    group: BaseExceptionGroup[Any], kinds: tuple[type[BaseException], ...]
) -> BaseException | None:
    """The first exception of ``group`` (depth-first, any depth) that is one of ``kinds``.

    Iterative, so a group nested 100,000 deep cannot make the handler's check itself fail
    with a ``RecursionError`` (which the script could catch) in place of the stop.
    """
    todo: list[BaseException] = [group]
    while todo:
        exc = todo.pop()
        if isinstance(exc, kinds):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            todo.extend(reversed(exc.exceptions))
    return None
