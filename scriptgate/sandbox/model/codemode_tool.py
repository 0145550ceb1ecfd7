"""The model-facing code-mode tool (pi's coding-agent ``codemode`` tool, §5.4).

Part of ``model/``: builds on :class:`~scriptgate.sandbox.sandbox.Sandbox` and
:mod:`.stubs`; nothing below ``model/`` imports it.

:func:`codemode_tool` builds an :class:`~scriptgate.runtime.tool.AgentTool`
(named ``python`` by default) whose only parameter is ``code``. Its description
states the rules of the sandbox and embeds the stubs of every callable tool
(:func:`~scriptgate.sandbox.model.stubs.render_stubs`); its result follows pi §5.4,
adapted to Python:

- the first line of the source may be ``# @options: {"max_output_tokens": N,
  "timeout_ms": M}`` (:func:`parse_codemode_source`; the line is replaced by an
  empty one so line numbers hold);
- the text is ``Script completed|Script failed``, ``Wall time <s.s> seconds``,
  ``Output:``, then the return value (a string as is, anything else as compact
  JSON), then the printed output wrapped in ``<console_output>`` tags, and on
  failure ``Script error:`` with the error and the calls made before it;
- over the output budget (``max_output_tokens`` × 4 characters) the text keeps
  its head and tail and the full text is saved to a temporary file;
- ``details`` is ``{"calls": [...], "fullOutputPath"?: ...}``; ``is_error`` is
  true only when the script failed.

Design choice (pi §5.4 step 6): ``print`` output is Python's analogue of pi's
console output, so it is gathered into one trailing ``<console_output>`` block
after the return value, exactly where pi puts console lines. A Python script
produces at most one non-console text item (its value), so pi's
``==> text N/M <==`` prefixes never appear in practice; the formatter keeps the
rule for completeness.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any, Literal

from scriptgate.errors import ConfigurationError, ScriptgateError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import (
    AfterToolCallHook,
    AgentToolResult,
    BeforeToolCallHook,
    TextContent,
)
from scriptgate.sandbox.model.stubs import StubStyle, render_stubs
from scriptgate.sandbox.result import CallRecord, Limits, ScriptError, ScriptResult

if TYPE_CHECKING:
    from scriptgate.sandbox.sandbox import SandboxSession

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "CodemodeSource",
    "CodemodeSourceError",
    "CodemodeTool",
    "Isolation",
    "call_summary",
    "codemode_description",
    "codemode_tool",
    "error_head",
    "format_script_result",
    "parse_codemode_source",
]

DEFAULT_MAX_OUTPUT_TOKENS = 10000
"""The output budget of one script, in estimated tokens (pi)."""

CHARS_PER_TOKEN = 4
"""Characters per estimated token (pi)."""

MAX_SAFE_INTEGER = 2**53 - 1
MAX_TIMEOUT_MS = 2147483647

MAX_CALL_RECORDS = 256
READ_OUTPUT = "read_output"
"""The code-mode tool's own tool for reading a truncated result's full text (no file)."""
MAX_KEPT_OUTPUTS = 8
"""Full texts of truncated results a code-mode tool keeps (the oldest are dropped)."""
"""Call records kept in ``details`` (pi's nested-call summary limit)."""

MAX_ARGUMENTS_BYTES = 8 * 1024
"""Arguments larger than this (as JSON) are replaced by their size in ``details``."""

MAX_ERROR_CHARS = 500
"""Call error texts in ``details`` are cut to this length."""

Isolation = Literal["in_process", "process"]
"""Where scripts run: in this process, or in a pool of worker processes."""


# ----------------------------------------------------------------------------- source


class CodemodeSourceError(ScriptgateError, ValueError):
    """The ``code`` argument is empty or its ``# @options:`` line is invalid.

    Raised by :func:`parse_codemode_source`; inside the code-mode tool it becomes
    an ordinary error tool result whose text is ``str(err)`` (pi
    ``CodemodeSourceError``).
    """


@dataclass(frozen=True, slots=True)
class CodemodeSource:
    """A parsed script: the code (options line blanked) and the options it set."""

    code: str
    max_output_tokens: int | None = None
    timeout_ms: int | None = None


_OPTIONS_LINE = re.compile(r"^[ \t]*#[ \t]*@options:(.*)$")
_FIELDS = "`max_output_tokens` and `timeout_ms`"
_EMPTY_MESSAGE = (
    "Expected Python source text (non-empty). Provide Python only, optionally with a first "
    'line `# @options: {"max_output_tokens": 1000}`.'
)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _as_integer(value: Any) -> int | None:
    """A JSON number that is an integer (``1.0`` counts, as in JavaScript); else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def parse_codemode_source(code: Any) -> CodemodeSource:
    """Split a script into its code and the options of its first line (pi ``parseCodemodeSource``).

    The first line may be ``# @options: {...}`` (leading whitespace and CRLF are
    tolerated) with ``max_output_tokens`` (a non-negative safe integer) and
    ``timeout_ms`` (a positive integer up to 2147483647). That line is replaced
    by an empty line so the script's line numbers hold. An options line anywhere
    else, an empty script, or invalid options raise :class:`CodemodeSourceError`
    with pi's messages adapted to Python.
    """
    if not isinstance(code, str) or not code.strip():
        raise CodemodeSourceError(_EMPTY_MESSAGE)
    lines = code.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if _OPTIONS_LINE.match(line.rstrip("\r")):
            raise CodemodeSourceError(
                "The # @options: line must be the first line of the input; "
                f"found one on line {number}"
            )
    match = _OPTIONS_LINE.match(lines[0].rstrip("\r"))
    if match is None:
        return CodemodeSource(code=code)
    rest = "\n".join(lines[1:])
    if not rest.strip():
        raise CodemodeSourceError(
            "The @options line must be followed by Python source on subsequent lines"
        )
    try:
        options = json.loads(match.group(1).strip(), parse_constant=_reject_constant)
    except ValueError as exc:
        raise CodemodeSourceError(
            f"@options must be valid JSON with supported fields {_FIELDS}: {exc}"
        ) from None
    if not isinstance(options, dict):
        raise CodemodeSourceError(f"@options must be a JSON object with supported fields {_FIELDS}")
    for key in options:
        if key not in ("max_output_tokens", "timeout_ms"):
            raise CodemodeSourceError(f"@options only supports {_FIELDS}; got `{key}`")
    max_output_tokens: int | None = None
    timeout_ms: int | None = None
    if "max_output_tokens" in options:
        max_output_tokens = _as_integer(options["max_output_tokens"])
        if max_output_tokens is None or not 0 <= max_output_tokens <= MAX_SAFE_INTEGER:
            raise CodemodeSourceError(
                "@options field `max_output_tokens` must be a non-negative safe integer"
            )
    if "timeout_ms" in options:
        timeout_ms = _as_integer(options["timeout_ms"])
        if timeout_ms is None or not 0 < timeout_ms <= MAX_TIMEOUT_MS:
            raise CodemodeSourceError(
                f"@options field `timeout_ms` must be a positive integer up to {MAX_TIMEOUT_MS}"
            )
    return CodemodeSource(
        code="\n" + rest, max_output_tokens=max_output_tokens, timeout_ms=timeout_ms
    )


# ----------------------------------------------------------------------------- output


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


def _value_text(value: Any) -> str:
    """The return value as the model sees it: a string as is, else compact JSON."""
    if isinstance(value, str):
        return value
    return _compact_json(value)


def _format_items(texts: Sequence[str], console: str | None) -> list[str]:
    """pi ``formatOutput`` for text items: ``==> text N/M <==`` prefixes when there is
    more than one, then the console lines in one trailing ``<console_output>`` block."""
    items = list(texts)
    if len(items) > 1:
        items = [f"==> text {n}/{len(items)} <==\n{text}" for n, text in enumerate(items, 1)]
    if console is not None:
        items.append(f"<console_output>\n{console}\n</console_output>")
    return items


def _is_timeout(error: ScriptError) -> bool:
    return error.type == "TimeoutError" or error.message.lower().startswith(
        ("script timed out", "execution timed out")
    )


_NAMES_LINE = re.compile(r"Line \d+: ")


def _prefixed(prefix: str, message: str) -> str:
    if message.lower().startswith(prefix.lower()):
        return message
    return f"{prefix}: {message}"


def error_head(error: ScriptError) -> str:
    """The first part of ``Script error:``: what went wrong, and where."""
    if error.kind == "aborted":
        return _prefixed("Script aborted", error.message or "Execution aborted")
    if error.kind == "sandbox":
        return _prefixed("Script sandbox failed", error.message)
    if error.kind == "limit" and _is_timeout(error):
        return _prefixed("Script timed out", error.message)
    message = error.message
    # A message that already names its line (RestrictedPython's "Line 3: ...") needs no suffix.
    line = None if error.line is None or _NAMES_LINE.match(message) else error.line
    if "\n" in message.rstrip("\n") and line is not None:
        # Multi-line messages (validation errors) keep the location next to the type.
        where = f"{error.type} (line {line})" if error.type else f"Line {line}"
        return f"{where}: {message}"
    head = f"{error.type}: {message}" if error.type else message
    if line is not None:
        head += f" (line {line})"
    return head


def call_summary(calls: Sequence[CallRecord]) -> str:
    """pi's call summary after a failure."""
    if not calls:
        return "No tool calls were made."
    listed = ", ".join(f"{call.tool} ({call.status})" for call in calls)
    return f"Tool calls made before the failure (they are not undone): {listed}"


def _call_details(call: CallRecord) -> dict[str, Any]:
    record: dict[str, Any] = {"id": call.id, "name": call.tool}
    try:
        size = len(_compact_json(call.arguments).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        size = MAX_ARGUMENTS_BYTES + 1
    if size > MAX_ARGUMENTS_BYTES:
        record["argumentsBytes"] = size
    else:
        record["arguments"] = call.arguments
    record["status"] = call.status
    if call.duration_ms is not None:
        record["durationMs"] = call.duration_ms
    if call.error is not None:
        error = call.error
        if len(error) > MAX_ERROR_CHARS:
            error = error[: MAX_ERROR_CHARS - 1] + "…"
        record["error"] = error
    return record


def _to_fixed_1(seconds: float) -> str:
    """JavaScript's ``seconds.toFixed(1)`` (ties round up on the exact binary value)."""
    if not math.isfinite(seconds):
        return str(seconds)
    return str(Decimal(seconds).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _estimate_tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def _save_full_output(text: str, output_dir: str | os.PathLike[str] | None) -> str:
    fd, path = tempfile.mkstemp(prefix="scriptgate-output-", suffix=".txt", dir=output_dir)
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(text)
    return path


def _truncate(
    text: str,
    budget_chars: int,
    output_dir: str | os.PathLike[str] | None,
    keep: Callable[[str], str] | None = None,
) -> tuple[str, str | None]:
    """Collapse ``text`` to its head and tail (half the budget each) and save it whole."""
    half = budget_chars // 2
    head = text[:half]
    tail = text[len(text) - half :] if half else ""
    removed = len(text) - len(head) - len(tail)
    # never cut through the console block's tags: close what the head opened, reopen
    # what the tail closes
    open_tag, close_tag = "<console_output>", "</console_output>"
    for tag in (open_tag, close_tag):
        for size in range(len(tag) - 1, 1, -1):  # a tag cut in two: drop the piece
            if head.endswith(tag[:size]):
                head = head[:-size]
                break
        for size in range(len(tag) - 1, 1, -1):
            if tail.startswith(tag[-size:]):
                tail = tail[size:]
                break
    if head.rfind(open_tag) > head.rfind(close_tag):
        head += f"\n{close_tag}"
    if tail.find(close_tag) != -1 and (
        tail.find(open_tag) == -1 or tail.find(close_tag) < tail.find(open_tag)
    ):
        tail = f"{open_tag}\n" + tail
    lines = text.count("\n") + 1
    collapsed = (
        f"Warning: truncated output (original token count: {_estimate_tokens(len(text))})\n"
        f"Total output lines: {lines}\n\n"
        f"{head}…{_estimate_tokens(removed)} tokens truncated…{tail}"
    )
    if keep is not None:  # kept by the code-mode tool, readable with its read_output tool
        return f"{collapsed}\n{keep(text)}", None
    try:
        path: str | None = _save_full_output(text, output_dir)
        note = f"[Full output: {path} (read with offset/limit)]"
    except OSError as exc:
        path = None
        note = f"[Could not save the full output: {exc}]"
    return f"{collapsed}\n{note}", path


def format_script_result(
    result: ScriptResult,
    *,
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    output_dir: str | os.PathLike[str] | None = None,
    keep: Callable[[str], str] | None = None,
) -> AgentToolResult:
    """The tool result a script run gives the model (pi ``executeCodemode`` steps 5-11).

    ``keep``: instead of a file, hand the full text to this function, which
    stores it and returns the note telling the model how to read it (the
    code-mode tool's ``read_output``).

    The text is ``Script completed|Script failed``, ``Wall time <s.s> seconds``,
    ``Output:``, then the items: the return value (unless ``None``), the printed
    output as ``<console_output>…</console_output>``, and on failure
    ``Script error:\\n<head>\\n\\n<call summary>``. Partial output is kept on
    failure. Past ``max_output_tokens`` × 4 characters, the items collapse into a
    head and a tail with a warning, and the full text is saved under
    ``output_dir`` (the system temporary directory by default); its path is in
    ``details["fullOutputPath"]``.
    """
    texts: list[str] = []
    if result.ok and result.value is not None:
        texts.append(_value_text(result.value))
    console: str | None = None
    if result.output:
        console = result.output[:-1] if result.output.endswith("\n") else result.output
    items = _format_items(texts, console)
    if not result.ok:
        error = result.error or ScriptError("sandbox", "", "the script failed without an error")
        items.append(f"Script error:\n{error_head(error)}\n\n{call_summary(result.calls)}")
    body = "\n".join(items)
    details: dict[str, Any] = {
        "calls": [_call_details(call) for call in result.calls[:MAX_CALL_RECORDS]]
    }
    if len(result.calls) > MAX_CALL_RECORDS:
        details["omittedCalls"] = len(result.calls) - MAX_CALL_RECORDS
    budget = max(0, max_output_tokens) * CHARS_PER_TOKEN
    if len(body) > budget:
        body, path = _truncate(body, budget, output_dir, keep)
        if path is not None:
            details["fullOutputPath"] = path
    status = "Script completed" if result.ok else "Script failed"
    header = f"{status}\nWall time {_to_fixed_1(result.wall_time)} seconds\nOutput:\n"
    return AgentToolResult(
        content=(TextContent(header + body),), details=details, is_error=not result.ok
    )


# ----------------------------------------------------------------------------- description


def _capabilities() -> tuple[list[str], list[str]]:
    """The builtin names and importable module names of the sandbox."""
    from scriptgate.sandbox.world.builtins import SAFE_BUILTIN_NAMES
    from scriptgate.sandbox.world.modules import MODULE_NAMES

    return list(dict.fromkeys(SAFE_BUILTIN_NAMES)), list(MODULE_NAMES)


def _seconds(value: float) -> str:
    return f"{value:g} s"


def codemode_description(
    tools: Iterable[AgentTool],
    *,
    limits: Limits | None = None,
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    style: StubStyle = "sync",
    persistent: bool = False,
) -> str:
    """The description of the code-mode tool: the rules, then the stubs of ``tools``.

    ``persistent``: scripts share a session, so what one defines the next can use
    (the rules say so either way).
    """
    limits = limits if limits is not None else Limits()
    builtin_names, module_names = _capabilities()
    limit_parts: list[str] = []
    if limits.timeout is not None:
        limit_parts.append(f"{_seconds(limits.timeout)} of wall time")
    if limits.max_tool_calls is not None:
        limit_parts.append(f"{limits.max_tool_calls} tool calls")
    if limits.max_output_chars is not None:
        limit_parts.append(f"{limits.max_output_chars} printed characters")
    limits_line = (
        f"- Limits per script: {', '.join(limit_parts)}. A script that exceeds a limit stops.\n"
        if limit_parts
        else ""
    )
    timeout_rule = (
        f" (at most {round(limits.timeout * 1000)})" if limits.timeout is not None else ""
    )
    fence = "```"
    stubs = render_stubs(tools, style=style)
    tools_block = f"Tools:\n{fence}python\n{stubs}\n{fence}" if stubs else "Tools: none."
    return (
        "Run a Python script in which every tool below is a plain function. Use it to chain "
        "tool calls, loop over results and keep only what matters: intermediate data stays "
        "in the script instead of your context.\n"
        "\n"
        "Rules:\n"
        '- Call a tool with keyword arguments, e.g. `read(path="notes.txt")`; it is also '
        "`tools.<name>(...)`. Each call is validated and permission-checked exactly like a "
        "direct tool call.\n"
        "- A tool returns its text (`str`), or a dict/list when its declaration below has a "
        "structured return type.\n"
        "- A failed call raises `ToolError`; a call refused by a permission check raises "
        "`ToolDenied` (a subclass). `str(err)` is the error text; catch them with "
        "`try: ... except ToolError as err: ...`. Calls that already ran are not undone.\n"
        "- Without `await`, each call blocks and returns its value. To run calls "
        'concurrently, await them: `a, b = await gather(read(path="a"), read(path="b"))`. '
        "In a script that uses `await`, every tool call must be awaited "
        "(`asyncio.run(main())` at the top level runs as `await main()`).\n"
        "- The value of the last expression (or of a top-level `return`) is the result; "
        "`print()` output is shown too. Return or print only what you need. A value that "
        "is not JSON comes back rendered: sets and tuples as lists, dates as ISO text, enum "
        "members as their values, dataclass instances as dicts of their fields, other "
        "objects as `'<TypeName object>'` (return plain data instead).\n"
        "- Restricted Python: no names starting with `_` (except `__init__`, `__name__`, "
        "`__class__`, `__doc__` reads and a namedtuple's `_asdict()`), no files, network or "
        "host access except through the tools. Classes work as usual (`super().__init__(...)`, "
        "`@property`, `__repr__`, `@dataclass`, `Enum`, `class P(NamedTuple)`, ...) but take no "
        "`metaclass=` or other class keyword, and subclass builtins, exceptions and enums, not "
        "module classes such as `io.BytesIO` (hold one as an attribute instead); `type(x)` "
        "takes one argument. Iterate generators with "
        "`for`/`next()` and await coroutines: `send`/`throw`/`asend` are not available, and "
        "`gather(...)` must be awaited.\n"
        f"- Built-ins: {', '.join(builtin_names)}.\n"
        f"- Importable modules: {', '.join(module_names)}.\n"
        "- Importing any other module raises `ModuleNotFoundError` (an `ImportError`): "
        "write `try: import x except ImportError: ...` or use what is listed.\n"
        f"{_STATE_RULE[persistent]}"
        f"{limits_line}"
        f"- Output longer than about {max_output_tokens} tokens is cut to its head and tail "
        "(the full text is saved to a file).\n"
        '- Optional first line: `# @options: {"max_output_tokens": 20000, '
        f'"timeout_ms": 10000}}` sets this script\'s output budget and time limit in '
        f"milliseconds{timeout_rule}.\n"
        "\n"
        f"{tools_block}"
    )


_STATE_RULE = {
    True: "- State persists: variables and functions a script defines at top level are still "
    "defined in the next script of this conversation (tool functions are rebound each time).\n",
    False: "- Each script starts fresh: nothing a script defines is kept for the next one.\n",
}


# ----------------------------------------------------------------------------- the tool


_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "Raw Python source."}},
    "required": ["code"],
}


class CodemodeTool(AgentTool):
    """The code-mode tool: runs the ``code`` argument in a :class:`Sandbox`.

    Built by :func:`codemode_tool`. Holds the sandbox (``sandbox``) and the tools
    scripts may call (``callable_tools``); close it with :meth:`aclose` (or use
    it as an async context manager) to release process-isolation workers.
    """

    def __init__(
        self,
        tools: Sequence[AgentTool],
        *,
        name: str,
        before_tool_call: BeforeToolCallHook | None,
        after_tool_call: AfterToolCallHook | None,
        limits: Limits,
        isolation: Isolation,
        max_output_tokens: int,
        style: StubStyle,
        output_dir: str | os.PathLike[str] | None,
        label: str | None,
        session: bool | SandboxSession = False,
    ) -> None:
        from scriptgate.sandbox.sandbox import Sandbox, SandboxSession

        self.callable_tools: tuple[AgentTool, ...] = tuple(t for t in tools if t.name != name)
        self._outputs: dict[str, str] = {}
        """Full texts of truncated results (``output_dir`` unset), newest last, for ``read_output``."""
        if output_dir is None and not any(t.name == READ_OUTPUT for t in self.callable_tools):
            self.callable_tools += (self._read_output_tool(),)
        self.limits = limits
        self.isolation: Isolation = isolation
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.max_output_tokens = max_output_tokens
        self.output_dir = output_dir
        self.sandbox = Sandbox(
            list(self.callable_tools),
            before_tool_call=before_tool_call,
            after_tool_call=after_tool_call,
            limits=limits,
            isolation=isolation,
        )
        #: The session scripts share (``None``: every script starts fresh).
        self.session: SandboxSession | None
        if isinstance(session, SandboxSession):
            self.session = session
        elif session is True:
            self.session = self.sandbox.session()
        elif not session:
            self.session = None
        else:
            raise ConfigurationError(
                f"session must be a bool or a SandboxSession, got {type(session).__name__}"
            )
        super().__init__(
            name=name,
            label=label,
            description=codemode_description(
                self.callable_tools,
                limits=limits,
                max_output_tokens=max_output_tokens,
                style=style,
                persistent=self.session is not None,
            ),
            parameters=_PARAMETERS,
        )

    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal | None,
        on_update: OnUpdate | None,
    ) -> AgentToolResult:
        """Parse the source, run it, and format the result (pi ``executeCodemode``).

        An invalid source raises :class:`CodemodeSourceError` (the loop turns it
        into an error result). Nested tool calls get the ids
        ``<tool_call_id>/<n>``.
        """
        code = params.get("code") if isinstance(params, dict) else None
        source = parse_codemode_source(code)
        result = await self._run(source, tool_call_id, signal)
        budget = (
            source.max_output_tokens
            if source.max_output_tokens is not None
            else self.max_output_tokens
        )
        keep = None if self.output_dir is not None else self._keeper(tool_call_id)
        return format_script_result(
            result, max_output_tokens=budget, output_dir=self.output_dir, keep=keep
        )

    def _keeper(self, tool_call_id: str) -> Callable[[str], str]:
        def keep(text: str) -> str:
            outputs = self._outputs
            outputs.pop(tool_call_id, None)
            outputs[tool_call_id] = text
            while len(outputs) > MAX_KEPT_OUTPUTS:  # the oldest go
                outputs.pop(next(iter(outputs)))
            lines = text.count("\n") + 1
            return (
                f"[Full output ({lines} lines) kept as {tool_call_id!r}: read it in a script with "
                f"{READ_OUTPUT}(id={tool_call_id!r}, offset=1, limit=200)]"
            )

        return keep

    def _read_output_tool(self) -> AgentTool:
        outputs = self._outputs

        def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
            key = params.get("id")
            text = outputs.get(key) if isinstance(key, str) else None
            if text is None:
                known = ", ".join(repr(k) for k in outputs) or "none"
                raise ValueError(f"no kept output {key!r} (kept: {known})")
            offset = max(1, int(params.get("offset") or 1))
            limit = max(1, int(params.get("limit") or 200))
            lines = text.split("\n")
            chunk = "\n".join(lines[offset - 1 : offset - 1 + limit])
            rest = len(lines) - (offset - 1 + limit)
            if rest > 0:
                chunk += f"\n[{rest} more lines: offset={offset + limit}]"
            return AgentToolResult(content=(TextContent(chunk),))

        return AgentTool(
            name=READ_OUTPUT,
            description="Read lines of an earlier script's full output that was truncated "
            "(the note in the truncated result names its id). offset is 1-based.",
            parameters={
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 1, "default": 1},
                    "limit": {"type": "integer", "minimum": 1, "default": 200},
                },
                "required": ["id"],
                "additionalProperties": False,
            },
            execute=execute,
            blocking=False,
        )

    async def _run(
        self, source: CodemodeSource, tool_call_id: str, signal: AbortSignal | None
    ) -> ScriptResult:
        timeout = self.limits.timeout
        if self.session is not None:
            return await self._run_in_session(self.session, source, tool_call_id, signal)
        if source.timeout_ms is not None:
            requested = source.timeout_ms / 1000
            if timeout is None or requested < timeout:
                return await self._run_with_deadline(source, tool_call_id, signal, requested)
        return await self.sandbox.run(source.code, signal=signal, call_id_prefix=tool_call_id)

    async def _run_with_deadline(
        self, source: CodemodeSource, tool_call_id: str, signal: AbortSignal | None, seconds: float
    ) -> ScriptResult:
        from scriptgate.sandbox.sandbox import Sandbox

        sandbox = Sandbox(
            list(self.callable_tools),
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            limits=dataclasses.replace(self.limits, timeout=seconds),
            isolation=self.isolation,
        )
        try:
            return await sandbox.run(source.code, signal=signal, call_id_prefix=tool_call_id)
        finally:
            await sandbox.aclose()

    async def _run_in_session(
        self,
        session: SandboxSession,
        source: CodemodeSource,
        tool_call_id: str,
        signal: AbortSignal | None,
    ) -> ScriptResult:
        # A lower per-script time limit applies to in-process sessions by running the
        # script with the session's globals under a sandbox with that limit; a process
        # session keeps its pinned worker (and the tool's limit).
        timeout = self.limits.timeout
        requested = source.timeout_ms / 1000 if source.timeout_ms is not None else None
        lower = requested is not None and (timeout is None or requested < timeout)
        if not lower or self.isolation != "in_process" or session.sandbox is not self.sandbox:
            return await session.run(source.code, signal=signal, call_id_prefix=tool_call_id)
        from scriptgate.sandbox.sandbox import Sandbox

        assert requested is not None
        original = session.sandbox
        session.sandbox = Sandbox(
            list(self.callable_tools),
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            limits=dataclasses.replace(self.limits, timeout=requested),
            isolation="in_process",
        )
        try:
            return await session.run(source.code, signal=signal, call_id_prefix=tool_call_id)
        finally:
            session.sandbox = original

    def reset_session(self) -> None:
        """Forget the session's globals (no-op without a session)."""
        if self.session is not None:
            self.session.reset()

    async def aclose(self) -> None:
        """Release the sandbox (process-isolation workers) and the kept outputs."""
        self._outputs.clear()
        await self.sandbox.aclose()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        self._outputs.clear()
        self.sandbox.close()

    async def __aenter__(self) -> CodemodeTool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def codemode_tool(
    tools: Iterable[AgentTool],
    *,
    name: str = "python",
    before_tool_call: BeforeToolCallHook | None = None,
    after_tool_call: AfterToolCallHook | None = None,
    limits: Limits | None = None,
    isolation: Isolation = "in_process",
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    style: StubStyle = "sync",
    output_dir: str | os.PathLike[str] | None = None,
    label: str | None = None,
    session: bool | SandboxSession = False,
) -> CodemodeTool:
    """An :class:`AgentTool` that runs model-written Python against ``tools``.

    Its parameters are ``{code: string}``; its description states the rules
    and embeds the stubs of every tool except itself (scripts cannot start
    scripts). Each call of a script runs through the full pipeline with
    ``before_tool_call`` / ``after_tool_call``, under ``limits``, in the chosen
    ``isolation`` (``"in_process"`` or ``"process"``). The result text follows
    pi §5.4 (see :func:`format_script_result`); the script's ``# @options:``
    line may set ``max_output_tokens`` and lower the time limit.

    ``session``: ``True`` makes every script of this tool share one
    :class:`~scriptgate.sandbox.SandboxSession` (a multi-turn conversation: what
    a script defines, the next can use; :meth:`CodemodeTool.reset_session`
    forgets it); a ``SandboxSession`` of your own is used as is (its sandbox's
    tools and hooks apply). The rules text says whether state persists.
    """
    tool_list = list(tools)
    for item in tool_list:
        if not isinstance(item, AgentTool):
            raise ConfigurationError(f"codemode_tool needs AgentTool instances, got {item!r}")
    if isolation not in ("in_process", "process"):
        raise ConfigurationError(f"isolation must be 'in_process' or 'process', got {isolation!r}")
    if isinstance(max_output_tokens, bool) or not isinstance(max_output_tokens, int):
        raise ConfigurationError("max_output_tokens must be an integer")
    if max_output_tokens < 0:
        raise ConfigurationError("max_output_tokens must not be negative")
    if style not in ("sync", "async"):
        raise ConfigurationError(f"style must be 'sync' or 'async', got {style!r}")
    return CodemodeTool(
        tool_list,
        name=name,
        before_tool_call=before_tool_call,
        after_tool_call=after_tool_call,
        limits=limits if limits is not None else Limits(),
        isolation=isolation,
        max_output_tokens=max_output_tokens,
        style=style,
        output_dir=output_dir,
        label=label,
        session=session,
    )
