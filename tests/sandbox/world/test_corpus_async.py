"""Async fan-out scripts (gather over tools) in the sandbox AND in plain Python, compared.

The tool ``lookup(key=...)`` returns ``{"key": key, "len": len(key)}`` in both worlds:
a real ``AgentTool`` in the sandbox, an ``async def`` in plain Python (``gather`` is
``asyncio.gather``); the script's last expression is compared.
"""

from __future__ import annotations

import ast
import asyncio
from typing import Any

import anyio
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox


def _lookup(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    key = params["key"]
    return AgentToolResult(
        content=(TextContent(key),), structured_content={"key": key, "len": len(key)}
    )


TOOLS = [
    AgentTool(
        name="lookup",
        description="Look a key up.",
        parameters={
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        },
        execute=_lookup,
        output_schema={"type": "object"},
    )
]

SCRIPTS: dict[str, str] = {
    "gather-list": "keys = ['a', 'bb', 'ccc']\n"
    "rs = await gather(*[lookup(key=k) for k in keys])\n[r['len'] for r in rs]",
    "gather-two": "a, b = await gather(lookup(key='x'), lookup(key='yy'))\n[a['key'], b['len']]",
    "sequential-awaits": "out = []\nfor k in ['p', 'qq']:\n    r = await lookup(key=k)\n"
    "    out.append(r['len'])\nout",
    "fan-out-filter": "keys = [str(i) * (i % 4 + 1) for i in range(12)]\n"
    "rs = await gather(*(lookup(key=k) for k in keys))\n"
    "sorted({r['key'] for r in rs if r['len'] > 2})",
    "batched-fan-out": "keys = [f'k{i}' for i in range(10)]\nres = []\n"
    "for i in range(0, len(keys), 3):\n"
    "    res += await gather(*[lookup(key=k) for k in keys[i:i + 3]])\nlen(res)",
    "async-helper": "async def fetch(k):\n    r = await lookup(key=k)\n    return r['len'] * 2\n"
    "await gather(fetch('a'), fetch('abc'))",
    "dict-of-results": "ks = ['x', 'yy']\nrs = await gather(*[lookup(key=k) for k in ks])\n"
    "{k: r['len'] for k, r in zip(ks, rs)}",
    "error-handling": "try:\n    r = await lookup(key='ok')\n    v = r['len']\nexcept Exception:\n"
    "    v = -1\nv",
}


async def _plain(source: str) -> Any:
    async def lookup(*, key: str) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"key": key, "len": len(key)}

    *body, last = source.rstrip().split("\n")
    code = "\n".join(body) + f"\n__value__ = {last}\n"
    scope: dict[str, Any] = {"lookup": lookup, "gather": asyncio.gather}
    compiled = compile(code, "<corpus>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, scope)
    if result is not None:
        await result
    value = scope["__value__"]
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        value = await value
    return value


def _jsonish(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonish(v) for k, v in value.items()}
    return value


def _sandboxed(source: str) -> ScriptResult:
    async def go() -> ScriptResult:
        return await Sandbox(TOOLS, limits=Limits(timeout=20)).run(source)

    return anyio.run(go)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_corpus_async_script_matches_plain_python(name: str) -> None:
    source = SCRIPTS[name]
    expected = _jsonish(asyncio.run(_plain(source)))
    result = _sandboxed(source)
    assert result.ok, result.error
    assert result.value == expected
