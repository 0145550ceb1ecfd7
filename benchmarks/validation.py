"""Validations per second of ``validate_tool_arguments`` against other validators.

Run: ``uv run --group bench python benchmarks/validation.py [--seconds 0.5]``

A typical tool schema (a string with a length bound, an integer with a range, a boolean,
an array of strings, an optional nested object with ``additionalProperties: false``) is
checked with valid and invalid arguments, side by side in the same run with:

- ``jsonschema`` (a pre-built Draft 2020-12 validator; the baseline),
- ``fastjsonschema`` (generated Python code),
- ``jsonschema-rs`` (Rust).

Peers that are not installed are skipped. The peers only *validate*; scriptgate's figure
includes what pi does per call: the deep copy of the arguments, the coercion passes
(skipped by the fast path when the value already validates) and, for invalid input,
the full error list and pi's message text. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from typing import Any

from scriptgate.errors import ToolArgumentsError
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, ToolCall
from scriptgate.runtime.validation import validate_tool_arguments

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 200},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
        "recursive": {"type": "boolean"},
        "include": {"type": "array", "items": {"type": "string"}},
        "options": {
            "type": "object",
            "properties": {
                "encoding": {"type": "string"},
                "max_depth": {"type": "integer", "minimum": 0},
            },
            "additionalProperties": False,
        },
    },
    "required": ["path", "limit"],
}

VALID: dict[str, Any] = {
    "path": "src/scriptgate/runtime",
    "limit": 50,
    "recursive": True,
    "include": ["*.py", "*.md", "*.toml"],
    "options": {"encoding": "utf-8", "max_depth": 3},
}

INVALID: dict[str, Any] = {
    "path": "",
    "limit": 5000,
    "recursive": "maybe",
    "include": ["*.py", 3],
    "options": {"encoding": "utf-8", "colour": "red"},
}

# Valid after pi's coercion (strings for numbers/booleans): only scriptgate accepts it.
COERCIBLE: dict[str, Any] = {
    "path": "src",
    "limit": "50",
    "recursive": "true",
    "include": "*.py",
}


def _execute(*_: Any) -> AgentToolResult:
    return AgentToolResult.text("")


def _measure(fn: Callable[[], object], seconds: float) -> float:
    """Calls per second of ``fn`` (best of three rounds)."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds / 10:
            break
        n *= 2
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        best = max(best, n / elapsed)
    return best


def _scriptgate(args: dict[str, Any]) -> Callable[[], object]:
    tool = AgentTool(name="list_files", parameters=SCHEMA, execute=_execute)
    call = ToolCall(id="c1", name="list_files", arguments=args)

    def run() -> object:
        try:
            return validate_tool_arguments(tool, call)
        except ToolArgumentsError as exc:
            return exc

    run()
    return run


def _peers() -> dict[str, Callable[[dict[str, Any]], Callable[[], object]]]:
    peers: dict[str, Callable[[dict[str, Any]], Callable[[], object]]] = {}
    try:
        import jsonschema
    except ImportError:
        print("jsonschema: not installed, skipped")
    else:
        validator = jsonschema.Draft202012Validator(SCHEMA)

        def js(args: dict[str, Any]) -> Callable[[], object]:
            return lambda: validator.is_valid(args)

        peers["jsonschema (is_valid)"] = js

        def js_errors(args: dict[str, Any]) -> Callable[[], object]:
            return lambda: list(validator.iter_errors(args))

        peers["jsonschema (iter_errors)"] = js_errors
    try:
        import fastjsonschema
    except ImportError:
        print("fastjsonschema: not installed, skipped")
    else:
        fast = fastjsonschema.compile(SCHEMA)

        def fj(args: dict[str, Any]) -> Callable[[], object]:
            def run() -> object:
                try:
                    return fast(args)
                except fastjsonschema.JsonSchemaException as exc:
                    return exc

            return run

        peers["fastjsonschema"] = fj
    try:
        import jsonschema_rs
    except ImportError:
        print("jsonschema-rs: not installed, skipped")
    else:
        rs = jsonschema_rs.validator_for(SCHEMA)

        def jr(args: dict[str, Any]) -> Callable[[], object]:
            return lambda: rs.is_valid(args)

        peers["jsonschema-rs (is_valid)"] = jr
    return peers


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per measurement")
    opts = parser.parse_args()
    print(
        f"machine: {_cpu_model()} ({platform.machine()}), cpus={os.cpu_count()}, "
        f"python {platform.python_version()} ({platform.python_implementation()})"
    )
    rows: list[tuple[str, str, float]] = []
    inputs = {"valid": VALID, "invalid": INVALID}
    peers = _peers()
    for label, args in inputs.items():
        rows.append(
            ("scriptgate validate_tool_arguments", label, _measure(_scriptgate(args), opts.seconds))
        )
        for name, make in peers.items():
            rows.append((name, label, _measure(make(args), opts.seconds)))
    rows.append(
        (
            "scriptgate validate_tool_arguments",
            "coercible",
            _measure(_scriptgate(COERCIBLE), opts.seconds),
        )
    )
    baseline = {label: rate for name, label, rate in rows if name == "jsonschema (is_valid)"}
    fast = {label: rate for name, label, rate in rows if name == "fastjsonschema"}
    print()
    print(
        f"{'validator':38} {'input':10} {'ops/s':>12} {'vs jsonschema':>14} {'vs fastjsonschema':>18}"
    )
    for name, label, rate in rows:
        b = baseline.get(label) or baseline.get("valid")
        f = fast.get(label) or fast.get("valid")
        vb = f"{rate / b:13.2f}x" if b else f"{'-':>14}"
        vf = f"{rate / f:17.2f}x" if f else f"{'-':>18}"
        print(f"{name:38} {label:10} {rate:12,.0f} {vb} {vf}")
    print()
    print("coercible = strings for numbers/booleans and a bare string for an array;")
    print("only scriptgate coerces, so its row is compared with the peers' valid-input rates.")


if __name__ == "__main__":
    main()
