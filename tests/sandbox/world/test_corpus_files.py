"""The model-code corpus in ``corpus/*.txt``, run in the sandbox AND in plain CPython (issue 14).

Each ``corpus/<style>.txt`` holds short scripts in the styles models write (one per
``### name`` block, ending with an expression). Every script runs in-process in the
sandbox and with plain ``exec``; both values go through the sandbox's own last-value
rendering (:func:`render_last_value`) and must be equal. A deterministic sample
(every ``PROCESS_EVERY``-th name) also runs in process isolation, in one worker.

``async.txt`` scripts call the tools ``lookup(key=...)`` and ``weather(city=...)``:
real ``AgentTool``s in the sandbox, ``async def`` functions in plain Python
(``gather`` is ``asyncio.gather``). Scripts whose module is not a stand-in yet are
listed in ``PENDING`` and marked ``xfail(strict=True)``; scripts refused by design are in
``REFUSED`` and must stay refused with a message that says what to write instead.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import anyio
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.lastvalue import render_last_value
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

CORPUS_DIR = Path(__file__).parent / "corpus"
PROCESS_EVERY = 8

# Scripts that use a module (or member) that is not a stand-in yet: the lead flips these
# at merge when the stand-ins land (strict: an unexpected pass fails the run).
PENDING: dict[str, str] = {}

# What this corpus found refused or wrong that no stand-in in progress covers (issue 14):
# each is reported to the lead; strict, so a fix shows up as an unexpected pass.
FINDINGS: dict[str, str] = {
    # fresh.txt (corpus2): written as a new user would, without reading the files above
}

# Scripts refused by design (issue 13): each must stay refused, and the message must tell
# the model what to write instead (the substring given here).
REFUSED: dict[str, str] = {
    "rc-generator-send": "keep the state in a class with a method instead",
}


def load_corpus() -> dict[str, tuple[str, str]]:
    """Every script of ``corpus/*.txt`` by name: (style file stem, source)."""
    scripts: dict[str, tuple[str, str]] = {}
    for path in sorted(CORPUS_DIR.glob("*.txt")):
        name: str | None = None
        lines: list[str] = []
        for line in [*path.read_text(encoding="utf-8").splitlines(), "### "]:
            if line.startswith("### "):
                if name is not None:
                    assert name not in scripts, f"duplicate corpus name {name}"
                    scripts[name] = (path.stem, "\n".join(lines).strip() + "\n")
                name, lines = line[4:].strip() or None, []
            elif name is not None:
                lines.append(line)
    return scripts


CORPUS = load_corpus()


def _lookup(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    key = params["key"]
    return AgentToolResult(
        content=(TextContent(key),), structured_content={"key": key, "len": len(key)}
    )


_TEMPS = {"paris": 18, "oslo": 4, "cairo": 31, "lima": 22}


def _weather(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    city = params["city"]
    return AgentToolResult(
        content=(TextContent(city),),
        structured_content={"city": city, "temp": _TEMPS.get(city.lower(), 10)},
    )


def _tool(name: str, prop: str, execute: Any) -> AgentTool:
    return AgentTool(
        name=name,
        description=f"The {name} tool.",
        parameters={
            "type": "object",
            "properties": {prop: {"type": "string"}},
            "required": [prop],
        },
        execute=execute,
        output_schema={"type": "object"},
    )


TOOLS = [_tool("lookup", "key", _lookup), _tool("weather", "city", _weather)]


async def _plain_lookup(*, key: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"key": key, "len": len(key)}


async def _plain_weather(*, city: str) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"city": city, "temp": _TEMPS.get(city.lower(), 10)}


async def _plain_async(source: str) -> Any:
    *body, last = source.rstrip().split("\n")
    code = "\n".join(body) + f"\n__value__ = {last}\n"
    scope: dict[str, Any] = {
        "__name__": "__main__",
        "lookup": _plain_lookup,
        "weather": _plain_weather,
        "gather": asyncio.gather,
    }
    compiled = compile(code, "<corpus>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    pending = eval(compiled, scope)
    if pending is not None:
        await pending
    return scope["__value__"]


def plain(style: str, source: str) -> Any:
    """The script's last value under plain CPython, rendered as the sandbox renders it."""
    if style == "async":
        value = asyncio.run(_plain_async(source))
    else:
        *body, last = source.rstrip().split("\n")
        scope: dict[str, Any] = {"__name__": "__main__"}
        exec(compile("\n".join(body), "<corpus>", "exec"), scope)
        value = eval(last, scope)
    return render_last_value(value)[0]


def _sandbox(isolation: str = "in_process") -> Sandbox:
    return Sandbox(TOOLS, limits=Limits(timeout=20), isolation=isolation)


def _params() -> list[Any]:
    out = []
    for name in sorted(CORPUS):
        if name in REFUSED:
            continue
        if name in PENDING:
            reason = f"{PENDING[name]} is not a stand-in yet"
            out.append(pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason)))
        elif name in FINDINGS:
            reason = f"finding (issue 14): {FINDINGS[name]}"
            out.append(pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason)))
        else:
            out.append(pytest.param(name))
    return out


def test_corpus_files_hold_hundreds_of_named_scripts() -> None:
    assert len(CORPUS) >= 300
    assert set(PENDING) <= set(CORPUS)
    assert set(FINDINGS) <= set(CORPUS)
    assert set(REFUSED) <= set(CORPUS)
    assert not set(PENDING) & set(FINDINGS)
    assert not set(REFUSED) & (set(PENDING) | set(FINDINGS))
    for name, (_, source) in CORPUS.items():
        *_, last = source.rstrip().split("\n")
        ast.parse(last, mode="eval")  # the last line is an expression
        assert 1 <= source.count("\n") <= 40, name


@pytest.mark.parametrize("name", _params())
def test_corpus_file_script_matches_plain_python(name: str) -> None:
    style, source = CORPUS[name]
    expected = plain(style, source)

    async def go() -> ScriptResult:
        return await _sandbox().run(source)

    result = anyio.run(go)
    assert result.ok, result.error
    assert result.value == expected


def test_corpus_file_sample_matches_plain_python_in_process_mode() -> None:
    names = [n for i, n in enumerate(sorted(CORPUS)) if i % PROCESS_EVERY == 0]
    names = [n for n in names if n not in PENDING and n not in FINDINGS and n not in REFUSED]

    expectations = {name: plain(*CORPUS[name]) for name in names}

    async def go() -> list[str]:
        mismatches: list[str] = []
        sandbox = _sandbox("process")
        try:
            for name, expected in expectations.items():
                result = await sandbox.run(CORPUS[name][1])
                if not result.ok:
                    mismatches.append(f"{name}: {result.error}")
                elif result.value != expected:
                    mismatches.append(f"{name}: {result.value!r} != {expected!r}")
        finally:
            await sandbox.aclose()
        return mismatches

    assert len(names) >= 30
    assert anyio.run(go) == []


@pytest.mark.parametrize("isolation", ["in_process", "process"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_corpus_file_refused_by_design_says_what_to_write(name: str, isolation: str) -> None:
    style, source = CORPUS[name]
    plain(style, source)  # plain CPython runs it

    async def go() -> ScriptResult:
        sandbox = _sandbox(isolation)
        try:
            return await sandbox.run(source)
        finally:
            await sandbox.aclose()

    result = anyio.run(go)
    assert not result.ok
    assert result.error is not None
    assert REFUSED[name] in result.error.message, result.error
