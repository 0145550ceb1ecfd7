"""The ``pprint`` stand-in in both modes: pprint through the script's print."""

from __future__ import annotations

from sandbox_support import value

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


def test_pprint_output_is_the_scripts_print(sandbox: Sandbox) -> None:
    import pprint

    data = {"b": [1, 2, {"x": list(range(30))}], "a": 1}
    result = sandbox.run_sync(
        "import pprint\ndata = {'b': [1, 2, {'x': list(range(30))}], 'a': 1}\n"
        "pprint.pprint(data)\npprint.pp(data, width=40)\n"
        "[pprint.pformat([1, [2, [3]]], depth=2), pprint.pformat(data, compact=True, sort_dicts=False)]"
    )
    assert result.ok, result.error
    assert (
        result.output
        == pprint.pformat(data) + "\n" + pprint.pformat(data, width=40, sort_dicts=False) + "\n"
    )
    assert result.value == [
        pprint.pformat([1, [2, [3]]], depth=2),
        pprint.pformat(data, compact=True, sort_dicts=False),
    ]


def test_pprint_cycles_and_output_limit(sandbox: Sandbox) -> None:
    assert "Recursion" in value(sandbox, "import pprint\na = [1]\na.append(a)\npprint.pformat(a)")
    box = Sandbox(limits=Limits(timeout=10, max_output_chars=100))
    result = box.run_sync("import pprint\npprint.pprint(list(range(1000)))")
    box.close()
    assert result.error is not None
    assert result.error.kind == "limit"
