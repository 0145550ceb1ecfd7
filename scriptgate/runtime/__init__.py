"""What a tool is and how one call or one batch runs (no RestrictedPython here).

- records and hook contracts: :mod:`scriptgate.runtime.types`, JSON wire form:
  :mod:`scriptgate.runtime.wire`;
- tools: :class:`AgentTool`, :func:`tool`;
- validation (pi §2): :func:`compile_schema`, :func:`validate_tool_arguments`;
- one call and one batch (pi §3–4): :func:`run_tool_call`, :func:`execute_tool_calls`;
- transcript tool declarations (pi §6), the file mutation queue (pi §7), the agent loop;
- path arguments resolved before the policy judges them: :class:`PathArguments`;
- permissions and audit as ordinary hooks: :class:`Policy`, :class:`AuditLog`,
  :func:`compose_hooks`.
"""

from __future__ import annotations

from scriptgate.runtime.abort import AbortController, AbortError, AbortSignal
from scriptgate.runtime.audit import AuditLog, result_digest
from scriptgate.runtime.batch import ToolBatch, execute_tool_calls, length_truncated_text
from scriptgate.runtime.declarations import (
    ToolStateChanges,
    TranscriptTools,
    declarations_equal,
    declare_tool_changes,
    get_current_tools,
    get_declared_tools,
    get_tool_state_changes,
    has_non_additive_tool_changes,
    has_tool_redefinitions,
    resolve_transcript_tools,
    to_tool_declaration,
)
from scriptgate.runtime.file_queue import with_file_mutation_queue
from scriptgate.runtime.hooks import Hooks, compose_hooks
from scriptgate.runtime.loop import (
    AgentLoopConfig,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from scriptgate.runtime.paths import PathArguments, ResolvedArguments, ResolvedPath
from scriptgate.runtime.pipeline import ToolCallOutcome, run_tool_call
from scriptgate.runtime.policy import ApprovalRequest, Decision, Policy, PolicyProblem, Rule
from scriptgate.runtime.schema import (
    CompiledSchema,
    ParseResult,
    ValidationIssue,
    compile_schema,
    pointer_to_path,
)
from scriptgate.runtime.stream import AssistantMessageEvent, parse_tool_arguments
from scriptgate.runtime.tool import AgentTool, tool
from scriptgate.runtime.validation import validate_tool_arguments
from scriptgate.runtime.wire import from_wire, to_wire

__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AgentLoopConfig",
    "AgentTool",
    "ApprovalRequest",
    "AssistantMessageEvent",
    "AuditLog",
    "CompiledSchema",
    "Decision",
    "Hooks",
    "ParseResult",
    "PathArguments",
    "Policy",
    "PolicyProblem",
    "ResolvedArguments",
    "ResolvedPath",
    "Rule",
    "ToolBatch",
    "ToolCallOutcome",
    "ToolStateChanges",
    "TranscriptTools",
    "ValidationIssue",
    "agent_loop",
    "agent_loop_continue",
    "compile_schema",
    "compose_hooks",
    "declarations_equal",
    "declare_tool_changes",
    "execute_tool_calls",
    "from_wire",
    "get_current_tools",
    "get_declared_tools",
    "get_tool_state_changes",
    "has_non_additive_tool_changes",
    "has_tool_redefinitions",
    "length_truncated_text",
    "parse_tool_arguments",
    "pointer_to_path",
    "resolve_transcript_tools",
    "result_digest",
    "run_agent_loop",
    "run_agent_loop_continue",
    "run_tool_call",
    "to_tool_declaration",
    "to_wire",
    "tool",
    "validate_tool_arguments",
    "with_file_mutation_queue",
]
