"""``hash()`` in both modes: equal values hash equal; the numbers say nothing of the host's hashes."""

from __future__ import annotations

from sandbox_support import value

from scriptgate.sandbox.sandbox import Sandbox


def test_hash_in_a_dunder_hash_as_models_write_it(sandbox: Sandbox) -> None:
    src = (
        "class P:\n"
        "    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
        "    def __eq__(self, other):\n        return (self.x, self.y) == (other.x, other.y)\n"
        "    def __hash__(self):\n        return hash((self.x, self.y))\n"
        "len({P(1, 2), P(1, 2), P(2, 1)}), hash('a') == hash('a'), isinstance(hash(3.5), int)"
    )
    assert value(sandbox, src) == [2, True, True]


def test_hash_is_keyed_not_the_hosts() -> None:
    box = Sandbox()
    try:
        got = value(box, "[hash('scriptgate'), hash(12345), hash((1, 'a'))]")
    finally:
        box.close()
    assert got != [hash("scriptgate"), hash(12345), hash((1, "a"))]
    assert got[1] != 12345  # CPython's hash of a small int is the int


def test_hash_is_stable_across_runs_of_a_process() -> None:
    box = Sandbox()
    try:
        first = value(box, "hash('k')")
        second = value(box, "hash('k')")
    finally:
        box.close()
    assert first == second


def test_hash_of_an_unhashable_is_a_type_error(sandbox: Sandbox) -> None:
    result = sandbox.run_sync("hash([1])")
    assert result.error is not None
    assert result.error.type == "TypeError"
