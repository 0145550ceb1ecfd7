"""``print(..., file=buf)`` into the script's own ``io.StringIO`` (issue 14).

Part of ``world/``: owns what ``print`` does with a ``file=`` argument; the engine's print
calls :func:`print_to_file` for any ``file`` that is not ``None``. Uses the ``io``
stand-in only; must not import the engine, isolation or the model-facing text.

The text is rendered as ``print`` renders it (its size was estimated before, by
``guards.sizes.guarded_print``) and written with the file's own ``write``, which bounds
the in-memory file as ``buf.write(...)`` does. ``sys.stdout`` and ``sys.stderr`` are the
run's own output (``modules.sys.ScriptStream``). Any other ``file`` (a host stream, a
``BytesIO``, the script's own object) is refused with what to write instead.
"""

from __future__ import annotations

from typing import Any

from scriptgate.sandbox.world.modules.io import StringIO
from scriptgate.sandbox.world.modules.sys import ScriptStream

__all__ = ["FILE_MESSAGE", "print_to_file"]

FILE_MESSAGE = (
    "print(file=...) writes only to an io.StringIO in the sandbox: write to an "
    "io.StringIO with buf.write(...) or print without file="
)
"""The refusal of a ``file=`` that is not an ``io.StringIO``."""


def print_to_file(file: Any, objects: tuple[Any, ...], sep: Any, end: Any) -> bool:
    """``print(*objects, sep=sep, end=end, file=file)`` for the ``io.StringIO`` stand-in.

    ``False`` for ``sys.stdout``/``sys.stderr``: the caller prints to the run's output.
    """
    if type(file) is ScriptStream:
        return False
    if not isinstance(file, StringIO):
        raise TypeError(FILE_MESSAGE)
    if sep is None:
        sep = " "
    if end is None:
        end = "\n"
    if type(sep) is not str or type(end) is not str:
        raise TypeError("sep and end must be strings")
    file.write(sep.join([str(obj) for obj in objects]) + end)
    return True
