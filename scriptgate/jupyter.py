"""Jupyter integration: ``%load_ext scriptgate`` and the ``%%scriptgate`` cell magic.

In a notebook::

    sandbox = Sandbox(tools, before_tool_call=policy.before_tool_call)

    %load_ext scriptgate

    %%scriptgate sandbox
    rows = find(pattern="**/*.py")
    len(rows)

The cell body runs as a script in the named sandbox (or session) through its
``run_sync``, which works while the notebook's own event loop is running. The
cell's value is the :class:`~scriptgate.sandbox.result.ScriptResult`, shown
with its output, value, error and call trace; it is also stored in the
notebook's namespace as ``scriptgate_result``.
"""

from __future__ import annotations

import shlex
from typing import Any, Protocol

from scriptgate.errors import ConfigurationError
from scriptgate.sandbox.result import ScriptResult

__all__ = ["SyncRunner", "load_ipython_extension", "run_cell"]

DEFAULT_TARGET = "sandbox"


class SyncRunner(Protocol):
    """Anything with ``run_sync(code) -> ScriptResult``: a ``Sandbox`` or a session."""

    def run_sync(self, code: str) -> ScriptResult:
        """Run ``code`` and wait for its result."""
        ...


def run_cell(line: str, cell: str, namespace: dict[str, Any]) -> ScriptResult:
    """Run ``cell`` in the sandbox named on the magic's ``line`` (default ``sandbox``)."""
    words = shlex.split(line)
    if len(words) > 1:
        raise ConfigurationError("usage: %%scriptgate [SANDBOX_VARIABLE]")
    name = words[0] if words else DEFAULT_TARGET
    target = namespace.get(name)
    if target is None:
        raise ConfigurationError(
            f"%%scriptgate: no variable {name!r} in the notebook; create one with "
            f"`{name} = Sandbox(tools)` or name another: %%scriptgate my_sandbox"
        )
    run_sync = getattr(target, "run_sync", None)
    if not callable(run_sync):
        raise ConfigurationError(
            f"%%scriptgate: {name!r} is a {type(target).__name__}, not a Sandbox or session"
        )
    result = run_sync(cell)
    if not isinstance(result, ScriptResult):
        raise ConfigurationError(f"%%scriptgate: {name}.run_sync() did not return a ScriptResult")
    namespace["scriptgate_result"] = result
    return result


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%%scriptgate`` cell magic (called by ``%load_ext scriptgate``)."""

    def scriptgate(line: str, cell: str) -> ScriptResult | None:
        try:
            return run_cell(line, cell, ipython.user_ns)
        except ConfigurationError as exc:
            print(exc)
            return None

    ipython.register_magic_function(scriptgate, magic_kind="cell", magic_name="scriptgate")
