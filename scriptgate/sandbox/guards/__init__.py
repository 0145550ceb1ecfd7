"""Run-time checks, one concern per module; nothing here imports upward.

Bottom first: :mod:`.constants` (names shared with the compiler), :mod:`.errors`
(the run's stop and refusal exceptions), :mod:`.memory` (the memory meter),
:mod:`.sizes` (sizes and rendering), :mod:`.regex`, :mod:`.comparisons` (comparisons and
hashing), :mod:`.feeds` (iteration and chunked feeds), and on top :mod:`.attributes`
(attributes and values, the budget and :func:`~.attributes.make_guards`). Guards never
import the engine, isolation, the world or the model-facing text. This file stays empty so
importing one submodule loads nothing else.
"""
