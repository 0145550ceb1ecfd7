"""What the run-time guards take from RestrictedPython: its attribute list and unpacking guards.

A leaf (imports only RestrictedPython), so :mod:`scriptgate.sandbox.guards` can use these
without importing the policy; it must not import anything from scriptgate.
"""

from __future__ import annotations

from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence as guarded_iter_unpack_sequence,
)
from RestrictedPython.Guards import (
    guarded_unpack_sequence as guarded_unpack_sequence,
)
from RestrictedPython.transformer import INSPECT_ATTRIBUTES as INSPECT_ATTRIBUTES

__all__ = ["INSPECT_ATTRIBUTES", "guarded_iter_unpack_sequence", "guarded_unpack_sequence"]
