"""The rules text of the code-mode tool: what the model reads about the sandbox.

Part of ``model/``: :func:`codemode_description` states the sandbox's rules (how tools are
called, what a script may name and import, its limits, the options line) and embeds the
stubs of every callable tool (:func:`~scriptgate.sandbox.model.stubs.render_stubs`). Reads
the world's name lists and the run's limits; must not import the engine or isolation.
"""

from __future__ import annotations

from collections.abc import Iterable

from scriptgate.runtime.tool import AgentTool
from scriptgate.sandbox.model.stubs import StubStyle, render_stubs
from scriptgate.sandbox.result import Limits

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "STATE_RULE", "codemode_description"]

DEFAULT_MAX_OUTPUT_TOKENS = 10000
"""The output budget of one script, in estimated tokens (pi)."""


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
        "(`asyncio.run(main())` at the top level runs as `await main()`). `asyncio` also "
        "has `create_task`, `TaskGroup`, `Semaphore`/`BoundedSemaphore`/`Lock`, `Event`, "
        "`Queue` (`QueueEmpty`/`QueueFull`), `wait_for`, `as_completed` and `CancelledError`, "
        "run on the script's own loop (a task has `await t`, `done()`, `result()`, "
        "`cancel()`, `cancelled()`; at most 10000 tasks alive; tasks still running when the "
        "script ends are cancelled).\n"
        "- The value of the last expression (or of a top-level `return`) is the result; "
        "`print()` output is shown too. Return or print only what you need. A value that "
        "is not JSON comes back rendered: sets and tuples as lists, dates as ISO text, enum "
        "members as their values, dataclass instances as dicts of their fields, other "
        "objects as `'<TypeName object>'` (return plain data instead).\n"
        "- Restricted Python: `_private` names work for your own variables, functions, classes "
        "and their instances (`self._cache`); other names starting with `_` are refused "
        "(except `__init__`, `__name__`, `__class__`, `__doc__` reads, a namedtuple's "
        "`_asdict()`, `exc.__cause__`/`__context__`, and `self.__dict__`/`vars(obj)` of your "
        "own objects; `__traceback__` is refused). Class patterns with sub-patterns work on your own classes "
        "(`case Point(x=0):`) and builtins (`case int(n):`). No files, network or "
        "host access except through the tools. Classes work as usual (`super().__init__(...)`, "
        "`@property` with `@x.setter`, `__repr__`, `__format__`, `__matmul__`, `__slots__`, "
        "`__match_args__`, `@dataclass`, `Enum`, `class P(NamedTuple)`, `wrapper.calls = 0` on "
        "your functions, `__rmul__ = __mul__`, `__init_subclass__`, `__getattr__` (public and "
        "`_private` names only), `Cls.__mro__`, ...) but take no "
        "`metaclass=` or other class keyword, and subclass builtins (a subclass of `int`/`float` "
        "keeps the number's own comparisons and arithmetic), exceptions (not "
        "`ExceptionGroup`; `except*` works on the builtin one), enums, `ABC`, "
        "`Protocol` and `string.Template`, not other module classes such as `io.BytesIO` "
        "(hold one as an attribute instead; `ABC.register` is not available); `type(x)` "
        "takes one argument and `type` is no base (no metaclasses; `isinstance(c, type)` works); "
        "`__getattribute__`/`__setattr__` are not available (write "
        "explicit methods). `print(..., file=buf)` writes to an `io.StringIO` only. "
        "Iterate generators with "
        "`for`/`next()` and await coroutines: `send`/`throw`/`asend` are not available (keep "
        "the state in a class with a method instead of `g.send(x)`), and "
        "`gather(...)` must be awaited.\n"
        "- `eval(text)` and `exec(text)` run a string under these same rules and limits (a "
        "refused or invalid string raises `SyntaxError`); they see your variables, or pass a "
        'dict: `eval(expr, {"x": x})`. Inside a function `exec` cannot change its local '
        "variables (read results from a dict). `await` is not allowed in the string (await "
        "what `eval` returns), and `compile()` is not available.\n"
        "- Text encodings: the Unicode codecs (`utf-8`, `utf-16`, ...), `ascii`, `latin-1`, the "
        "`cp`/`iso8859`/`mac` charmaps and the CJK and escape codecs (not `punycode` or `idna`); "
        "date formats (`strftime`, `strptime`, `f'{d:%Y-%m-%d}'`) of at most 1000 characters.\n"
        f"- Built-ins: {', '.join(builtin_names)}.\n"
        f"- Importable modules: {', '.join(module_names)}.\n"
        "- Importing any other module raises `ModuleNotFoundError` (an `ImportError`): "
        "write `try: import x except ImportError: ...` or use what is listed.\n"
        f"{STATE_RULE[persistent]}"
        f"{limits_line}"
        f"- Output longer than about {max_output_tokens} tokens is cut to its head and tail "
        "(the full text is saved to a file).\n"
        '- Optional first line: `# @options: {"max_output_tokens": 20000, '
        f'"timeout_ms": 10000}}` sets this script\'s output budget and time limit in '
        f"milliseconds{timeout_rule}.\n"
        "\n"
        f"{tools_block}"
    )


STATE_RULE = {
    True: "- State persists: variables and functions a script defines at top level are still "
    "defined in the next script of this conversation (tool functions are rebound each time).\n",
    False: "- Each script starts fresh: nothing a script defines is kept for the next one.\n",
}
