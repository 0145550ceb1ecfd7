"""Process mode: the refill thread survives the zygote being dropped under it (findings2).

At interpreter exit the runner's finalizer closes the zygote without the zygote lock while
the refill thread may be forking from it: the refill thread then popped an empty list and
printed an ``IndexError`` traceback. Here the real zygote is stopped (``SIGSTOP``) so the
fork request waits in its socket, the finalizer's own function empties the box, and the
fork must end in the runner's clean start error (or a fresh worker), never ``IndexError``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

from scriptgate.sandbox.isolation.parent import ProcessRunner, _kill_all, _StartError
from scriptgate.sandbox.result import Limits

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="zygote fork server (Linux)")


def _waits_on_stream_socket(thread: threading.Thread) -> bool:
    # the kernel's own view: the thread sleeps in recv() (a socket with a timeout polls first)
    try:
        with open(f"/proc/self/task/{thread.native_id}/wchan") as wchan:
            where = wchan.read()
        return "unix_stream_read" in where or "poll" in where
    except OSError:
        return False


def test_process_fork_zygote_dropped_concurrently_is_a_clean_error() -> None:
    runner = ProcessRunner(Limits(timeout=10.0), pool_size=0, start_timeout=10.0)
    try:
        runner._fork().reap()  # starts the zygote
        zygote = runner._zygote[0]
        os.killpg(zygote.popen.pid, signal.SIGSTOP)  # the zygote and its jail wrapper
        outcome: list[BaseException | str] = []

        def fork() -> None:
            try:
                runner._fork().reap()
                outcome.append("forked")
            except BaseException as exc:  # the test reports what came out
                outcome.append(exc)

        thread = threading.Thread(target=fork)
        thread.start()
        while not _waits_on_stream_socket(thread) and thread.is_alive():
            threading.Event().wait(0.005)  # the request is sent: the fork waits in recv()
        assert thread.is_alive(), outcome
        _kill_all(set(), runner._zygote)  # what the finalizer does at exit, without the lock
        thread.join(30)
        assert not thread.is_alive()
        assert len(outcome) == 1
        result = outcome[0]
        assert result == "forked" or isinstance(result, _StartError), repr(result)
    finally:
        runner.close()
