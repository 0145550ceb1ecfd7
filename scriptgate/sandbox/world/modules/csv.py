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
import decimal
import fractions
from collections.abc import Iterable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import base_len
from scriptgate.sandbox.guards.sizes import check_render
from scriptgate.sandbox.world.modules.common import RunWorld, own_methods

__all__ = ["HOLDABLE", "MAX_ROW", "MEMBERS", "NAME", "build"]

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


MAX_ROW = 10_000_000
"""The most characters one written row may take, every field counted as if each of its
characters were a doubled quote (finding G03: ``writerow([s] * 600)`` with a 1 MB ``s``
joined 600 MB in one C call)."""


def _field(value: Any) -> tuple[Any, int]:
    """The field C will write for ``value`` and the most characters it can take.

    Exact numbers are passed as they are (``QUOTE_NONNUMERIC`` must see them); a
    script subclass of a number becomes the exact number (its ``__str__`` never runs
    twice), anything else its ``str()`` once, as C would make it.
    """
    kind = type(value)
    if kind is str:
        return value, str.__len__(value)
    if value is None:
        return value, 0
    if kind is int or kind is bool:
        return value, int.bit_length(value) // 3 + 2
    if kind is float:
        return value, 32
    if kind is complex or isinstance(value, decimal.Decimal | fractions.Fraction):
        text = str(value)  # stand-in classes: no script subclass, no script code
        return value, len(text)
    if isinstance(value, int):
        return _field(int.__index__(value))
    if isinstance(value, float):
        return _field(float.__float__(value))
    if isinstance(value, complex):
        return _field(complex(complex.__complex__(value)))
    check_render(value, "a csv field")
    text = str(value)
    return text, str.__len__(text) if isinstance(text, str) else 0


def _row(row: Any, dialect: Any) -> list[Any]:
    if not isinstance(row, Iterable):
        return row  # type: ignore[no-any-return]  # C raises its own csv.Error
    fields: list[Any] = []
    total = base_len(dialect.lineterminator, 0)
    for item in row:
        field, size = _field(item)
        total += 2 * size + 3  # every character a doubled quote, the quotes, a delimiter
        if total > MAX_ROW:
            refuse_size(
                f"a csv row of more than {MAX_ROW} characters is refused in the sandbox:"
                " write it in smaller rows"
            )
        fields.append(field)
    return fields


class _Writer:
    """The real ``csv.writer`` behind a row-size bound (rows are written one by one)."""

    __slots__ = ("_real",)

    def __init__(self, real: Any) -> None:
        self._real = real

    @property
    def dialect(self) -> Any:
        """The writer's dialect (read-only)."""
        return self._real.dialect

    def writerow(self, row: Any) -> Any:
        """Write one row (at most :data:`MAX_ROW` characters); what the file's ``write`` returned."""
        return self._real.writerow(_row(row, self._real.dialect))

    def writerows(self, rows: Any) -> None:
        """Write each row of ``rows`` (each bounded as :meth:`writerow`)."""
        for row in rows:
            self.writerow(row)


_Writer.__name__ = _Writer.__qualname__ = "writer"


def _writer(csvfile: Any, dialect: Any = "excel", **options: Any) -> Any:
    return _Writer(csv.writer(csvfile, _dialect(dialect), **options))


class _DictReader(csv.DictReader):  # type: ignore[type-arg]
    def __init__(self, f: Any, fieldnames: Any = None, restkey: Any = None,
                 restval: Any = None, dialect: Any = "excel", *args: Any, **kwds: Any) -> None:  # fmt: skip
        super().__init__(f, fieldnames, restkey, restval, _dialect(dialect), *args, **kwds)


class _DictWriter(csv.DictWriter):  # type: ignore[type-arg]
    def __init__(self, f: Any, fieldnames: Any, restval: Any = "", extrasaction: Any = "raise",
                 dialect: Any = "excel", *args: Any, **kwds: Any) -> None:  # fmt: skip
        super().__init__(f, fieldnames, restval, extrasaction, _dialect(dialect), *args, **kwds)
        self.writer = _Writer(self.writer)  # type: ignore[assignment]


_DictReader.__name__ = _DictReader.__qualname__ = "DictReader"
_DictWriter.__name__ = _DictWriter.__qualname__ = "DictWriter"
own_methods(_DictWriter, ("writeheader", "writerow", "writerows"))
HOLDABLE = (*HOLDABLE, _DictReader, _DictWriter, _Writer)


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
