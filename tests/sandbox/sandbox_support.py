"""Helpers shared by the sandbox tests: sibling-module loading, per-mode sandboxes, results.

Importable as ``sandbox_support`` (``pythonpath`` in ``pyproject.toml`` lists
``tests/sandbox``; the tests run under ``--import-mode=importlib``, so sibling modules are
not importable by plain name otherwise).

- :func:`load` loads a data module of ``tests/sandbox/`` (``attacks.py``,
  ``attacks_extra.py``…) once, under ``scriptgate_tests_sandbox_<stem>``, so every test
  file sees the same module object (one ``Attack`` class).
- :data:`MODES`: both isolation modes (``tests/sandbox/world/conftest.py`` makes the
  ``sandbox`` fixture of them).
- :func:`value`, :func:`refused`, :func:`plain`, :func:`jsonish`, :func:`same_as_python`:
  a script's last value, its refusal, and plain CPython's answer for the same source.
- :class:`EchoTool`: a host ``echo`` tool that counts every execution (the dead-after-run,
  closed-generator and ``eval``/``exec`` tests compare it with the run's records).
- :func:`corpus_runs_as_written`: a corpus script of ``world/test_corpus_files.py`` runs
  and gives plain Python's value (the class-idiom tests).
"""

from __future__ import annotations

import gc
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Isolation, Sandbox

__all__ = [
    "HERE",
    "MODES",
    "EchoTool",
    "corpus_runs_as_written",
    "jsonish",
    "load",
    "plain",
    "refused",
    "same_as_python",
    "value",
]

HERE = Path(__file__).parent
"""``tests/sandbox``."""
MODES: list[Isolation] = ["in_process", "process"]
"""Both isolation modes, for ``params=``."""


def load(file: str) -> ModuleType:
    """``tests/sandbox/<file>`` (a relative path), loaded once as ``scriptgate_tests_sandbox_<stem>``."""
    path = HERE / file
    name = "scriptgate_tests_sandbox_" + path.stem
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


FRESH_LIMITS = Limits(timeout=10, max_steps=2_000_000)
"""The limits of :func:`run_fresh`: generous, with a step budget (the compile tests' own)."""


def run_fresh(source: str) -> ScriptResult:
    """``source`` run once in a new in-process sandbox under :data:`FRESH_LIMITS`."""
    result: ScriptResult = anyio.run(Sandbox([], limits=FRESH_LIMITS).run, source)
    return result


def fresh_value(source: str) -> Any:
    """The last value of :func:`run_fresh`; fails the test with the error if the run failed."""
    result = run_fresh(source)
    assert result.ok, result.error
    return result.value


def value(box: Sandbox, source: str) -> Any:
    """The script's last value; fails the test with the error if the run failed."""
    result: ScriptResult = box.run_sync(source)
    assert result.ok, result.error
    return result.value


def refused(box: Sandbox, source: str, *expected: str) -> None:
    """The script fails with the last of ``expected`` in its message.

    ``refused(box, src, words)`` checks the message; ``refused(box, src, kind, words)``
    also checks ``error.kind``.
    """
    *kind, words = expected
    result = box.run_sync(source)
    assert result.error is not None, result.value
    if kind:
        assert result.error.kind == kind[0], result.error
    assert words in result.error.message, result.error.message


def plain(source: str) -> Any:
    """What plain Python gives for ``source`` whose last line is an expression."""
    *body, last = source.rstrip().split("\n")
    scope: dict[str, Any] = {"__name__": "__main__"}
    # dont_inherit: this module's `from __future__ import annotations` must not apply
    exec(compile("\n".join(body), "<plain>", "exec", dont_inherit=True), scope)
    return eval(compile(last, "<plain>", "eval", dont_inherit=True), scope)


def jsonish(obj: Any) -> Any:
    """``obj`` as the sandbox reports it (tuples become lists)."""
    if isinstance(obj, (list, tuple)):
        return [jsonish(v) for v in obj]
    if isinstance(obj, dict):
        return {k: jsonish(v) for k, v in obj.items()}
    return obj


def same_as_python(box: Sandbox, source: str) -> None:
    """The script runs and its last value is plain Python's."""
    assert value(box, source) == jsonish(plain(source))


def corpus_runs_as_written(box: Sandbox, name: str) -> None:
    """Corpus script ``name`` (no longer a finding) runs and its value is plain Python's."""
    corpus = load("world/test_corpus_files.py")
    assert name not in corpus.FINDINGS
    style, source = corpus.CORPUS[name]
    result = box.run_sync(source)
    assert result.ok, result.error
    assert result.value == corpus.plain(style, source)


class EchoTool:
    """A host tool ``echo`` that records the params of every execution in :attr:`executed`.

    Its result is ``{key: params}`` with the text ``text``. Tests compare
    :attr:`executed` with the run's call records: an execution no run recorded is script
    code the host ran outside a run.
    """

    def __init__(self, key: str = "args", text: str = "echoed") -> None:
        self.executed: list[Any] = []
        """The params of every execution, in order."""
        self._key = key
        self._text = text
        self.tool = AgentTool(
            name="echo",
            description="Echo the arguments.",
            parameters={"type": "object", "additionalProperties": True},
            execute=self._execute,
            output_schema={"type": "object"},
        )
        """The tool to hand to a :class:`Sandbox`."""

    def _execute(
        self, tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        self.executed.append(params)
        return AgentToolResult(
            content=(TextContent(self._text),), structured_content={self._key: params}
        )

    def unrecorded(self, before: int, *recorded: int) -> list[Any]:
        """Executions past ``before`` beyond the ``recorded`` counts (after a ``gc``)."""
        gc.collect()
        return self.executed[before + sum(recorded) :]


WORKER_FRAMES = r"""
import json, os, socket, sys, time
sock = socket.socket(fileno=0)
def send(m):
    d = json.dumps(m).encode(); sock.sendall(len(d).to_bytes(4, "big") + d)
def send_raw(d):
    sock.sendall(len(d).to_bytes(4, "big") + d)
buf = b""
def recv():
    global buf
    while True:
        if len(buf) >= 4:
            n = int.from_bytes(buf[:4], "big")
            if len(buf) >= 4 + n:
                m = json.loads(buf[4:4+n]); buf = buf[4+n:]; return m
        c = sock.recv(65536)
        if not c: sys.exit(0)
        buf += c
"""
"""The worker's side of the frame protocol in raw Python, for hostile-worker tests: ``send``,
``send_raw`` (a frame of given bytes) and ``recv`` over the inherited channel (fd 0)."""


def ends_at_the_deadline(source: str, within: float) -> None:
    """``source`` run under a 0.3 s deadline must end with the timeout, within ``within`` s."""
    import time

    sandbox = Sandbox(limits=Limits(timeout=0.3, max_steps=None, memory_bytes=None))
    try:
        start = time.monotonic()
        result = sandbox.run_sync(source)
        elapsed = time.monotonic() - start
    finally:
        sandbox.close()
    assert result.error is not None, "ran to the end"
    assert result.error.kind == "limit"
    assert "timed out" in result.error.message
    assert elapsed < within, f"{elapsed:.1f} s under a 0.3 s deadline"
