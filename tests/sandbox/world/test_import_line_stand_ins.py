"""What ordinary model code imports on its first line (a user study): the rest of ``typing``,
``collections.abc``, ``warnings``, ``datetime.UTC`` and ``time``'s ``gmtime``/``localtime``/
``strftime``.

Each feature script runs in both modes and must give what plain CPython gives; the attacks
next to them check that no host object (``collections.abc``'s ``register``, a real ``deque``
built past the growth check) is reachable.
"""

from __future__ import annotations

import collections.abc
import gc
import typing

import pytest
from sandbox_support import refused, same_as_python, value

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import modules

SANDBOX_TIMEOUT = 10

_TYPING_NAMES = (
    "Type, DefaultDict, Deque, Counter, OrderedDict, ChainMap, NoReturn, Never, Self, TypeAlias, "
    "overload, final, Annotated, TYPE_CHECKING, AsyncIterator, AsyncIterable, AsyncGenerator, "
    "Coroutine, Hashable, Sized, Collection, Container, Reversible, MutableMapping, "
    "MutableSequence, MutableSet, AbstractSet, KeysView, ValuesView, ItemsView, AnyStr, Text, "
    "NewType, get_args, get_origin, Required, NotRequired, ParamSpec, Concatenate, assert_never, "
    "SupportsInt, SupportsFloat, SupportsIndex, no_type_check"
)

FEATURES: dict[str, str] = {
    "typing-annotations": f"from typing import {_TYPING_NAMES}, Dict, List, Callable, TypedDict\n"
    "P = ParamSpec('P')\nT = AnyStr\n"
    "def f(a: DefaultDict[str, int], b: Annotated[int, 'x'], c: Deque[int], d: Counter[str],\n"
    "      e: OrderedDict[str, int], g: ChainMap[str, int], *args: P.args, **kw: P.kwargs) -> NoReturn:\n"
    "    raise ValueError\n"
    "def g(cb: Callable[Concatenate[int, P], int], t: Type[int], s: Sized, h: Hashable,\n"
    "      m: MutableMapping[str, int], q: MutableSequence[int], z: AbstractSet[int],\n"
    "      k: KeysView[str], v: ValuesView[int], i: ItemsView[str, int], x: Collection[int],\n"
    "      y: Container[int], r: Reversible[int], w: MutableSet[int], u: Text) -> Never:\n"
    "    raise ValueError\n"
    "async def a(it: AsyncIterator[int], ai: AsyncIterable[int], ag: AsyncGenerator[int, None],\n"
    "            co: Coroutine[None, None, int]) -> None:\n"
    "    pass\n"
    "class Movie(TypedDict):\n    title: Required[str]\n    year: NotRequired[int]\n"
    "class Node:\n    def clone(self) -> Self:\n        return self\n"
    "Alias: TypeAlias = Dict[str, List[int]]\n"
    "[TYPE_CHECKING, Movie(title='x'), Node().clone() is not None, f.__name__, g.__name__]",
    "typing-decorators": "from typing import overload, final, no_type_check, NewType, assert_never\n"
    "@overload\ndef h(x: int) -> int: ...\n@overload\ndef h(x: str) -> str: ...\n"
    "def h(x):\n    return x * 2\n"
    "@final\nclass K:\n    @final\n    def m(self):\n        return 1\n"
    "@no_type_check\ndef loose(x):\n    return x\n"
    "UserId = NewType('UserId', int)\n"
    "try:\n    assert_never(3)\nexcept AssertionError as e:\n    msg = str(e)\n"
    "[h(2), h('a'), K().m(), loose(4), UserId(5), UserId(5) + 1, msg]",
    "typing-overload-stub-raises": "from typing import overload\n"
    "@overload\ndef h(x: int) -> int: ...\ntry:\n    h(1)\n    r = 'called'\n"
    "except NotImplementedError as e:\n    r = str(e)[:40]\nr",
    "typing-isinstance": "import typing, collections\nfrom typing import "
    "Hashable, Sized, MutableMapping, MutableSequence, MutableSet, AbstractSet, Collection, "
    "Container, Reversible, KeysView, ValuesView, ItemsView, Counter, Deque, DefaultDict, "
    "OrderedDict, ChainMap\n"
    "out = [isinstance(1, Hashable), isinstance([], Hashable), isinstance([], Sized), isinstance(3, Sized),\n"
    " isinstance({}, MutableMapping), isinstance([], MutableMapping), isinstance([], MutableSequence),\n"
    " isinstance((), MutableSequence), isinstance(set(), MutableSet), isinstance(frozenset(), AbstractSet),\n"
    " isinstance('ab', Collection), isinstance(3, Container), isinstance([], Reversible),\n"
    " isinstance({}.keys(), KeysView), isinstance({}.values(), ValuesView), isinstance({}.items(), ItemsView),\n"
    " isinstance(collections.Counter('ab'), Counter), isinstance(collections.deque(), Deque),\n"
    " isinstance(collections.defaultdict(int), DefaultDict), isinstance({}, DefaultDict),\n"
    " isinstance(collections.OrderedDict(), OrderedDict), isinstance(collections.ChainMap(), ChainMap),\n"
    " issubclass(dict, MutableMapping), issubclass(list, Hashable)]\nout",
    "typing-supports": "from typing import SupportsInt, SupportsFloat, SupportsIndex\n"
    "out = [isinstance(3, SupportsInt), isinstance('3', SupportsInt),\n"
    " isinstance(2.5, SupportsFloat), isinstance(3, SupportsIndex), isinstance(2.5, SupportsIndex),\n"
    " issubclass(int, SupportsIndex)]\nout",
    "typing-args-origin": "from typing import get_args, get_origin, Dict, List, Annotated, "
    "Optional, Union, Literal, Deque, Type, Mapping as TMapping\nimport collections\n"
    "from collections.abc import Mapping, Callable\n"
    "out = [get_args(Dict[str, int]) == (str, int), get_origin(List[int]) is list,\n"
    " get_args(Annotated[int, 'x']) == (int, 'x'), get_origin(TMapping[str, int]) is Mapping,\n"
    " get_origin(Callable[[int], str]) is Callable, get_args(Callable[[int], str]) == ([int], str),\n"
    " get_args(Optional[int]) == (int, type(None)), get_origin(Union[int, str]) is Union,\n"
    " get_args(Literal['a', 1]), get_origin(int), get_args(int), get_origin(Deque[int]) is collections.deque,\n"
    " isinstance(int, get_origin(Type[int])), str(get_origin(Type[int]))]\nout",
    "collections-abc": "import collections.abc\nfrom collections.abc import Mapping, Iterable, "
    "Sequence, Callable, MutableMapping\nimport collections\nfrom collections import abc\n"
    "import collections.abc as cabc\n"
    "def total(xs: Iterable[int], m: Mapping[str, int], f: Callable[[int], int]) -> Sequence[int]:\n"
    "    return [f(x) + m.get('k', 0) for x in xs]\n"
    "out = [isinstance({}, collections.abc.Mapping), collections.abc.Mapping is Mapping, abc is cabc,\n"
    " isinstance([], Sequence), isinstance('s', Sequence), isinstance(len, Callable), isinstance(3, Callable),\n"
    " isinstance({}, MutableMapping), isinstance((x for x in []), Iterable), isinstance(3, Iterable),\n"
    " isinstance(iter([]), collections.abc.Iterator), isinstance(set(), collections.abc.Set),\n"
    " isinstance([], cabc.Hashable), total([1, 2], {'k': 10}, lambda x: x * 2)]\nout",
    "datetime-utc": "import datetime\nfrom datetime import UTC, datetime as dt, timezone\n"
    "out = [UTC is timezone.utc, datetime.UTC is UTC, dt(2020, 1, 2, 3, tzinfo=UTC).isoformat(),\n"
    " dt.fromtimestamp(0, UTC).year, str(UTC)]\nout",
    "time-struct": "import time\nt = time.gmtime(86400 * 365)\n"
    "out = [t.tm_year, t.tm_mon, t[0], tuple(t), time.strftime('%Y-%m-%d %H:%M:%S', t),\n"
    " time.strftime('%Y/%j', (2020, 3, 1, 0, 0, 0, 0, 61, 0)), isinstance(t, time.struct_time),\n"
    " time.localtime(0).tm_year in (1969, 1970), len(time.strftime('%H:%M')),\n"
    " time.gmtime().tm_year >= 2024, time.localtime().tm_year >= 2024,\n"
    " time.strftime('%Z|%z', time.struct_time((2020, 1, 1, 0, 0, 0, 0, 1, 0, 'CET', 3600)))]\nout",
    "typing-literal": "import typing\nfrom typing import Literal, Union, get_args, get_origin\n"
    "Mode = Literal['r', 'w', 1, None, Literal['b']]\n"
    "def f(mode: Literal['r', 'w'] = 'r') -> str:\n    return mode\n"
    "out = [repr(Mode), get_origin(Mode) is Literal, get_origin(Mode) is typing.Literal,\n"
    " get_args(Mode), repr(Literal), Literal[1] == Literal[1], Literal[1] is Literal[1],\n"
    " repr(Union[Literal[1], int]), f(), Literal['a' * 1000] == Literal['a' * 1000]]\nout",
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_import_line_stand_ins_match_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


def test_import_line_warnings_write_one_line_each(sandbox: Sandbox) -> None:
    source = (
        "import warnings\n"
        "warnings.warn('old api', DeprecationWarning, stacklevel=2)\n"
        "warnings.warn('plain')\n"
        "warnings.warn(RuntimeWarning('as instance'))\n"
        "warnings.simplefilter('ignore')\nwarnings.simplefilter('always', UserWarning)\n"
        "warnings.filterwarnings('ignore', message='x', category=FutureWarning, module='m')\n"
        "warnings.resetwarnings()\n"
        "with warnings.catch_warnings():\n    warnings.simplefilter('ignore')\n"
        "with warnings.catch_warnings(record=True) as caught:\n    pass\n"
        "def inner():\n    warnings.warn('from a function', category=UserWarning)\ninner()\n"
        "[caught, issubclass(DeprecationWarning, Warning)]"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == [[], True]
    assert result.output == (
        "DeprecationWarning: old api\nUserWarning: plain\nRuntimeWarning: as instance\n"
        "UserWarning: from a function\n"
    )


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("import warnings\nwarnings.warn('x', str)", "category must be a Warning subclass"),
        ("import warnings\nwarnings.warn('x', ValueError)", "category must be a Warning subclass"),
        ("import warnings\nwarnings.simplefilter('loud')", "invalid action: 'loud'"),
        (
            "import warnings\nwarnings.filterwarnings('ignore', message=3)",
            "message must be a string",
        ),
        ("import warnings\nwarnings.filterwarnings('ignore', lineno=-1)", "lineno must be an int"),
        ("import warnings\nwarnings.simplefilter('ignore', category=int)", "Warning subclass"),
        ("import warnings\nwarnings.catch_warnings(action='nope')", "invalid action"),
    ],
)
def test_import_line_warnings_check_their_arguments(
    sandbox: Sandbox, source: str, words: str
) -> None:
    refused(sandbox, source, "runtime", words)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("import typing\ntyping.Deque([1, 2])", "cannot be instantiated"),
        ("import typing\ntyping.Counter('ab')", "cannot be instantiated"),
        ("import typing\ntyping.DefaultDict(int)", "cannot be instantiated"),
        ("import typing\ntyping.KeysView({})", "cannot be instantiated"),
        ("import typing\ntyping.Hashable.register(list)", "not available in the sandbox"),
        ("import typing\ntyping.MutableMapping.register(list)", "not available in the sandbox"),
        ("import typing\ntyping.get_origin(typing.Mapping[str, int]).register", "not available"),
        (
            "import typing\ntyping.get_origin(typing.MutableMapping[str, int]).register",
            "not available",
        ),
        ("import collections.abc\ncollections.abc.Mapping.register(list)", "not available"),
        ("from collections.abc import Sized\nSized.register(list)", "not available"),
        ("from collections import abc\nabc.Hashable.register", "not available"),
        ("import typing\nP = typing.ParamSpec('P')\nP.args.origin", "not available"),
        ("import typing\ntyping.SupportsInt.register(str)", "not available"),
        ("import typing\ntyping.Annotated[int, object()]", "cannot be a typing subscript"),
        ("from collections.abc import nothing", "cannot import name 'nothing'"),
        # get_origin(Type[int]) is the script's `type`, never the metaclass (its call makes classes)
        ("from typing import get_origin, Type\nget_origin(Type[int])('C', (), {})", "one argument"),
        ("from typing import get_args, Type\nget_args(Type[type])[0]('C', (), {})", "one argument"),
        ("from typing import assert_never\nassert_never([0] * 10**7)", "too large"),
        ("import time\nclass T(tuple):\n    pass\ntime.strftime('%Y', T(range(9)))", "Tuple or"),
        ("import time\ntime.strftime('%c' * 5000)", "date format of 10000 characters"),
        # findings20 P08: glibc copied a 9 MB zone name onto the stack for %Z (SIGSEGV)
        (
            "import time\n"
            "time.strftime('%Z', time.struct_time((2020, 1, 1, 0, 0, 0, 0, 1, 0, 'x' * 9_000_000, 0)))",
            "zone name is 9000000 characters long",
        ),
        # findings20 P02: typing's process-wide cache kept each Literal value after the run
        ("import typing\ntyping.Literal['y' * 9_000_000]", "Literal value of 9000000 characters"),
        ("from typing import Literal\nLiteral[1, b'y' * 5000]", "Literal value of 5000 characters"),
        ("from typing import Literal\nLiteral[1 << 10_000]", "Literal int of more than 4096 bits"),
        ("from typing import Literal\nLiteral[object()]", "cannot be a typing subscript"),
    ],
)
def test_import_line_stand_ins_hand_out_nothing_of_the_host(
    sandbox: Sandbox, source: str, words: str
) -> None:
    refused(sandbox, source, words)


def test_import_line_register_attempts_leave_host_isinstance_alone(sandbox: Sandbox) -> None:
    before = (isinstance([], collections.abc.Mapping), isinstance([], collections.abc.Hashable))
    for source in (
        "from collections.abc import Mapping\nMapping.register(list)",
        "import typing\ntyping.get_origin(typing.Mapping[str, int]).register(list)",
        "import typing\ntyping.MutableMapping.register(list)",
    ):
        assert not sandbox.run_sync(source).ok, source
    after = (isinstance([], collections.abc.Mapping), isinstance([], collections.abc.Hashable))
    assert after == before
    assert not isinstance([], typing.Mapping)


def test_import_line_collections_abc_is_one_namespace(sandbox: Sandbox) -> None:
    assert value(
        sandbox,
        "import collections.abc\nfrom collections import abc\nimport collections.abc as c\n"
        "from collections.abc import Mapping\nimport typing\n"
        "[collections.abc is abc, abc is c, Mapping is typing.Mapping,"
        " c.MutableMapping is typing.MutableMapping]",
    ) == [True, True, True, True]


def test_import_line_stand_ins_are_listed() -> None:
    for module, member in (
        ("typing", "DefaultDict"),
        ("typing", "get_origin"),
        ("typing", "TYPE_CHECKING"),
        ("collections", "abc"),
        ("collections.abc", "MutableMapping"),
        ("warnings", "warn"),
        ("datetime", "UTC"),
        ("time", "strftime"),
    ):
        assert member in modules.MODULE_NAMES[module], (module, member)


def test_import_line_newtype_in_a_subscript_leaves_nothing_in_typing_caches() -> None:
    # NewType('X', Marker) keeps Marker; Optional[X] put X in typing's process-wide cache
    box = Sandbox(limits=Limits(timeout=5))
    result = box.run_sync(
        "from typing import NewType, Optional, List\nclass LeakMarker17:\n    blob = [0] * 1000\n"
        "X = NewType('X', LeakMarker17)\nOptional[X]\nList[X]\nX | None\n1"
    )
    assert result.ok, result.error
    gc.collect()
    left = [o for o in gc.get_objects() if type(o) is type and o.__name__ == "LeakMarker17"]
    assert not left


def test_import_line_warn_renders_the_message_within_bounds(sandbox: Sandbox) -> None:
    refused(sandbox, "import warnings\nwarnings.warn([0] * 10**7)", "exceeded the limit")
