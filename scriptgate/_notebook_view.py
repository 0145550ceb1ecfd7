"""How a script's result looks in a notebook: rich HTML with a markdown and a text fallback.

Owns :class:`ResultView` only (rendering, no running): the call trace as a table with
status colours and durations, long output collapsed, the value as a collapsible
JSON tree, the error with its script line. Imports the sandbox's result records only.
"""

from __future__ import annotations

import html
import json
from typing import Any

from scriptgate.sandbox.result import ScriptResult

__all__ = ["LOOP_HINT", "ResultView", "loop_bound"]

COLLAPSE_LINES = 40
"""Output longer than this many lines is shown collapsed."""

LOOP_HINT = (
    "A tool is bound to this notebook's own event loop, but %%scriptgate runs the script on "
    "a loop of its own in a helper thread. In a cell, use `result = await sandbox.run(code)` "
    "instead: the script then runs on the notebook's loop."
)

_STATUS_COLOURS = {
    "ok": "#1a7f37",
    "error": "#cf222e",
    "blocked": "#9a6700",
    "cancelled": "#6e7781",
}

_LOOP_WORDS = ("attached to a different loop", "different event loop", "bound to a different")


def loop_bound(result: ScriptResult) -> bool:
    """Whether the run failed because a tool was bound to another event loop."""
    texts = [call.error or "" for call in result.calls]
    if result.error is not None:
        texts.append(result.error.message)
    return any(word in text for text in texts for word in _LOOP_WORDS)


def _json_tree(value: Any, depth: int = 0) -> str:
    if isinstance(value, dict) and value:
        items = "".join(
            f"<li><code>{html.escape(json.dumps(key, ensure_ascii=False))}</code>: "
            f"{_json_tree(item, depth + 1)}</li>"
            for key, item in value.items()
        )
        opened = " open" if depth < 2 else ""
        return (
            f"<details{opened}><summary>{{…}} {len(value)} keys</summary>"
            f"<ul style='list-style:none;margin:0;padding-left:1.2em'>{items}</ul></details>"
        )
    if isinstance(value, list) and value:
        items = "".join(f"<li>{_json_tree(item, depth + 1)}</li>" for item in value)
        opened = " open" if depth < 2 else ""
        return (
            f"<details{opened}><summary>[…] {len(value)} items</summary>"
            f"<ol start='0' style='margin:0;padding-left:2em'>{items}</ol></details>"
        )
    text = json.dumps(value, ensure_ascii=False, default=str)
    return f"<code>{html.escape(text)}</code>"


class ResultView:
    """The display of a :class:`ScriptResult` in a notebook (``_repr_html_``, markdown, text).

    ``source``: the script, to show the failing line; ``streamed``: the output was
    already shown live (then it is collapsed here); ``interrupted``: the run was
    stopped by a kernel interrupt.
    """

    def __init__(
        self,
        result: ScriptResult,
        source: str = "",
        *,
        streamed: bool = False,
        interrupted: bool = False,
    ) -> None:
        self.result = result
        self.source = source
        self.streamed = streamed
        self.interrupted = interrupted

    def _error_line_text(self) -> str | None:
        error = self.result.error
        if error is None or not error.line:
            return None
        lines = self.source.splitlines()
        if 0 < error.line <= len(lines):
            return lines[error.line - 1]
        return None

    def _repr_html_(self) -> str:
        """Jupyter's rich display."""
        r = self.result
        colour = "#1a7f37" if r.ok else "#cf222e"
        status = "ok" if r.ok else f"failed ({r.error.kind})" if r.error else "failed"
        if self.interrupted:
            status += " — interrupted"
        parts = [
            f"<div class='scriptgate-result'><div><b style='color:{colour}'>{status}</b> "
            f"in {r.wall_time:.3f} s · {len(r.calls)} call(s)</div>"
        ]
        if r.output:
            lines = r.output.rstrip("\n").split("\n")
            body = f"<pre style='margin:0'>{html.escape(r.output)}</pre>"
            if self.streamed or len(lines) > COLLAPSE_LINES:
                parts.append(
                    f"<details><summary>output ({len(lines)} lines)</summary>{body}</details>"
                )
            else:
                parts.append(f"<div><b>output</b>{body}</div>")
        if r.value is not None:
            parts.append(f"<div><b>value</b> {_json_tree(r.value)}</div>")
        if r.error is not None:
            where = f" (line {r.error.line})" if r.error.line else ""
            parts.append(
                f"<div style='color:#cf222e'><b>{html.escape(r.error.type)}</b>: "
                f"{html.escape(r.error.message)}{where}</div>"
            )
            line = self._error_line_text()
            if line is not None:
                parts.append(
                    f"<pre style='margin:0;background:#fff5f5'>{r.error.line:>4} | "
                    f"{html.escape(line)}</pre>"
                )
        if loop_bound(r):
            parts.append(f"<div style='color:#9a6700'>{html.escape(LOOP_HINT)}</div>")
        if r.calls:
            rows = []
            for call in r.calls:
                args = json.dumps(call.arguments, ensure_ascii=False, default=str)
                if len(args) > 120:
                    args = args[:117] + "..."
                took = f"{call.duration_ms} ms" if call.duration_ms is not None else ""
                colour = _STATUS_COLOURS.get(call.status, "#000")
                rows.append(
                    f"<tr><td>{html.escape(call.id)}</td><td><code>{html.escape(call.tool)}</code>"
                    f"</td><td><code>{html.escape(args)}</code></td>"
                    f"<td style='color:{colour};font-weight:bold'>{call.status}</td>"
                    f"<td style='text-align:right'>{took}</td>"
                    f"<td>{html.escape((call.error or '').splitlines()[0] if call.error else '')}"
                    "</td></tr>"
                )
            parts.append(
                "<table class='scriptgate-calls'><thead><tr><th>id</th><th>tool</th>"
                "<th>arguments</th><th>status</th><th>duration</th><th>error</th></tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
        parts.append("</div>")
        return "".join(parts)

    def _repr_markdown_(self) -> str:
        """The markdown fallback."""
        r = self.result
        status = "ok" if r.ok else f"failed ({r.error.kind})" if r.error else "failed"
        out = [f"**{status}** in {r.wall_time:.3f} s"]
        if r.output and not self.streamed:
            out.append("```\n" + r.output.rstrip("\n") + "\n```")
        if r.value is not None:
            out.append("value:\n```json\n" + json.dumps(r.value, indent=2, default=str) + "\n```")
        if r.error is not None:
            where = f" (line {r.error.line})" if r.error.line else ""
            out.append(f"**{r.error.type}**: {r.error.message}{where}")
        if loop_bound(r):
            out.append(LOOP_HINT)
        if r.calls:
            out.append("| id | tool | status | duration |\n|---|---|---|---|")
            out[-1] += "".join(
                f"\n| {c.id} | `{c.tool}` | {c.status} | "
                f"{'' if c.duration_ms is None else f'{c.duration_ms} ms'} |"
                for c in r.calls
            )
        return "\n\n".join(out)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text display."""
        text = self.result.summary()
        if loop_bound(self.result):
            text += "\n" + LOOP_HINT
        printer.text(text)

    def __repr__(self) -> str:
        return self.result.summary()
