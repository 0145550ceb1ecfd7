"""Running model-written Python: policy, guards, limits, tools-as-functions, stubs.

- :class:`Sandbox` / :class:`SandboxSession`: run scripts in which every tool is a
  plain function backed by :func:`scriptgate.runtime.run_tool_call`;
- :class:`ScriptResult`, :class:`ScriptError`, :class:`CallRecord`, :class:`Limits`;
- :class:`ToolError` / :class:`ToolDenied`: what a failed or refused call raises
  inside a script;
- :func:`render_stubs`: the Python API the model sees; :func:`codemode_tool`: one
  ``python`` tool for an agent.
"""

from __future__ import annotations

from scriptgate.sandbox.events import RunEvent
from scriptgate.sandbox.guards.errors import ToolDenied, ToolError
from scriptgate.sandbox.model.codemode_tool import (
    CodemodeSourceError,
    CodemodeTool,
    codemode_tool,
    format_script_result,
    parse_codemode_source,
)
from scriptgate.sandbox.model.stubs import render_stubs, render_tool_sample, schema_to_type
from scriptgate.sandbox.naming import to_identifier
from scriptgate.sandbox.result import CallRecord, Limits, ScriptError, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox, SandboxSession

__all__ = [
    "CallRecord",
    "CodemodeSourceError",
    "CodemodeTool",
    "Limits",
    "RunEvent",
    "Sandbox",
    "SandboxSession",
    "ScriptError",
    "ScriptResult",
    "ToolDenied",
    "ToolError",
    "codemode_tool",
    "format_script_result",
    "parse_codemode_source",
    "render_stubs",
    "render_tool_sample",
    "schema_to_type",
    "to_identifier",
]
