"""The ``uuid`` stand-in: ``UUID``, ``uuid3``/``uuid4``/``uuid5`` and the ``NAMESPACE_*`` ids.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``UUID`` values are the real immutable class.
``uuid1`` and ``getnode`` are left out: they read the host's MAC address (the model
is told to use ``uuid4``). ``uuid3``/``uuid5`` names are at most :data:`MAX_NAME`
characters.
"""

from __future__ import annotations

import uuid
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_NAME", "MEMBERS", "NAME", "build"]

_NAMESPACES = ("NAMESPACE_DNS", "NAMESPACE_URL", "NAMESPACE_OID", "NAMESPACE_X500")
NAME = "uuid"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("UUID", "uuid3", "uuid4", "uuid5", *_NAMESPACES)
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (uuid.UUID,)
"""Value types this stand-in hands to scripts."""
MAX_NAME = 10_000_000
"""The longest name ``uuid3``/``uuid5`` hash."""


def _named(real: Any) -> Any:
    def make(namespace: Any, name: Any) -> uuid.UUID:
        if type(namespace) is not uuid.UUID:
            raise TypeError("the namespace must be a UUID (uuid.NAMESPACE_DNS, …)")
        name = exact_copy(name)  # a str/bytes subclass: measured and hashed as it is
        if isinstance(name, str | bytes) and len(name) > MAX_NAME:
            refuse_size(f"a uuid name of more than {MAX_NAME} characters refused in the sandbox")
        result: uuid.UUID = real(namespace, name)
        return result

    make.__name__ = real.__name__
    return make


def _uuid4() -> uuid.UUID:
    return uuid.uuid4()


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: getattr(uuid, name) for name in _NAMESPACES}
    table.update(UUID=uuid.UUID, uuid3=_named(uuid.uuid3), uuid4=_uuid4, uuid5=_named(uuid.uuid5))
    return table
