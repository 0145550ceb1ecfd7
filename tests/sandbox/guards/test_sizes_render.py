"""The render-size guard and its companions (``scriptgate/sandbox/sizeguard.py``).

Attack scripts live in ``attacks_render.py`` (run in both isolation modes by
``test_attack_suite.py``); these tests pin the walk's estimates, its early exit,
the ``str`` stand-in's semantics and the script-visible behaviour of every hook.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.guards.sizes import (
    MAX_RENDER,
    SafeStr,
    check_json,
    check_render,
    checked_elements,
    checked_method,
    exception_text,
    render_size,
    result_too_large,
    safe_ascii,
    safe_repr,
    sequence_sum,
)
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

_SHARED = [[1] * 1000] * 1000
"""A million items of text through one shared thousand-item list."""


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox([], limits=Limits(timeout=10, max_output_chars=100_000))
    yield box
    box.close()


def _run(sandbox: Sandbox, source: str) -> ScriptResult:
    return sandbox.run_sync(source)


# ----------------------------------------------------------------------------- the walk


_VALUES: list[Any] = [
    0,
    -12345678901234567890,
    2.5,
    "text",
    None,
    True,
    [],
    [1, 2, 3],
    list(range(1000)),
    [0.1 * i for i in range(100)],
    ["abc"] * 50,
    (1, "a", None, 2.5),
    {"a": [1, 2], "b": {"c": (3, 4)}},
    {i: str(i) for i in range(200)},
    {1, 2, 3},
    frozenset({"x"}),
    [[1, 2], [3, [4, [5]]]] * 10,
    [True, False] * 40,
    [None] * 100,
    ValueError("boom", [1, 2]),
    [{"id": i, "name": f"n{i}", "ok": i % 2 == 0} for i in range(300)],
    [(i, "a", 2.5, None) for i in range(300)],
    [[i, str(i)] for i in range(300)],
    [1, "two", 3.0, None, True] * 40,
    [{"nested": [i]} for i in range(100)],
]


@pytest.mark.parametrize("value", _VALUES, ids=lambda v: type(v).__name__)
def test_render_guard_estimate_tracks_the_real_length(value: Any) -> None:
    real = len(repr(value))
    estimate = render_size(value, MAX_RENDER)
    assert real / 2 - 8 <= estimate <= 2 * real + 16


def test_render_guard_shared_references_count_per_occurrence() -> None:
    inner = [7] * 1000
    once = render_size(inner, MAX_RENDER)
    assert render_size([inner] * 50, MAX_RENDER) >= 50 * once


def test_render_guard_stops_past_the_bound() -> None:
    # a billion items of text: the walk stops as soon as the estimate passes the bound
    huge = [_SHARED] * 1000
    size = render_size(huge, 10_000)
    assert 10_000 < size < 10_000_000


def test_render_guard_big_rows_are_walked_not_gathered() -> None:
    # a list of big lists must not be flattened into one list of every cell first
    shared = [1] * 1_000_000
    size = render_size([shared] * 100, 10_000)
    assert 10_000 < size < 10_000_000


def test_render_guard_huge_flat_list_stops_in_pieces() -> None:
    # the separators are counted up front (4,000,002), the items piece by piece:
    # the walk stops after the first piece instead of reading all 2,000,000
    full = render_size([1] * 2_000_000, 100_000_000)
    early = render_size([1] * 2_000_000, 1_000)
    assert full >= 6_000_000
    assert 1_000 < early < 4_500_000


def test_render_guard_self_reference_renders_small() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert render_size(loop) <= len(repr(loop)) + 8
    nested: dict[str, Any] = {}
    nested["me"] = [nested, nested]
    assert render_size(nested) < 100


def test_render_guard_deep_nesting_without_recursion() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert render_size(deep) >= 200_000


def test_render_guard_runs_no_script_code() -> None:
    class Loud:
        def __repr__(self) -> str:  # pragma: no cover - must not run
            raise AssertionError("repr called")

        def __eq__(self, other: object) -> bool:  # pragma: no cover - must not run
            raise AssertionError("eq called")

        __hash__ = object.__hash__

    assert render_size([Loud()] * 100) > 100


def test_render_guard_ascii_counts_escapes() -> None:
    text = "\U0001f600" * 1000
    assert render_size(text, ascii_only=True) >= len(ascii(text))
    assert render_size([text] * 30, ascii_only=True) >= len(ascii([text] * 30))


def test_render_guard_check_refuses_with_a_clear_message() -> None:
    with pytest.raises(ScriptStop, match="too large for the sandbox"):
        check_render([_SHARED] * 20, "str() of this value")
    check_render(_SHARED[:5])
    check_render("x" * 20_000_000)  # a str is already built: str() of it copies nothing


def test_render_guard_repr_and_ascii_wrappers() -> None:
    assert safe_repr([1, "a"]) == "[1, 'a']"
    assert safe_ascii(["é"]) == "['\\xe9']"
    with pytest.raises(ScriptStop):
        safe_repr([_SHARED] * 20)
    with pytest.raises(ScriptStop):
        safe_ascii("\U0001f600" * 2_000_000)


# ----------------------------------------------------------------------------- str stand-in


def test_render_guard_safe_str_behaves_like_str() -> None:
    assert SafeStr(5) == "5"
    assert type(SafeStr(5)) is str
    assert SafeStr() == ""
    assert SafeStr(b"ab", "ascii") == "ab"
    assert SafeStr(object="x") == "x"
    assert isinstance("a", SafeStr)
    assert not isinstance(1, SafeStr)
    assert issubclass(str, SafeStr)
    assert not issubclass(int, SafeStr)
    assert repr(SafeStr) == "<class 'str'>"

    class Sub(SafeStr):
        pass

    value = Sub("x")
    assert type(value) is Sub
    assert value == "x"
    assert isinstance(value, SafeStr)
    assert isinstance(value, str)
    assert not isinstance("x", Sub)
    with pytest.raises(ScriptStop):
        SafeStr([_SHARED] * 20)
    with pytest.raises(ScriptStop):
        Sub([_SHARED] * 20)


def test_render_guard_script_str_semantics(sandbox: Sandbox) -> None:
    result = _run(
        sandbox,
        "class S(str):\n"
        "    pass\n"
        "[isinstance('a', str), isinstance(1, str), isinstance(S('b'), str),\n"
        " issubclass(S, str), str(12), str([1, 'a']), S('q') + '!', repr(str)]",
    )
    assert result.ok, result.error
    assert result.value == [True, False, True, True, "12", "[1, 'a']", "q!", "<class 'str'>"]


# ----------------------------------------------------------------------------- sum / elements


def test_render_guard_sequence_sum_matches_builtin_sum() -> None:
    charged: list[int] = []

    def charge(obj: Any) -> Any:
        charged.append(len(obj))
        return obj

    lists = [[1], [2, 3], [], [4]]
    assert sequence_sum(lists, [0], charge, 100) == sum(lists, [0])
    tuples = [(1,), (2, 3)]
    assert sequence_sum(tuples, (), charge, 100) == sum(tuples, ())
    assert type(sequence_sum([], (), charge, 100)) is tuple
    assert sum(charged) >= 5
    with pytest.raises(TypeError) as ours:
        sequence_sum([[1], (2,)], [], charge, 100)
    with pytest.raises(TypeError) as theirs:
        sum([[1], (2,)], [])  # type: ignore[type-var]  # noqa: RUF017
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ScriptStop, match="too large"):
        sequence_sum([[1] * 60] * 2, [], charge, 100)


def test_render_guard_sum_in_script(sandbox: Sandbox) -> None:
    result = _run(sandbox, "[sum([[1], [2]], []), sum([(1,), (2,)], ()), sum([1, 2], 3)]")
    assert result.ok, result.error
    assert result.value == [[1, 2], [1, 2], 6]
    result = _run(sandbox, "sum(['a', 'b'], '')")
    assert result.error is not None
    assert "can't sum strings" in result.error.message


def test_render_guard_counter_elements() -> None:
    small = collections.Counter(a=2, b=1, c=0, d=-1)
    assert sorted(checked_elements(small, 10)()) == ["a", "a", "b"]
    with pytest.raises(ScriptStop, match="too large"):
        checked_elements(collections.Counter(a=10**18), 10)()
    unbound = checked_method(collections.Counter.elements, 10)
    assert sorted(unbound(small)) == ["a", "a", "b"]
    with pytest.raises(TypeError):
        unbound({"a": 1})
    bound = checked_method(collections.Counter(a=11).elements, 10)
    with pytest.raises(ScriptStop):
        bound()
    assert checked_method(len, 10) is len


# ----------------------------------------------------------------------------- json / host side


def test_render_guard_check_json_options() -> None:
    assert check_json([1], indent=None, separators=None, ensure_ascii=True, default=None) is None
    nested = [[[1] * 100] * 100] * 30
    with pytest.raises(ScriptStop):
        check_json(nested, indent=64, separators=None, ensure_ascii=True, default=None)
    with pytest.raises(ScriptStop):
        check_json(
            [[1] * 1000] * 100, indent=None, separators=(",", ":" * 200), ensure_ascii=True,
            default=None,
        )  # fmt: skip
    hook = check_json([object()], indent=None, separators=None, ensure_ascii=True, default=str)
    assert hook is not None
    assert json.dumps([1, object()], default=hook).startswith("[1, ")
    amplify = check_json(
        [object()] * 100, indent=None, separators=None, ensure_ascii=True,
        default=lambda o: _SHARED,
    )  # fmt: skip
    assert amplify is not None
    with pytest.raises(ScriptStop):
        json.dumps([object()] * 100, default=amplify)


def test_render_guard_exception_text_abbreviates_huge_messages() -> None:
    assert exception_text(ValueError("plain"), 100) == "plain"
    assert exception_text(KeyError("k"), 100) == "'k'"
    text = exception_text(ValueError([_SHARED] * 20), 10_000)
    assert len(text) < 10_000
    assert text.startswith("[[[1, 1")
    assert exception_text(ValueError("x" * 1_000_000), 100) == "x" * 100


def test_render_guard_result_estimate() -> None:
    assert result_too_large([1, 2, 3], 1000) is None
    assert result_too_large("x" * 100_000, 10) is None  # the exact check handles flat values
    refusal = result_too_large(_SHARED, 100_000)
    assert refusal is not None
    assert refusal[0] == "bytes"
    assert refusal[1] > 200_000
    # counted per reference, the walk ends at a count's bound (findings18 L04)
    containers = result_too_large([[]] * 30, 10**6, (20, 10**6))
    assert containers is not None
    assert containers[0] == "containers"
    assert containers[1] > 20
    assert result_too_large([0] * 30, 10**6, (20, 25)) == ("values", 30)
    assert result_too_large([[0]] * 10, 10**6, (20, 25)) is None


# ----------------------------------------------------------------------------- script hooks


_FSTRINGS = [
    'f\'{1}|{2.5:.3f}|{"é"!a}|{[1, 2]!r:>12}|{None!s:^8}|{3:{"0>"}{5}}\'',
    'f\'{10**20:,}|{0.5:%}|{"x"!r}|{(1, 2)}|{ {1: 2} }|{"a":*<4}\'',
    "'{0}|{1!r}|{a!s}|{0:>4}'.format(1, 'b', a=[2])",
    "'%s %r %d %5.1f %(' [0:0] + '%s|%r' % ([1], 'x')",
    "format([1, 2]) + format(3, '>4') + repr({'a': 1}) + ascii('é') + str((1,))",
]


@pytest.mark.parametrize("source", _FSTRINGS)
def test_render_guard_formatting_unchanged_for_small_values(sandbox: Sandbox, source: str) -> None:
    result = _run(sandbox, source)
    assert result.ok, result.error
    assert result.value == eval(source)


def test_render_guard_fstring_every_field_is_checked(sandbox: Sandbox) -> None:
    prefix = "x = [1] * 1000\ny = [x] * 1000\nz = [y] * 20\n"
    for field in ("{z}", "{z!r}", "{z!s}", "{z!a}", "{z:}", "{z!s:>5}"):
        result = _run(sandbox, prefix + f"len(f'{field}')")
        assert result.error is not None, field
        assert (result.error.kind, result.error.type) == ("limit", "LimitExceeded"), field
        assert "too large" in result.error.message


def test_render_guard_print_checks_before_rendering(sandbox: Sandbox) -> None:
    result = _run(sandbox, "print('a', [1, 2], sep='-')\nprint(*[1, 2], end='!')")
    assert (result.ok, result.output) == (True, "a-[1, 2]\n1 2!")
    result = _run(sandbox, "x = [1] * 1000\ny = [x] * 1000\nprint('start')\nprint([y] * 20)")
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "output exceeded" in result.error.message
    assert result.output == "start\n"


def test_render_guard_print_without_output_cap_refuses() -> None:
    box = Sandbox([], limits=Limits(max_output_chars=None))
    try:
        result = box.run_sync("x = [1] * 1000\ny = [x] * 1000\nprint([y] * 20)")
    finally:
        box.close()
    assert result.error is not None
    assert (result.error.kind, result.error.type) == ("limit", "LimitExceeded")


def test_render_guard_json_dumps_in_script(sandbox: Sandbox) -> None:
    result = _run(sandbox, "import json\njson.dumps({'a': [1, 'é']}, sort_keys=True, indent=1)")
    assert result.ok, result.error
    assert result.value == json.dumps({"a": [1, "é"]}, sort_keys=True, indent=1)
    result = _run(sandbox, "import json\nx = [1] * 1000\njson.dumps([[x] * 1000] * 20)")
    assert result.error is not None
    assert "too large" in result.error.message


def test_render_guard_huge_value_refused_before_copy(sandbox: Sandbox) -> None:
    result = _run(sandbox, "x = [1] * 1000\ny = [x] * 1000\n[y] * 20")
    assert result.error is not None
    assert result.error.kind == "limit"
    # 20 M values counted per reference: refused for its count before its bytes
    assert "values, more than the 2,000,000" in result.error.message


def test_render_guard_huge_exception_message_abbreviated(sandbox: Sandbox) -> None:
    result = _run(sandbox, "x = [1] * 1000\ny = [x] * 1000\nraise ValueError([y] * 20)")
    assert result.error is not None
    assert result.error.type == "ValueError"
    assert "..." in result.error.message
    assert len(result.error.message) < 20_000


def test_render_guard_large_renderings_charge_steps() -> None:
    # 100 renderings of ~90,000 characters: ~8,700 steps at one per KiB, so a loop
    # of big renderings meets the step limit (and the deadline check) as it goes
    box = Sandbox([], limits=Limits(max_steps=3_000, timeout=None))
    try:
        source = "x = [1] * 30000\nfor i in range(100):\n    s = {call}\n"
        for call in ("str(x)", "repr(x)", "f'{x}'", "'%s' % (x,)", "ascii(x)"):
            result = box.run_sync(source.format(call=call))
            assert result.error is not None, call
            assert result.error.kind == "limit", call
            assert "step limit" in result.error.message
        assert box.run_sync(source.format(call="str(x[:10])")).ok
    finally:
        box.close()


def test_render_guard_json_indent_estimate_of_rows() -> None:
    rows = [{"id": i, "tags": ["a", "b"]} for i in range(200)]
    records = [{"id": i, "name": "x"} for i in range(200)]
    for value in (rows, records, [[1, 2]] * 50):
        real = len(json.dumps(value, indent=2))
        assert real / 2 <= render_size(value, indent=2) <= 2 * real


@pytest.mark.parametrize("render", ["len(str(a))", "print(a)", "len(f'{a}')", "len(repr([a]))"])
def test_render_walk_of_shared_references_ends_at_the_deadline(render: str) -> None:
    # findings18 L03: the size walk of `a = [a, a]` forty times ran 5-12 s under a 2 s
    # deadline before its text passed the bound; it checks the run's budget as it goes
    from sandbox_support import ends_at_the_deadline

    ends_at_the_deadline("a = [1]\nfor i in range(40):\n    a = [a, a]\n" + render, 1.5)
