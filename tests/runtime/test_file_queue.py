"""with_file_mutation_queue (pi §7): FIFO per real path, different files in parallel."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

from scriptgate.runtime.file_queue import (
    file_mutation_queue_size,
    mutation_key,
    with_file_mutation_queue,
)


@pytest.mark.anyio
async def test_file_queue_same_file_runs_fifo_one_at_a_time(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    log: list[str] = []
    first_inside = anyio.Event()
    release_first = anyio.Event()

    async def first() -> str:
        log.append("first start")
        first_inside.set()
        await release_first.wait()
        log.append("first end")
        return "first"

    def job(name: str) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            log.append(f"{name} start")
            await anyio.lowlevel.checkpoint()
            log.append(f"{name} end")
            return name

        return run

    results: dict[str, str] = {}

    async def enqueue(name: str, fn: Callable[[], Awaitable[str]]) -> None:
        results[name] = await with_file_mutation_queue(target, fn)

    async with anyio.create_task_group() as tg:
        tg.start_soon(enqueue, "first", first)
        await first_inside.wait()
        for name in ("second", "third", "fourth"):
            tg.start_soon(enqueue, name, job(name))
            await anyio.wait_all_tasks_blocked()
        release_first.set()
    assert log == [
        "first start",
        "first end",
        "second start",
        "second end",
        "third start",
        "third end",
        "fourth start",
        "fourth end",
    ]
    assert results == {n: n for n in ("first", "second", "third", "fourth")}
    assert file_mutation_queue_size() == 0


@pytest.mark.anyio
async def test_file_queue_different_files_run_in_parallel(tmp_path: Path) -> None:
    a_inside = anyio.Event()
    b_inside = anyio.Event()

    async def on_a() -> None:
        a_inside.set()
        await b_inside.wait()  # would deadlock if b had to wait for a

    async def on_b() -> None:
        b_inside.set()
        await a_inside.wait()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(with_file_mutation_queue, tmp_path / "a", on_a)
            tg.start_soon(with_file_mutation_queue, tmp_path / "b", on_b)
    assert file_mutation_queue_size() == 0


@pytest.mark.anyio
async def test_file_queue_symlink_and_relative_spelling_share_a_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real.txt"
    real.write_text("x")
    link = tmp_path / "link.txt"
    os.symlink(real, link)
    monkeypatch.chdir(tmp_path)
    assert mutation_key("real.txt") == mutation_key(link) == mutation_key(str(real))
    assert mutation_key(tmp_path / "sub" / ".." / "real.txt") == mutation_key(real)

    log: list[str] = []
    inside = anyio.Event()
    release = anyio.Event()

    async def hold() -> None:
        log.append("hold start")
        inside.set()
        await release.wait()
        log.append("hold end")

    async def second() -> None:
        log.append("second")

    async with anyio.create_task_group() as tg:
        tg.start_soon(with_file_mutation_queue, "real.txt", hold)
        await inside.wait()
        tg.start_soon(with_file_mutation_queue, link, second)
        await anyio.wait_all_tasks_blocked()
        assert log == ["hold start"]
        release.set()
    assert log == ["hold start", "hold end", "second"]


def test_file_queue_missing_file_uses_resolved_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "new.txt"
    assert mutation_key(missing) == os.path.realpath(str(missing))


@pytest.mark.anyio
async def test_file_queue_error_is_reraised_and_queue_released(tmp_path: Path) -> None:
    async def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await with_file_mutation_queue(tmp_path / "f", fail)
    assert file_mutation_queue_size() == 0

    async def ok() -> str:
        return "ok"

    assert await with_file_mutation_queue(tmp_path / "f", ok) == "ok"
    assert file_mutation_queue_size() == 0


@pytest.mark.anyio
async def test_file_queue_error_in_holder_lets_the_next_waiter_run(tmp_path: Path) -> None:
    inside = anyio.Event()
    release = anyio.Event()
    ran: list[str] = []

    async def fail() -> None:
        inside.set()
        await release.wait()
        raise ValueError("boom")

    async def after() -> None:
        ran.append("after")

    async def guarded() -> None:
        with pytest.raises(ValueError, match="boom"):
            await with_file_mutation_queue(tmp_path / "f", fail)

    async with anyio.create_task_group() as tg:
        tg.start_soon(guarded)
        await inside.wait()
        tg.start_soon(with_file_mutation_queue, tmp_path / "f", after)
        await anyio.wait_all_tasks_blocked()
        release.set()
    assert ran == ["after"]
    assert file_mutation_queue_size() == 0


@pytest.mark.anyio
async def test_file_queue_cancelled_waiter_leaves_queue_consistent(tmp_path: Path) -> None:
    inside = anyio.Event()
    release = anyio.Event()
    log: list[str] = []

    async def hold() -> None:
        inside.set()
        await release.wait()
        log.append("hold")

    async def never() -> None:
        log.append("cancelled waiter ran")

    async def last() -> None:
        log.append("last")

    async with anyio.create_task_group() as tg:
        tg.start_soon(with_file_mutation_queue, tmp_path / "f", hold)
        await inside.wait()
        waiter_scope = anyio.CancelScope()

        async def cancellable() -> None:
            with waiter_scope:
                await with_file_mutation_queue(tmp_path / "f", never)

        tg.start_soon(cancellable)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(with_file_mutation_queue, tmp_path / "f", last)
        await anyio.wait_all_tasks_blocked()
        waiter_scope.cancel()
        await anyio.wait_all_tasks_blocked()
        release.set()
    assert log == ["hold", "last"]
    assert file_mutation_queue_size() == 0
