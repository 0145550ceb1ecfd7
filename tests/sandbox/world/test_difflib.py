"""The ``difflib`` stand-in in both modes: bounded matching and diffs.

findings16 F03: the matching of every block (``find_longest_match``, host Python) charges
its steps and sees the deadline, in a script's matcher and in every diff function's. The
deadline tests run in-process (process mode kills the worker on time).
"""

from __future__ import annotations

import pytest
from sandbox_support import MODES, ends_at_the_deadline, refused, same_as_python, value

from scriptgate.sandbox.result import Limits
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


def test_difflib_one_longest_match_at_the_bound_ends_at_the_deadline() -> None:
    # one find_longest_match of 5000 x 5000 equal items: 3-5 s, no tick inside
    ends_at_the_deadline(
        "import difflib\n"
        "difflib.SequenceMatcher(None, 'a' * 5000, 'a' * 5000, autojunk=False).ratio()\n",
        1.0,
    )


def test_difflib_matching_blocks_of_many_blocks_end_at_the_deadline() -> None:
    # one find_longest_match per block, each up to the length product: 103 s past 1 s
    ends_at_the_deadline(
        "import difflib\na = 'a' * 5000\nb = ('a' * 50 + 'b') * 98\n"
        "difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()\n",
        1.0,
    )


@pytest.mark.parametrize("diff", ["unified_diff", "context_diff"])
def test_difflib_diff_of_repeated_lines_ends_at_the_deadline(diff: str) -> None:
    # the diff functions' own (real) matcher ran untouched by the stand-in: 2.7 s past 1 s
    ends_at_the_deadline(
        "import difflib\n"
        f"list(difflib.{diff}([str(i % 100) for i in range(5000)],"
        " [str((i * 7) % 100) for i in range(5000)]))\n",
        1.0,
    )


def test_difflib_close_matches_of_many_candidates_end_at_the_deadline() -> None:
    # one ratio() a candidate in host Python, no tick between them: 18 s past 0.3 s
    ends_at_the_deadline(
        "import difflib\n"
        "difflib.get_close_matches('a' * 199, ['a' * 198 + 'ab'[i % 2] for i in range(2500)])\n",
        1.0,
    )


@pytest.mark.parametrize("mode", MODES)
def test_difflib_longest_match_work_is_charged_to_the_steps(mode: str) -> None:
    # 2000 x 2000 matching steps in host Python were free of the step budget
    box = Sandbox(limits=Limits(timeout=10, max_steps=1_000_000), isolation=mode)
    try:
        refused(
            box,
            "import difflib\n"
            "difflib.SequenceMatcher(None, 'a' * 2000, 'a' * 2000, autojunk=False).ratio()",
            "limit",
            "step limit",
        )
    finally:
        box.close()


def test_difflib_matching_and_diffs_ok(sandbox: Sandbox) -> None:
    # the ticking matcher gives plain Python's blocks, junk and popular items alike
    same_as_python(
        sandbox,
        "import difflib\n"
        "a = 'the quick brown fox jumps over the lazy dog ' * 30\n"
        "b = 'the quick brown cat leaps over the lazy dog ' * 30\n"
        "s = difflib.SequenceMatcher(lambda c: c == ' ', a, b)\n"
        "t = difflib.SequenceMatcher(None, a, b, autojunk=False)\n"
        "x = [str(i % 100) + '\\n' for i in range(600)]\n"
        "y = [str((i * 7) % 100) + '\\n' for i in range(600)]\n"
        "[s.ratio(), [list(m) for m in s.get_matching_blocks()], list(t.find_longest_match()),"
        " [list(o) for o in t.get_opcodes()], list(difflib.unified_diff(x, y)),"
        " list(difflib.context_diff(x, y)), list(difflib.ndiff(x[:80], y[:80])),"
        " difflib.get_close_matches('appel', ['ape', 'apple', 'peach', 'apply', 'appeal'])]",
    )
