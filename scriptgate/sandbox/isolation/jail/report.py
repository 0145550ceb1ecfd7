"""What a jail is asked for and what it got: :class:`JailSettings`, :class:`Layer`, :class:`JailReport`.

Plain data, shared by every layer: the settings a launcher passes in, the per-layer report the
worker's ``ready`` message carries, and :class:`_Prepared` (the launching process's state that
the worker's own layers read). No system calls here; it must not import the other modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: The layers a jail is made of, in the order they are reported.
LAYERS: tuple[str, ...] = ("uid", "namespaces", "no_new_privs", "rlimits", "landlock", "seccomp")


@dataclass(frozen=True)
class Layer:
    """One layer of the jail: whether it is ``active`` and what it did (or why it is not)."""

    name: str
    active: bool
    detail: str


@dataclass(frozen=True)
class JailReport:
    """What a worker's jail got, layer by layer (the order of :data:`LAYERS`)."""

    layers: tuple[Layer, ...]

    @property
    def complete(self) -> bool:
        """True when every layer of :data:`LAYERS` is active."""
        active = {layer.name for layer in self.layers if layer.active}
        return all(name in active for name in LAYERS)

    @property
    def missing(self) -> tuple[str, ...]:
        """The layers that are not active, each with the reason (``"seccomp (…)"``)."""
        by_name = {layer.name: layer for layer in self.layers}
        out: list[str] = []
        for name in LAYERS:
            layer = by_name.get(name)
            if layer is None:
                out.append(f"{name} (not attempted)")
            elif not layer.active:
                out.append(f"{name} ({layer.detail})")
        return tuple(out)

    @property
    def level(self) -> Literal["full", "partial", "none"]:
        """``"full"`` (every layer), ``"none"`` (no layer) or ``"partial"``."""
        if self.complete:
            return "full"
        return "partial" if any(layer.active for layer in self.layers) else "none"

    def to_json(self) -> list[list[Any]]:
        """``[[name, active, detail], ...]`` (the worker's ``ready`` message carries it)."""
        return [[layer.name, layer.active, layer.detail] for layer in self.layers]

    @classmethod
    def from_json(cls, data: object) -> JailReport:
        """The report in :meth:`to_json`'s shape; anything malformed reads as no layer at all."""
        layers: list[Layer] = []
        if isinstance(data, list):
            for item in data[: 4 * len(LAYERS)]:
                if (
                    isinstance(item, list)
                    and len(item) == 3
                    and item[0] in LAYERS
                    and isinstance(item[1], bool)
                    and isinstance(item[2], str)
                ):
                    layers.append(Layer(item[0], item[1], item[2][:500]))
        return cls(tuple(layers))

    @classmethod
    def unavailable(cls, reason: str) -> JailReport:
        """A report in which every layer is unavailable for the same ``reason``."""
        return cls(tuple(Layer(name, False, reason) for name in LAYERS))

    def lines(self) -> list[str]:
        """One line per layer: ``name: active|unavailable — detail``."""
        by_name = {layer.name: layer for layer in self.layers}
        out = []
        for name in LAYERS:
            layer = by_name.get(name, Layer(name, False, "not attempted"))
            state = "active" if layer.active else "unavailable"
            out.append(f"{name:<13} {state:<11} {layer.detail}")
        return out


@dataclass
class JailSettings:
    """What the jail is built from: the worker's temp dir and the rlimits.

    ``tmpdir`` is the only writable directory (it must exist and be empty);
    ``memory_bytes`` becomes ``RLIMIT_AS`` and ``RLIMIT_DATA``; ``nproc`` the
    processes the jail's uid may have; ``fsize`` the largest file it may write;
    ``nofile`` its descriptors. ``new_session``: the worker starts a session (and
    process group) of its own, so the caller can kill it with ``killpg(worker_pid)``.
    ``extra_read_only``: more directories shown read-only (beside the runtime).
    ``tmp_bytes`` / ``tmp_inodes``: with a mount namespace the temp dir is a fresh
    ``tmpfs`` of at most that many bytes and entries (files, directories, links), so
    jailed code cannot grow the host's disk or inode table through it.
    """

    tmpdir: str
    memory_bytes: int | None = 1 << 30
    nproc: int = 16
    nofile: int = 64
    fsize: int = 0
    new_session: bool = False
    extra_read_only: tuple[str, ...] = ()
    tmp_bytes: int = 16 << 20
    tmp_inodes: int = 1024


class _Prepared:
    """The launching process's side of the jail: layers so far and the paths to rule on."""

    def __init__(self) -> None:
        self.layers: dict[str, Layer] = {}
        self.read_only: list[str] = []
        self.devices: list[tuple[str, bool]] = []
        self.tmpdir = ""
        self.tmp_bytes = 16 << 20
        self.tmp_inodes = 1024
        self.namespaces = False
        self.seccomp_bpf: bytes | None = None
        self.seccomp_detail = ""
        self.seccomp_error = ""
