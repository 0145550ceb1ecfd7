"""A run's call records keep capped arguments, and arguments count against the memory budget."""

from __future__ import annotations

import anyio
import pytest

import scriptgate
from scriptgate import tool
from scriptgate.runtime.strict_json import digest


@tool
def noop(s: str) -> int:
    """Return the length."""
    return len(s)


SCRIPT = "s = 'x' * 200_000\nn = 0\nfor i in range(20):\n    n += noop(s=s + str(i))\nn"


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_call_arguments_grow_host_memory_records_are_capped(isolation: str) -> None:
    async with scriptgate.Sandbox(
        tools=[noop],
        isolation=isolation,  # type: ignore[arg-type]
        limits=scriptgate.Limits(timeout=30),
    ) as sandbox:
        result = await sandbox.run(SCRIPT)
    assert result.ok, result.error
    assert result.value == sum(200_000 + len(str(i)) for i in range(20))
    assert len(result.calls) == 20
    first = result.calls[0].arguments["s"]
    assert first["length"] == 200_001
    assert first["sha256"] == digest("x" * 200_000 + "0").removeprefix("sha256:")
    assert sum(len(str(c.arguments)) for c in result.calls) < 20 * 2_000


@pytest.mark.anyio
async def test_call_arguments_grow_host_memory_budget_refuses() -> None:
    @tool
    async def hold(s: str) -> int:
        """Keep the call running until the run ends."""
        await anyio.sleep_forever()
        return 0

    # one 2 MB string, passed to 30 calls at once: 60 MB of arguments in flight
    async with scriptgate.Sandbox(
        tools=[hold],
        isolation="in_process",
        limits=scriptgate.Limits(timeout=30, memory_bytes=50_000_000),
    ) as sandbox:
        result = await sandbox.run(
            "s = 'x' * 2_000_000\nawait gather(*[hold(s=s) for i in range(30)])"
        )
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "Tool-call arguments exceeded the run's memory budget (50000000 bytes" in (
        result.error.message
    )
    assert 20 <= len(result.calls) < 30
    assert all(c.status == "cancelled" for c in result.calls)
