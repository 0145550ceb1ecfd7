"""Class idioms models write with dunders (issue 14), in both modes.

``__slots__``, ``__match_args__``, ``__format__``, ``__matmul__``/``__rmatmul__``/
``__imatmul__`` in a script class; ``exc.__cause__``/``__context__``/
``__suppress_context__``; ``self.__dict__`` and ``vars(obj)`` of the script's own objects;
attributes on the script's own functions. Each runs as plain Python does (the value is
compared with plain Python's); the refusals say what to write instead. The attacks on these
doors are in ``tests/sandbox/attacks_boundary.py`` (``b-dunder-*``).
"""

from __future__ import annotations

import pytest
from sandbox_support import corpus_runs_as_written, refused, same_as_python

from scriptgate.sandbox.guards.script_classes import InstanceDict, read_dunder
from scriptgate.sandbox.sandbox import Sandbox

SANDBOX_TIMEOUT = 20


FEATURES = {
    "slots": (
        "class P:\n    __slots__ = ('x', '_y')\n"
        "    def __init__(self, x, y):\n        self.x = x\n        self._y = y\n"
        "    def total(self):\n        return self.x + self._y\n"
        "p = P(1, 2)\np.x = 5\n"
        "try:\n    p.z = 1\n    r = 'set'\nexcept AttributeError:\n    r = 'refused'\n"
        "[p.x, p.total(), r, hasattr(p, '__dict__')]"
    ),
    "slots-str-and-subclass": (
        "class A:\n    __slots__ = 'a'\nclass B(A):\n    __slots__ = ['b']\n"
        "b = B()\nb.a, b.b = 1, 2\n[b.a, b.b, isinstance(b, A)]"
    ),
    "matmul": (
        "class V:\n    def __init__(self, xs):\n        self.xs = xs\n"
        "    def __matmul__(self, o):\n        return sum(a * b for a, b in zip(self.xs, o.xs))\n"
        "    def __rmatmul__(self, o):\n        return [o * x for x in self.xs]\n"
        "    def __imatmul__(self, o):\n        self.xs = [a * b for a, b in zip(self.xs, o.xs)]\n"
        "        return self\n"
        "v = V([1, 2, 3])\nw = V([4, 5, 6])\ndot = v @ w\nscaled = 2 @ v\nv @= w\n"
        "[dot, scaled, v.xs]"
    ),
    "format": (
        "class Money:\n    def __init__(self, cents):\n        self.cents = cents\n"
        "    def __format__(self, spec):\n"
        "        text = f'{self.cents / 100:.2f}'\n"
        "        return format(text, spec) if spec else text\n"
        "m = Money(1234)\n"
        "[f'{m}', f'{m:>8}', '{:<7}|'.format(m), format(m, '^9'), type(format(m, '')).__name__]"
    ),
    "format-str-subclass-result": (
        "class Loud(str):\n    pass\n"
        "class P:\n    def __format__(self, spec):\n        return Loud('hi')\n"
        "[f'{P()}!', f'{P()}' == 'hi', len(format(P(), ''))]"
    ),
    "match-args": (
        "class Point:\n    __match_args__ = ('x', 'y')\n"
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
        "def where(p):\n    match p:\n        case Point(0, y):\n            return f'y={y}'\n"
        "        case Point(x, y=0):\n            return f'x={x}'\n"
        "        case _:\n            return 'else'\n"
        "[where(Point(0, 3)), where(Point(4, 0)), where(Point(1, 1))]"
    ),
    "exception-chain": (
        "def parse(s):\n    try:\n        return int(s)\n    except ValueError as e:\n"
        "        raise RuntimeError('bad config') from e\n"
        "try:\n    parse('x')\nexcept RuntimeError as err:\n"
        "    r = [str(err), type(err.__cause__).__name__, err.__cause__ is err.__context__,"
        " err.__suppress_context__]\n"
        "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        raise KeyError('k')\n"
        "except KeyError as err:\n"
        "    r += [type(err.__context__).__name__, err.__cause__, err.__suppress_context__]\n"
        "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n"
        "        raise KeyError('k') from None\n"
        "except KeyError as err:\n    r += [err.__suppress_context__, err.__cause__]\n"
        "r"
    ),
    "instance-dict": (
        "class Rec:\n    def __init__(self, **kw):\n        self.__dict__.update(kw)\n"
        "    def as_dict(self):\n        return dict(self.__dict__)\n"
        "r = Rec(a=1, b='x')\nr.__dict__['c'] = [1]\nd = vars(r)\nd['_p'] = 2\n"
        "d.setdefault('e', 5)\ngone = d.pop('b')\n"
        "[r.as_dict(), r.a, r.c, r._p, r.e, gone, hasattr(r, 'b'), type(d) is dict,"
        " 'a' in d, sorted(vars(r))]"
    ),
    "instance-dict-copies": (
        "import copy, json\nclass P:\n    def __init__(self):\n        self.x = 1\n"
        "        self.l = [1]\nd = vars(P())\n"
        "[copy.copy(d), copy.deepcopy(d), json.dumps(d), {**d}, d | {'z': 1},"
        " sorted(d.items()), d == {'x': 1, 'l': [1]}, d.copy(), type(copy.copy(d)).__name__]"
    ),
    "vars-of-exception-and-subclass": (
        "class E(Exception):\n    def __init__(self, msg, code):\n"
        "        super().__init__(msg)\n        self.code = code\n"
        "class Base:\n    def __init__(self):\n        self.k = 1\n"
        "class Sub(Base):\n    pass\n"
        "[vars(E('m', 3)), vars(Sub())]"
    ),
    "function-attributes": (
        "def counted(fn):\n    def wrapper(*args):\n        wrapper.calls += 1\n"
        "        wrapper._seen.append(args)\n        return fn(*args)\n"
        "    wrapper.calls = 0\n    wrapper._seen = []\n    return wrapper\n"
        "@counted\ndef sq(x):\n    return x * x\n"
        "f = lambda: 1\nf.tag = 'lam'\nsetattr(sq, 'note', 'n')\n"
        "[sq(2), sq(3), sq.calls, sq._seen, f.tag, sq.note, getattr(sq, 'calls')]"
    ),
}


@pytest.mark.parametrize("name", sorted(FEATURES))
def test_classes_dunders_match_plain_python(sandbox: Sandbox, name: str) -> None:
    same_as_python(sandbox, FEATURES[name])


CORPUS_NAMES = (
    "cl-slots-class",
    "cl-matrix-class",
    "cl-str-format-with-class",
    "ct-match-class-pattern",
    "ct-raise-from-cause",
    "cl-mixin",
    "cl-vars-dict",
    "ct-decorator-counting-calls",
)
"""The corpus scripts these doors were opened for (FINDINGS of test_corpus_files before)."""


@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_classes_dunders_corpus_scripts_run_as_written(sandbox: Sandbox, name: str) -> None:
    corpus_runs_as_written(sandbox, name)


REFUSALS = {
    "slots-dunder": ("class P:\n    __slots__ = ('__class__',)", "runtime", "may not name"),
    "slots-weakref": ("class P:\n    __slots__ = ('__weakref__',)", "runtime", "may not name"),
    "slots-inspect-name": ("class P:\n    __slots__ = ('gi_frame',)", "runtime", "may not name"),
    "slots-not-str": ("class P:\n    __slots__ = (1,)", "runtime", "must hold str names"),
    "slots-too-many": (
        "class P:\n    __slots__ = tuple('a' + str(i) for i in range(1001))",
        "runtime",
        "at most 1000",
    ),
    "slots-outside-class-body": ("__slots__ = ('x',)", "rejected", "__slots__"),
    "match-args-private": ("class P:\n    __match_args__ = ('_x',)", "runtime", "may not name"),
    "match-args-list": ("class P:\n    __match_args__ = ['x']", "runtime", "a tuple of str"),
    "format-not-str": (
        "class P:\n    def __format__(self, spec):\n        return 5\nf'{P()}'",
        "runtime",
        "__format__ must return a str, not int",
    ),
    "traceback": (
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__",
        "rejected",
        "use str(exc)",
    ),
    "cause-write": (
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__cause__ = None",
        "rejected",
        "__cause__",
    ),
    "cause-of-non-exception": ("class C:\n    pass\nC().__cause__", "runtime", "on exceptions"),
    "vars-no-argument": ("vars()", "runtime", "write vars(obj)"),
    "vars-of-class": ("class C:\n    pass\nvars(C)", "runtime", "getattr(cls, name)"),
    "class-dict": ("class C:\n    pass\nC.__dict__", "runtime", "getattr(cls, name)"),
    "vars-of-function": ("def f():\n    pass\nvars(f)", "runtime", "your own classes"),
    "function-dict": ("def f():\n    pass\nf.__dict__", "runtime", "your own classes"),
    "vars-of-module": ("import json\nvars(json)", "runtime", "your own classes"),
    "vars-of-builtin": ("vars(print)", "runtime", "your own classes"),
    "vars-of-slots-instance": (
        "class P:\n    __slots__ = ('x',)\nvars(P())",
        "runtime",
        "must have __dict__",
    ),
    "dict-dunder-key": (
        "class C:\n    pass\nc = C()\nc.__dict__['__init__'] = 1",
        "runtime",
        "cannot be set through __dict__",
    ),
    "dict-int-key": (
        "class C:\n    pass\nvars(C())[1] = 2",
        "runtime",
        "attribute names must be str",
    ),
    "attribute-on-print": ("print.calls = 0", "runtime", "cannot be modified"),
    "attribute-on-stand-in-function": (
        "import json\njson.dumps.calls = 0",
        "runtime",
        "cannot be modified",
    ),
    "private-attribute-on-stand-in-function": (
        "import json\njson.dumps._calls = 0",
        "runtime",
        "cannot be written",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_classes_dunders_refusals_say_what_to_write(sandbox: Sandbox, name: str) -> None:
    source, kind, words = REFUSALS[name]
    refused(sandbox, source, kind, words)


def test_classes_dunders_format_result_is_a_real_str(sandbox: Sandbox) -> None:
    # a str subclass of the script's (its __len__ may lie to the f-string size check)
    # comes back as the plain str of its characters
    source = (
        "class Liar(str):\n    def __len__(self):\n        return 0\n"
        "class P:\n    def __format__(self, spec):\n        return Liar('abc')\n"
        "[type(format(P(), '')).__name__, type(f'{P()}').__name__, len(f'{P()}')]"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == ["str", "str", 3]


def test_classes_dunders_instance_dict_class_is_plain_dict(sandbox: Sandbox) -> None:
    # the snapshot's own class is never handed out: its __class__ is the script's `dict`,
    # so calling or subclassing it makes plain dicts, which write through to nothing
    src = (
        "class C:\n    pass\nc = C()\nd = vars(c).__class__({'x': 1})\n"
        "class D(vars(c).__class__):\n    pass\ne = D(y=2)\ne['z'] = 3\n"
        "[d, type(d) is dict, e, isinstance(e, dict), vars(c)]"
    )
    result = sandbox.run_sync(src)
    assert result.ok, result.error
    assert result.value == [{"x": 1}, True, {"y": 2, "z": 3}, True, {}]


def test_classes_dunders_host_exception_chain_holds_no_host_object() -> None:
    from scriptgate.sandbox.guards.attributes import _guarded_getattr

    class HostThing:
        pass

    outer = RuntimeError("outer")
    outer.__cause__ = KeyError(HostThing())
    cause = read_dunder(outer, "__cause__")
    assert type(cause) is KeyError  # the chain is readable; what it holds is checked per read
    assert _guarded_getattr(cause, "args") == ("<HostThing object>",)
    outer.__context__ = _HostError("x")
    context = read_dunder(outer, "__context__")  # held as an Exception (findings17 H01)
    assert _guarded_getattr(context, "args") == ("x",)
    with pytest.raises(AttributeError, match="not available"):
        _guarded_getattr(context, "detail")  # the host class's own names stay unreadable


class _HostError(Exception):
    """An exception class no script may hold (not listed, not the script's)."""

    detail = "the host's"


def test_classes_dunders_instance_dict_lookups_never_hash_a_foreign_key() -> None:
    class Key:
        def __hash__(self) -> int:
            raise AssertionError("hashed")

    made = InstanceDict.__new__
    with pytest.raises(TypeError, match="cannot be created"):
        made(InstanceDict)
    snapshot = InstanceDict(_token(), object(), {"a": 1, "__module__": "x"})
    assert dict(snapshot) == {"a": 1}
    assert snapshot.get(Key(), "d") == "d"
    assert Key() not in snapshot
    with pytest.raises(KeyError):
        snapshot[Key()]


def _token() -> object:
    from scriptgate.sandbox.guards import script_classes

    return script_classes._TOKEN
