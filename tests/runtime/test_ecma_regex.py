"""ECMAScript (``u`` flag) pattern translation to Python ``re`` and ``regex``."""

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


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        pytest.param(r"^\p{Lu}", "ab", False, id="Lu-lowercase"),
        pytest.param(r"^\p{Lu}", "hasOwnProperty", False, id="Lu-no-prototype-names"),
        pytest.param(r"^\p{Lu}", "Élan", True, id="Lu-unicode-upper"),
        pytest.param(r"^\p{Uppercase_Letter}+$", "ÀB", True, id="long-gc-name"),
        pytest.param(r"^\p{General_Category=Ll}+$", "ab", True, id="gc-key"),
        pytest.param(r"^\p{gc=Nd}$", "٣", True, id="gc-short-key"),
        pytest.param(r"^\p{Script=Greek}+$", "αβ", True, id="script"),
        pytest.param(r"^\p{sc=Grek}+$", "ab", False, id="script-short-rejects-latin"),
        pytest.param(r"^\p{scx=Latn}$", "a", True, id="script-extensions"),
        pytest.param(r"^\p{Emoji_Presentation}$", "😀", True, id="binary-property"),
        pytest.param(r"^\P{Lu}$", "a", True, id="negated-Lu"),
        pytest.param(r"^[\p{L}0-9]+$", "é1", True, id="property-in-class"),
        pytest.param(r"^[^\p{L}]$", "1", True, id="property-in-negated-class"),
        pytest.param(r"^[^\p{L}]$", "é", False, id="property-in-negated-class-rejects"),
        pytest.param(r"^[a\D]$", "x", True, id="negated-escape-in-class"),
        pytest.param(r"^[a\D]$", "5", False, id="negated-escape-in-class-rejects-digit"),
        pytest.param(r"^[^a\D]$", "5", True, id="negated-class-with-negated-escape"),
        pytest.param(r"^[^a\D]$", "x", False, id="negated-class-with-negated-escape-rejects"),
        pytest.param(r"(?<=ab+)c", "abbbc", True, id="variable-width-lookbehind"),
    ],
)
def test_ecma_regex_unicode_property_escapes_on_the_regex_engine(
    pattern: str, text: str, matches: bool
) -> None:
    compiled = compile_ecma(pattern)
    assert compiled is not None
    assert (compiled.search(text) is not None) is matches


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(r"\p{lu}", id="case-sensitive"),
        pytest.param(r"\p{Uppercase Letter}", id="no-loose-matching"),
        pytest.param(r"\p{Script=greek}", id="script-value-case"),
        pytest.param(r"\p{Foo}", id="unknown"),
        pytest.param(r"\p", id="no-braces"),
    ],
)
def test_ecma_regex_property_names_are_ecmascript_exact(pattern: str) -> None:
    with pytest.raises(ValueError, match="property"):
        translate_ecma(pattern)
    assert compile_ecma(pattern) is None


def test_ecma_regex_validity() -> None:
    assert is_valid_ecma(r"^[a-z]+(?<tail>\d)?$")
    assert not is_valid_ecma("(")
    assert not is_valid_ecma(r"\q")
    assert not is_valid_ecma("(?P<x>a)")


_BACKTRACKING = r"^(a|aa)+$"
"""Exponential in the engine: 41 crafted characters take minutes without a bound."""


def test_ecma_regex_search_is_bounded_in_time() -> None:
    # findings18 L09: a schema's pattern is matched on the host against a script's tool
    # arguments; `re` stalled the host's event loop 25 s on 26 characters
    from scriptgate.runtime._ecma_regex import PatternTimeout

    compiled = compile_ecma(_BACKTRACKING)
    assert compiled is not None
    assert compiled.matches("aaaa")
    with pytest.raises(PatternTimeout):
        compiled.search("a" * 40 + "!")
    assert not compiled.matches("a" * 40 + "!")


def test_ecma_regex_timeout_fails_pattern_and_applies_pattern_properties() -> None:
    from scriptgate.runtime.schema import compile_schema

    slow = "a" * 40 + "!"
    checker = compile_schema({"type": "string", "pattern": _BACKTRACKING})
    assert checker.is_valid("aa")
    assert not checker.is_valid(slow)  # the compiled fast path
    assert [issue.keyword for issue in checker.check(slow)] == ["pattern"]
    keyed = compile_schema(
        {"type": "object", "patternProperties": {_BACKTRACKING: {"type": "integer"}}}
    )
    assert keyed.is_valid({"zz": "x"})  # no match: no schema
    assert not keyed.is_valid({slow: "x"})  # a timeout never skips the key's schema
