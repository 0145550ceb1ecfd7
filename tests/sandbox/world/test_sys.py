"""The ``sys`` stand-in (issue 14): plain values, a no-op ``setrecursionlimit``, hints (both modes).

Models write ``import sys`` out of habit (the fresh corpus's one refusal was an unused one)
and call ``sys.setrecursionlimit(10**6)`` before recursive solutions. The host's ``sys``
acts on the whole process, so the script gets values only; what is left out says what to
write instead.
"""

from __future__ import annotations

import sys

import pytest
from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


def test_sys_values_are_the_hosts_constants(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "import sys\n[sys.maxsize, list(sys.version_info[:2]), sys.version_info >= (3, 8), "
        "sys.byteorder, sys.platform, sys.hexversion]",
    )
    assert got == [
        sys.maxsize,
        list(sys.version_info[:2]),
        True,
        sys.byteorder,
        sys.platform,
        sys.hexversion,
    ]


def test_sys_setrecursionlimit_changes_nothing(sandbox: Sandbox) -> None:
    before = sys.getrecursionlimit()
    source = (
        "import sys\nsys.setrecursionlimit(10**6)\n"
        "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\ndepth(100)"
    )
    assert value(sandbox, source) == 100
    assert sys.getrecursionlimit() == before  # the host's limit is untouched
    endless = "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)"
    refused(sandbox, endless, "recursion")  # the sandbox's own depth still stops it


@pytest.mark.parametrize(
    ("source", "error", "output"),
    [
        ("import sys\nprint('done')\nsys.exit(0)\nprint('never')", None, "done\n"),
        (
            "import sys\ndef main():\n    print('work')\n    return 0\nsys.exit(main())",
            None,
            "work\n",
        ),
        ("from sys import exit\nexit()", None, ""),
        ("import sys\nsys.exit(2)", "2", ""),
        ("import sys\nsys.exit('bad input')", "bad input", ""),
        (
            "import sys\ntry:\n    sys.exit(1)\nexcept Exception:\n    print('caught')",
            "1",
            "",
        ),
        ("import sys\nsys.exit(True)", "1", ""),  # findings19b S08: the exit code, as CPython
        ("import sys\nsys.exit(0.0)", "0.0", ""),  # not an int: printed, exit code 1
        ("import sys\nsys.exit(False)", None, ""),
        ("import sys\nsys.exit(10 ** 5000)", "a very large int", ""),
        (
            "import sys\ntry:\n    sys.exit(1)\nexcept BaseException as e:\n"
            "    print(type(e).__name__)\n'after'",
            None,
            "SystemExit\n",
        ),
    ],
)
def test_sys_exit_ends_the_script(
    sandbox: Sandbox, source: str, error: str | None, output: str
) -> None:
    # findings18 M36: `sys.exit(0)` at the end of a finished script failed the whole run
    result = sandbox.run_sync(source)
    assert result.output == output
    if error is None:
        assert result.ok, result.error
    else:
        assert result.error is not None
        assert (result.error.type, result.error.message) == ("SystemExit", error)


def test_sys_stdout_and_stderr_write_the_scripts_output(sandbox: Sandbox) -> None:
    # findings18 M13: `print(..., file=sys.stderr)` and `sys.stdout.write` are everyday
    # model code; both write the run's own output, in order, under its limit
    result = sandbox.run_sync(
        "import sys\nprint('warning: 3 rows skipped', file=sys.stderr)\n"
        "n = sys.stdout.write('direct\\n')\nsys.stdout.flush()\nsys.stderr.writelines(['a', 'b\\n'])\n"
        "print('x', 1, sep='-', file=sys.stdout, flush=True)\n[n, sys.stdout.isatty()]"
    )
    assert result.value == [7, False], result.error
    assert result.output == "warning: 3 rows skipped\ndirect\nab\nx-1\n"
    flood = sandbox.run_sync("import sys\nwhile True:\n    sys.stderr.write('x' * 100_000)")
    assert flood.error is not None
    assert "output exceeded the limit" in flood.error.message


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("import sys\nsys.stdout.write(5)", "argument must be str"),
        ("import sys\nsys.argv", "scripts have no command line"),
        ("import sys\nsys.modules", "import the listed stand-in modules"),
        ("import sys\nsys.setrecursionlimit('x')", "cannot be interpreted as an integer"),
        ("import asyncio\nasyncio.timeout(1)", "asyncio.wait_for"),
        ("from json import JSONEncoder", "default=fn"),
    ],
)
def test_sys_left_out_members_say_what_to_write(sandbox: Sandbox, source: str, words: str) -> None:
    refused(sandbox, source, words)
