"""The ``csv`` stand-in: ``reader``, ``writer``, ``DictReader``, ``DictWriter``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The readers and writers are the real ones over
the script's own iterables and files (``io.StringIO``, a list of lines, its own class
with ``write``); the host-wide dialect registry and ``field_size_limit`` are left
out (they change the host's state), and a ``dialect`` is one of the built-in names or
given as keyword options.
"""

from __future__ import annotations

import csv
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld, own_methods

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

_QUOTING = ("QUOTE_MINIMAL", "QUOTE_ALL", "QUOTE_NONNUMERIC", "QUOTE_NONE")
_DIALECTS = {"excel": csv.excel, "excel-tab": csv.excel_tab, "unix": csv.unix_dialect}
NAME = "csv"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("reader", "writer", "DictReader", "DictWriter", "Error", *_QUOTING)
"""The members a script may use."""
_SAMPLE = csv.reader([])
HOLDABLE: tuple[type, ...] = (
    type(_SAMPLE), type(csv.writer(type("_W", (), {"write": lambda self, s: 0})())),
    type(_SAMPLE.dialect), csv.DictReader, csv.DictWriter, csv.Error,
)  # fmt: skip
"""Value types this stand-in hands to scripts (readers, writers, their dialects)."""


def _dialect(dialect: Any) -> Any:
    if isinstance(dialect, str):
        found = _DIALECTS.get(dialect)
        if found is None:
            raise csv.Error(
                f"unknown dialect {dialect!r} (the sandbox has: {', '.join(_DIALECTS)})"
            )
        return found
    if type(dialect) is type(_SAMPLE.dialect):
        return dialect
    raise TypeError("dialect must be 'excel', 'excel-tab' or 'unix' (or use keyword options)")


def _reader(csvfile: Any, dialect: Any = "excel", **options: Any) -> Any:
    return csv.reader(csvfile, _dialect(dialect), **options)


def _writer(csvfile: Any, dialect: Any = "excel", **options: Any) -> Any:
    return csv.writer(csvfile, _dialect(dialect), **options)


class _DictReader(csv.DictReader):  # type: ignore[type-arg]
    def __init__(self, f: Any, fieldnames: Any = None, restkey: Any = None,
                 restval: Any = None, dialect: Any = "excel", *args: Any, **kwds: Any) -> None:  # fmt: skip
        super().__init__(f, fieldnames, restkey, restval, _dialect(dialect), *args, **kwds)


class _DictWriter(csv.DictWriter):  # type: ignore[type-arg]
    def __init__(self, f: Any, fieldnames: Any, restval: Any = "", extrasaction: Any = "raise",
                 dialect: Any = "excel", *args: Any, **kwds: Any) -> None:  # fmt: skip
        super().__init__(f, fieldnames, restval, extrasaction, _dialect(dialect), *args, **kwds)


_DictReader.__name__ = _DictReader.__qualname__ = "DictReader"
_DictWriter.__name__ = _DictWriter.__qualname__ = "DictWriter"
own_methods(_DictWriter, ("writeheader", "writerow", "writerows"))
HOLDABLE = (*HOLDABLE, _DictReader, _DictWriter)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    table: dict[str, Any] = {name: getattr(csv, name) for name in _QUOTING}
    table.update(
        reader=_reader,
        writer=_writer,
        DictReader=_DictReader,
        DictWriter=_DictWriter,
        Error=csv.Error,
    )
    return table
