"""The ``asyncio`` stand-in in both modes: ``asyncio.run(main())``, ``gather`` and ``sleep``."""

from __future__ import annotations

from sandbox_support import value

from scriptgate import tool
from scriptgate.sandbox.sandbox import Sandbox


@tool
async def ping(i: int) -> int:
    """Echo ``i``."""
    return i


SANDBOX_TOOLS = [ping]


def test_asyncio_run_main_is_a_top_level_await(sandbox: Sandbox) -> None:
    src = (
        "import asyncio\n"
        "async def one(i):\n"
        "    await asyncio.sleep(0)\n"
        "    return await ping(i=i)\n"
        "async def main():\n"
        "    return await asyncio.gather(*[one(i) for i in range(3)])\n"
        "if __name__ == '__main__':\n"
        "    results = asyncio.run(main())\n"
        "results"
    )
    assert value(sandbox, src) == [0, 1, 2]


def test_asyncio_run_from_import_and_alias(sandbox: Sandbox) -> None:
    src = "from asyncio import run\nasync def main():\n    return await ping(i=7)\nrun(main())"
    assert value(sandbox, src) == 7
    src = "import asyncio as aio\nasync def main():\n    return 3\nx = aio.run(main())\nx"
    assert value(sandbox, src) == 3


def test_asyncio_sleep_gives_its_result(sandbox: Sandbox) -> None:
    assert value(sandbox, "import asyncio\nawait asyncio.sleep(0.01, result='done')") == "done"


def test_asyncio_gather_return_exceptions(sandbox: Sandbox) -> None:
    src = (
        "import asyncio\n"
        "async def bad():\n"
        "    raise ValueError('no')\n"
        "r = await asyncio.gather(ping(i=1), bad(), return_exceptions=True)\n"
        "[type(x).__name__ for x in r]"
    )
    assert value(sandbox, src) == ["int", "ValueError"]


def test_asyncio_run_inside_a_function_says_to_await(sandbox: Sandbox) -> None:
    result = sandbox.run_sync(
        "import asyncio\nasync def g():\n    return 1\ndef f():\n    return asyncio.run(g())\nf()"
    )
    assert result.error is not None
    assert "await main()" in result.error.message


def test_asyncio_timeout_error_is_the_builtin(sandbox: Sandbox) -> None:
    src = "import asyncio\ntry:\n    raise asyncio.TimeoutError('t')\nexcept TimeoutError as e:\n    r = str(e)\nr"
    assert value(sandbox, src) == "t"


def test_asyncio_gather_raises_the_first_failure_at_once(sandbox: Sandbox) -> None:
    # as asyncio.gather does: the failure is raised when it happens, not after the slowest
    # sibling (the sibling sleeping 60 s would end the run at its 10 s deadline otherwise)
    src = (
        "import asyncio\n"
        "async def slow():\n"
        "    await asyncio.sleep(60)\n"
        "async def fails():\n"
        "    raise ValueError('failed')\n"
        "try:\n"
        "    await asyncio.gather(slow(), fails())\n"
        "except ValueError as e:\n"
        "    out = str(e)\n"
        "both = await asyncio.gather(asyncio.sleep(0, 'x'), fails(), return_exceptions=True)\n"
        "[out, [str(v) for v in both]]"
    )
    assert value(sandbox, src) == ["failed", ["x", "failed"]]
