"""Class idioms and ``print(file=)``/``cmath`` the fresh corpus found refused (issue 14).

``__rmul__ = __mul__`` aliases, ``__init_subclass__`` registries, a ``__getattr__``
fallback, ``Cls.__mro__``, ``print(..., file=buf)`` into an ``io.StringIO`` and the
``cmath`` stand-in, each compared with plain Python in both modes; next to each, the
attack on its door and the refusals, whose messages say what to write instead.
"""

from __future__ import annotations

import pytest
from sandbox_support import corpus_runs_as_written, refused, same_as_python

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import RunEnded
from scriptgate.sandbox.guards.script_classes import prepare_namespace
from scriptgate.sandbox.sandbox import Sandbox

FEATURES = {
    "alias-dunders": (
        "class V:\n    def __init__(self, x):\n        self.x = x\n"
        "    def __mul__(self, k):\n        return V(self.x * k)\n    __rmul__ = __mul__\n"
        "    def __add__(self, o):\n        return V(self.x + o.x)\n    __radd__ = __add__\n"
        "    def __str__(self):\n        return f'V({self.x})'\n    __repr__ = __str__\n"
        "[repr(3 * V(2)), str(V(1) + V(2)), repr(V(5))]"
    ),
    "init-subclass-registry": (
        "class Base:\n    kinds = {}\n"
        "    def __init_subclass__(cls, **kwargs):\n"
        "        super().__init_subclass__(**kwargs)\n        Base.kinds[cls.__name__] = cls\n"
        "class A(Base):\n    pass\nclass B(A):\n    pass\n"
        "[sorted(Base.kinds), Base.kinds['B'].__mro__[1].__name__, issubclass(B, Base)]"
    ),
    "init-subclass-chain": (
        "class Tagged:\n    def __init_subclass__(cls, **kwargs):\n"
        "        super().__init_subclass__(**kwargs)\n        cls.tag = cls.__name__.lower()\n"
        "class Counted(Tagged):\n    n = 0\n    def __init_subclass__(cls, **kwargs):\n"
        "        super().__init_subclass__(**kwargs)\n        Counted.n += 1\n"
        "class X(Counted):\n    pass\nclass Y(Counted):\n    pass\n"
        "[X.tag, Y.tag, Counted.tag, Counted.n]"
    ),
    "getattr-fallback": (
        "class Proxy:\n    def __init__(self, inner):\n        self._inner = inner\n"
        "    def __getattr__(self, name):\n        return getattr(self._inner, name)\n"
        "class Rec:\n    def __init__(self):\n        self.a = 1\n"
        "p = Proxy(Rec())\n"
        "[p.a, getattr(p, 'b', 'none'), hasattr(p, 'c'), p._inner.a]"
    ),
    "getattr-private-name": (
        "class L:\n    def __getattr__(self, name):\n        return 'lazy ' + name\n"
        "l = L()\n[l.x, l._y]"
    ),
    "mro-names": (
        "class A:\n    pass\nclass B(A):\n    pass\nclass C(A):\n    pass\n"
        "class D(B, C):\n    pass\nclass E(ValueError):\n    pass\n"
        "[[c.__name__ for c in D.__mro__], [c.__name__ for c in E.__mro__], "
        "D.__mro__[0] is D, type(D.__mro__).__name__, object in D.__mro__]"
    ),
    "mro-of-builtin-stand-ins": (
        "class S(str):\n    pass\nclass L(list):\n    pass\n"
        "[[c.__name__ for c in S.__mro__], [c.__name__ for c in L.__mro__], "
        "str in S.__mro__, [c.__name__ for c in int.__mro__]]"
    ),
    "print-file-stringio": (
        "import io\nbuf = io.StringIO()\nprint('a', 1, sep='-', file=buf)\n"
        "print('b', end='', file=buf)\nprint(file=buf)\nprint('c', file=None)\nbuf.getvalue()"
    ),
    "cmath-functions": (
        "import cmath\nz = complex(1, 1)\n"
        "[str(cmath.sqrt(-4)), round(cmath.phase(z), 6), [round(v, 6) for v in cmath.polar(z)], "
        "str(cmath.rect(2, 0)), round(cmath.pi, 6), cmath.isclose(cmath.exp(0), 1), "
        "cmath.isinf(cmath.inf), cmath.isnan(cmath.nan), str(cmath.log(-1).imag)[:6]]"
    ),
    # findings18 M22: the numeric protocol a vector or money class defines
    "numeric-dunders": (
        "class Vec:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
        "    def __truediv__(self, k):\n        return Vec(self.x / k, self.y / k)\n"
        "    def __rsub__(self, o):\n        return Vec(o - self.x, o - self.y)\n"
        "    def __iadd__(self, o):\n        self.x += o.x\n        self.y += o.y\n        return self\n"
        "    def __float__(self):\n        return float(self.x)\n"
        "    def __int__(self):\n        return int(self.x)\n"
        "    def __round__(self, n=0):\n        return Vec(round(self.x, n), round(self.y, n))\n"
        "    def __reversed__(self):\n        return iter([self.y, self.x])\n"
        "    def __invert__(self):\n        return Vec(self.y, self.x)\n"
        "    def __or__(self, o):\n        return 'or'\n    __ror__ = __or__\n"
        "    def __pow__(self, k, m=None):\n        return Vec(self.x ** k, self.y ** k)\n"
        "    def __floordiv__(self, k):\n        return Vec(self.x // k, self.y // k)\n"
        "    def __mod__(self, k):\n        return Vec(self.x % k, self.y % k)\n"
        "    def __divmod__(self, k):\n        return (self // k, self % k)\n"
        "    def __bytes__(self):\n        return b'vec'\n"
        "    def __repr__(self):\n        return f'Vec({self.x}, {self.y})'\n"
        "import math\nv = Vec(3, 4)\nw = v / 2\nu = 10 - v\nv += Vec(1, 1)\n"
        "[repr(w), repr(u), repr(v), float(v), int(v), repr(round(Vec(1.26, 2.5), 1)), "
        "list(reversed(v)), repr(~v), v | 1, 1 | v, repr(v ** 2), repr(divmod(v, 3)), "
        "bytes(v).decode(), math.sqrt(Vec(16, 0)), '%d|%.1f' % (v, v)]"
    ),
    # findings19 N08: `*=` repeats lists in place; script __imul__/__imod__/__ipow__/__ilshift__ run
    "in-place-operators": (
        "x = [1, 2]\ny = x\nx *= 2\nb = bytearray(b'ab')\nc = b\nb *= 2\n"
        "class V:\n    def __init__(self):\n        self.log = []\n"
        "    def __imul__(self, o):\n        self.log.append('imul')\n        return self\n"
        "    def __imod__(self, o):\n        self.log.append('imod')\n        return self\n"
        "    def __ipow__(self, o):\n        self.log.append('ipow')\n        return self\n"
        "    def __ilshift__(self, o):\n        self.log.append('ilshift')\n        return self\n"
        "v = V()\nw = v\nv *= 2\nv %= 2\nv **= 2\nv <<= 1\n"
        "class N:\n    def __imul__(self, o):\n        return NotImplemented\n"
        "    def __mul__(self, o):\n        return 'mul'\nn = N()\nn *= 3\ns = 'a%sb'\ns %= 5\n"
        "k = 3\nk **= 2\nk <<= 2\nd = [[0]]\nd[0] *= 3\n"
        "[y, c.decode(), w.log, v is w, n, s, k, d]"
    ),
    # findings19b S03/S04: SystemExit's code; issubclass with the stand-in functions
    "system-exit-code-and-issubclass": (
        "import sys\ntry:\n    sys.exit(5)\nexcept BaseException as e:\n"
        "    r = [e.code, str(type(e)), type(e).__name__]\n"
        "r + [issubclass(range, range), issubclass(slice, (slice, int)), issubclass(bool, int)]"
    ),
    # findings19 N03: format_map looks each field up in the mapping itself, as C does
    "format-map-mappings": (
        "class D(dict):\n    def __missing__(self, k):\n        return 'M' + k\n"
        "class D2(dict):\n    def __getitem__(self, k):\n        return 'G' + k\n"
        "class M:\n    def __getitem__(self, k):\n        return k.upper()\n"
        "try:\n    '{0}'.format_map({'a': 1})\nexcept ValueError as e:\n    err = str(e)\n"
        "['{a}{zz}'.format_map(D(a='1')), '{a}'.format_map(D2(a='1')), '{a}-{b}'.format_map(M()), "
        "'{x:>5}'.format_map({'x': 3}), err]"
    ),
    "missing-dunder": (
        "class D(dict):\n    def __missing__(self, k):\n        return k * 2\n"
        "d = D(a=1)\n[d['a'], d['bc'], d.get('x'), 'x' in d]"
    ),
    # findings18 M01/M23: super().__dunder__() of a script base, object, an exception, a dict
    "super-dunders": (
        "from dataclasses import dataclass, field\n@dataclass\nclass Base:\n    id: int\n"
        "    def __post_init__(self):\n        self.tag = f'#{self.id}'\n"
        "@dataclass\nclass Child(Base):\n    extra: list = field(default_factory=list)\n"
        "    def __post_init__(self):\n        super().__post_init__()\n        self.extra.append(self.tag)\n"
        "class A(dict):\n    def __getitem__(self, k):\n        return super().__getitem__(k.lower())\n"
        "    def __setitem__(self, k, v):\n        super().__setitem__(k.lower(), v)\n"
        "class E(Exception):\n    def __str__(self):\n        return 'E: ' + super().__str__()\n"
        "class P:\n    def __repr__(self):\n        return 'P'\n"
        "    def __eq__(self, o):\n        return super().__eq__(o)\n"
        "    def __hash__(self):\n        return super().__hash__()\n"
        "class Q(P):\n    def __repr__(self):\n        return 'Q:' + super().__repr__()\n"
        "a = A()\na['X'] = 1\np = P()\n[repr(Child(5)), a['x'], a['X'], str(E('boom')), repr(Q()), "
        "p == p, p == P(), hash(p) == hash(p)]"
    ),
    # findings18 M24: `slice` and `range` are functions in the sandbox; isinstance means the types
    "isinstance-slice-and-range": (
        "class Ring:\n    def __init__(self, xs):\n        self.xs = xs\n"
        "    def __getitem__(self, i):\n        if isinstance(i, slice):\n"
        "            return [self.xs[j % len(self.xs)] for j in range(*i.indices(len(self.xs)))]\n"
        "        return self.xs[i % len(self.xs)]\nr = Ring('abc')\n"
        "[r[4], r[0:2], isinstance(range(3), range), isinstance(3, (int, slice)), "
        "isinstance(range(2), (slice, range)), issubclass(bool, (int, range))]"
    ),
    # findings18 M29: `self.__balance` is mangled as CPython's compiler does
    "name-mangled-private": (
        "class Account:\n    def __init__(self, bal):\n        self.__bal = bal\n"
        "    def deposit(self, x):\n        self.__bal += x\n        return self.__check()\n"
        "    def __check(self):\n        return self.__bal\n"
        "    class __Inner:\n        def __init__(self):\n            self.__y = 2\n"
        "    def inner(self):\n        return sorted(vars(self.__Inner()))\n"
        "class Sub(Account):\n    def peek(self):\n        return self._Account__bal\n"
        "a = Sub(5)\n[a.deposit(3), a.peek(), sorted(vars(a)), a.inner(), hasattr(a, '_Account__check')]"
    ),
    # findings18 M31: duck-typing tests answer truthfully; nothing is read
    "hasattr-dunders": (
        "from dataclasses import dataclass\n@dataclass\nclass Ev:\n    name: str\n"
        "class Bag:\n    def __iter__(self):\n        return iter([1, 2])\n"
        "e = Ev('x')\n[hasattr(e, '__dataclass_fields__'), hasattr([], '__iter__'), "
        "hasattr('s', '__iter__'), hasattr(e, '__len__'), hasattr(3, '__add__'), "
        "hasattr(Bag(), '__iter__'), hasattr(Bag, '__iter__'), hasattr(int, '__abstractmethods__'), "
        "hasattr(e, '__nope__'), [list(x) if hasattr(x, '__iter__') else [x] for x in ('ab', Bag(), 5)]]"
    ),
    "cmath-from-import": (
        "from cmath import sqrt, e\n[str(sqrt(-1)), round(e, 4), str(complex('1+2j') * 2)]"
    ),
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_class_idioms_match_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


CORPUS_NAMES = (
    "fr-cls-class-attr-registry",
    "fr-cls-slots-and-vars",
    "fr-cls-getattr-fallback",
    "fr-cls-mixin",
    "fr-math-complex-numbers",
    "fr-io-stringio-lines",
)
"""The fresh corpus's findings these doors were opened for."""


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_class_idioms_corpus_scripts_run_as_written(sandbox: Sandbox, name: str) -> None:
    corpus_runs_as_written(sandbox, name)


REFUSALS = {
    "alias-before-def": (
        "class C:\n    __rmul__ = __mul__\n    def __mul__(self, o):\n        return 1",
        "rejected",
        "write def __rmul__(self, ...) instead",
    ),
    "alias-of-a-builtin": (
        "class C:\n    __repr__ = print",
        "rejected",
        "alias of a method defined above it with def",
    ),
    "alias-to-getattribute": (
        "class C:\n    def __getattr__(self, n):\n        return 1\n"
        "    __getattribute__ = __getattr__",
        "rejected",
        "write explicit methods instead",
    ),
    "alias-to-setattr": (
        "class C:\n    def __eq__(self, o):\n        return True\n    __setattr__ = __eq__",
        "rejected",
        "getattr(obj, name, default)",
    ),
    "getattr-dunder-never-consulted": (
        "class C:\n    def __getattr__(self, name):\n        return 1\nc = C()\nc.__len__",
        "rejected",
        "__len__",
    ),
    "init-subclass-of-a-host-class": ("int.__init_subclass__", "runtime", "not available"),
    "init-subclass-read-on-class": (
        "class A:\n    pass\nA.__init_subclass__",
        "runtime",
        "not available",
    ),
    "mro-of-an-instance": ("class A:\n    pass\nA().__mro__", "runtime", "not available"),
    "print-file-bytesio": (
        "import io\nprint('x', file=io.BytesIO())",
        "runtime",
        "write to an io.StringIO with buf.write(...) or print without file=",
    ),
    "print-file-own-object": (
        "class W:\n    def write(self, s):\n        pass\nprint('x', file=W())",
        "runtime",
        "print without file=",
    ),
    "print-file-list": ("print('x', file=[])", "runtime", "writes only to an io.StringIO"),
    "cmath-unlisted-member": ("import cmath\ncmath.sys", "runtime", "sys"),
    "index-dunder": (
        "class A:\n    def __index__(self):\n        return 3",
        "rejected",
        "convert explicitly with int(x)",
    ),
    "new-dunder": (
        "class A:\n    def __new__(cls):\n        return 1",
        "rejected",
        "classmethod factory",
    ),
    "unlisted-dunder-lists-the-allowed": (
        "class A:\n    def __getstate__(self):\n        return 1",
        "rejected",
        "__truediv__",
    ),
    "super-dunder-of-a-list": (
        "class L(list):\n    def __getitem__(self, i):\n        return super().__getitem__(i)\nL([1])[0]",
        "runtime",
        "through the base's public methods",
    ),
    # findings19b S01/S02: in a classmethod super() reaches a host base's unbound methods
    "super-dunder-in-a-classmethod": (
        "x = [1]\ny = [1]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\n"
        "class D(dict):\n    @classmethod\n    def f(cls, a, b):\n        return super().__eq__(a, b)\n"
        "D.f(x, y)",
        "runtime",
        "not available in the sandbox",
    ),
    "super-dunder-exception-in-a-classmethod": (
        "class E(Exception):\n    @classmethod\n    def f(cls, e):\n        return super().__repr__(e)\n"
        "E.f(E(1))",
        "runtime",
        "not available in the sandbox",
    ),
    "super-dunder-dict-key-is-bounded": (
        "t = 0\nfor i in range(50):\n    t = (t, t)\n"
        "class A(dict):\n    def put(self, k):\n        super().__setitem__(k, 1)\nA().put(t)",
        "limit",
        "shared references",
    ),
    "super-dunder-exception-text-is-bounded": (
        "class E(Exception):\n    def __str__(self):\n        return super().__str__()\n"
        "x = [1] * 10**6\nlen(str(E([x] * 100)))",
        "limit",
        "too large",
    ),
    "getattr-dunder-with-default": ("getattr([], '__len__', None)", "runtime", "len(x)"),
    # a script __int__/__bytes__ is rendered by `%d`/`%s`: its results are measured
    "int-dunder-rendered-per-conversion": (
        "class A:\n    def __int__(self):\n        return 10**4000\nn = 100000\n"
        "len(('%d' * n) % ((A(),) * n))",
        "limit",
        "too large",
    ),
    "bytes-dunder-rendered-per-conversion": (
        "class B:\n    def __bytes__(self):\n        return b'x' * 1000\nn = 100000\n"
        "len((b'%s' * n) % ((B(),) * n))",
        "limit",
        "too large",
    ),
    "fixed-float-conversions-are-counted": (
        "n = 100000\nlen(('%f' * n) % ((1e308,) * n))",
        "limit",
        "too large",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_class_idioms_refusals_say_what_to_write(sandbox: Sandbox, name: str) -> None:
    source, kind, words = REFUSALS[name]
    refused(sandbox, source, kind, words)


# ----------------------------------------------------------------------------- attacks


def _script_method(source: str) -> object:
    scope: dict[str, object] = {"RunEnded": RunEnded}
    exec(compile(source, FILENAME, "exec"), scope)
    return scope["method"]


def test_class_idioms_getattr_shield_refuses_dunders_without_running_the_method() -> None:
    calls: list[str] = []
    method = _script_method("def method(self, name):\n    calls.append(name)\n    return 1\n")
    method.__globals__["calls"] = calls  # type: ignore[attr-defined]
    namespace: dict[str, object] = {"__getattr__": method}
    prepare_namespace(namespace)
    cls = type("C", (), namespace)
    obj = cls()
    # host code (copy.deepcopy, pickle, the renderer) asks for dunders: missing, unrun
    for name in ("__deepcopy__", "__reduce_ex__x", "__html__", "gi_frame", "__class_getitem__"):
        assert getattr(obj, name, "missing") == "missing"
    assert calls == []
    assert obj.anything == 1
    assert obj._private == 1
    assert calls == ["anything", "_private"]


def test_class_idioms_getattr_after_the_run_is_missing_for_host_code() -> None:
    # after the run the script's first tick raises RunEnded: host code's lookup gets its
    # default (an AttributeError), never the stop nor a value
    method = _script_method("def method(self, name):\n    raise RunEnded()\n")
    namespace: dict[str, object] = {"__getattr__": method}
    prepare_namespace(namespace)
    obj = type("C", (), namespace)()
    assert getattr(obj, "value", "default") == "default"
    with pytest.raises(AttributeError):
        obj.value  # noqa: B018


def test_class_idioms_getattr_must_be_a_script_function() -> None:
    with pytest.raises(TypeError, match="written with def"):
        prepare_namespace({"__getattr__": getattr})


def test_class_idioms_getattr_after_a_session_run_runs_no_script_code(sandbox: Sandbox) -> None:
    # the value rendered after the run looks attributes up on the instance: nothing of the
    # script's __getattr__ runs there (a loop in it would pass the deadline)
    source = (
        "class Lazy:\n    def __getattr__(self, name):\n        while True:\n            pass\n"
        "Lazy()"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == "<Lazy object>"


def test_class_idioms_init_subclass_gets_only_script_classes(sandbox: Sandbox) -> None:
    source = (
        "seen = []\nclass Base:\n    def __init_subclass__(cls, **kwargs):\n"
        "        super().__init_subclass__(**kwargs)\n"
        "        seen.append([cls.__name__, kwargs, [c.__name__ for c in cls.__mro__]])\n"
        "class A(Base, Exception):\n    pass\n"
        "try:\n    class Bad(Base, metaclass=type):\n        pass\nexcept Exception:\n    pass\n"
        "seen"
    )
    refused(sandbox, source, "rejected", "metaclass=")
    ok = sandbox.run_sync(source.replace(", metaclass=type", ""))
    assert ok.ok, ok.error
    assert ok.value == [
        ["A", {}, ["A", "Base", "Exception", "BaseException", "object"]],
        ["Bad", {}, ["Bad", "Base", "object"]],
    ]


def test_class_idioms_mro_never_hands_out_a_host_class(sandbox: Sandbox) -> None:
    # io.StringIO's real MRO holds _io._TextIOBase and _io._IOBase (host classes)
    source = (
        "import io\nclass Store(dict):\n    pass\n"
        "names = [c.__name__ for c in io.StringIO.__mro__]\n"
        "[names, [c.__name__ for c in Store.__mro__], len(Store.__mro__)]"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == [["StringIO", "object"], ["Store", "dict", "object"], 3]


def test_class_idioms_print_file_is_bounded_like_write(sandbox: Sandbox) -> None:
    source = (
        "import io\nbuf = io.StringIO()\nline = 'x' * 1_000_000\n"
        "for i in range(60):\n    print(line, file=buf)\nbuf.tell()"
    )
    result = sandbox.run_sync(source)
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "in-memory file" in result.error.message
    assert result.output == ""  # nothing of it went to the run's output


def test_class_idioms_print_file_counts_nothing_against_the_output(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        "import io\nbuf = io.StringIO()\nprint('hidden', file=buf)\nprint('shown')\nbuf.getvalue()"
    )
    assert result.ok, result.error
    assert result.value == "hidden\n"
    assert result.output == "shown\n"


def test_class_idioms_number_dunders_returning_subclasses_warn_nothing_in_the_host() -> None:
    # findings19 N06: C warned (DeprecationWarning into the host's warnings) at every call
    # of a script __float__/__int__ returning a strict subclass; the values are the same
    import warnings

    source = (
        "class F(float):\n    pass\nclass I(int):\n    pass\nclass A:\n"
        "    def __float__(self):\n        return F(2.5)\n    def __int__(self):\n        return I(3)\n"
        "import math\n[math.sqrt(A()) > 1.5, float(A()), int(A()), type(float(A())).__name__, '%d' % A()]"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = Sandbox().run_sync(source)
    assert result.value == [True, 2.5, 3, "float", "3"], result.error
    assert [str(w.message) for w in caught] == []
