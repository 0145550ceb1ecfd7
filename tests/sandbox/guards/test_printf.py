"""The size estimate of ``template % mapping`` (``scriptgate/sandbox/guards/printf.py``, findings10 F04).

The attack scripts are ``f10-percent-*`` in ``attacks_onecall.py`` (both isolation modes);
these pin the estimate itself: every ``%(key)`` conversion counts, each key is read once.
"""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.guards.printf import resolve_mapping
from scriptgate.sandbox.guards.render_scope import RENDERING


def test_resolve_mapping_counts_every_conversion_of_a_key() -> None:
    with RENDERING, pytest.raises(ScriptStop, match="about 500500000 characters"):
        resolve_mapping("%(a)s" * 100_000, {"a": "x" * 5000})


def test_resolve_mapping_refuses_bytes_templates_too() -> None:
    with RENDERING, pytest.raises(ScriptStop, match="too large for the sandbox"):
        resolve_mapping(bytearray(b"%(a)s" * 3000), {b"a": b"x" * 5000})


def test_resolve_mapping_reads_each_key_once_into_an_exact_dict() -> None:
    reads: list[Any] = []

    class Lookup:
        def __getitem__(self, key: str) -> str:
            reads.append(key)
            return key * 2

    with RENDERING:
        values = resolve_mapping("%(a)s %(b)5s %(a)r %%", Lookup())
    assert type(values) is dict
    assert values == {"a": "aa", "b": "bb"}
    assert reads == ["a", "b"]
    assert "%(a)s %(b)5s %(a)r %%" % values == "aa    bb 'aa' %"  # noqa: UP031


def test_resolve_mapping_keeps_the_mapping_for_keyless_conversions() -> None:
    mapping = {"a": 1}
    with RENDERING:
        assert resolve_mapping("%s %(a)s", mapping) is mapping
        assert resolve_mapping("%s", mapping) is mapping
        with pytest.raises(KeyError):
            resolve_mapping("%(missing)s", mapping)


def test_resolve_mapping_refuses_a_script_mapping_with_keyless_conversions() -> None:
    class Lookup:
        def __getitem__(self, key: str) -> str:
            return "x"

    with RENDERING, pytest.raises(TypeError, match="needs a plain dict"):
        resolve_mapping("%s" + "%(a)s" * 200, Lookup())


def test_resolve_mapping_hands_an_exact_dict_to_c_with_keyless_conversions() -> None:
    mapping = {"a": "x" * 10}
    with RENDERING:
        assert resolve_mapping("%s %(a)s", mapping) is mapping
    with RENDERING, pytest.raises(ScriptStop, match="too large for the sandbox"):
        resolve_mapping("%s" + "%(a)s" * 3000, {"a": "x" * 5000})


def test_resolve_mapping_counts_widths_c_reads_with_nested_parentheses() -> None:
    # findings12 F05: C's key is `a(b)`; its 9,999 padding counts per conversion
    with RENDERING, pytest.raises(ScriptStop, match="too large for the sandbox"):
        resolve_mapping("%(a(b))9999.s" * 1001, {"a(b)": "x"})
