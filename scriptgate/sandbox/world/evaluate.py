"""``eval``/``exec`` of a string inside a script, compiled and run like the script itself.

Part of ``world/``: owns the ``eval``, ``exec`` and ``compile`` builtins of one run
(:func:`make_evaluators`) and the namespaces they run code in. Uses ``compile/`` (the same
:func:`~scriptgate.sandbox.compile.cache.compile_script` pipeline as a script: the policy,
its transforms and the cache) and the run's hooks as the engine put them in the script's
globals; it must not import the engine, isolation or the model-facing text, nor change the
policy or the guards.

How a string runs
-----------------
- The text (a ``str`` of at most :data:`MAX_EVAL_SOURCE` bytes, and the run's
  ``max_source_bytes``) is compiled by ``compile_script`` exactly as a script is
  (``session=True``: the namespace may hold any value). A syntax error or a policy refusal
  raises a catchable ``SyntaxError`` with the policy's one-line message and the line in
  the string; ``await`` in the text is refused (await what ``eval`` returns instead). Each
  call charges the step budget one step per 32 characters (the compile time), checks the
  deadline and the memory budget after compiling, and nests at most
  :data:`MAX_EVAL_DEPTH` deep (``RecursionError`` past it).
- The compiled body runs as a function named ``__eval__``: it counts as one call of the
  recursion depth, and every loop and call inside ticks the run's own budget.
- Namespaces: with none given, the globals of the calling script frame (the script's own
  globals, where the run's hooks live); inside a script function, its local variables
  are readable too (a snapshot, as in Python assignments to them do not change the
  function's variables). Given dicts must be plain ``dict`` objects; their entries under
  names no script can write (hooks such as ``_getattr_``, dunders such as
  ``__builtins__``, non-identifiers; a private ``_x`` is kept) are ignored: the code runs in
  a namespace of ours (:class:`EvalNamespace`) holding the run's hooks and builtins, seeded
  from the dicts, whose new and changed names are written back to the dict afterwards
  (to ``locals`` when it is given, as Python does). Functions defined there keep that
  namespace; in a session its hooks are renewed at the start of every run. Its ``_tk_``
  (the tick the budget swaps in the script's globals) is read through the script's globals,
  so both count one chunk; a class body, which looks names up past ``__missing__``, finds
  the run's chunked ticker (``_tick_``) under that name in the builtins.
- ``compile()`` stays absent: calling it raises a ``NameError`` that says to pass the
  text to ``eval()``/``exec()`` (a code object would be a host object in the script).
"""

from __future__ import annotations

import ast
import sys
import types
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from threading import Lock
from typing import Any

from scriptgate.sandbox.compile.cache import CompileFailure, compile_script
from scriptgate.sandbox.compile.deadline import CompileClock
from scriptgate.sandbox.guards.constants import ENTRY, FILENAME, is_private_name
from scriptgate.sandbox.world.naming import name_closures

__all__ = [
    "EVAL_ENTRY",
    "EVAL_NAMES",
    "MAX_EVAL_DEPTH",
    "MAX_EVAL_SOURCE",
    "EvalNamespace",
    "make_evaluators",
]

EVAL_NAMES = frozenset({"eval", "exec"})
"""The builtins this module makes (the compile policy lets calls of them through)."""

MAX_EVAL_SOURCE = 8_000
"""Longest text (bytes, UTF-8) ``eval``/``exec`` compile; the run's ``max_source_bytes`` too."""

MAX_EVAL_DEPTH = 16
"""How deep ``eval``/``exec`` may nest (``eval("eval(...)")``) before ``RecursionError``."""

EVAL_ENTRY = "__eval__"
"""The name of the function a string's body runs as (a script call for the depth count)."""

_CACHED_SOURCE = 4_096
"""Texts up to this many characters share the scripts' compile cache (a run cannot fill it
with long ones)."""

_CHARS_PER_STEP = 32
_REGISTRY = "_evalns_"
"""The script globals' set of the :class:`EvalNamespace` objects bound to them."""
_LIVE = frozenset({"_tk_"})
"""Hooks the budget replaces in the script's globals while it runs: read through them."""
_MISSING = object()
_CO_OPTIMIZED = 0x1
_NAMESPACES_PER_RUN = 64


class EvalNamespace(dict):  # type: ignore[type-arg]
    """The globals of code run by ``eval``/``exec`` with namespaces the script passed.

    Holds the run's hooks and ``__builtins__`` (never the script's entries of those
    names) and the script's plain names; ``_tk_``, which the budget replaces in the
    script's own globals as the run goes, is read through those (``live``). Never handed
    to a script.
    """

    __slots__ = ("__weakref__", "live")

    live: dict[str, Any]

    def __missing__(self, key: str) -> Any:
        if key in _LIVE:
            return self.live[key]
        raise KeyError(key)

    def get(self, key: Any, default: Any = None) -> Any:
        """``dict.get`` that reads the live hooks through the script's globals."""
        if key in _LIVE and not dict.__contains__(self, key):
            return self.live.get(key, default)
        return dict.get(self, key, default)


def _plain(name: object) -> bool:
    """A name a script can write: not a hook (``_x_``), dunder or mangled name (``_x`` is)."""
    return type(name) is str and name.isidentifier() and (name[0] != "_" or is_private_name(name))


def _renamed(code: types.CodeType) -> types.CodeType:
    """The module code of a compiled text with its ``__script__`` function named ``__eval__``.

    The budget's depth count stops at ``__script__`` (the bottom of the script's stack);
    a string's body is a call on top of it.
    """
    consts = tuple(
        c.replace(co_name=EVAL_ENTRY, co_qualname=EVAL_ENTRY)
        if isinstance(c, types.CodeType) and c.co_name == ENTRY
        else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


_PREPARED: OrderedDict[tuple[str, str], types.CodeType] = OrderedDict()
_PREPARED_SIZE = 256
_PREPARED_LOCK = Lock()


def _one_line(failure: CompileFailure, what: str) -> str:
    """The policy's first message on one line, and where: ``… (in the eval() string, line 2)``."""
    lines = [line for line in failure.message.splitlines() if line.strip()] or [failure.type]
    text = lines[0].rstrip(".")
    more = f"; {len(lines) - 1} more" if len(lines) > 1 else ""
    where = "" if failure.line is None or text.startswith("Line ") else f", line {failure.line}"
    return f"{text} (in the {what}() string{where}{more})"


def _script_frame() -> types.FrameType | None:
    """The innermost script frame below the builtin (the code that called ``eval``)."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            return frame
        frame = frame.f_back
    return None


def make_evaluators(
    ns: dict[str, Any],
    hooks: Iterable[str],
    *,
    max_source_bytes: int | None,
    taken: Iterable[str] = (),
) -> dict[str, Any]:
    """``eval``, ``exec`` and ``compile`` for the run whose script globals are ``ns``.

    ``hooks``: the names of the run's hooks in ``ns`` (``make_guards``' keys); ``ns`` must
    already hold them, ``__builtins__`` and ``__budget__``. ``taken``: the identifiers of
    the run's tools (a tool named ``compile`` keeps its name: no refusing builtin then).
    Renews the hooks of the namespaces earlier runs of a session made (their functions
    charge this run).
    """
    budget = ns["__budget__"]
    names: list[frozenset[str]] = []  # the hook names, made when the first namespace is
    limit = MAX_EVAL_SOURCE if max_source_bytes is None else min(MAX_EVAL_SOURCE, max_source_bytes)
    depth = [0]
    by_dict: OrderedDict[int, tuple[dict[str, Any], EvalNamespace]] = OrderedDict()

    def refresh(space: EvalNamespace) -> None:
        if not names:
            names.append(frozenset(hooks) - _LIVE)
        for name in names[0]:
            if name in ns:
                dict.__setitem__(space, name, ns[name])
        dict.__setitem__(space, "__builtins__", ns["__builtins__"])
        space.live = ns

    registry = ns.get(_REGISTRY)
    if isinstance(registry, weakref.WeakValueDictionary):
        for space in list(registry.values()):  # a session's earlier runs made them
            refresh(space)

    def new_space() -> EvalNamespace:
        nonlocal registry
        if not isinstance(registry, weakref.WeakValueDictionary):
            registry = ns[_REGISTRY] = weakref.WeakValueDictionary()
        space = EvalNamespace()
        refresh(space)
        registry[id(space)] = space
        return space

    active: dict[int, int] = {}  # id(namespace) -> how many eval/exec calls run in it

    def seed(space: EvalNamespace, *sources: dict[Any, Any]) -> None:
        keep: set[str] = set()
        for source in sources:
            budget.spend(len(source))
            keep.update(k for k in source if _plain(k))
        if not active.get(id(space)):
            # (an eval in the same dict inside a running exec keeps the names bound so far)
            for name in [k for k in space if _plain(k) and k not in keep]:
                del space[name]
        for source in sources:
            for name, value in source.items():
                if _plain(name):
                    dict.__setitem__(space, name, value)

    def write_back(space: EvalNamespace, target: dict[Any, Any], before: dict[str, Any]) -> None:
        # the names the code bound (new, or another value than seeded) go to `target`;
        # the target's names it deleted are deleted there
        budget.spend(len(space))
        for name, value in space.items():
            if _plain(name) and before.get(name, _MISSING) is not value:
                target[name] = value
        for name in [k for k in target if _plain(k) and k in before and k not in space]:
            del target[name]

    def prepare(source: Any, what: str) -> types.CodeType:
        if type(source) is not str:
            kind = type(source).__name__
            raise TypeError(f"{what}() arg 1 must be a string (not {kind}) in the sandbox")
        if what == "eval":
            source = source.lstrip(" \t")
        budget.spend(1 + len(source) // _CHARS_PER_STEP)  # the compile's cost, checked first
        size = len(source.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise SyntaxError(
                f"the {what}() string is {size} bytes long, more than the limit of {limit} bytes"
            )
        key = (what, source)
        with _PREPARED_LOCK:
            code = _PREPARED.get(key)
        if code is not None:
            return code
        if what == "eval":
            try:
                tree = ast.parse(source, FILENAME, "eval")
            except SyntaxError as exc:
                line = f", line {exc.lineno}" if exc.lineno else ""
                raise SyntaxError(f"{exc.msg} (in the eval() string{line})") from None
            except (RecursionError, MemoryError, ValueError):
                raise SyntaxError("the eval() string is too complex to parse") from None
            del tree
        clock = CompileClock(budget.deadline, budget.limits.timeout, budget.signal)
        compiled = compile_script(
            source, session=True, cache=len(source) <= _CACHED_SOURCE, clock=clock
        )
        if budget.memory is not None:
            budget.memory.poll()
        budget.spend(0)  # the deadline, after a long compile
        if isinstance(compiled, CompileFailure):
            if compiled.kind in ("sandbox", "limit", "aborted"):
                raise budget.trip(compiled.kind, compiled.message)
            raise SyntaxError(_one_line(compiled, what))
        if compiled.is_async:
            raise SyntaxError(
                f"'await' is not allowed in an {what}() string in the sandbox: "
                f"{what}() the call without 'await' and await what it returns"
            )
        code = _renamed(compiled.code)
        if len(source) <= _CACHED_SOURCE:
            with _PREPARED_LOCK:
                _PREPARED[key] = code
                if len(_PREPARED) > _PREPARED_SIZE:
                    _PREPARED.popitem(last=False)
        return code

    def space_for(given: dict[Any, Any]) -> EvalNamespace:
        entry = by_dict.get(id(given))
        if entry is not None and entry[0] is given:
            by_dict.move_to_end(id(given))
            return entry[1]
        space = new_space()
        by_dict[id(given)] = (given, space)
        if len(by_dict) > _NAMESPACES_PER_RUN:
            by_dict.popitem(last=False)
        return space

    def check_dict(value: Any, what: str, role: str) -> dict[Any, Any] | None:
        if value is None:
            return None
        if type(value) is not dict:
            raise TypeError(
                f"{what}() {role} must be a plain dict in the sandbox, not {type(value).__name__}"
            )
        return value

    def run(what: str, source: Any, globals_: Any, locals_: Any) -> Any:
        nonlocal budget
        # the current run's (in a session a kept `eval` is called by later runs)
        budget = ns.get("__budget__", budget)
        given_globals = check_dict(globals_, what, "globals")
        given_locals = check_dict(locals_, what, "locals")
        if depth[0] >= MAX_EVAL_DEPTH:
            raise RecursionError(f"eval()/exec() nested more than {MAX_EVAL_DEPTH} deep")
        code = prepare(source, what)
        target: dict[Any, Any] | None = None
        if given_globals is None:
            caller = _script_frame()
            base: dict[str, Any] = ns if caller is None else caller.f_globals
            if base is not ns and not isinstance(base, EvalNamespace):
                base = ns  # (only the script's globals and ours hold script frames)
                caller = None
            extra: dict[str, Any] | None = given_locals
            if extra is None and caller is not None:
                code_of = caller.f_code
                if code_of.co_flags & _CO_OPTIMIZED and code_of.co_name != ENTRY:
                    found = {k: v for k, v in caller.f_locals.items() if _plain(k)}
                    extra = found or None
            if extra is None:
                space: dict[str, Any] = base
            else:
                space = new_space()
                seed(space, {k: v for k, v in base.items() if _plain(k)}, extra)
                if given_locals is not None:
                    target = given_locals
        else:
            space = space_for(given_globals)
            if given_locals is None or given_locals is given_globals:
                seed(space, given_globals)
                target = given_globals
            else:
                seed(space, given_globals, given_locals)
                target = given_locals
        before = {} if target is None else {k: v for k, v in space.items() if _plain(k)}
        depth[0] += 1
        key = id(space)
        active[key] = active.get(key, 0) + 1
        try:
            exec(code, space)  # defines __script__ (named __eval__) in the namespace
            fn = space.pop(ENTRY)
            try:
                value = fn()
            finally:
                if target is not None:
                    assert isinstance(space, EvalNamespace)
                    write_back(space, target, before)
        finally:
            depth[0] -= 1
            active[key] -= 1
            if not active[key]:
                del active[key]
        return value if what == "eval" else None

    def eval_(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
        """Evaluate an expression string under the script's policy and limits."""
        return run("eval", source, globals, locals)

    def exec_(source: Any, globals: Any = None, locals: Any = None, /) -> None:
        """Run a string of statements under the script's policy and limits."""
        run("exec", source, globals, locals)

    # a class body reads names past the namespace's __missing__ (LOAD_NAME): its `while`
    # ticks finds this one in the builtins, the run's chunked ticker (steps, deadline, depth)
    made: dict[str, Any] = {"eval": eval_, "exec": exec_, "_tk_": ns["_tick_"]}
    if "compile" not in set(taken):
        made["compile"] = _compile_refused
    return made


name_closures(make_evaluators, ("eval", "exec"))  # messages name eval(), not eval_()


def _compile_refused(*args: Any, **kwargs: Any) -> Any:
    raise NameError(
        "name 'compile' is not defined: compile() is not available in the sandbox "
        "(pass the source text straight to eval() or exec())"
    )
