"""Tool names become Python identifiers (pi toCodemodeIdentifier, plus keywords)."""

from __future__ import annotations

import pytest

from scriptgate.sandbox.naming import bind_identifiers, to_identifier


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("my-tool", "my_tool", id="dash"),
        pytest.param("1abc", "_abc", id="leading-digit"),
        pytest.param("", "_", id="empty"),
        pytest.param("read", "read", id="plain"),
        pytest.param("ns.tool/x", "ns_tool_x", id="dots-and-slashes"),
        pytest.param("café", "caf_", id="non-ascii"),
        pytest.param("import", "import_", id="keyword"),
        pytest.param("match", "match_", id="soft-keyword"),
    ],
)
def test_naming_to_identifier(name: str, expected: str) -> None:
    assert to_identifier(name) == expected


def test_naming_first_tool_wins_on_collision() -> None:
    bound = bind_identifiers([("my-tool", 1), ("my_tool", 2), ("other", 3)])
    assert bound == {"my_tool": 1, "other": 3}
