"""Compiling a script: the RestrictedPython policy and the compile cache.

Owns the only ``RestrictedPython`` imports in scriptgate (:mod:`.policy`, :mod:`.cache`,
:mod:`.unpack`). It may import the shared names of :mod:`scriptgate.sandbox.guards.attributes` (the
policy emits calls to them); it must not import the world, the engine, isolation or the
model-facing text. This file stays empty so importing one submodule loads nothing else.
"""
