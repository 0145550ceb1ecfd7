"""The worker's job loop: run one job at a time with the engine, send its result back.

Owns :class:`_Worker` (messages dispatched while a job runs), the result's frame (call
records the parent answered cross as their id alone), the per-job CPU budget, the warm-up run
and :func:`_become_worker` (descriptors, environment, rlimits, then serve). It must not import
:mod:`.parent` or the model-facing text; forking workers is :mod:`.zygote`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import resource
import socket
import sys
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import anyio

from scriptgate.runtime.abort import AbortController
from scriptgate.sandbox.bridge import ToolReply, ToolSpec
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.events import RunEvent
from scriptgate.sandbox.isolation.worker_bridge import PipeToolBridge
from scriptgate.sandbox.isolation.worker_channel import _ENCODE, _Channel
from scriptgate.sandbox.result import CallRecord, Limits, ScriptError, ScriptResult

_RESULT_MAX_DEPTH_MESSAGE = "the script's result could not be encoded as JSON"


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set_cpu_budget(timeout: float | None) -> None:
    """Soft CPU limit = used so far + this job's budget (never above the lifetime hard limit)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if timeout is None:
        soft = hard
    else:
        soft = math.ceil(_cpu_seconds() + timeout) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _limits_from_json(data: object) -> Limits:
    if not isinstance(data, dict):
        return Limits()
    names = {f.name for f in fields(Limits)}
    return Limits(**{k: v for k, v in data.items() if k in names})


def _specs_from_json(data: object) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict):
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    specs.append(ToolSpec.from_json(item))
    return specs


def _result_json(
    result: ScriptResult, answered: dict[str, ToolReply] | None = None
) -> dict[str, Any]:
    """``result.to_json()`` with each call record as an array, or as its id alone.

    A record is ``[id, tool, arguments, status, duration_ms, error]`` (a third of
    the bytes of the record objects). A call the parent answered (``answered``:
    :attr:`PipeToolBridge.answered`) whose record says what the reply said is only
    its id: the parent ran that call and holds every field of its record already
    (its id, tool name and arguments are the record's own, which the engine hands
    the bridge; a run's records are most of its result, and encoding, decoding and
    checking them cost each side more than a round trip's frames). A record the
    engine changed after the reply (none does today) crosses whole.
    """
    data = dataclasses.replace(result, calls=(), value=None).to_json()
    # the value as it is: to_json describes a NaN for strict JSON, but the parent's
    # ScriptResult.value keeps the float, as in-process (the wire allows NaN; findings15 E08)
    data["value"] = result.value
    if not answered:
        data["calls"] = [
            [call.id, call.tool, call.arguments, call.status, call.duration_ms, call.error]
            for call in result.calls
        ]
        return data
    records: list[Any] = []
    append = records.append
    for call in result.calls:
        reply = answered.get(call.id)
        if (
            reply is not None
            and reply.status == call.status
            and reply.duration_ms == call.duration_ms
            and reply.error == call.error
        ):
            append(call.id)
            continue
        append([call.id, call.tool, call.arguments, call.status, call.duration_ms, call.error])
    data["calls"] = records
    return data


def _encodable_call(call: CallRecord) -> CallRecord:
    """``call``, or a copy whose arguments are ``{}`` when they have no JSON text."""
    try:
        _ENCODE(call.arguments)
    except (TypeError, ValueError, RecursionError):
        return dataclasses.replace(call, arguments={})
    return call


def _result_frame(
    result: ScriptResult,
    message: dict[str, Any],
    answered: dict[str, ToolReply] | None = None,
) -> bytes:
    """The frame of ``message`` with ``result`` (:func:`_result_json`) as its ``"result"``.

    Encoded once. Call arguments that cannot be encoded are dropped from their
    records; a result that still cannot be encoded becomes a sandbox error (its
    output and calls are kept).
    """
    message["result"] = _result_json(result, answered)
    try:
        return _Channel.encode(message)
    except (TypeError, ValueError, RecursionError):
        pass
    # a call record's own arguments may have no JSON text (an int of more than 4300
    # digits the parent was never sent): those arguments are dropped, the rest of the
    # record kept (test_process_unencodable_call_arguments)
    result = dataclasses.replace(result, calls=tuple(map(_encodable_call, result.calls)))
    message["result"] = _result_json(result, answered)
    try:
        return _Channel.encode(message)
    except (TypeError, ValueError, RecursionError) as exc:
        fallback = ScriptResult(
            ok=False,
            output=result.output,
            error=ScriptError("sandbox", type(exc).__name__, f"{_RESULT_MAX_DEPTH_MESSAGE}: {exc}"),
            calls=result.calls,
            wall_time=result.wall_time,
        )
        message["result"] = _result_json(fallback, answered)
        return _Channel.encode(message)


class _NoTools:
    """The bridge of the warm-up run (it makes no calls)."""

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        return ToolReply(status="error", error="no tools while warming up")


_WARM_UP = """
import json, math, re
def square(n):
    return n * n
values = [square(i) for i in range(10)]
print(f"{sum(values):>5}", json.dumps({'v': values[:2]}), re.sub('a', 'b', 'aa'), math.sqrt(4))
values
"""


async def _warm_up() -> None:
    """Run one small script so the first real job does not pay for lazy set-up."""
    # Async scripts only: no worker thread may exist when the zygote forks.
    for source in ("await gather()\n" + _WARM_UP, "await gather()\n1"):
        with contextlib.suppress(Exception):
            await run_script(source, bridge=_NoTools(), tools=[], limits=Limits())


class _Worker:
    """The job loop: one job at a time, messages dispatched while it runs."""

    def __init__(
        self,
        channel: _Channel,
        cpu_lifetime: float | None,
        *,
        warm_up: bool,
        jail_report: list[list[Any]] | None = None,
    ) -> None:
        self.channel = channel
        self.warm_up = warm_up
        self.jail_report = jail_report
        self.cpu_lifetime = cpu_lifetime
        self.session_state: dict[str, Any] | None = None
        self.bridge: PipeToolBridge | None = None
        self.controller: AbortController | None = None

    async def serve(self) -> None:
        if self.warm_up:
            await _warm_up()
        self.channel.send({"op": "ready", "pid": os.getpid(), "jail": self.jail_report})
        send_jobs, receive_jobs = anyio.create_memory_object_stream[dict[str, Any]](1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._jobs, receive_jobs)
            async with send_jobs:
                while True:
                    message = await self.channel.recv()
                    if message is None:
                        break
                    op = message.get("op")
                    if op == "run":
                        self.bridge = PipeToolBridge(self.channel, self._control)
                        self.controller = AbortController()
                        await send_jobs.send(message)
                    elif self.bridge is not None:
                        self.bridge.dispatch(message)
                    else:
                        self._control(message)
            # The parent closed the channel: stop whatever is running.
            if self.bridge is not None:
                self.bridge.cancel_all()
            tg.cancel_scope.cancel()

    def _control(self, message: dict[str, Any]) -> bool:
        """Handle an ``abort``; anything else is not a control message."""
        if message.get("op") != "abort":
            return False
        if self.controller is not None:
            reason = message.get("reason")
            self.controller.abort(reason if isinstance(reason, str) else None)
        return True

    async def _jobs(self, receive: Any) -> None:
        async with receive:
            async for job in receive:
                await self._run(job)

    async def _run(self, job: dict[str, Any]) -> None:
        bridge, controller = self.bridge, self.controller
        assert bridge is not None
        assert controller is not None
        try:
            limits = _limits_from_json(job.get("limits"))
            tools: Sequence[ToolSpec] = _specs_from_json(job.get("tools"))
            source = job.get("source")
            prefix = job.get("call_id_prefix")
            state: dict[str, Any] | None = None
            if job.get("session"):
                if self.session_state is None:
                    self.session_state = {}
                state = self.session_state
            _set_cpu_budget(limits.timeout)
            channel = self.channel

            def stream(event: RunEvent) -> None:
                if event.kind == "output":  # (the parent sees the calls itself)
                    channel.send({"op": "event", "text": event.text})

            result = await run_script(
                source if isinstance(source, str) else "",
                bridge=bridge,
                tools=tools,
                limits=limits,
                state=state,
                signal=controller.signal,
                call_id_prefix=prefix if isinstance(prefix, str) else "script",
                on_event=stream if job.get("stream") is True else None,
            )
            frame = self._result_frame(result, bridge.answered)
        except BaseException as exc:  # the engine never raises; this is the last line of defence
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
            failure = ScriptResult(
                ok=False,
                error=ScriptError("sandbox", type(exc).__name__, f"the worker failed: {exc}"),
            )
            frame = self._result_frame(failure)
        self.channel.write(frame)

    def _result_frame(
        self,
        result: ScriptResult,
        answered: dict[str, ToolReply] | None = None,
    ) -> bytes:
        used = _cpu_seconds()
        retire = self.cpu_lifetime is not None and used > self.cpu_lifetime / 2
        return _result_frame(
            result, {"op": "result", "result": None, "cpu": used, "retire": retire}, answered
        )


def _isolate_descriptors(channel_fd: int) -> _Channel:
    """Channel on a private descriptor, 0/1 → /dev/null, every other descriptor closed."""
    sock = socket.socket(fileno=channel_fd)
    sock.setblocking(True)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    keep = sock.fileno()
    if keep > 2:
        os.closerange(3, keep)
    os.closerange(max(keep + 1, 3), 1 << 16)
    return _Channel(sock)


def _apply_limits(config: dict[str, Any]) -> None:
    def set_limit(which: int, value: int) -> None:
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))

    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_FSIZE, 0)
    set_limit(resource.RLIMIT_NOFILE, int(config.get("nofile", 32)))
    memory = config.get("memory_bytes")
    if isinstance(memory, int) and memory > 0:
        set_limit(resource.RLIMIT_AS, memory)
    cpu = config.get("cpu_lifetime")
    if isinstance(cpu, int | float) and cpu > 0:
        set_limit(resource.RLIMIT_CPU, math.ceil(cpu))


def _become_worker(
    channel_fd: int,
    config: dict[str, Any],
    *,
    warm_up: bool,
    jail_report: list[list[Any]] | None = None,
) -> None:
    """Jail this process (descriptors, environment, limits) and serve jobs until EOF."""
    channel = _isolate_descriptors(channel_fd)
    os.environ.clear()
    recursion = config.get("recursion")
    if isinstance(recursion, int) and recursion > 0:
        sys.setrecursionlimit(recursion)
    _apply_limits(config)
    # From here on nothing may write to stderr: the parent reads it only before "ready".
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 2)
    os.close(devnull)
    cpu = config.get("cpu_lifetime")
    worker = _Worker(
        channel,
        float(cpu) if isinstance(cpu, int | float) else None,
        warm_up=warm_up,
        jail_report=jail_report,
    )
    anyio.run(worker.serve, backend="asyncio")
