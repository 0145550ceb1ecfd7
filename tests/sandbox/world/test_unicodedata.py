"""The ``unicodedata`` stand-in in both modes: the Unicode database."""

from __future__ import annotations

from sandbox_support import value

from scriptgate.sandbox.sandbox import Sandbox


def test_unicodedata_matches_cpython(sandbox: Sandbox) -> None:
    import unicodedata

    src = (
        "import unicodedata as u\n[u.name('\\xe9'), u.lookup('SNOWMAN'), u.normalize('NFD', '\\xe9'),"
        " u.category('A'), u.numeric('\\u00bd'), u.name('\\x00', 'none'), u.is_normalized('NFC', 'x')]"
    )
    assert value(sandbox, src) == [
        unicodedata.name("\xe9"),
        "\u2603",
        unicodedata.normalize("NFD", "\xe9"),
        "Lu",
        0.5,
        "none",
        True,
    ]
