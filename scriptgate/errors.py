"""The one error hierarchy of scriptgate.

Convention (DESIGN.md): the *model's* mistakes come back as data — error tool
results, ``ScriptResult.error`` — while the *host developer's* mistakes raise one
of these exceptions.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "SchemaCompileError",
    "ScriptgateError",
    "ToolArgumentsError",
    "ToolDefinitionError",
]


class ScriptgateError(Exception):
    """Base class of every exception scriptgate raises on purpose."""


class SchemaCompileError(ScriptgateError, ValueError):
    """A JSON Schema is malformed (pi: ``A schema must be an object or a boolean, got 5``).

    ``str()`` is pi's message, byte for byte.
    """


class ToolArgumentsError(ScriptgateError, ValueError):
    """Tool-call arguments failed validation.

    ``str()`` is pi's model-facing text byte for byte: either
    ``Validation failed for tool "<name>": ...`` with one line per error and the
    received arguments, or ``Invalid arguments for tool "<name>": <arguments_error>``.
    The pipeline turns it into an error tool result; it only reaches a caller of
    :func:`scriptgate.runtime.validation.validate_tool_arguments` directly.
    """

    def __init__(self, message: str, *, tool_name: str, errors: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        #: The individual :class:`~scriptgate.runtime.schema.ValidationIssue` records (empty
        #: for an ``arguments_error``).
        self.errors = errors


class ToolDefinitionError(ScriptgateError, TypeError):
    """An :class:`~scriptgate.runtime.tool.AgentTool` (or an ``@tool`` function) is ill-formed."""


class ConfigurationError(ScriptgateError, ValueError):
    """A host-side configuration (policy file, limits, CLI option, tool spec) is invalid."""
