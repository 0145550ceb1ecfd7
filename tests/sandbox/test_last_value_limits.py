"""findings15 E08/E09: last values whose text or decode the host cannot afford.

- E08: a dict key (an int, a tuple of them, a ``Counter``'s) or a ``Fraction`` holding an
  int past the int-to-text limit raised ``ValueError`` out of ``run_sync`` (in-process) or
  failed the worker (process); it is now the script's error, as for a bare ``10**5000``. A
  NaN or infinity in the value made ``ScriptResult.to_json()`` unwritable as strict JSON.
- E09: a value of many small containers or values (``[{}] * 1_500_000``, 4.5 MB of JSON)
  grew the process-mode parent ~35x its wire size while decoding it; a value is now held
  to one container per 50 bytes and one value per 5 bytes of ``max_result_bytes``, in
  both modes (and the parent refuses a frame over it before decoding).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from sandbox_support import MODES

from scriptgate.runtime.strict_json import finite_floats
from scriptgate.sandbox import lastvalue
from scriptgate.sandbox.isolation.framing import FrameCaps, _ProtocolError
from scriptgate.sandbox.lastvalue import IntTooLongForText, render_last_value
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Isolation, Sandbox

_LIMITS = Limits(timeout=10, max_result_bytes=1_000_000)
"""10,000 containers and 50,000 values at most (1 MB of result)."""


@pytest.fixture(scope="module", params=MODES)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    isolation: Isolation = request.param
    sandbox = Sandbox([], limits=_LIMITS, isolation=isolation)
    yield sandbox
    sandbox.close()


def _strict(result: ScriptResult) -> Any:
    """``result.to_json()`` through a strict dump (what ``--json`` and a host write)."""
    return json.loads(json.dumps(result.to_json(), allow_nan=False))


# ------------------------------------------------------------------------- E08: key text


@pytest.mark.parametrize(
    "source",
    [
        "{10**5000: 1}",
        "{-10**5000: 'x', 1: 2}",
        "import collections\ncollections.Counter({10**5000: 1})",
        "{(1, 10**5000): 1}",
        "{'a': {10**5000: 1}}",
    ],
)
def test_last_value_key_int_too_long_for_text_is_the_scripts_error(
    box: Sandbox, source: str
) -> None:
    result = box.run_sync(source)  # in-process: raised ValueError out of run_sync
    assert result.error is not None, result.value
    assert (result.error.kind, result.error.type) == ("runtime", "ValueError"), result.error
    assert "int too long to convert to text" in result.error.message
    bare = box.run_sync("[10**5000]")  # the error a bare int that long gives
    assert bare.error is not None
    assert result.error.message == bare.error.message
    assert _strict(result)["error"]["kind"] == "runtime"


def test_last_value_key_int_ok(box: Sandbox) -> None:
    """Int keys within the limit (also of 3,900-4,300 digits) keep their JSON text."""
    result = box.run_sync("{10**4200: 1, 2: 'b', (1, 'a'): 3, 1.5: None}")
    assert result.ok, result.error
    assert result.value == {str(10**4200): 1, "2": "b", "(1, 'a')": 3, "1.5": None}


def test_last_value_fraction_of_an_int_too_long_for_text_is_refused() -> None:
    """A host ``Fraction`` (the sandbox's own is a stand-in, a placeholder) raises the
    error the engine turns into the script's, never a bare ``ValueError``."""
    with pytest.raises(IntTooLongForText):
        render_last_value([Fraction(10**5000, 3)])
    assert render_last_value([Fraction(1, 3)]) == (["Fraction(1, 3)"], None)


def test_last_value_key_text_that_raises_is_a_placeholder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second layer: no key's text may raise out of the rendering."""

    def overflow(key: Any, replaced: Any) -> str:
        raise OverflowError("too big")

    monkeypatch.setattr(lastvalue, "_key_text", overflow)
    out, note = render_last_value({1: "a"})
    assert out == {"<int key>": "a"}
    assert note is not None
    assert "int key without text" in note


# ------------------------------------------------------------------------- E08: NaN in to_json


@pytest.mark.parametrize(
    ("source", "described"),
    [
        ("float('nan')", {"type": "float", "value": "NaN"}),
        ("[float('inf'), 1.5]", [{"type": "float", "value": "Infinity"}, 1.5]),
        ("class F(float):\n    pass\nF('nan')", {"type": "float", "value": "NaN"}),
        ("{'a': {'b': -float('inf')}}", {"a": {"b": {"type": "float", "value": "-Infinity"}}}),
        ("{(1, 2): float('nan')}", {"(1, 2)": {"type": "float", "value": "NaN"}}),
    ],
)
def test_last_value_nan_to_json_is_strict_json(box: Sandbox, source: str, described: Any) -> None:
    result = box.run_sync(source)
    assert result.ok, result.error
    assert _strict(result)["value"] == described  # allow_nan=False refused it
    # the value itself keeps its floats, in both modes
    flat = json.dumps(result.value)
    assert "NaN" in flat or "Infinity" in flat


def test_last_value_finite_to_json_ok(box: Sandbox) -> None:
    result = box.run_sync("{'a': [1.5, 2, None, 'x', {'b': 0.1}], 'c': True}")
    assert result.ok, result.error
    assert result.to_json()["value"] is result.value  # nothing to describe: no copy
    assert _strict(result)["value"] == {"a": [1.5, 2, None, "x", {"b": 0.1}], "c": True}


def test_finite_floats_copies_only_the_path_to_a_nan() -> None:
    shared = [1.0, 2.0]
    value = {"keep": shared, "nan": [float("nan")], "n": 1}
    out = finite_floats(value)
    assert out is not value
    assert out["keep"] is shared
    assert out["nan"] == [{"type": "float", "value": "NaN"}]
    assert math.isnan(value["nan"][0])  # the original is left as it was


# ------------------------------------------------------------------------- E09: object counts


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("[{}] * 20_000", "20,001 lists and dicts, more than the 20,000"),
        ("[[]] * 30_000", "30,001 lists and dicts"),
        ("[0] * 250_000", "250,000 values, more than the 200,000"),
        ("list(range(10)) * 25_000", "250,000 values"),
        # findings18 L04: counted per reference before the copy expands shared lists (the
        # copy of `b = [b, b]` twenty-one times made 2 M lists in the host, 10-20 s)
        ("b = [1]\nfor i in range(21):\n    b = [b, b]\nb", "20,001 lists and dicts"),
    ],
)
def test_last_value_of_many_small_objects_is_refused(box: Sandbox, source: str, words: str) -> None:
    result = box.run_sync(source)  # was ok: 1.5 M of them grew the parent 35x their bytes
    assert result.error is not None, "refused"
    assert (result.error.kind, result.error.type) == ("limit", "LimitExceeded"), result.error
    assert words in result.error.message, result.error.message
    assert "limit of 1000000 bytes" in result.error.message


def test_last_value_of_many_small_objects_ok(box: Sandbox) -> None:
    """Under the counts, and commas or brackets inside strings are no values."""
    for source, expected in [
        ("[{}] * 19_000", [{}] * 19_000),
        ("[0.5] * 190_000", [0.5] * 190_000),
        ("[0] * 190_000", [0] * 190_000),
        ("['a,b,[c],{d}'] * 40_000", ["a,b,[c],{d}"] * 40_000),
        ("[{'k': i} for i in range(9_000)]", [{"k": i} for i in range(9_000)]),
    ]:
        result = box.run_sync(source)
        assert result.ok, (source, result.error)
        assert result.value == expected


def test_last_value_of_many_objects_without_a_result_limit_ok() -> None:
    sandbox = Sandbox([], limits=Limits(timeout=10, max_result_bytes=None))
    result = sandbox.run_sync("[{}] * 200_000")
    assert result.ok, result.error
    assert len(result.value) == 200_000


def _result_frame(value_text: str) -> str:
    return (
        '{"op":"result","result":{"ok":true,"value":' + value_text + ',"output":"a,b,c",'
        '"error":null,"calls":[],"wall_time":0.0},"cpu":0.0,"retire":false}'
    )


def test_parent_refuses_a_result_frame_of_many_objects_before_decoding_it() -> None:
    """The parent's caps follow the engine's counts (they were max_result_bytes // 2)."""
    caps = FrameCaps.of(Limits(max_result_bytes=1_000_000, max_tool_calls=1), 1 << 30)
    with pytest.raises(_ProtocolError, match="JSON containers"):
        caps.check(_result_frame("[" + "{}," * 30_000 + "{}]"))
    with pytest.raises(_ProtocolError, match="JSON values"):
        caps.check(_result_frame("[" + "0," * 260_000 + "0]"))
    # what the engine lets through passes, commas in strings too
    assert caps.check(_result_frame("[" + "{}," * 9_000 + "{}]"))[0] == "result"
    assert caps.check(_result_frame('["' + "," * 200_000 + '"]'))[0] == "result"


def _call_frame(arguments_text: str) -> str:
    return '{"op":"call","id":"r/1","tool":"ping","arguments":{"v":' + arguments_text + "}}"


def test_parent_refuses_a_call_frame_past_what_the_engine_lets_arguments_hold() -> None:
    # findings18 L10: a hostile worker's call of [{}] * 2_400_000 (9.6 M characters) would
    # be 2.4 M dicts in the parent; the engine refuses more than these counts in a script
    from scriptgate.sandbox.guards.sizes import ARGUMENT_CONTAINERS, ARGUMENT_ITEMS
    from scriptgate.sandbox.isolation import framing

    assert (framing._ARGUMENT_CONTAINERS, framing._ARGUMENT_ITEMS) == (
        ARGUMENT_CONTAINERS,
        ARGUMENT_ITEMS,
    )
    caps = FrameCaps.of(Limits(), 1 << 30)
    with pytest.raises(_ProtocolError, match="JSON containers"):
        caps.check(_call_frame("[" + "{}," * 210_000 + "{}]"))
    with pytest.raises(_ProtocolError, match="JSON values"):
        caps.check(_call_frame("[" + "0," * 2_100_000 + "0]"))
    assert caps.check(_call_frame("[" + "{}," * 190_000 + "{}]"))[0] == "call"


_SUBCLASS_KEYS = (
    "import enum\nclass Name(str):\n    pass\nclass N(int):\n    pass\n"
    "class Color(enum.IntEnum):\n    RED = 1\nclass Kind(enum.Enum):\n    X = 'x'\n"
    "{Name('a'): 1, N(2): 2, Color.RED: 3, Kind.X: 4, (N(5), Name('b')): 5}"
)


def test_subclass_and_enum_keys_are_shown_as_their_plain_values(box: Sandbox) -> None:
    """findings16 L01: such keys were '<Name object>' while the same values showed plainly."""
    result = box.run_sync(_SUBCLASS_KEYS)
    assert result.ok, result.error
    assert result.value == {"a": 1, "2": 2, "1": 3, "x": 4, "(5, 'b')": 5}
    assert "note" not in result.output


def test_a_key_with_no_plain_value_is_still_a_placeholder() -> None:
    class Point:
        pass

    value, note = render_last_value({Point(): 1, (Point(),): 2})
    assert value == {"<Point object>": 1, "<tuple object>": 2}
    assert note is not None
    assert "Point" in note
