"""The ``re`` stand-in on the ``regex`` engine (regexguard): re's results, deadlines, aborts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult
from scriptgate.sandbox.bridge import HostToolBridge
from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.guards.regex import MAX_REPEAT_UNITS, Match, Pattern, make_re, repeat_units
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}
CATASTROPHIC = "import re\nre.match('(a|aa)+$', 'a' * 60 + 'b')"
STAND_IN = make_re()

# (pattern, flags, subject): ordinary patterns scripts write, and the corner cases of
# empty matches, groups, flags and Unicode where regex's VERSION0 must behave like re
CORPUS: list[tuple[str, int, str]] = [
    (r"\d+", 0, "a1b22c333"),
    (r"(\w+)@(\w+)\.com", 0, "me@x.com, you@y.com"),
    (r"(?P<key>\w+)=(?P<value>[^;]*)", 0, "a=1;b=;c=3"),
    (r"\s+", 0, " a \t\n b "),
    (r"x*", 0, "axbxxc"),
    (r"|a", 0, "aab"),
    (r"\b", 0, "ab cd"),
    (r"(?=b)", 0, "abab"),
    (r"(,)", 0, "a,b,,c"),
    (r"(a)|b", 0, "abba"),
    (r"(a)?b", 0, "b ab"),
    (r"^\w", re.M, "ab\ncd\n"),
    (r"$", 0, "a\nb\n"),
    (r"straße", re.I, "STRASSE Straße straße"),
    (r"[k]", re.I, "kK\u212a"),
    (r"\w+", 0, "héllo wörld_1 ٣"),
    (r"\w+", re.A, "héllo wörld_1"),
    (r".", re.S, "a\nb"),
    (r"a{2,3}", 0, "aaaaaaa"),
    (r"a{,2}", 0, "aaa"),
    (r"(?:a|ab)c", 0, "abc ac"),
    (r"a++b", 0, "aaab"),
    (r"(?>a|ab)c", 0, "abc ac"),
    (r"(?<=a)b|(?<!a)c", 0, "ab cb ac"),
    (r"(a*)*", 0, "aab"),
    (r"(a|)+", 0, "aa"),
    (r"(?x) a \s b  # comment", 0, "a b"),
    (r"[^]]", 0, "]a]"),
    (r"(?P<x>a)(?P=x)", 0, "aaa"),
    (r"\x41\u0042\101", 0, "ABA"),
    ("", 0, "abc"),
]


def _results(module: Any, pattern: str, flags: int, subject: str) -> list[Any]:
    compiled = module.compile(pattern, flags)

    def match_parts(m: Any) -> Any:
        if m is None:
            return None
        return (m.span(), m.group(), m.groups(), m.groupdict(), m.lastindex, m.lastgroup, m.regs)

    return [
        match_parts(module.match(pattern, subject, flags)),
        match_parts(module.search(pattern, subject, flags)),
        match_parts(module.fullmatch(pattern, subject, flags)),
        match_parts(compiled.search(subject, 1)),
        module.findall(pattern, subject, flags),
        compiled.findall(subject, 1, len(subject) - 1),
        [match_parts(m) for m in module.finditer(pattern, subject, flags)],
        module.split(pattern, subject, 0, flags),
        module.split(pattern, subject, 1, flags),
        module.sub(pattern, "<\\g<0>>", subject, 0, flags),
        module.subn(pattern, lambda m: m.group().upper(), subject, 0, flags),
        compiled.sub("-", subject, 2),
        compiled.flags,
        compiled.groups,
        dict(compiled.groupindex),
        compiled.pattern,
    ]


class _Module:
    """The stand-in's members as a module-like object (host-side: no run, no timeout)."""

    def __getattr__(self, name: str) -> Any:
        return STAND_IN[name]


@pytest.mark.parametrize(("pattern", "flags", "subject"), CORPUS)
def test_regex_guard_results_match_re(pattern: str, flags: int, subject: str) -> None:
    assert _results(_Module(), pattern, flags, subject) == _results(re, pattern, flags, subject)


def test_regex_guard_surface_is_re_s() -> None:
    p = STAND_IN["compile"]("(?P<a>x)(y)?", re.I)
    assert repr(p) == repr(re.compile("(?P<a>x)(y)?", re.I))
    assert repr(STAND_IN["compile"]("a")) == "re.compile('a')"
    m = p.match("xz")
    assert isinstance(m, Match)
    assert repr(m) == repr(re.match("(?P<a>x)(y)?", "xz", re.I))
    assert (m[0], m["a"], m.re, m.string, m.pos, m.endpos) == ("x", "x", p, "xz", 0, 2)
    assert m.expand(r"[\g<a>]") == "[x]"
    assert STAND_IN["compile"](p) is p
    assert p == STAND_IN["compile"]("(?P<a>x)(y)?", re.I)
    assert hash(p) == hash(STAND_IN["compile"]("(?P<a>x)(y)?", re.I))
    with pytest.raises(ValueError, match="flags"):
        STAND_IN["compile"](p, re.I)
    with pytest.raises(TypeError):
        STAND_IN["compile"](1)
    # regex's extras are not reachable: Match.expandf would format with attribute access
    for name in ("expandf", "captures", "detach_string", "allspans", "partial"):
        assert not hasattr(m, name)
    for name in ("subf", "scanner", "splititer", "named_lists"):
        assert not hasattr(p, name)
    assert STAND_IN["escape"] is re.escape
    # the flags are a twin class's (findings18 B05): equal values, the same reprs
    assert STAND_IN["IGNORECASE"] == re.IGNORECASE
    assert repr(STAND_IN["IGNORECASE"]) == repr(re.IGNORECASE)
    assert STAND_IN["compile"](b"a").flags == re.compile(b"a").flags


def test_regex_guard_error_catches_pattern_errors() -> None:
    sandbox = Sandbox([])
    source = "import re\ntry:\n    re.compile('(a')\nexcept re.error as e:\n    r = [e.pos, 'missing' in str(e)]\nr"
    result = sandbox.run_sync(source)
    assert (result.ok, result.value) == (True, [2, True]), result.error


def test_regex_guard_repeat_units_bounds_the_unrolled_size() -> None:
    assert repeat_units(r"\d{4}-\d{2}-\d{2}") == 8
    assert repeat_units("(?:a{100}){100}") == 10_100
    assert repeat_units("a{1,1000000}") == 1
    assert repeat_units("a{1000}b{1000}") == 2000  # sequential repeats add up
    assert repeat_units("(?:(?:(?:a{100}){100}){100}){100}") > MAX_REPEAT_UNITS
    assert repeat_units("(?x)(?:a{2000}#)\n){2000}") > MAX_REPEAT_UNITS  # a comment hides ")"
    assert repeat_units("a{4294967294}") > MAX_REPEAT_UNITS
    assert repeat_units("a{" + "9" * 5000 + "}") > MAX_REPEAT_UNITS  # no 4300-digit int error


def test_regex_guard_refuses_compile_bombs() -> None:
    # test: regex unrolls counted repeats at compile time (a{1000000} is ~250 MB)
    for pattern in ("a{4294967294}", "(?:(?:(?:a{100}){100}){100}){100}", "a|" * 60_000):
        with pytest.raises(ScriptStop, match="too large") as stopped:
            STAND_IN["compile"](pattern)
        assert stopped.value.kind == "limit"
    with pytest.raises(Exception, match="VERSION1"):
        STAND_IN["compile"]("(?V1)a")


def test_regex_guard_catastrophic_pattern_is_a_timeout_in_process() -> None:
    sandbox = Sandbox([], limits=Limits(timeout=0.3))
    result = sandbox.run_sync(CATASTROPHIC)
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("limit", "Script timed out after 0.3 s")
    # the loop and the sandbox are fine afterwards
    assert sandbox.run_sync("import re\nre.sub('a', 'b', 'aa')").value == "bb"


def test_regex_guard_callable_replacement_may_raise_timeout_error() -> None:
    # only regex's own timeout becomes a limit: the callable's TimeoutError is the script's
    sandbox = Sandbox([], limits=Limits(timeout=30))
    source = "import re\ndef f(m):\n    raise TimeoutError('mine')\nre.sub('a', f, 'aa')"
    result = sandbox.run_sync(source)
    assert result.error is not None
    assert (result.error.kind, result.error.type, result.error.message) == (
        "runtime",
        "TimeoutError",
        "mine",
    )


def test_regex_guard_session_pattern_obeys_the_run_that_uses_it() -> None:
    sandbox = Sandbox([], limits=Limits(timeout=0.3))
    session = sandbox.session()
    assert session.run_sync("import re\np = re.compile('(a|aa)+$')\nok = p.match('aa')").ok
    # the first run's budget is over; the second run's applies
    assert session.run_sync("[m.span() for m in p.finditer('aa')]").value == [[0, 2]]
    result = session.run_sync("p.match('a' * 60 + 'b')")
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "timed out" in result.error.message


@pytest.mark.anyio
async def test_regex_guard_abort_is_honoured_during_a_catastrophic_match() -> None:
    # The script runs a catastrophic match right after its tool call. The abort comes
    # from another task of the same loop, which runs only when the match's slice ends
    # and the loop gets a turn; with the long deadline, a limit would mean it did not.
    controller = AbortController()
    entered = anyio.Event()

    async def ready(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        entered.set()
        return AgentToolResult.text("go")

    tool = AgentTool(name="ready", description="ready", parameters=OPEN, execute=ready)
    sandbox = Sandbox([tool], limits=Limits(timeout=600))
    box: dict[str, Any] = {}

    async def run() -> None:
        box["result"] = await sandbox.run("ready()\n" + CATASTROPHIC, signal=controller.signal)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await entered.wait()
        await anyio.lowlevel.checkpoint()
        controller.abort(RuntimeError("user pressed stop"))
    result = box["result"]
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("aborted", "user pressed stop")


@pytest.mark.anyio
@pytest.mark.parametrize("spawn", ["fork", "exec"])
async def test_regex_guard_process_worker_stops_the_pattern_itself(spawn: Any) -> None:
    # The worker (forked from the zygote, or started afresh) has the regex engine:
    # the catastrophic match ends at the deadline inside the worker, which reports it
    # (a long kill grace: the parent's SIGKILL is not what stops it)
    limits = Limits(timeout=0.3, memory_bytes=512 << 20)
    async with ProcessRunner(limits, pool_size=1, spawn=spawn, kill_grace=10.0) as runner:
        await runner.start()
        bridge = HostToolBridge([])
        result = await runner.run(CATASTROPHIC, bridge=bridge, tools=[])
        assert result.error is not None
        assert (result.error.kind, result.error.message) == (
            "limit",
            "Script timed out after 0.3 s",
        )
        again = await runner.run("import re\nre.findall(r'\\d+', 'a1b22')", bridge=bridge, tools=[])
        assert again.value == ["1", "22"]


class _Budget:
    stop: BaseException | None = None
    deadline: float | None = None
    pause = None
    hooks = None

    def trip(self, kind: str, message: str) -> BaseException:  # pragma: no cover - no deadline
        raise AssertionError("no deadline here")

    def timeout_message(self) -> str:  # pragma: no cover - no deadline
        return "timed out"


class _ShortScanner:
    """A compiled pattern whose every scanner yields ``steps`` matches, then times out."""

    def __init__(self, real: Any, steps: int) -> None:
        self.real = real
        self.steps = steps
        self.restarts = 0

    def finditer(self, string: str, pos: int, endpos: int, timeout: float | None) -> Iterator[Any]:
        self.restarts += 1
        scanner = self.real.finditer(string, pos, endpos)
        for _ in range(self.steps):
            found = next(scanner, None)
            if found is None:
                return
            yield found
        raise TimeoutError("regex timed out")


@pytest.mark.parametrize("steps", [2, 3])
@pytest.mark.parametrize(
    ("pattern", "subject"),
    [("x*", "axbxxc"), ("|a", "aab"), (r"\b", "ab cd"), ("a", "banana"), ("(?=a)|a", "aa")],
)
def test_regex_guard_finditer_restarts_where_it_stopped(
    pattern: str, subject: str, steps: int
) -> None:
    # After a slice's timeout, finditer starts a fresh scanner where the last match
    # ended: the matches must be re's, with no empty match repeated or lost
    import regex

    fake = _ShortScanner(regex.compile(pattern), steps)
    wrapper = Pattern(fake, pattern, 0)
    spans = [m.span() for m in wrapper._iterate(_Budget(), subject, 0, len(subject))]
    assert spans == [m.span() for m in re.finditer(pattern, subject)]
    assert fake.restarts > 1


# ----------------------------------------------------------------------------- host state


def test_regex_guard_flag_values_are_not_kept_after_a_run() -> None:
    # findings18 B05: re.I | n and type(re.I)(n) kept a pseudo-member for every new value
    # in the host's re.RegexFlag (100 MiB a run, or a script int subclass with its class)
    from scriptgate.sandbox.guards.regex import SandboxFlag

    real = dict(re.RegexFlag._value2member_map_)
    before = set(SandboxFlag._value2member_map_)
    result = Sandbox().run_sync(
        "import re\nclass N(int):\n    pass\nF = type(re.I)\n"
        "[repr(F(1 << 20)), repr(re.I | (1 << 21)), int(F(N(1 << 22))), str(re.I | re.M)]"
    )
    assert result.value == [
        "re.RegexFlag(1048576)",
        "re.IGNORECASE|0x200000",
        1 << 22,
        "re.IGNORECASE|re.MULTILINE",
    ], result.error
    assert set(SandboxFlag._value2member_map_) == before
    assert re.RegexFlag._value2member_map_ == real


def test_regex_guard_replacement_templates_are_cached_as_exact_strings() -> None:
    # findings18 B09: a str subclass template (and its class) stayed in regex's
    # process-wide replacement cache after the run
    import regex._main

    result = Sandbox().run_sync(
        "import re\nclass S(str):\n    pass\n"
        "[re.sub('a', S('\\\\g<0>y'), 'a'), re.compile('b').sub(S('z\\\\g<0>'), 'b'), "
        "re.match('(c)', 'c').expand(S('\\\\1w'))]"
    )
    assert result.value == ["ay", "zb", "cw"], result.error
    cached = [part for key in regex._main._replacement_cache for part in key]
    assert all(type(part) in (str, bytes, int, type(None)) for part in cached), cached
