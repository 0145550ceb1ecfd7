"""F07 (both modes, LOW / near miss, needs F06): a script-made awaitable yields arbitrary
objects straight to the host's event loop driver.

Mechanism: with F06's metaclass a script class gets an `__await__` (the compile policy refuses
that name in a class body). `await A()` then yields whatever the script's generator yields to
the asyncio Task / the trio run loop. Today both reject foreign yields (asyncio: "Task got bad
yield"; trio: "unrecognized yield message") and the loop survives, but the script is now
speaking the loop's internal protocol (an object with `_asyncio_future_blocking` and
`get_loop`/`add_done_callback` is treated as a Future and has its methods called by the Task).
Expected: no script object reaches the loop. Actual: it does (shown on both backends).
Run: uv run python findings/f07_script_yields_to_host_loop.py
"""

from __future__ import annotations

import anyio

from scriptgate import Limits, Sandbox

SCRIPT = """
M = type(bytes)
seen = []
def get_loop(self):
    seen.append("the Task called get_loop() on the script's object")
    return None
def aw(self):
    yield self
Fut = M("Fut", (object,), {"__await__": aw, "_asyncio_future_blocking": True,
                           "get_loop": get_loop})
async def main():
    try:
        await Fut()
    except RuntimeError as err:
        seen.append(str(err)[:160])
    return seen
await main()
"""


async def main() -> None:
    """Run the script once on the current backend and print what the loop did."""
    result = await Sandbox([], limits=Limits(timeout=3)).run(SCRIPT)
    print(" ", result.ok, result.value, result.error)


for backend in ("asyncio", "trio"):
    print(backend)
    anyio.run(main, backend=backend)
