"""The parent's warm-up job: a new worker runs two private scripts before it enters the pool.

Owns the warm-up script, its private no-op tool and :func:`warm_up` (the job's whole
exchange, driven synchronously by the refill thread of :mod:`.parent`). It must not import
:mod:`.parent` (which imports it) or anything that records, audits or renders a run.

A worker forked from the zygote shares the zygote's memory copy-on-write and starts with
cold caches: its first run used to pay for the first touch of the engine, the tool-call
path and the channel (a warm run cost 5–10× a reused worker's under load). Before a new worker goes
into the pool the parent runs this job on it: a sync and an async part with a few
calls of a tool that exists only here (:data:`WARM_TOOL`), answered by :func:`warm_up`
itself with a fixed reply, never through a bridge. So nothing of it reaches a user run:
it makes no :class:`~scriptgate.sandbox.result.CallRecord` of any user run, no audit line,
no output (the result is read, checked and dropped), and every run has fresh globals. The
worker still serves exactly one user run afterwards.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.bridge import ToolReply, ToolSpec
from scriptgate.sandbox.isolation.framing import _frame, _reply_frame
from scriptgate.sandbox.result import Limits

__all__ = [
    "WARM_ASYNC_SOURCE",
    "WARM_CALLS",
    "WARM_SOURCE",
    "WARM_TOOL",
    "WarmUpFailed",
    "warm_limits",
    "warm_up",
]

WARM_TOOL = ToolSpec(
    name="scriptgate_warm_up_noop",
    identifier="scriptgate_warm_up_noop",
    description="private warm-up tool of the process pool",
    has_output_schema=False,
)
"""The warm-up job's only tool; no user run is ever offered it."""

WARM_CALLS = 8
"""How many tool calls the warm-up job makes (the sync part's loop and the async gather)."""

_HALF = WARM_CALLS // 2

WARM_SOURCE = f"""
import json, math, re
x = 1 + 2
def square(n):
    return n * n
values = [square(i) for i in range(10)]
replies = [scriptgate_warm_up_noop(i=i) for i in range({_HALF})]
print(f"{{sum(values):>5}}", json.dumps({{'v': values[:2]}}), re.sub('a', 'b', 'aa'), math.sqrt(4))
try:
    [][1]
except IndexError as exc:
    caught = str(exc)
{{'n': len(replies), 'x': x, 'caught': caught}}
"""
"""The sync part: the tool-call path in the script's greenlet, output, a caught error, a value."""

WARM_ASYNC_SOURCE = f"""
async def one(i):
    return await scriptgate_warm_up_noop(i=i)
replies = await gather(*[one(i) for i in range({WARM_CALLS - _HALF})])
len(replies)
"""
"""The async part: concurrent calls through ``gather``."""

_REPLY = ToolReply(status="ok", value="ok", duration_ms=0)


class WarmUpFailed(Exception):
    """The worker did not finish the warm-up job as an honest worker would; ``str()``: why."""


def warm_limits(limits: Limits) -> Limits:
    """The warm-up job's limits: the pool's, without the budgets the job itself would hit.

    The tool-call quotas, the output, result and step budgets are the user's runs' (a pool
    with ``max_tool_calls=5`` must still warm its workers); the timeout is at least 10 s.
    """
    steps = limits.max_steps
    return dataclasses.replace(
        limits,
        timeout=None if limits.timeout is None else max(limits.timeout, 10.0),
        max_steps=None if steps is not None and steps < 100_000 else steps,
        max_tool_calls=None,
        max_tool_calls_per_tool={},
        max_output_chars=None,
        max_result_bytes=None,
        max_source_bytes=max(limits.max_source_bytes, 4096),
        max_recursion=max(limits.max_recursion, 100),
    )


def _job(source: str, limits: dict[str, Any]) -> dict[str, Any]:
    return {
        "op": "run",
        "source": source,
        "tools": [WARM_TOOL.to_json()],
        "limits": limits,
        "call_id_prefix": "warm",
        "session": False,
        "stream": False,
    }


def warm_up(
    recv: Callable[[float], dict[str, Any]],
    write: Callable[[bytes, float], None],
    limits: dict[str, Any],
    timeout: float,
) -> None:
    """Run the warm-up job on a ready worker; raises :class:`WarmUpFailed` (or what I/O raises).

    ``recv(deadline)`` returns the worker's next message (blocking until the
    ``time.monotonic()`` deadline), ``write(frame, deadline)`` sends a frame; ``limits`` are
    :func:`warm_limits` of the pool's, as JSON (so the job takes a user job's paths). Every call is
    answered with a fixed reply; anything but calls of :data:`WARM_TOOL` and an ``ok``
    result fails the warm-up (the caller then discards the worker).
    """
    deadline = time.monotonic() + timeout
    for source in (WARM_SOURCE, WARM_ASYNC_SOURCE):
        write(_frame(_job(source, limits)), deadline)
        calls = 0
        while True:
            message = recv(deadline)
            op = message.get("op")
            if op == "call":
                call_id = message.get("id")
                calls += 1
                if (
                    not isinstance(call_id, str)
                    or message.get("tool") != WARM_TOOL.name
                    or calls > WARM_CALLS
                ):
                    raise WarmUpFailed("an unexpected tool call in the warm-up job")
                write(_reply_frame(call_id, "ok", _REPLY), deadline)
            elif op == "result":
                result = message.get("result")
                if not isinstance(result, dict) or result.get("ok") is not True:
                    raise WarmUpFailed("the warm-up job failed")
                break
            elif op != "cancel":
                raise WarmUpFailed(f"an unexpected message {str(op)[:40]!r} in the warm-up job")
