"""The ``urllib`` stand-in: the package of ``urllib.parse``, with no members of its own.

Part of ``world/modules/``: ``import urllib.parse`` binds this namespace, whose ``parse``
member is the :mod:`.urllib_parse` stand-in (the registry adds it, as for
``collections.abc``). ``urllib.request`` and ``urllib.error`` are not available: the sandbox
has no network, a script calls the tools.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "urllib"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ()
"""The members a script may use (``parse`` is added by the registry)."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts."""
HINTS: dict[str, str] = {
    "request": "the sandbox has no network: fetch through the tools",
    "error": "the sandbox has no network: fetch through the tools",
}
"""What to write instead of a member of the real ``urllib`` this stand-in leaves out."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run (none of its own)."""
    return {}
