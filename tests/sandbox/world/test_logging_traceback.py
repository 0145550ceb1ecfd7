"""The ``logging`` and ``traceback`` stand-ins: lines on the run's output, per-run state.

Each feature runs in both modes; the attacks check that no host object (the real logging
tree, a frame, a host path) is reachable and that one run's configuration never reaches
the next run or another sandbox.
"""

from __future__ import annotations

import logging as host_logging

import pytest
from sandbox_support import refused, value

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox
from scriptgate.sandbox.world import modules

SANDBOX_TIMEOUT = 10


def _output(sandbox: Sandbox, source: str) -> str:
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    return result.output


def test_logging_module_level_calls_configure_the_root(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\nlogging.warning('w %d', 3)\nlogging.info('hidden')\n"
        "logging.error('e %s and %r', 'x', [1])\nlogging.critical('c')\n",
    )
    assert out == "WARNING:root:w 3\nERROR:root:e x and [1]\nCRITICAL:root:c\n"


def test_logging_logger_without_config_uses_the_last_resort(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\nlog = logging.getLogger('a.b')\nlog.warning('plain %s', 1)\n"
        "log.setLevel(logging.DEBUG)\nlog.debug('dropped by the last resort')\nlog.error('e')\n",
    )
    assert out == "plain 1\ne\n"


def test_logging_basic_config_format_and_levels(sandbox: Sandbox) -> None:
    source = (
        "import logging\n"
        "logging.basicConfig(level=logging.DEBUG, format='%(levelname)s %(name)s: %(message)s')\n"
        "logging.basicConfig(level=logging.ERROR, format='ignored %(message)s')\n"
        "log = logging.getLogger(__name__)\nlog.debug('d %d', 1)\nlog.info('i %(a)s', {'a': 2})\n"
        "child = logging.getLogger('app.db')\nchild.setLevel('WARNING')\nchild.info('hidden')\n"
        "child.warning('shown')\nlog.log(25, 'custom')\n"
        "[log.isEnabledFor(logging.DEBUG), child.isEnabledFor(logging.INFO),"
        " child.getEffectiveLevel(), logging.getLevelName(20), logging.getLevelName('ERROR'),"
        " logging.getLogger('app.db') is child, child.name, logging.root.level]"
    )
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    assert result.value == [True, False, 30, "INFO", 40, True, "app.db", 10]
    assert result.output == (
        "DEBUG __main__: d 1\nINFO __main__: i 2\nWARNING app.db: shown\nLevel 25 __main__: custom\n"
    )


def test_logging_asctime_and_other_styles(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\nlogging.basicConfig(format='{asctime}|{levelname:<8}|{message}',"
        " style='{', datefmt='%Y', level='INFO')\nlogging.info('x')\n"
        "log = logging.getLogger('d')\n",
    )
    year, level, message = out.rstrip("\n").split("|")
    assert len(year) == 4
    assert year.isdigit()
    assert (level, message) == ("INFO    ", "x")
    out = _output(
        sandbox,
        "import logging\nlogging.basicConfig(format='%(asctime)s %(message)s')\nlogging.error('y')",
    )
    assert out.endswith(" y\n")
    assert out[4] == "-"
    assert out[19] == ","


def test_logging_handlers_to_a_string_buffer(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        "import logging, io\nbuf = io.StringIO()\nlog = logging.getLogger('job')\n"
        "h = logging.StreamHandler(buf)\nh.setFormatter(logging.Formatter('%(levelname)s-%(message)s'))\n"
        "log.addHandler(h)\nlog.setLevel(logging.INFO)\nlog.info('one')\nlog.debug('no')\n"
        "logging.getLogger('job.sub').warning('two')\nlog.removeHandler(h)\n"
        "log.addHandler(logging.NullHandler())\nlog.error('gone')\n"
        "[buf.getvalue(), log.hasHandlers(), len(log.handlers)]"
    )
    assert result.ok, result.error
    assert result.value == ["INFO-one\nWARNING-two\n", True, 1]
    assert result.output == ""


def test_logging_exception_appends_the_script_traceback(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\ndef f():\n    raise ValueError('bad')\ntry:\n    f()\nexcept ValueError:\n"
        "    logging.exception('failed %d', 1)\n",
    )
    assert out == (
        "ERROR:root:failed 1\nTraceback (most recent call last):\n"
        '  File "<script>", line 5, in <module>\n  File "<script>", line 3, in f\n'
        "ValueError: bad\n"
    )


def test_logging_bad_arguments_print_a_logging_error(sandbox: Sandbox) -> None:
    out = _output(sandbox, "import logging\nlogging.warning('%d', 'x')\nlogging.warning('after')")
    assert out.startswith("--- Logging error ---\nTypeError: %d format")
    assert out.endswith("WARNING:root:after\n")


def test_logging_state_is_per_run(sandbox: Sandbox) -> None:
    first = sandbox.run_sync(
        "import logging\nlogging.basicConfig(level=logging.DEBUG, format='ONE %(message)s')\n"
        "logging.getLogger('x').setLevel(logging.CRITICAL)\nlogging.disable(logging.ERROR)\n"
        "logging.getLogger('k').addHandler(logging.StreamHandler())\nlogging.critical('c')"
    )
    assert first.ok, first.error
    assert first.output == "ONE c\n"
    second = sandbox.run_sync(
        "import logging\nlogging.debug('hidden')\nlogging.getLogger('x').warning('w')\n"
        "logging.getLogger('k').warning('once')\n"
        "[logging.getLogger('x').level, len(logging.getLogger('k').handlers), logging.root.level]"
    )
    assert second.ok, second.error
    assert second.value == [0, 0, 30]
    assert second.output == "WARNING:x:w\nWARNING:k:once\n"


def test_logging_never_touches_the_host_logging_tree_or_stderr(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    names = set(host_logging.Logger.manager.loggerDict)
    root_handlers = list(host_logging.root.handlers)
    root_level = host_logging.root.level
    capfd.readouterr()
    out = _output(
        sandbox,
        "import logging, sys\nlogging.basicConfig(level=logging.DEBUG, force=True,"
        " stream=sys.stderr)\nlog = logging.getLogger('host.probe')\n"
        "log.addHandler(logging.StreamHandler(sys.stderr))\nlog.debug('d')\n"
        "logging.getLogger().handlers.clear()\nlogging.disable(logging.CRITICAL)\n"
        "print('end')",
    )
    assert out == "d\nDEBUG:host.probe:d\nend\n"  # both lines on the run's output, in order
    assert set(host_logging.Logger.manager.loggerDict) == names
    assert host_logging.root.handlers == root_handlers
    assert host_logging.root.level == root_level
    assert host_logging.root.manager.disable == 0
    assert "host.probe" not in capfd.readouterr().err


def test_logging_handlers_list_is_the_loggers_own(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\nlogging.basicConfig(format='root %(message)s')\n"
        "log = logging.getLogger('app')\nh = logging.StreamHandler()\nlog.addHandler(h)\n"
        "log.addHandler(h)\nlog.warning('twice')\nlog.handlers.clear()\nlog.warning('once')\n"
        "logging.getLogger().handlers.clear()\nlog.warning('last resort')\n",
    )
    assert out == "twice\nroot twice\nroot once\nlast resort\n"


def test_logging_common_model_idioms(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\nlogging.basicConfig(level=logging.INFO)\n"
        "logger = logging.getLogger(__name__)\nlogger.info('x %s', 1)\nlogger.debug('no')\n"
        "def load(n):\n    return 10 / n\n"
        "for n in (2, 0):\n    try:\n        logger.info('got %.1f', load(n))\n"
        "    except ZeroDivisionError as e:\n        logger.warning('n=%d: %s', n, e)\n"
        "        logger.error('failed: %r', e)\n        logger.exception('boom')\n"
        "        logger.error('with info', exc_info=True)\n        logger.error('as e', exc_info=e)\n",
    )
    trace = (
        "Traceback (most recent call last):\n"
        '  File "<script>", line 10, in <module>\n'
        '  File "<script>", line 7, in load\n'
        "ZeroDivisionError: division by zero\n"
    )
    assert out == (
        "INFO:__main__:x 1\nINFO:__main__:got 5.0\n"
        "WARNING:__main__:n=0: division by zero\n"
        "ERROR:__main__:failed: ZeroDivisionError('division by zero')\n"
        f"ERROR:__main__:boom\n{trace}ERROR:__main__:with info\n{trace}ERROR:__main__:as e\n{trace}"
    )


def test_logging_record_fields_are_the_scripts_own(sandbox: Sandbox) -> None:
    out = _output(
        sandbox,
        "import logging\nlogging.basicConfig(format='%(filename)s:%(lineno)d:%(funcName)s:"
        "%(module)s:%(pathname)s %(message)s')\ndef work():\n    logging.warning('w')\nwork()",
    )
    assert out == "<script>:4:work:<script>:<script> w\n"


def test_logging_other_sandbox_is_unaffected(sandbox: Sandbox) -> None:
    other = Sandbox(limits=Limits(timeout=5))
    try:
        sandbox.run_sync("import logging\nlogging.basicConfig(format='A %(message)s')")
        result = other.run_sync("import logging\nlogging.warning('z')")
        assert result.output == "WARNING:root:z\n"
    finally:
        other.close()


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("import logging\nlogging.basicConfig(filename='x.log')", "the sandbox has no files"),
        ("import logging\nlogging.basicConfig(handlers=[])", "not available in the sandbox"),
        ("import logging\nlogging.basicConfig(bogus=1)", "Unrecognised argument(s): bogus"),
        ("import logging\nlogging.FileHandler('x')", "the sandbox has no files"),
        ("from logging import Handler", "custom handler classes are not available"),
        ("import logging\nlogging.getLogger().propagate = False", "give a handler to one logger"),
        ("import logging\nlogging.getLogger().handlers = []", "logger.handlers.clear()"),
        ("import logging\nlogging.StreamHandler().level = 10", "handler.setLevel(level)"),
        (
            "import logging\nlogging.getLogger().addHandler(object())",
            "takes a logging.StreamHandler",
        ),
        ("import logging\nlogging.getLogger().addFilter(1)", "check the condition before"),
        ("import logging\nlogging.getLogger().manager", "not available"),
        ("import logging\nlogging.Logger.manager", "not available"),
        ("import logging\nlogging.root.manager.loggerDict", "not available"),
        ("import logging\nlogging.lastResort", "logging without basicConfig"),
        (
            "import logging\nlogging.getLogger().handlers.append(object())\nlogging.warning('x')",
            "a handler in the sandbox is a logging.StreamHandler",
        ),
        (
            "import logging\nh = logging.StreamHandler()\nfor i in range(200):\n"
            "    logging.root.handlers.append(h)\nlogging.warning('x')",
            "more than 100 handlers",
        ),
        ("import logging\nclass H(logging.Handler):\n    pass", "custom handler classes"),
        (
            "import logging\nclass H(logging.StreamHandler):\n    def emit(self, r):\n        pass",
            "cannot subclass StreamHandler",
        ),
        ("import logging\nlogging.StreamHandler().stream", "not available"),
        ("import logging\nlogging.StreamHandler()._stream", "_stream"),
        ("import logging\nlogging.basicConfig(format='%(lineno).999999999d')", "three digits"),
        ("import logging\nlogging.basicConfig(format='%(message)s %s')", "for '%' style"),
        ("import logging\nlogging.Formatter('%(nope)s')", "Formatting field not found"),
        ("import logging\nlogging.Formatter('%(message)999999s')", "three digits"),
        ("import logging\nlogging.Formatter('{message:>99999}', style='{')", "invalid format spec"),
        ("import logging\nlogging.Formatter('{message.__class__}', style='{')", "invalid format"),
        ("import logging\nlogging.Formatter('%(message)s' * 1000)", "more than 1000 characters"),
        ("import logging\nlogging.StreamHandler(open)", "not defined"),
        (
            "import logging\nclass S:\n    def write(self, t):\n        pass\nlogging.StreamHandler(S())",
            "sys.stderr, sys.stdout or an io.StringIO",
        ),
        ("import logging\nlogging.warning([0] * 10**7)", "too large"),
        ("import logging\nlogging.warning('%s', [0] * 10**7)", "too large"),
        (
            "import logging\nfor i in range(100000):\n    logging.getLogger(str(i))",
            "more than 10000 loggers",
        ),
        ("import logging\nlogging.getLogger('x' * 2000)", "more than 1000 characters"),
        ("import logging\nlogging.getLogger().info.__globals__", "__globals__"),
        ("import logging\nlogging.getLogger()._tree", "_tree"),
        ("import traceback\ntraceback.extract_tb(None)", "format_exc()"),
        ("from traceback import extract_stack", "frames are not available"),
        ("import traceback\ntraceback.format_exception('x')", "takes an exception"),
        ("import traceback\ntraceback.print_exc(file=1)", "io.StringIO"),
    ],
)
def test_logging_traceback_refusals(sandbox: Sandbox, source: str, words: str) -> None:
    refused(sandbox, source, words)


def test_traceback_format_exc_has_script_frames_only(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        "import traceback, json, io\ndef f():\n    json.loads('{bad')\ntry:\n    f()\n"
        "except Exception:\n    t = traceback.format_exc()\n    buf = io.StringIO()\n"
        "    traceback.print_exc(file=buf)\n    traceback.print_exc()\n"
        "[t, buf.getvalue() == t, traceback.format_exc()]"
    )
    assert result.ok, result.error
    text, same, outside = result.value
    assert text.startswith(
        'Traceback (most recent call last):\n  File "<script>", line 5, in <module>\n'
        '  File "<script>", line 3, in f\n'
    )
    assert text.endswith(
        "Error: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)\n"
    )
    assert "/" not in text
    assert "scriptgate" not in text
    assert same
    assert outside == "NoneType: None\n"
    assert result.output == text


def test_traceback_message_of_a_script_exception_runs_no_script_code(sandbox: Sandbox) -> None:
    text = value(
        sandbox,
        "import traceback\nclass E(Exception):\n    def __str__(self):\n        return 'x' * 10**6\n"
        "try:\n    raise E([0] * 10)\nexcept E:\n    t = traceback.format_exc()\nt",
    )
    assert text.endswith("E: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n")


def test_traceback_chains_come_first_as_cpython_prints_them(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        "import traceback, io\ndef parse(s):\n    return int(s)\ntry:\n    try:\n"
        "        parse('x')\n    except ValueError as e:\n        raise KeyError('k') from e\n"
        "except KeyError as e:\n    err = e\n    try:\n        {}['m']\n    except KeyError:\n"
        "        during = traceback.format_exc()\n"
        "buf = io.StringIO()\ntraceback.print_exception(err, file=buf)\n"
        "[traceback.format_exception(err), buf.getvalue(), traceback.format_exception_only(err),"
        " traceback.format_exception(err, chain=False), [during.count('During handling'), during.count('direct cause')],"
        " traceback.format_exception(type(err), err, None, limit=-1, chain=False)]"
    )
    assert result.ok, result.error
    lines, printed, only, unchained, during, limited = result.value
    assert lines == [
        "Traceback (most recent call last):\n",
        '  File "<script>", line 6, in <module>\n',
        '  File "<script>", line 3, in parse\n',
        "ValueError: invalid literal for int() with base 10: 'x'\n",
        "\nThe above exception was the direct cause of the following exception:\n\n",
        "Traceback (most recent call last):\n",
        '  File "<script>", line 8, in <module>\n',
        "KeyError: 'k'\n",
    ]
    assert printed == "".join(lines)
    assert only == ["KeyError: 'k'\n"]
    assert unchained == lines[-3:]
    assert during == [1, 1]  # ValueError -> KeyError('k') (cause) -> KeyError('m') (context)
    assert limited == lines[-3:]


def test_traceback_shows_no_sandbox_frames_of_a_stand_in_error(sandbox: Sandbox) -> None:
    text = value(
        sandbox,
        "import traceback, json, re, datetime\nout = []\n"
        "for f in (lambda: json.loads('['), lambda: re.compile('('),"
        " lambda: datetime.datetime.strptime('x', '%Y')):\n"
        "    try:\n        f()\n    except Exception:\n        out.append(traceback.format_exc())\n"
        "''.join(out)",
    )
    frames = [line for line in text.splitlines() if line.startswith("  File")]
    assert len(frames) == 6
    assert all(line.startswith('  File "<script>", line ') for line in frames)
    assert "scriptgate" not in text
    assert ".py" not in text


def test_traceback_of_deep_recursion_is_bounded(sandbox: Sandbox) -> None:
    text = value(
        sandbox,
        "import traceback\ndef f(n):\n    if n == 0:\n        raise ValueError('deep')\n"
        "    f(n - 1)\ntry:\n    f(200)\nexcept ValueError:\n    t = traceback.format_exc()\nt",
    )
    assert text.count("\n") < 60
    assert "more frames]" in text
    assert text.endswith('  File "<script>", line 4, in f\nValueError: deep\n')


def test_logging_traceback_are_listed() -> None:
    assert "basicConfig" in modules.MODULE_NAMES["logging"]
    assert "format_exc" in modules.MODULE_NAMES["traceback"]
