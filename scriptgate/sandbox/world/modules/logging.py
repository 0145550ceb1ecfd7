"""The ``logging`` stand-in: loggers whose lines go to the script's output, per run.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine, isolation
or the model-facing text.

The real module keeps the process's logger tree, handlers and ``disable`` level: a
script's ``basicConfig(force=True)`` or ``getLogger().addHandler`` would act on the host's
own logging. Here every run has its own tree (:class:`_Tree`, built by :func:`build`, so
nothing outlives the run or reaches another sandbox): ``getLogger(name)`` gives a
:class:`Logger` of that tree, ``basicConfig(level=, format=, datefmt=, style=, stream=,
force=)`` gives its root a :class:`StreamHandler`, and a record goes to the handlers of
the logger and its ancestors as CPython's does (``propagate``), else to the last-resort
handler (level ``WARNING``, ``%(message)s`` only). The module-level ``logging.info(...)``
configures the root first, as CPython does, so ``logging.warning("x")`` prints
``WARNING:root:x``. A handler's stream is the script's ``sys.stderr`` (the run's output,
in order with ``print``, under its limit), ``sys.stdout`` or an ``io.StringIO``.

Messages are ``str(msg) % args`` through the sandbox's ``%`` (bounded), formats take the
record fields of :data:`FIELDS` (``%``, ``{`` or ``$`` style, at most :data:`MAX_FORMAT`
characters, widths of at most three digits), and a failing ``%`` prints ``--- Logging
error ---`` and goes on, as CPython does. ``exception()`` appends the script-facing
traceback text (:mod:`.traceback`). Files, custom handler classes, filters, ``dictConfig``
are refused, with what to write instead where models reach for them (:data:`HINTS`).
``logger.handlers`` is the logger's own list (``.clear()`` works, as in CPython); what a
script puts in it is checked at each record (exact ``StreamHandler``/``NullHandler``, at
most :data:`MAX_HANDLERS`). The objects are read-only (``logger.propagate = False`` is
refused with what to write instead, through the write guard's ``WRITE_HINT_MARK``), and
no host logger, handler, manager or stream is reachable: the tree holds only these
classes, and a handler's lines go through the script's own ``print``.
"""

from __future__ import annotations

import re
import string
import sys
import time
from typing import Any

from scriptgate.sandbox.guards.attributes import WRITE_HINT_MARK, guarded_mod
from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.dates import check_date_format
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.sizes import MAX_RENDER
from scriptgate.sandbox.world.modules.common import RunWorld, script_print
from scriptgate.sandbox.world.modules.io import StringIO
from scriptgate.sandbox.world.modules.sys import ScriptStream
from scriptgate.sandbox.world.modules.traceback import script_name, script_traceback

__all__ = ["FIELDS", "HINTS", "HOLDABLE", "MAX_FORMAT", "MEMBERS", "NAME", "build"]

NAME = "logging"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "basicConfig", "getLogger", "debug", "info", "warning", "warn", "error", "exception",
    "critical", "fatal", "log", "disable", "getLevelName", "getLevelNamesMapping", "root",
    "Logger", "StreamHandler", "NullHandler", "Formatter", "shutdown",
    "NOTSET", "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL",
)  # fmt: skip
"""The members a script may use."""

NOTSET, DEBUG, INFO, WARNING, ERROR, CRITICAL = 0, 10, 20, 30, 40, 50
_NAMES = {CRITICAL: "CRITICAL", ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO", DEBUG: "DEBUG"}
_NAMES[NOTSET] = "NOTSET"
_LEVELS = {"CRITICAL": 50, "FATAL": 50, "ERROR": 40, "WARN": 30, "WARNING": 30, "INFO": 20}
_LEVELS.update({"DEBUG": 10, "NOTSET": 0})

FIELDS = frozenset(
    {
        "name", "levelname", "levelno", "message", "asctime", "created", "msecs",
        "relativeCreated", "filename", "module", "funcName", "lineno", "pathname",
        "process", "processName", "thread", "threadName", "taskName",
    }
)  # fmt: skip
"""The record fields a format may name."""
MAX_FORMAT = 1_000
"""The longest format (and date format) string a formatter takes."""
MAX_LOGGERS = 10_000
"""At most this many named loggers per run."""
MAX_HANDLERS = 100
"""At most this many handlers on one logger."""
BASIC_FORMAT = "%(levelname)s:%(name)s:%(message)s"

HINTS: dict[str, str] = {
    "FileHandler": "the sandbox has no files: log to the output (basicConfig()) and write "
    "files through the tools",
    "RotatingFileHandler": "the sandbox has no files: log to the output",
    "Handler": "custom handler classes are not available: use logging.StreamHandler(buf) with "
    "an io.StringIO to capture lines",
    "Filter": "filters are not available: check the condition before logging",
    "LogRecord": "records are not available: format the text with a logging.Formatter format",
    "config": "use logging.basicConfig(level=..., format=...)",
    "handlers": "use logging.StreamHandler() (the output) or logging.StreamHandler(buf)",
    "getLoggerClass": "use logging.getLogger(name)",
    "setLoggerClass": "custom logger classes are not available: use logging.getLogger(name)",
    "captureWarnings": "warnings.warn already writes to the output",
    "lastResort": "logging without basicConfig already writes to the output",
}
"""What to write instead of a member of the real ``logging`` this stand-in leaves out."""

_FIELD_PERCENT = re.compile(r"%\((\w+)\)")
_FIELD_DOLLAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_SPEC = re.compile(r"[^{}]?[<>=^]?[+\- ]?#?0?\d{0,3}[,_]?(?:\.\d{0,3})?[sdfeEgGxXo%n]?")
_WIDTH = re.compile(r"%\([^)]*\)[-#0 +]*(\d*|\*)(?:\.(\d*|\*))?")
_UNNAMED = re.compile(r"%(?!\()")


def _level_of(level: Any) -> int:
    """A level number from an int or a level name (CPython's ``_checkLevel``)."""
    if isinstance(level, int) and not isinstance(level, bool):
        return int(level)
    if type(level) is str:
        found = _LEVELS.get(level)
        if found is None:
            raise ValueError(f"Unknown level: {level[:50]!r}")
        return found
    raise TypeError(f"Level not an integer or a valid string: {type(level).__name__}")


def _level_name(level: int) -> str:
    return _NAMES.get(level, f"Level {level}")


def _check_stream(stream: Any) -> Any:
    if stream is None or type(stream) is ScriptStream or isinstance(stream, StringIO):
        return stream
    raise TypeError(
        "a handler's stream in the sandbox is sys.stderr, sys.stdout or an io.StringIO "
        "(the sandbox has no files: write them through the tools)"
    )


def _fields(fmt: str, style: str) -> list[str]:
    """The record fields ``fmt`` names; ``ValueError`` for an unknown one or a wide spec."""
    if style == "%":
        names = _FIELD_PERCENT.findall(fmt)
        for width, precision in _WIDTH.findall(fmt):
            # '%(lineno).999999999d' would pad a gigabyte of zeros
            if len(width) > 3 or len(precision) > 3 or "*" in (width, precision):
                raise ValueError("format widths of more than three digits are refused")
        if _UNNAMED.search(fmt.replace("%%", "")):
            # '%(message)s %s' takes the record dict itself as the value: CPython refuses it
            raise ValueError(f"Invalid format '{fmt[:50]}' for '%' style")
    elif style == "{":
        names = []
        for _, field, spec, conversion in string.Formatter().parse(fmt):
            if field is None:
                continue
            if not field.isidentifier() or conversion not in (None, "s", "r") or spec is None:
                raise ValueError(f"invalid format field: {field!r}")
            if not _SPEC.fullmatch(spec):
                raise ValueError(f"invalid format spec: {spec[:20]!r}")
            names.append(field)
    else:
        names = [a or b for a, b in _FIELD_DOLLAR.findall(fmt)]
    for name in names:
        if name not in FIELDS:
            raise ValueError(f"Formatting field not found in record: {name[:50]!r}")
    return names


class Formatter:
    """``logging.Formatter(fmt=None, datefmt=None, style='%')``: the text of a record."""

    __slots__ = ("_datefmt", "_fmt", "_names", "_style", "_uses_time")

    def __init__(
        self, fmt: Any = None, datefmt: Any = None, style: Any = "%", validate: Any = True
    ) -> None:
        if style not in ("%", "{", "$") or type(style) is not str:
            raise ValueError("Style must be one of: %,{,$")
        if fmt is None:
            fmt = {"%": "%(message)s", "{": "{message}", "$": "${message}"}[style]
        if not isinstance(fmt, str):
            raise TypeError(f"format must be a str, not {type(fmt).__name__}")
        fmt = exact_copy(fmt)
        if len(fmt) > MAX_FORMAT:
            refuse_size(f"a logging format of more than {MAX_FORMAT} characters is refused")
        if datefmt is not None:
            if not isinstance(datefmt, str):
                raise TypeError(f"datefmt must be a str, not {type(datefmt).__name__}")
            datefmt = check_date_format(None, datefmt, "logging.Formatter()")
            if len(datefmt) > MAX_FORMAT:
                refuse_size("a logging date format of more than 1000 characters is refused")
        self._names = tuple(_fields(fmt, style))
        self._fmt: str = fmt
        self._datefmt: str | None = datefmt
        self._style: str = style
        self._uses_time = "asctime" in self._names

    def _render(self, record: dict[str, Any]) -> str:
        if self._uses_time:
            created = record["created"]
            if self._datefmt is not None:
                record["asctime"] = time.strftime(self._datefmt, time.localtime(created))
            else:
                stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created))
                record["asctime"] = f"{stamp},{int(record['msecs']):03d}"
        size = len(self._fmt) + sum(1000 + len(str(record[n])) for n in self._names)
        if size > MAX_RENDER:
            refuse_size(f"a log line of about {size} characters is refused in the sandbox")
        if self._style == "%":
            # an exact dict of str and numbers, widths checked above and again by the
            # sandbox's bounded %
            text: str = guarded_mod(self._fmt, record)
        elif self._style == "{":
            text = self._fmt.format_map(record)
        else:
            text = string.Template(self._fmt).safe_substitute(record)
        if record["exc_text"]:
            text = f"{text}\n{record['exc_text']}"
        return text

    def __repr__(self) -> str:
        return f"<Formatter {self._fmt[:60]!r}>"


class StreamHandler:
    """``logging.StreamHandler(stream=None)``: lines to ``sys.stderr`` (the run's output),
    ``sys.stdout`` or an ``io.StringIO``."""

    __slots__ = ("_formatter", "_level", "_stream")

    def __init__(self, stream: Any = None) -> None:
        self._stream = _check_stream(stream)
        self._formatter: Formatter | None = None
        self._level = NOTSET

    @property
    def level(self) -> int:
        """The handler's level."""
        return self._level

    @property
    def formatter(self) -> Formatter | None:
        """The handler's formatter (``None``: ``%(message)s``)."""
        return self._formatter

    def setLevel(self, level: Any) -> None:
        """Handle records of ``level`` and above only."""
        self._level = _level_of(level)

    def setFormatter(self, fmt: Any) -> None:
        """Format records with ``fmt`` (a :class:`Formatter`)."""
        if fmt is not None and type(fmt) is not Formatter:
            raise TypeError("setFormatter() takes a logging.Formatter")
        self._formatter = fmt

    def flush(self) -> None:
        """Nothing to flush: the lines are written at once."""

    def close(self) -> None:
        """Nothing to close."""

    def _emit(self, record: dict[str, Any]) -> None:
        text = (self._formatter or _DEFAULT_FORMATTER)._render(record)
        stream = self._stream
        if stream is None or type(stream) is ScriptStream:
            script_print("logging")(text)
        else:
            stream.write(text + "\n")

    def __repr__(self) -> str:
        where = "<stderr>" if self._stream is None else repr(self._stream)
        return f"<StreamHandler {where} ({_level_name(self._level)})>"


class NullHandler(StreamHandler):
    """``logging.NullHandler()``: handles records by doing nothing."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None)

    def _emit(self, record: dict[str, Any]) -> None:
        return None

    def __repr__(self) -> str:
        return "<NullHandler>"


_DEFAULT_FORMATTER = Formatter()
_LAST_RESORT = StreamHandler()
_LAST_RESORT.setLevel(WARNING)


class _Tree:
    """One run's loggers, root level, ``disable`` level and start time."""

    __slots__ = ("disabled", "loggers", "root", "start")

    def __init__(self) -> None:
        self.loggers: dict[str, Logger] = {}
        self.root = Logger("root", WARNING, _tree=self)
        self.disabled = NOTSET
        self.start = time.time()


def _script_place() -> tuple[int, str]:
    """The line and function name of the innermost script frame (the caller's own)."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            return frame.f_lineno, script_name(frame.f_code)
        frame = frame.f_back
    return 0, "<module>"


def _message(msg: Any, args: tuple[Any, ...]) -> str:
    text: str = guarded_mod("%s", (msg,))  # str(msg), its size bounded first
    if args:
        if len(args) == 1 and type(args[0]) is dict and args[0]:
            return guarded_mod(text, args[0])  # type: ignore[no-any-return]
        return guarded_mod(text, args)  # type: ignore[no-any-return]
    return text


class Logger:
    """A logger of the run's tree (``logging.getLogger(name)``)."""

    __slots__ = ("_disabled", "_handlers", "_level", "_name", "_propagate", "_tree")

    def __init__(self, name: Any, level: Any = NOTSET, *, _tree: _Tree | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError("A logger name must be a string")
        self._name: str = exact_copy(name)
        self._level = _level_of(level)
        self._handlers: list[Any] = []
        self._tree = _tree  # None: a logger made with logging.Logger(name), in no tree
        self._propagate = True
        self._disabled = False

    @property
    def name(self) -> str:
        """The logger's name."""
        return self._name

    @property
    def level(self) -> int:
        """The logger's own level (``NOTSET``: its parent's)."""
        return self._level

    @property
    def handlers(self) -> list[Any]:
        """The logger's own list of handlers, as CPython's (``logger.handlers.clear()``
        works); what a script puts in it is checked at each record (:meth:`_handlers_of`)."""
        return self._handlers

    @property
    def propagate(self) -> bool:
        """Whether records go on to the parent's handlers (read-only in the sandbox)."""
        return self._propagate

    @property
    def parent(self) -> Logger | None:
        """The nearest existing ancestor (the root for a top-level name)."""
        tree = self._tree
        if tree is None or self is tree.root:
            return None
        name = self._name
        while "." in name:
            name = name.rpartition(".")[0]
            found = tree.loggers.get(name)
            if found is not None:
                return found
        return tree.root

    def setLevel(self, level: Any) -> None:
        """Log records of ``level`` and above only."""
        self._level = _level_of(level)

    def getEffectiveLevel(self) -> int:
        """The level that applies: the logger's own, else the nearest ancestor's."""
        logger: Logger | None = self
        while logger is not None:
            if logger._level:
                return logger._level
            logger = logger.parent
        return NOTSET

    def isEnabledFor(self, level: Any) -> bool:
        """Whether a record of ``level`` would be logged."""
        level = _level_of(level)
        tree = self._tree
        if tree is not None and tree.disabled >= level:
            return False
        return level >= self.getEffectiveLevel() and not self._disabled

    def getChild(self, suffix: Any) -> Logger:
        """``getLogger(self.name + '.' + suffix)``."""
        if not isinstance(suffix, str):
            raise TypeError("getChild() takes a str")
        if self._tree is None:
            return Logger(f"{self._name}.{suffix}")
        name = suffix if self is self._tree.root else f"{self._name}.{suffix}"
        return _get_logger(self._tree, name)

    def addHandler(self, hdlr: Any) -> None:
        """Send this logger's records to ``hdlr`` (a ``StreamHandler``/``NullHandler``)."""
        if not isinstance(hdlr, StreamHandler):
            raise TypeError(
                "addHandler() takes a logging.StreamHandler or NullHandler in the sandbox "
                "(custom handlers are not available: use StreamHandler(buf) with an io.StringIO)"
            )
        handlers = _handlers_of(self)
        if not any(h is hdlr for h in handlers):  # identity: no script __eq__ runs
            if len(handlers) >= MAX_HANDLERS:
                refuse_size(f"more than {MAX_HANDLERS} handlers on one logger are refused")
            self._handlers.append(hdlr)

    def removeHandler(self, hdlr: Any) -> None:
        """Stop sending records to ``hdlr``."""
        for index, handler in enumerate(_handlers_of(self)):
            if handler is hdlr:
                del self._handlers[index]
                return

    def hasHandlers(self) -> bool:
        """Whether this logger or an ancestor it propagates to has a handler."""
        logger: Logger | None = self
        while logger is not None:
            if logger._handlers:
                return True
            if not logger._propagate:
                return False
            logger = logger.parent
        return False

    def _log(self, level: int, msg: Any, args: tuple[Any, ...], exc_info: Any = None) -> None:
        lineno, func = _script_place()
        try:
            message = _message(msg, args)
        except (TypeError, ValueError, KeyError) as exc:
            script_print("logging")(
                f"--- Logging error ---\n{type(exc).__name__}: {exc}\n"
                f'Call stack:\n  File "{FILENAME}", line {lineno}, in {func}'
            )
            return
        exc_text = ""
        if exc_info:
            if type(exc_info) is tuple and len(exc_info) == 3:
                exc_info = exc_info[1]  # CPython's (type, value, tb) form
            if isinstance(exc_info, BaseException):
                exc_text = script_traceback(exc_info)
            else:
                exc_text = script_traceback(sys.exception())
            exc_text = exc_text.rstrip("\n")
        now = time.time()
        tree = self._tree
        record: dict[str, Any] = {
            "name": self._name, "levelname": _level_name(level), "levelno": level,
            "message": message, "created": now, "msecs": (now % 1) * 1000,
            "relativeCreated": (now - tree.start) * 1000 if tree is not None else 0.0,
            "filename": FILENAME, "pathname": FILENAME, "module": FILENAME,
            "funcName": func, "lineno": lineno, "process": 0, "processName": "MainProcess",
            "thread": 0, "threadName": "MainThread", "taskName": None, "asctime": "",
            "exc_text": exc_text,
        }  # fmt: skip
        found = 0
        logger: Logger | None = self
        while logger is not None:
            for handler in _handlers_of(logger):
                found += 1
                if level >= handler._level:
                    handler._emit(record)
            if not logger._propagate:
                break
            logger = logger.parent
        if not found and level >= _LAST_RESORT._level:
            _LAST_RESORT._emit(record)

    def log(self, level: Any, msg: Any, *args: Any, exc_info: Any = None, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``level``."""
        if not isinstance(level, int) or isinstance(level, bool):
            raise TypeError("level must be an integer")
        _check_keywords(kwargs)
        if self.isEnabledFor(level):
            self._log(level, msg, args, exc_info)

    def debug(self, msg: Any, *args: Any, exc_info: Any = None, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``DEBUG``."""
        self.log(DEBUG, msg, *args, exc_info=exc_info, **kwargs)

    def info(self, msg: Any, *args: Any, exc_info: Any = None, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``INFO``."""
        self.log(INFO, msg, *args, exc_info=exc_info, **kwargs)

    def warning(self, msg: Any, *args: Any, exc_info: Any = None, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``WARNING``."""
        self.log(WARNING, msg, *args, exc_info=exc_info, **kwargs)

    warn = warning

    def error(self, msg: Any, *args: Any, exc_info: Any = None, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``ERROR``."""
        self.log(ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def exception(self, msg: Any, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``ERROR`` with the traceback of the exception being handled."""
        self.log(ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def critical(self, msg: Any, *args: Any, exc_info: Any = None, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``CRITICAL``."""
        self.log(CRITICAL, msg, *args, exc_info=exc_info, **kwargs)

    fatal = critical

    def addFilter(self, filter: Any) -> None:
        """Refused: filters are not available in the sandbox."""
        raise TypeError(_NO_FILTERS)

    def removeFilter(self, filter: Any) -> None:
        """Refused: filters are not available in the sandbox."""
        raise TypeError(_NO_FILTERS)

    def __repr__(self) -> str:
        return f"<Logger {self._name} ({_level_name(self.getEffectiveLevel())})>"


_KEYWORDS = frozenset({"stack_info", "stacklevel", "extra"})
_NO_FILTERS = "logging filters are not available in the sandbox: check the condition before logging"


def _handlers_of(logger: Logger) -> list[StreamHandler]:
    """``logger.handlers``, checked: the script may have put anything in the list."""
    handlers = logger._handlers
    if len(handlers) > MAX_HANDLERS:
        refuse_size(f"more than {MAX_HANDLERS} handlers on one logger are refused")
    checked = list(handlers)  # a copy: a handler's stream cannot change the list mid-record
    for handler in checked:
        if type(handler) is not StreamHandler and type(handler) is not NullHandler:
            raise TypeError(
                f"logger.handlers holds a {type(handler).__name__!r} value: a handler in the "
                "sandbox is a logging.StreamHandler or NullHandler"
            )
    return checked


def _check_keywords(kwargs: dict[str, Any]) -> None:
    for key in kwargs:
        if key not in _KEYWORDS:
            raise TypeError(f"log() got an unexpected keyword argument {key!r}")


for _cls in (Formatter, StreamHandler, NullHandler, Logger):
    _cls.__module__ = "logging"
setattr(
    Logger,
    WRITE_HINT_MARK,
    "use logger.setLevel(level), logger.addHandler(h), logger.removeHandler(h) or "
    "logger.handlers.clear() (propagate and disabled are read-only: give a handler to one "
    "logger only, e.g. the root's through logging.basicConfig)",
)
setattr(StreamHandler, WRITE_HINT_MARK, "use handler.setLevel(level) and handler.setFormatter(f)")
setattr(NullHandler, WRITE_HINT_MARK, "a NullHandler drops every record")
setattr(Formatter, WRITE_HINT_MARK, "make a new logging.Formatter(fmt, datefmt, style)")

HOLDABLE: tuple[type, ...] = (Logger, StreamHandler, NullHandler, Formatter)
"""Value types this stand-in hands to scripts: the run's loggers, handlers and formatters."""


def _get_logger(tree: _Tree, name: Any) -> Logger:
    if name is None or name == "":
        return tree.root
    if not isinstance(name, str):
        raise TypeError("A logger name must be a string")
    found = tree.loggers.get(name)
    if found is None:
        if len(tree.loggers) >= MAX_LOGGERS:
            refuse_size(f"more than {MAX_LOGGERS} loggers in one run are refused")
        if len(name) > MAX_FORMAT:
            refuse_size(f"a logger name of more than {MAX_FORMAT} characters is refused")
        found = tree.loggers[exact_copy(name)] = Logger(name, _tree=tree)
    return found


_CONFIG_KEYS = frozenset(
    {"level", "format", "datefmt", "style", "stream", "force", "filename", "filemode",
     "handlers", "encoding", "errors"}
)  # fmt: skip


def _basic_config(tree: _Tree, kwargs: dict[str, Any]) -> None:
    unknown = [key for key in kwargs if key not in _CONFIG_KEYS]
    if unknown:
        raise ValueError(f"Unrecognised argument(s): {', '.join(unknown)}")
    if "filename" in kwargs:
        raise ValueError(
            "basicConfig(filename=...) is not available: the sandbox has no files "
            "(log to the output, and write files through the tools)"
        )
    if kwargs.get("handlers") is not None:
        raise ValueError(
            "basicConfig(handlers=...) is not available in the sandbox: use "
            "basicConfig(stream=...) or logger.addHandler(logging.StreamHandler(...))"
        )
    root = tree.root
    if kwargs.get("force"):
        root._handlers.clear()
    if root._handlers:
        return
    style = kwargs.get("style", "%")
    if style not in ("%", "{", "$") or type(style) is not str:
        raise ValueError("Style must be one of: %,{,$")
    default = {"%": BASIC_FORMAT, "{": "{levelname}:{name}:{message}"}
    fmt = kwargs.get("format", default.get(style, "${levelname}:${name}:${message}"))
    formatter = Formatter(fmt, kwargs.get("datefmt"), style)
    handler = StreamHandler(kwargs.get("stream"))
    handler.setFormatter(formatter)
    level = kwargs.get("level")
    if level is not None:
        root.setLevel(level)
    root._handlers.append(handler)


def _get_level_name(level: Any) -> Any:
    """``getLevelName(10)`` is ``'DEBUG'``, ``getLevelName('DEBUG')`` is ``10``."""
    if isinstance(level, int) and not isinstance(level, bool):
        return _level_name(level)
    if type(level) is str and level in _LEVELS:
        return _LEVELS[level]
    return f"Level {level}" if type(level) is str and len(level) < 100 else "Level ?"


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run: a fresh logger tree."""
    tree = _Tree()

    def basicConfig(**kwargs: Any) -> None:
        """Give the root logger a handler writing ``format`` lines to the output (once)."""
        _basic_config(tree, kwargs)

    def getLogger(name: Any = None) -> Logger:
        """The run's logger called ``name`` (the root logger without one)."""
        return _get_logger(tree, name)

    def _module_level(level: int) -> Any:
        def log_at(msg: Any, *args: Any, **kwargs: Any) -> None:
            if not tree.root._handlers:
                _basic_config(tree, {})
            tree.root.log(level, msg, *args, **kwargs)

        return log_at

    def log(level: Any, msg: Any, *args: Any, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``level`` on the root logger."""
        if not tree.root._handlers:
            _basic_config(tree, {})
        tree.root.log(level, msg, *args, **kwargs)

    def exception(msg: Any, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
        """Log ``msg % args`` at ``ERROR`` with the traceback, on the root logger."""
        if not tree.root._handlers:
            _basic_config(tree, {})
        tree.root.log(ERROR, msg, *args, exc_info=exc_info, **kwargs)

    def disable(level: Any = CRITICAL) -> None:
        """Drop every record of ``level`` and below (this run only)."""
        tree.disabled = _level_of(level)

    def shutdown() -> None:
        """Nothing to flush or close."""

    def getLevelNamesMapping() -> dict[str, int]:
        """The level names and their numbers."""
        return dict(_LEVELS)

    members: dict[str, Any] = {
        "basicConfig": basicConfig,
        "getLogger": getLogger,
        "debug": _module_level(DEBUG),
        "info": _module_level(INFO),
        "warning": _module_level(WARNING),
        "warn": _module_level(WARNING),
        "error": _module_level(ERROR),
        "exception": exception,
        "critical": _module_level(CRITICAL),
        "fatal": _module_level(CRITICAL),
        "log": log,
        "disable": disable,
        "getLevelName": _get_level_name,
        "getLevelNamesMapping": getLevelNamesMapping,
        "root": tree.root,
        "Logger": Logger,
        "StreamHandler": StreamHandler,
        "NullHandler": NullHandler,
        "Formatter": Formatter,
        "shutdown": shutdown,
        "NOTSET": NOTSET,
        "DEBUG": DEBUG,
        "INFO": INFO,
        "WARNING": WARNING,
        "WARN": WARNING,
        "ERROR": ERROR,
        "CRITICAL": CRITICAL,
        "FATAL": CRITICAL,
    }
    for key, fn in members.items():
        if key in ("debug", "info", "warning", "warn", "error", "critical", "fatal"):
            fn.__doc__ = f"Log ``msg % args`` at ``{key.upper()}`` on the root logger."
    return members
