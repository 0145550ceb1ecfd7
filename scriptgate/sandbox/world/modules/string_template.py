"""``string.Template`` for the ``string`` stand-in: ``$name`` substitution, bounded.

Part of ``world/modules/`` (used by the ``string`` stand-in, not importable itself); uses
``guards/`` and must not import the engine, isolation or the model-facing text.

:class:`Template` is the sandbox's own class (not the host's ``string.Template``, whose
class state a script could change for every run). ``substitute``/``safe_substitute``
match through the regex guard (:mod:`scriptgate.sandbox.guards.regex`: a pattern is
checked before it compiles and every match obeys the run's deadline), charge the
calling run a step per placeholder, and refuse a result longer than
:data:`MAX_RESULT` characters before it is joined. A script may subclass it with its
own ``delimiter``, ``idpattern``, ``braceidpattern``, ``flags`` or ``pattern`` (read
and checked at every call: they go through the same regex guard).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.attributes import check_value
from scriptgate.sandbox.guards.comparisons import SCALARS
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.regex import _current_budget, make_re
from scriptgate.sandbox.guards.sizes import check_render
from scriptgate.sandbox.world.modules.chainmap import mapping_ok

__all__ = ["MAX_DELIMITER", "MAX_RESULT", "Template"]

MAX_RESULT = 10_000_000
"""Longest text a substitution may produce, in characters."""
MAX_DELIMITER = 20
"""Longest ``delimiter`` a ``Template`` subclass may set."""
_ID = r"(?a:[_a-z][_a-z0-9]*)"
_CHUNK = 256
_NOTHING: Any = object()
_COMPILE: list[Callable[..., Any]] = []


def _compile(pattern: str, flags: int) -> Any:
    if not _COMPILE:
        _COMPILE.append(make_re()["compile"])
    return _COMPILE[0](pattern, flags)


def _setting(cls: type, name: str, kinds: tuple[type, ...]) -> Any:
    value = getattr(cls, name, None)
    if type(value) not in kinds:
        allowed = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"Template.{name} must be {allowed} in the sandbox")
    return value


def _pattern_of(cls: type) -> Any:
    """The compiled (regex-guarded) pattern of a ``Template`` class, from its settings."""
    flags = int(_setting(cls, "flags", (int, re.RegexFlag)))
    own = _setting(cls, "pattern", (str, type(None)))
    if own is not None:
        compiled = _compile(own, flags | re.VERBOSE)  # as CPython compiles it
    else:
        delimiter = _setting(cls, "delimiter", (str,))
        if not 0 < len(delimiter) <= MAX_DELIMITER:
            raise ValueError(
                f"Template.delimiter must be 1 to {MAX_DELIMITER} characters in the sandbox"
            )
        idpattern = _setting(cls, "idpattern", (str,))
        braced = _setting(cls, "braceidpattern", (str, type(None)))
        braced = idpattern if braced is None else braced
        d = re.escape(delimiter)
        compiled = _compile(
            f"{d}(?:(?P<escaped>{d})|(?P<named>{idpattern})|{{(?P<braced>{braced})}}"
            "|(?P<invalid>))",
            flags | re.VERBOSE,
        )
    if not {"escaped", "named", "braced", "invalid"} <= set(compiled.groupindex):
        raise ValueError("a Template pattern needs the groups escaped, named, braced and invalid")
    return compiled


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    if type(value) not in SCALARS:
        check_render(value, "a Template value")
    text = str(value)
    return text if type(text) is str else str.__str__(text)


class Template:
    """``string.Template(text)``: ``substitute(mapping, **kw)``/``safe_substitute`` of
    ``$name`` and ``${name}`` (``$$`` is a literal ``$``)."""

    __slots__ = ("template",)
    delimiter = "$"
    idpattern = _ID
    braceidpattern = None
    flags = re.IGNORECASE
    pattern = None

    def __init__(self, template: str) -> None:
        if not isinstance(template, str):
            raise TypeError(f"Template() takes a str, not {type(template).__name__}")
        self.template = str.__str__(template)

    def _lookup(self, mapping: Any, kws: dict[str, Any]) -> Callable[[str], Any]:
        if mapping is _NOTHING:
            return kws.__getitem__
        mapping_ok(
            mapping, "Template substitution takes"
        )  # never a host object whose [] skips the item guard

        def get(name: str) -> Any:
            if name in kws:
                return kws[name]
            return check_value(mapping[name])

        return get

    def _run(self, mapping: Any, kws: dict[str, Any], safe: bool) -> str:
        text = self.template
        if type(text) is not str:
            raise TypeError("Template.template must be a str")
        compiled = _pattern_of(type(self))
        delimiter = getattr(type(self), "delimiter", "$")
        get = self._lookup(mapping, kws)
        budget: Any = _current_budget()
        state = [len(text), 0]

        def convert(found: Any) -> str:
            state[1] += 1
            if budget is not None and state[1] % _CHUNK == 0:
                budget.spend(_CHUNK)
            named = found.group("named") or found.group("braced")
            if named is not None:
                try:
                    piece = _text(get(named))
                except KeyError:
                    if not safe:
                        raise
                    return str(found.group())
            elif found.group("escaped") is not None:
                piece = delimiter
            elif found.group("invalid") is not None:
                if safe:
                    return str(found.group())
                start = found.start("invalid")
                lines = text[:start].splitlines(keepends=True)
                column = start - sum(len(line) for line in lines[:-1]) + (0 if lines else 1)
                line = len(lines) or 1
                raise ValueError(f"Invalid placeholder in string: line {line}, col {column}")
            else:
                raise ValueError("Unrecognized named group in pattern")
            state[0] += len(piece)
            if state[0] > MAX_RESULT:
                refuse_size(
                    f"a Template substitution longer than {MAX_RESULT} characters is refused"
                )
            return piece

        result: str = compiled.sub(convert, text)
        return result

    def substitute(self, mapping: Any = _NOTHING, /, **kws: Any) -> str:
        """The text with every placeholder replaced (``KeyError`` for a missing one)."""
        return self._run(mapping, kws, False)

    def safe_substitute(self, mapping: Any = _NOTHING, /, **kws: Any) -> str:
        """The text with the placeholders found replaced (others are left as they are)."""
        return self._run(mapping, kws, True)

    def get_identifiers(self) -> list[str]:
        """The names of the valid placeholders, in order, once each."""
        names: dict[str, None] = {}
        for found in _pattern_of(type(self)).finditer(self.template):
            named = found.group("named") or found.group("braced")
            if named is not None:
                names.setdefault(named)
        return list(names)

    def is_valid(self) -> bool:
        """Whether the text has no invalid placeholder."""
        return all(
            found.group("invalid") is None
            for found in _pattern_of(type(self)).finditer(self.template)
        )

    def __repr__(self) -> str:
        return f"<Template {self.template[:60]!r}>"


Template.__module__ = "string"
