"""Grammar-based fuzzing: random scripts never take the host down (restrictedpython-notes §7–8).

Hypothesis builds scripts from a small grammar of Python constructs — arithmetic
with huge operands, string blow-ups, comprehensions, nested blocks, functions,
classes, try/except, imports of allowed and forbidden modules, dunder and frame
attributes, ``getattr`` with hostile names, tool calls. Every script runs in both
isolation modes; the host must survive, every run must return a JSON-compatible
:class:`ScriptResult` of the documented shape, and no run may end as a
``sandbox`` failure (that would be a crashed or misbehaving worker).

Deterministic (``derandomize=True``, no example database) and small enough to run
in seconds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits, ScriptResult

LIMITS = Limits(timeout=2.0, max_steps=50_000, max_output_chars=20_000, memory_bytes=512 << 20)
KINDS = {"syntax", "rejected", "runtime", "tool", "limit", "aborted"}


async def _echo(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent(str(params.get("text", ""))[:100]),))


ECHO = AgentTool(
    name="echo",
    description="Echo text.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    execute=_echo,
)
TOOLS = [ECHO]
SPECS = tool_specs(TOOLS)

# ----------------------------------------------------------------------------- the grammar

NAMES = ("a", "b", "x", "items", "text")
ATTRS = ("real", "upper", "append", "keys", "format", "gi_frame", "__class__", "__dict__", "mro")
MODULES = ("json", "math", "re", "itertools", "collections", "os", "sys", "builtins", "operator")

atoms = st.one_of(
    st.integers(-5, 10).map(str),
    st.sampled_from(["10 ** 6", "10 ** 30", "2 ** 64", "-1", "0.5", "1e308", "float('nan')"]),
    st.text(alphabet="ab{}%_.x0", max_size=6).map(repr),
    st.sampled_from(NAMES),
    st.sampled_from(["True", "None", "[]", "{}", "()", "[1, 2, 3]", "{'k': 1}", "range(5)"]),
)


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binop = st.tuples(
        inner,
        st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<<", "&", "==", "<", "in", "and"]),
        inner,
    ).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    return st.one_of(
        binop,
        inner.map(lambda e: f"(-{e})"),
        inner.map(lambda e: f"(not {e})"),
        st.tuples(
            st.sampled_from(["len", "str", "abs", "sorted", "list", "repr", "int", "sum"]), inner
        ).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(inner, st.sampled_from(ATTRS)).map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(inner, st.sampled_from(ATTRS)).map(lambda t: f"getattr({t[0]}, {t[1]!r})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        inner.map(lambda e: f"{e}[1:3]"),
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(inner, max_size=2).map(lambda xs: "(" + "".join(x + ", " for x in xs) + ")"),
        st.tuples(inner, inner).map(lambda t: f"{{{t[0]}: {t[1]}}}"),
        inner.map(lambda e: f"[v for v in range(3) if {e}]"),
        inner.map(lambda e: f"(lambda v: {e})(1)"),
        inner.map(lambda e: f"f'{{{e}}}'"),
        inner.map(lambda e: f"f'{{{e}!r:>6}}'"),
        st.tuples(
            inner, st.sampled_from(["upper()", "center(8)", "split()", "join(['q'])", "count('a')"])
        ).map(lambda t: f"str({t[0]}).{t[1]}"),
        inner.map(lambda e: f"echo(text=str({e}))"),
        inner.map(lambda e: f"({e} if {e} else None)"),
    )


expressions = st.recursive(atoms, _compound, max_leaves=6)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines] or ["    pass"]


def _statements(depth: int) -> st.SearchStrategy[list[str]]:
    simple = st.one_of(
        st.tuples(st.sampled_from(NAMES), expressions).map(lambda t: [f"{t[0]} = {t[1]}"]),
        st.tuples(st.sampled_from(NAMES), expressions).map(lambda t: [f"{t[0]} += {t[1]}"]),
        expressions.map(lambda e: [f"print({e})"]),
        expressions.map(lambda e: [e]),
        st.sampled_from(MODULES).map(lambda m: [f"import {m}"]),
        st.tuples(
            st.sampled_from(MODULES), st.sampled_from(["dumps", "sqrt", "sys", "path", "count"])
        ).map(lambda t: [f"from {t[0]} import {t[1]}"]),
        expressions.map(lambda e: [f"raise ValueError({e})"]),
        expressions.map(lambda e: [f"assert {e}"]),
        st.just(["x = [1, 2]", "x[0] += 1", "a, *b = x"]),
    )
    if depth <= 0:
        return st.lists(simple, min_size=1, max_size=3).map(
            lambda ls: [s for chunk in ls for s in chunk]
        )
    body = _statements(depth - 1)
    block = st.one_of(
        st.tuples(expressions, body, body).map(
            lambda t: [f"if {t[0]}:", *_indent(t[1]), "else:", *_indent(t[2])]
        ),
        st.tuples(st.integers(0, 50), body).map(
            lambda t: [f"for v in range({t[0]}):", *_indent(t[1])]
        ),
        st.tuples(expressions, body).map(
            lambda t: ["n = 0", f"while n < 20 and ({t[0]} or True):", "    n += 1", *_indent(t[1])]
        ),
        st.tuples(body, body).map(
            lambda t: [
                "try:",
                *_indent(t[0]),
                "except Exception as err:",
                "    print(err)",
                *_indent(t[1]),
            ]
        ),
        st.tuples(body, expressions).map(
            lambda t: [
                "def fn(a=1, *rest, **kw):",
                *_indent([*t[0], f"return {t[1]}"]),
                "fn()",
                "fn(2, 3, k=4)",
            ]
        ),
        st.tuples(body, expressions).map(
            lambda t: [
                "class Box:",
                "    def __init__(self, v):",
                "        self.v = v",
                "box = Box(1)",
                "box.v = 2",
                *t[0],
                f"box.v = {t[1]}",
            ]
        ),
        st.tuples(expressions, body).map(
            lambda t: ["def gen():", f"    yield {t[0]}", *t[1], "list(gen())"]
        ),
    )
    return st.lists(st.one_of(simple, block), min_size=1, max_size=4).map(
        lambda ls: [s for chunk in ls for s in chunk]
    )


scripts = _statements(2).map("\n".join)

# ----------------------------------------------------------------------------- checks


def _check(result: ScriptResult, source: str) -> None:
    assert isinstance(result, ScriptResult)
    data = result.to_json()
    json.dumps(data)  # plain JSON data, always
    if result.ok:
        assert result.error is None
        return
    assert result.error is not None
    assert result.error.kind in KINDS, (source, result.error)
    assert isinstance(result.error.message, str)


@pytest.fixture(scope="module")
def runner() -> Iterator[ProcessRunner]:
    pool = ProcessRunner(LIMITS, pool_size=2)
    yield pool
    pool.close()


FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(FUZZ, max_examples=150)
@given(source=scripts)
def test_fuzz_in_process_host_survives_random_scripts(backend: str, source: str) -> None:
    async def go() -> ScriptResult:
        return await run_script(source, bridge=HostToolBridge(TOOLS), tools=SPECS, limits=LIMITS)

    _check(anyio.run(go, backend=backend), source)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(FUZZ, max_examples=100)
@given(source=scripts)
def test_fuzz_process_mode_host_and_pool_survive_random_scripts(
    runner: ProcessRunner, backend: str, source: str
) -> None:
    async def go() -> ScriptResult:
        return await runner.run(source, bridge=HostToolBridge(TOOLS), tools=SPECS)

    _check(anyio.run(go, backend=backend), source)
