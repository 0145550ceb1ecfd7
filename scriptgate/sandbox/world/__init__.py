"""What a script can name: its builtins (:mod:`.builtins`) and stand-in modules (:mod:`.modules`).

Built per run from the guards; must not import the engine, isolation or the model-facing
text. This file stays empty so importing one submodule loads nothing else.
"""
