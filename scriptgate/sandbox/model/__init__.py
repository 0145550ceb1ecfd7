"""What the model reads: Python stubs for tools (:mod:`.stubs`) and ``codemode_tool``.

Sits on top of the sandbox; nothing below it (engine, guards, world, compile,
isolation) imports it. This file stays empty so importing one submodule loads nothing else.
"""
