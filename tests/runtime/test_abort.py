"""AbortSignal / AbortController: pi's cancellation contract bridged to anyio."""

from __future__ import annotations

import anyio
import pytest

from scriptgate.runtime.abort import AbortController, AbortError, AbortSignal


def test_abort_signal_starts_not_aborted() -> None:
    controller = AbortController()
    assert controller.signal.aborted is False
    assert controller.signal.reason is None
    controller.signal.throw_if_aborted()  # no raise


def test_abort_default_reason_is_abort_error() -> None:
    controller = AbortController()
    controller.abort()
    assert controller.signal.aborted is True
    assert isinstance(controller.signal.reason, AbortError)
    assert str(controller.signal.reason) == "This operation was aborted"


def test_abort_keeps_first_reason() -> None:
    controller = AbortController()
    controller.abort("first")
    controller.abort("second")
    assert controller.signal.reason == "first"


def test_abort_throw_if_aborted_raises_reason_or_abort_error() -> None:
    err = ValueError("stop now")
    signal = AbortController.aborted_signal(err)
    with pytest.raises(ValueError, match="stop now"):
        signal.throw_if_aborted()
    text_signal = AbortController.aborted_signal("user pressed escape")
    with pytest.raises(AbortError, match="user pressed escape"):
        text_signal.throw_if_aborted()


def test_abort_listeners_fire_once_with_reason() -> None:
    controller = AbortController()
    seen: list[object] = []
    controller.signal.add_listener(seen.append)
    controller.abort("why")
    controller.abort("again")
    assert seen == ["why"]


def test_abort_listener_added_after_abort_fires_at_once() -> None:
    signal = AbortController.aborted_signal("done")
    seen: list[object] = []
    signal.add_listener(seen.append)
    assert seen == ["done"]


def test_abort_listener_removed_does_not_fire() -> None:
    controller = AbortController()
    seen: list[object] = []
    remove = controller.signal.add_listener(seen.append)
    remove()
    remove()  # idempotent
    controller.abort()
    assert seen == []


@pytest.mark.anyio
async def test_abort_wait_returns_reason() -> None:
    controller = AbortController()
    got: list[object] = []

    async def waiter() -> None:
        got.append(await controller.signal.wait())

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        controller.abort("bye")
    assert got == ["bye"]
    assert controller.signal._waiters == []


@pytest.mark.anyio
async def test_abort_wait_on_aborted_signal_returns_immediately() -> None:
    signal = AbortController.aborted_signal("already")
    assert await signal.wait() == "already"


@pytest.mark.anyio
async def test_abort_wait_cancelled_leaves_no_waiter() -> None:
    controller = AbortController()
    with anyio.move_on_after(0):
        await controller.signal.wait()
    assert controller.signal._waiters == []
    assert controller.signal.aborted is False


@pytest.mark.anyio
async def test_abort_cancel_scope_cancels_running_work() -> None:
    controller = AbortController()
    reached_end = False

    async def work() -> None:
        nonlocal reached_end
        async with controller.signal.cancel_scope() as scope:
            await anyio.sleep_forever()
        reached_end = True
        assert scope.cancelled_caught

    async with anyio.create_task_group() as tg:
        tg.start_soon(work)
        await anyio.wait_all_tasks_blocked()
        controller.abort()
    assert reached_end
    assert controller.signal._listeners == []


@pytest.mark.anyio
async def test_abort_cancel_scope_on_aborted_signal_cancels_at_once() -> None:
    signal = AbortController.aborted_signal()
    async with signal.cancel_scope() as scope:
        await anyio.sleep_forever()
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_abort_cancel_scope_removes_listener_when_done() -> None:
    controller = AbortController()
    async with controller.signal.cancel_scope():
        assert len(controller.signal._listeners) == 1
    assert controller.signal._listeners == []


def test_abort_signal_repr() -> None:
    assert repr(AbortSignal()) == "AbortSignal(aborted=False, reason=None)"
