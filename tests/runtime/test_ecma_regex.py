"""ECMAScript (``u`` flag) pattern translation to Python ``re``."""

from __future__ import annotations

import pytest

from scriptgate.runtime._ecma_regex import compile_ecma, is_valid_ecma, translate_ecma


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        pytest.param(r"^\d+$", "0123456789", True, id="ascii-digits"),
        pytest.param(r"^\d$", "٣", False, id="arabic-digit"),
        pytest.param(r"^\D$", "٣", True, id="non-digit-unicode"),
        pytest.param(r"^\w$", "ß", False, id="word-ascii"),
        pytest.param(r"\bfoo\b", "é foo é", True, id="word-boundary"),
        pytest.param(r"^\s+$", "\u3000\u2028\ufeff", True, id="js-whitespace"),
        pytest.param(r"^\S$", "\u00a0", False, id="nbsp-is-space"),
        pytest.param(r"^[\s]$", "\u00a0", True, id="space-in-class"),
        pytest.param(r"^[\d-]+$", "1-2", True, id="digit-dash-class"),
        pytest.param(r"^[a-c]+$", "abc", True, id="range"),
        pytest.param(r"^[-a]+$", "-a", True, id="leading-dash"),
        pytest.param(r"^[[]$", "[", True, id="bracket-in-class"),
        pytest.param(r"^[a&&b]+$", "&", True, id="ampersands-literal"),
        pytest.param(r"^x$", "x\n", False, id="dollar-no-trailing-newline"),
        pytest.param(r"^.$", "\r", False, id="dot-no-cr"),
        pytest.param(r"^.$", "é", True, id="dot-unicode"),
        pytest.param(r"^\x41\u0042\u{43}$", "ABC", True, id="hex-escapes"),
        pytest.param(r"^\cJ$", "\n", True, id="control-escape"),
        pytest.param(r"^\0$", "\x00", True, id="nul"),
        pytest.param(r"^(a)\1$", "aa", True, id="backreference"),
        pytest.param(r"^(?<x>a)\k<x>$", "aa", True, id="named-backreference"),
        pytest.param(r"(?<=a)b", "ab", True, id="lookbehind"),
        pytest.param(r"(?<!a)b", "ab", False, id="negative-lookbehind"),
        pytest.param(r"^a{2}$", "aa", True, id="quantifier"),
        pytest.param(r"^[\b]$", "\x08", True, id="backspace-in-class"),
    ],
)
def test_ecma_regex_semantics(pattern: str, text: str, matches: bool) -> None:
    compiled = compile_ecma(pattern)
    assert compiled is not None
    assert (compiled.search(text) is not None) is matches


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        pytest.param(r"(?<n>a)", "(?P<n>a)", id="named-group"),
        pytest.param(r"a$", r"a\Z", id="dollar"),
        pytest.param(r"\d", "[0-9]", id="digit"),
    ],
)
def test_ecma_regex_translation(pattern: str, python: str) -> None:
    assert translate_ecma(pattern) == python


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        pytest.param(r"^\p{L}+$", "héllo", True, id="letters"),
        pytest.param(r"^\p{L}+$", "he1", False, id="letters-not-digits"),
        pytest.param(r"^\p{Letter}$", "_", False, id="underscore-is-not-a-letter"),
        pytest.param(r"^\P{L}$", "1", True, id="negated"),
        pytest.param(r"^\p{Nd}+$", "١٢", True, id="unicode-decimal-digits"),
    ],
)
def test_ecma_regex_supported_property_escapes(pattern: str, text: str, matches: bool) -> None:
    compiled = compile_ecma(pattern)
    assert compiled is not None
    assert (compiled.search(text) is not None) is matches


def test_ecma_regex_unsupported_property_escape_falls_back_to_match_all() -> None:
    # ``\p{Lu}`` (and any property inside a class) has no Python ``re`` equivalent: the
    # pattern is unusable and callers treat it as matching every string (documented).
    assert compile_ecma(r"^\p{Lu}+$") is None
    assert compile_ecma(r"^[\p{L}0-9]+$") is None
    with pytest.raises(ValueError, match="unicode property"):
        translate_ecma(r"\p{Script=Greek}")


def test_ecma_regex_validity() -> None:
    assert is_valid_ecma(r"^[a-z]+(?<tail>\d)?$")
    assert not is_valid_ecma("(")
    assert not is_valid_ecma(r"\q")
    assert not is_valid_ecma("(?P<x>a)")
