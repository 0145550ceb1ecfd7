"""Process mode: the parent side (:mod:`.parent`), the worker (:mod:`.worker`), the framing.

Sits above the engine (the worker runs :func:`scriptgate.sandbox.engine.run_script`); the
guards, world and compile packages never import it. This file stays empty so importing one
submodule loads nothing else.
"""
