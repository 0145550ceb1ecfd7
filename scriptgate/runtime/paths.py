"""Path arguments: a tool declares which arguments name files, and they are resolved first.

This module owns the *resolution step* of the pipeline and the records it
produces. It must not decide anything (that is :mod:`scriptgate.runtime.policy`)
and knows no concrete file system layout (each tool brings its own resolver).

Design
------
A permission policy that matches the *text* of a path argument judges a string,
while the tool opens whatever that string resolves to: ``/abs/root/.git/config``,
``../root/.git/config`` and ``link-to-git/config`` all reach ``.git/config``. So
the pipeline resolves path arguments **before** ``before_tool_call``::

    shim → validation → resolution (this module) → before_tool_call → execute

- A tool declares its path arguments with ``AgentTool(paths=PathArguments(...))``:
  the top-level argument names that hold a path (a string, or an array of
  strings), the resolver that turns one value into a :class:`ResolvedPath`
  (or raises to refuse it: outside the root, NUL bytes, ...), whether the tool
  *walks* below the path (``find``, ``grep``, ``ls``), and what a missing or
  empty argument means (``missing="."``: the root itself).
- :func:`resolve_arguments` runs after validation. It returns a
  :class:`ResolvedArguments` — a ``dict`` whose path values are replaced by
  the resolved form the tool will use (``form="relative"``: the root-relative
  real path, ``"."`` for the root; ``form="absolute"``: the real absolute path)
  and which remembers each :class:`ResolvedPath` in ``.paths``. That object is
  what ``before_tool_call`` sees as ``ctx.args`` and, unchanged, what
  ``execute`` receives: *the tool runs on exactly the arguments the policy
  judged*. A resolver that raises gives an error result; ``execute`` never runs.
- A walking tool cannot know the policy, so a hook that judges paths narrows
  the walk through the arguments object it was given: ``args.restrict(admits)``
  adds a predicate over :class:`ResolvedPath` (several hooks' predicates are
  all applied). The tool asks :func:`path_admitted` for every directory before
  it descends and every entry before it lists it, so a denied subtree is
  neither walked nor listed. Without a restricting hook everything is admitted.
  (A tool whose ``parameters`` is a pydantic model receives a model built from
  the resolved values; a walking tool needs JSON Schema parameters to see the
  restriction.)

Arguments that are not declared paths stay plain text for the policy: no path
normalisation is applied to them (a URL or an e-mail address is not a path).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "PathAdmits",
    "PathArguments",
    "PathResolver",
    "ResolvedArguments",
    "ResolvedPath",
    "path_admitted",
    "path_combinations",
    "resolve_arguments",
]


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """One resolved path argument.

    ``relative`` is the root-relative POSIX form of the real path (``"."`` is the
    root itself; ``None`` when the path is under no root the tool knows), and
    ``absolute`` the real absolute path (symbolic links resolved). Policies match
    relative patterns against ``relative`` and absolute ones against ``absolute``.
    """

    relative: str | None
    absolute: str

    def value(self, form: Literal["relative", "absolute"]) -> str:
        """The string a tool receives in ``form`` (``absolute`` when there is no relative form)."""
        if form == "relative" and self.relative is not None:
            return self.relative
        return self.absolute


PathResolver: TypeAlias = Callable[[str], ResolvedPath]
"""Resolve one path value; raise (with a model-facing message) to refuse it."""

PathAdmits: TypeAlias = Callable[[ResolvedPath], bool]
"""A predicate a hook adds with :meth:`ResolvedArguments.restrict`."""


@dataclass(frozen=True, slots=True)
class PathArguments:
    """What a tool declares about its path arguments (``AgentTool(paths=...)``).

    - ``names``: top-level argument names that hold a path or an array of paths;
    - ``resolve``: the resolver for one value (see :data:`PathResolver`);
    - ``walks``: the tool walks below the path and filters what it touches with
      :func:`path_admitted`;
    - ``missing``: the value a missing, ``None`` or empty argument stands for
      (``"."``: the root), or ``None`` to leave it missing;
    - ``form``: what ``execute`` receives in place of the value, the
      ``"relative"`` or the ``"absolute"`` form of the resolved path.
    """

    names: tuple[str, ...]
    resolve: PathResolver
    walks: bool = False
    missing: str | None = None
    form: Literal["relative", "absolute"] = "relative"

    def __post_init__(self) -> None:
        names: object = self.names
        if not isinstance(names, tuple) or not all(isinstance(n, str) for n in names):
            raise TypeError("PathArguments.names must be a tuple of argument names")
        if self.form not in ("relative", "absolute"):
            raise ValueError(f"PathArguments.form must be relative or absolute, not {self.form!r}")


class ResolvedArguments(dict[str, Any]):
    """Validated arguments whose path values were resolved (a plain ``dict`` otherwise).

    ``paths`` maps each path argument present to its :class:`ResolvedPath` (or a
    tuple of them for an array); ``walks`` says whether the tool walks below them.
    Hooks narrow a walk with :meth:`restrict`; tools ask :meth:`admits`.
    """

    __slots__ = ("_admits", "_spec", "paths", "walks")

    paths: dict[str, ResolvedPath | tuple[ResolvedPath, ...]]
    walks: bool

    def __init__(
        self,
        values: Mapping[str, Any],
        paths: Mapping[str, ResolvedPath | tuple[ResolvedPath, ...]],
        *,
        walks: bool = False,
        spec: PathArguments | None = None,
    ) -> None:
        super().__init__(values)
        self.paths = dict(paths)
        self.walks = walks
        self._spec = spec
        self._admits: list[PathAdmits] = []

    def current_paths(self) -> dict[str, ResolvedPath | tuple[ResolvedPath, ...]]:
        """``paths``, after re-resolving any path value a hook replaced since resolution.

        A ``before_tool_call`` hook may rewrite ``args`` in place (pi); a judge calls
        this so that it judges the value the tool will get, not a stale one. The
        resolver's exceptions propagate.
        """
        spec = self._spec
        if spec is None:
            return self.paths
        for name in spec.names:
            value = self.get(name)
            seen = self.paths.get(name)
            if isinstance(seen, ResolvedPath):
                current: Any = seen.value(spec.form)
            elif isinstance(seen, tuple):
                current = [p.value(spec.form) for p in seen]
            else:
                current = None
            if value == current or (seen is None and _is_missing(value)):
                continue
            if isinstance(value, str):
                self.paths[name] = spec.resolve(value)
            elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
                self.paths[name] = tuple(spec.resolve(v) for v in value)
            else:
                self.paths.pop(name, None)
        return self.paths

    def restrict(self, admits: PathAdmits) -> None:
        """Add a predicate every path the tool walks to or lists must pass."""
        self._admits.append(admits)

    def admits(self, path: ResolvedPath) -> bool:
        """Whether every predicate added with :meth:`restrict` admits ``path``."""
        return all(check(path) for check in self._admits)

    def __reduce__(self) -> Any:  # pickles (and copies) as the plain dict it holds
        return (dict, (dict(self),))


def path_admitted(params: Any, path: ResolvedPath) -> bool:
    """For a walking tool: may it walk to (or list) ``path``? ``True`` for plain arguments."""
    if isinstance(params, ResolvedArguments):
        return params.admits(path)
    return True


def _is_missing(value: Any) -> bool:
    return value is None or value == ""


def resolve_arguments(spec: PathArguments, args: Any) -> Any:
    """The resolution step: ``args`` with every declared path resolved (see the module docstring).

    Non-mapping ``args`` (a pydantic model) are returned unchanged. The resolver's
    exceptions propagate; the pipeline turns them into error results.
    """
    if not isinstance(args, Mapping):
        return args
    values = dict(args)
    paths: dict[str, ResolvedPath | tuple[ResolvedPath, ...]] = {}
    for name in spec.names:
        value = values.get(name)
        if _is_missing(value):
            if spec.missing is None:
                continue
            value = spec.missing
        if isinstance(value, str):
            resolved = spec.resolve(value)
            paths[name] = resolved
            values[name] = resolved.value(spec.form)
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            many = tuple(spec.resolve(v) for v in value)
            paths[name] = many
            values[name] = [p.value(spec.form) for p in many]
        # any other value was let through by the tool's own schema: it is not a path
    return ResolvedArguments(values, paths, walks=spec.walks, spec=spec)


def path_combinations(
    paths: Mapping[str, ResolvedPath | tuple[ResolvedPath, ...]], limit: int = 4096
) -> Iterable[dict[str, ResolvedPath]] | None:
    """Every way of picking one path per argument (an array contributes each element).

    A call with ``paths=[a, b]`` is judged as a call on ``a`` and a call on ``b``;
    an empty array names no path and is left out. ``None`` when there are more
    than ``limit`` combinations: the caller must refuse to judge such a call.
    """
    names = list(paths)
    choices: list[Sequence[ResolvedPath]] = []
    total = 1
    for name in names:
        value = paths[name]
        options: Sequence[ResolvedPath] = value if isinstance(value, tuple) else (value,)
        if not options:
            continue
        total *= len(options)
        if total > limit:
            return None
        choices.append(options)
    kept = [name for name in names if not (isinstance(paths[name], tuple) and not paths[name])]
    return (dict(zip(kept, combo, strict=True)) for combo in itertools.product(*choices))
