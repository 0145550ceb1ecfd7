"""The root a file toolset is confined to: path resolution, identity checks, safe opening.

Owns :func:`resolve_inside` and :class:`FileRoot` (the real root, the root as the host
spelled it, the protected files' identities, and what every tool asks of them: resolve a
model-given path, re-check it against what the policy judged, filter a walk, declare the
``path`` argument), plus the low-level helpers all tools share: :class:`FileToolError`,
opening only regular files (``O_NONBLOCK``/``O_NOFOLLOW``), OS-error texts, sizes, abort
checks and the abandonable host thread.

Must not touch: any one tool's behaviour or texts (``read``, ``write``/``edit``,
``ls``/``find``/``grep`` live in their own modules) and the toolset's assembly
(:mod:`scriptgate.tools.files.toolset`). Imports only :mod:`scriptgate.runtime` and
:mod:`scriptgate.tools.files._hostwork`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.paths import PathArguments, ResolvedArguments, ResolvedPath, path_admitted
from scriptgate.runtime.spelling import stored_spelling
from scriptgate.tools.files._hostwork import in_abandonable_thread

__all__ = ["FileRoot", "FileToolError", "resolve_inside"]

T = TypeVar("T")


class FileToolError(Exception):
    """A file tool failed in a way the model can act on; ``str()`` is the model-facing text."""


def _real_root(root: str | os.PathLike[str]) -> str:
    try:
        real = os.path.realpath(os.fspath(root), strict=True)
    except (OSError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"file tools root {root!r} does not exist: {exc}") from exc
    if not os.path.isdir(real):
        raise ConfigurationError(f"file tools root {root!r} is not a directory")
    return real


def _is_inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_inside(root: str | os.PathLike[str], path: str) -> Path:
    """Resolve ``path`` (relative to ``root``, or absolute) to a real path inside ``root``.

    Symbolic links are followed wherever they exist — in the target, in its
    parent directories, and in a dangling link a write would go through — and
    the *real* path must stay inside the real root. Components that do not
    exist yet are kept as written. ``..`` is allowed only while it stays inside.

    An empty path is the root itself. A symlink loop is left unresolved (opening
    it then fails with ``ELOOP``, which cannot escape).

    Raises :class:`FileToolError` (with a message for the model) on an escape or
    a NUL-containing path; raises :class:`~scriptgate.errors.ConfigurationError`
    if ``root`` is not a directory.
    """
    real_root = _real_root(root)
    return Path(_resolve(real_root, path, os.path.abspath(os.fspath(root))))


def _resolve(real_root: str, path: str, given_root: str | None = None) -> str:
    """The real path of ``path`` inside ``real_root``; see :func:`resolve_inside`.

    An absolute ``path`` may also be spelled through ``given_root`` (the root as
    the host wrote it, before symlinks in it were resolved).
    """
    if not isinstance(path, str):
        raise FileToolError(f"Path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise FileToolError("Path must not contain NUL characters")
    candidate = path if os.path.isabs(path) else os.path.join(real_root, path or ".")
    lexical = os.path.normpath(candidate)
    inside = _is_inside(real_root, lexical) or (
        given_root is not None and os.path.isabs(path) and _is_inside(given_root, lexical)
    )
    if not inside:
        raise FileToolError(
            f'Path "{path}" is outside the root directory; only paths inside it are allowed'
        )
    try:
        real = os.path.realpath(lexical, strict=False)
    except (OSError, ValueError) as exc:  # pragma: no cover - realpath(strict=False) rarely raises
        raise FileToolError(f'Could not resolve path "{path}": {exc}') from exc
    if not _is_inside(real_root, real):
        raise FileToolError(
            f'Path "{path}" resolves through a symbolic link to a location outside the root '
            "directory; only paths inside it are allowed"
        )
    # judge (and open) the name as the file system stores it: on a case-insensitive
    # file system ".VENV/x" is ".venv/x", and the policy's rules compare text
    rel = os.path.relpath(real, real_root)
    return real if rel == "." else stored_spelling(real_root, rel)


def _display(real_root: str, real: str) -> str:
    """A root-relative POSIX path for listings and structured results."""
    rel = os.path.relpath(real, real_root)
    return "." if rel == "." else rel.replace(os.sep, "/")


def _format_size(size: int) -> str:
    """pi's ``formatSize``: ``512B``, ``50.0KB``, ``1.5MB``."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def _os_error(exc: OSError, path: str, verb: str) -> FileToolError:
    if isinstance(exc, FileNotFoundError):
        return FileToolError(f"File not found: {path}")
    if isinstance(exc, IsADirectoryError):
        return FileToolError(f"Path is a directory: {path}")
    if isinstance(exc, NotADirectoryError):
        return FileToolError(f"Not a directory: {path}")
    if isinstance(exc, PermissionError):
        return FileToolError(f"Permission denied: {path}")
    reason = exc.strerror or str(exc)
    return FileToolError(f"Could not {verb} {path}: {reason}")


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _check_abort(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise FileToolError("Operation aborted")


async def _in_thread(fn: Callable[[], T]) -> T:
    # abandoned at the run's deadline: a call stuck in the kernel does not hold the run
    return await in_abandonable_thread(fn)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _not_regular(path: str, mode: int) -> FileToolError:
    return FileToolError(
        f"Not a regular file: {path} is {_kind(mode)}; the file tools open only regular files"
    )


def _open_regular(real: str, path: str, flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """Open ``real`` as a regular file and return the descriptor; refuse anything else.

    FIFOs, sockets and devices are refused *before* opening (``lstat``) and again on the
    descriptor (``fstat``): the open itself uses ``O_NONBLOCK`` (a FIFO without a peer
    does not block it) and ``O_NOFOLLOW`` (a link swapped in is not followed), then
    ``O_NONBLOCK`` is cleared for ordinary I/O. ``O_TRUNC`` is applied only once the
    descriptor is known to be a regular file. Raises ``OSError`` as ``os.open`` does.
    """
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if stat.S_ISDIR(st.st_mode):
            raise FileToolError(f"Path is a directory: {path}")
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
    truncate = bool(flags & os.O_TRUNC)
    open_flags = (flags & ~os.O_TRUNC) | _NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(real, open_flags, mode)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st.st_mode)
        if _NONBLOCK:
            os.set_blocking(fd, True)
        if truncate:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _stat_regular(real: str, path: str) -> os.stat_result:
    """``stat`` of a path the content tools may open: a directory or non-regular file is refused."""
    st = os.stat(real)
    if stat.S_ISDIR(st.st_mode):
        raise FileToolError(f"Path is a directory: {path}")
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st.st_mode)
    return st


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of what ``path`` names (links followed), or None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _identities(paths: Iterable[str | os.PathLike[str]]) -> frozenset[tuple[int, int]]:
    found = {_identity(p) for p in paths}
    return frozenset(i for i in found if i is not None)


def _protected_text(path: str) -> str:
    return (
        f"Access denied: {path} is a protected file (the audit log of this run); "
        "the tools may not read or change it"
    )


def _opt_int(params: Mapping[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FileToolError(f"{key} must be an integer")
    return value


def _req_str(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise FileToolError(f"{key} must be a string")
    return value


@dataclass(frozen=True)
class FileRoot:
    """One toolset's root: where paths resolve, and which files no tool may open.

    ``real`` is the root with symbolic links resolved, ``given`` the root as the host
    wrote it (an absolute path may be spelled through it), ``protected`` the
    ``(st_dev, st_ino)`` identities of the protected files.
    """

    real: str
    given: str
    protected: frozenset[tuple[int, int]]

    def is_protected(self, real: str) -> bool:
        """Whether ``real`` is (by identity) one of the protected files."""
        return bool(self.protected) and _identity(real) in self.protected

    def resolve(self, path: str) -> str:
        """The real path of a model-given ``path``; a protected file is refused."""
        real = _resolve(self.real, path, self.given)
        if self.is_protected(real):
            raise FileToolError(_protected_text(path))
        return real

    def display(self, real: str) -> str:
        """``real`` as a root-relative POSIX path."""
        return _display(self.real, real)

    def resolve_argument(self, path: str) -> ResolvedPath:
        """The declared ``path`` argument, resolved for the policy."""
        real = self.resolve(path)
        return ResolvedPath(_display(self.real, real), real)

    def judged(self, params: Any, path: str) -> None:
        """Refuse a path whose real location changed since the policy judged it."""
        if isinstance(params, ResolvedArguments):
            seen = params.paths.get("path")
            if isinstance(seen, ResolvedPath) and self.resolve(path) != seen.absolute:
                raise FileToolError(
                    f"Path {path} changed (a symbolic link moved) after it was checked; try again"
                )

    def admitter(self, params: Any) -> Callable[[str, bool], bool] | None:
        """The walk filter of a walking call: the entry, and a link's target, must be admitted."""
        if not isinstance(params, ResolvedArguments):
            return None
        real_root = self.real

        def admit(entry: str, is_link: bool) -> bool:
            if not path_admitted(params, ResolvedPath(_display(real_root, entry), entry)):
                return False
            if is_link:
                target = os.path.realpath(entry)
                if _is_inside(real_root, target):
                    return path_admitted(params, ResolvedPath(_display(real_root, target), target))
            return True

        return admit

    def path_spec(self, *, walks: bool) -> PathArguments:
        """The ``path`` argument declaration of a tool (a missing path is the root)."""
        return PathArguments(("path",), self.resolve_argument, walks=walks, missing=".")

    def search_start(self, path: str) -> str:
        """The real start of a ``find``/``grep``: it must exist."""
        real = self.resolve(path)
        if not os.path.exists(real):
            raise FileToolError(f"Path not found: {path}")
        return real
