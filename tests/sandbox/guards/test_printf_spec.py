"""The printf tokenizer (``scriptgate/sandbox/guards/printf_spec.py``, findings12 F03/F05/F09).

Its reading of tricky templates is checked against CPython's own ``%``: the widths it
finds are the padding C renders, the keys it finds are the keys C looks up, and it stops
where C raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.guards.printf_spec import Conversion, conversions, summarize


class _Keys(dict[str, Any]):
    """A mapping that records the keys C looks up (the test's witness, not sandbox code)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.seen.append(key)
        return "x"


@pytest.mark.parametrize(
    "template",
    [
        "%(a(b))9s",
        "%(a)9.s",
        "%((a)(b))s|%(c)s",
        "%(a)s%(b)-7.3s",
        "%(a)5%",
        "%(()x)s",
        "%(a b)s",
    ],
)
def test_conversions_find_the_keys_c_looks_up(template: str) -> None:
    keys = _Keys()
    with contextlib.suppress(ValueError, TypeError):
        template % keys
    assert [c.key for c in conversions(template)] == keys.seen


@pytest.mark.parametrize(
    ("template", "args"),
    [
        ("%1000.s", ("x",)),
        ("%1000.d", (3,)),
        ("%7.2f", (1.5,)),
        ("%00012s", ("x",)),
        ("%-0 +#15d", (3,)),
        ("%10.5d", (7,)),
        ("%ls|%9hs|%4Ld", ("a", "b", 2)),
        ("%12.e", (1.0,)),
    ],
)
def test_conversions_widths_are_the_padding_c_renders(template: str, args: tuple[Any, ...]) -> None:
    parts = list(conversions(template))
    rendered = template % args
    widest = max(c.width or 0 for c in parts)
    assert len(rendered) >= widest  # C padded to at least the width found
    assert len(rendered) <= len(template) + summarize(template).padding + sum(
        len(str(a)) for a in args
    )


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("%1000000000.s", [Conversion(None, 1_000_000_000, 0, "s")]),
        ("%*.s", [Conversion(None, -1, 0, "s")]),
        ("%(a)9999.s", [Conversion("a", 9999, 0, "s")]),
        ("%(a(b))9999s", [Conversion("a(b)", 9999, None, "s")]),
        ("%%%5d", [Conversion(None, None, None, "%"), Conversion(None, 5, None, "d")]),
        ("%hd%ls", [Conversion(None, None, None, "d"), Conversion(None, None, None, "s")]),
        ("%\u06655s", [Conversion(None, None, None, "\u0665")]),  # only ASCII digits are widths
    ],
)
def test_conversions_read_what_c_reads(template: str, expected: list[Conversion]) -> None:
    assert list(conversions(template)) == expected


@pytest.mark.parametrize("template", ["%(a", "%((a)s", "%5", "%h", "%9.", "%(a)", "%(a)9."])
def test_conversions_stop_where_c_raises(template: str) -> None:
    keys = _Keys()
    with pytest.raises(ValueError, match="incomplete format"):
        template % keys
    assert [c.key for c in conversions(template)] == keys.seen  # C looked the key up
    assert all(c.kind == "" for c in conversions(template))


def test_summarize_sums_widths_and_numeric_precisions() -> None:
    summary = summarize("%9999s" * 1000 + "%.500d%.500s%(k)7s%%")
    assert summary.padding == 9999 * 1000 + 500 + 7
    assert summary.widest == 9999
    assert summary.keyless == 1002
    assert summary.keys == {"k": 1}
    assert not summary.star
    assert summarize("%.*f").star


def test_summarize_sees_a_huge_width_without_converting_its_digits() -> None:
    summary = summarize("%" + "9" * 5000 + "s")
    assert summary.widest >= 10**18
    with pytest.raises(ValueError, match="width too big"):
        ("%" + "9" * 5000 + "s") % ("x",)


def test_conversions_agree_with_c_on_random_templates() -> None:
    import random

    rng = random.Random(12)
    agreed = 0
    for _ in range(4000):
        template = "".join(rng.choice("%%%()ab5.0-hls*d") for _ in range(rng.randint(1, 14)))
        keys = _Keys()
        try:
            template % keys
        except (ValueError, TypeError):
            # C stopped early: the keys it looked up start the keys found
            found = [c.key for c in conversions(template) if c.key is not None]
            assert found[: len(keys.seen)] == keys.seen, template
        else:
            assert [c.key for c in conversions(template) if c.key is not None] == keys.seen
            agreed += 1
    assert agreed > 100


def _recording() -> tuple[list[Conversion], Any]:
    """A reader for ``summarize`` and the list of the conversions it was handed."""
    read: list[Conversion] = []

    def reader(items: Iterator[Conversion]) -> Iterator[Conversion]:
        for item in items:
            read.append(item)
            yield item

    return read, reader


def test_summarize_reads_the_conversions_through_the_reader() -> None:
    read, reader = _recording()
    summary = summarize("%5d|%(a)s|%%", reader)
    assert read == [
        Conversion(None, 5, None, "d"),
        Conversion("a", None, None, "s"),
        Conversion(None, None, None, "%"),
    ]
    assert summary.padding == 5


def test_summarize_stops_reading_past_the_bounds_its_caller_refuses() -> None:
    # a CI run under load timed out reading 100,000 `%(a(b))9999s` to the end, when the
    # first 1,001 already passed the render limit the caller refuses
    read, reader = _recording()
    summary = summarize("%(a(b))9999s" * 100_000, reader, stop_past=(10_000, 10_000_000))
    assert len(read) == 1_001
    assert summary.padding == 9999 * 1_001
    wide = summarize("%5s%20000s%*s", stop_past=(10_000, 10_000_000))
    assert (wide.widest, wide.star) == (20_000, False)  # stopped before the `*`
    assert summarize("%5s" * 10, stop_past=(10_000, 10_000_000)).padding == 50


@pytest.mark.parametrize(
    ("template", "args", "widest", "padding"),
    [
        ("%*d", (5, 1), 5, 5),
        ("%.*f", (2, 1.0), 2, 2 + 310),
        ("%*.*f", (-8, -1, 2.5), 8, 8 + 310),  # C: a negative width left-justifies
        ("%*s %*s", (3, "a", 4, "b"), 4, 7),
        ("%(k)s%*d", ({"k": 1},), 0, 0),  # C raises at the `*` (`* wants int`)
        ("%*d%*d", (2, 1), 2, 2),  # C raises at the second `*` (no argument left)
        ("%*d", (True, 1), 1, 1),  # a bool is an int to C
    ],
)
def test_summarize_reads_star_widths_from_the_arguments(
    template: str, args: tuple[Any, ...], widest: int, padding: int
) -> None:
    summary = summarize(template, args=args)
    assert (summary.widest, summary.padding, summary.star) == (widest, padding, False)
