"""``run_quiet_on_interrupt``: asyncio's log leaves out tasks ended by the CLI's own interrupt.

A second SIGINT in ``scriptgate run`` raises ``KeyboardInterrupt`` inside whichever task is
running (an MCP server's stdin writer); asyncio's shutdown then logged the command's task,
ended by a group of that interrupt, with a full traceback after "scriptgate: interrupted".
"""

from __future__ import annotations

import asyncio
import logging

import anyio
import pytest

from scriptgate.interrupts import run_quiet_on_interrupt


def _logged(exc: BaseException, caplog: pytest.LogCaptureFixture) -> list[str]:
    async def report() -> None:
        asyncio.get_running_loop().call_exception_handler(
            {"message": "unhandled exception during asyncio.run() shutdown", "exception": exc}
        )

    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        anyio.run(run_quiet_on_interrupt, report)
    return [record.getMessage() for record in caplog.records]


def test_interrupts_quiet_leaves_out_a_group_of_interrupts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    group = BaseExceptionGroup("tg", [BaseExceptionGroup("inner", [KeyboardInterrupt()])])
    assert _logged(group, caplog) == []
    assert _logged(KeyboardInterrupt(), caplog) == []


def test_interrupts_quiet_still_logs_other_errors(caplog: pytest.LogCaptureFixture) -> None:
    mixed = BaseExceptionGroup("tg", [KeyboardInterrupt(), ValueError("real")])
    assert _logged(mixed, caplog) != []
    assert _logged(ValueError("real"), caplog) != []
