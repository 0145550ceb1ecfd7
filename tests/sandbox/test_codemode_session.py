"""codemode_tool(session=...): state persists across scripts, the rules say so, reset forgets."""

from __future__ import annotations

import pytest

from scriptgate import ConfigurationError, Sandbox, codemode_tool, tool

pytestmark = pytest.mark.anyio


@tool
def double(n: int) -> int:
    """Double a number."""
    return n * 2


async def test_codemode_session_keeps_globals_between_scripts() -> None:
    cm = codemode_tool([double], session=True)
    first = await cm.execute("c1", {"code": "total = double(n=21)\ntotal"}, None, None)
    assert not first.is_error
    second = await cm.execute("c2", {"code": "total + 1"}, None, None)
    assert "43" in second.content[0].text
    cm.reset_session()
    third = await cm.execute("c3", {"code": "total"}, None, None)
    assert third.is_error
    assert "NameError" in third.content[0].text
    await cm.aclose()


async def test_codemode_without_session_starts_fresh_and_says_so() -> None:
    fresh = codemode_tool([double])
    await fresh.execute("c1", {"code": "kept = 1"}, None, None)
    again = await fresh.execute("c2", {"code": "kept"}, None, None)
    assert again.is_error
    assert "Each script starts fresh" in fresh.description
    assert "State persists" not in fresh.description
    persistent = codemode_tool([double], session=True)
    assert "State persists" in persistent.description
    assert "Each script starts fresh" not in persistent.description


async def test_codemode_session_timeout_option_still_lowers_the_limit() -> None:
    cm = codemode_tool([double], session=True)
    await cm.execute("c1", {"code": "x = 5"}, None, None)
    slow = await cm.execute(
        "c2", {"code": '# @options: {"timeout_ms": 50}\nwhile True:\n    x = x + 1'}, None, None
    )
    assert slow.is_error
    assert "Script failed" in slow.content[0].text
    after = await cm.execute("c3", {"code": "x > 5"}, None, None)
    assert after.content[0].text.endswith("Output:\ntrue")


async def test_codemode_accepts_a_session_of_its_own_and_rejects_other_values() -> None:
    session = Sandbox([double]).session()
    cm = codemode_tool([double], session=session)
    assert cm.session is session
    await cm.execute("c1", {"code": "y = double(n=2)"}, None, None)
    assert session.globals["y"] == 4
    with pytest.raises(ConfigurationError, match="session must be"):
        codemode_tool([double], session="yes")  # type: ignore[arg-type]
