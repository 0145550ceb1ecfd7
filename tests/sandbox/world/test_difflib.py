"""The ``difflib`` stand-in in both modes: bounded matching and diffs."""

from __future__ import annotations

from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


def test_difflib_matches_cpython(sandbox: Sandbox) -> None:
    import difflib

    a, b = ["a\n", "b\n", "c\n"], ["a\n", "x\n", "c\n"]
    src = (
        f"import difflib\na, b = {a!r}, {b!r}\ns = difflib.SequenceMatcher(None, 'abcd', 'bcde')\n"
        "[s.ratio(), [list(o) for o in s.get_opcodes()], list(difflib.unified_diff(a, b)),"
        " list(difflib.context_diff(a, b)), list(difflib.ndiff(a, b)),"
        " difflib.get_close_matches('appel', ['ape', 'apple', 'peach'])]"
    )
    s = difflib.SequenceMatcher(None, "abcd", "bcde")
    assert value(sandbox, src) == [
        s.ratio(),
        [list(o) for o in s.get_opcodes()],
        list(difflib.unified_diff(a, b)),
        list(difflib.context_diff(a, b)),
        list(difflib.ndiff(a, b)),
        difflib.get_close_matches("appel", ["ape", "apple", "peach"]),
    ]


def test_difflib_quadratic_inputs_are_refused(sandbox: Sandbox) -> None:
    refused(
        sandbox,
        "import difflib\ndifflib.SequenceMatcher(None, 'a' * 10000, 'b' * 10000).ratio()",
        "quadratic",
    )
    refused(sandbox, "import difflib\nlist(difflib.ndiff(['x'] * 6000, ['y'] * 6000))", "quadratic")
