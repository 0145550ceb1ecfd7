"""The ``html`` stand-in in both modes: escape and unescape."""

from __future__ import annotations

from sandbox_support import value

from scriptgate.sandbox.sandbox import Sandbox


def test_html_matches_cpython(sandbox: Sandbox) -> None:
    import html

    src = "import html\n[html.escape('<a href=\"x\">&'), html.escape('\"', quote=False), html.unescape('&lt;&amp;&#39;&eacute;')]"
    assert value(sandbox, src) == [
        html.escape('<a href="x">&'),
        '"',
        html.unescape("&lt;&amp;&#39;&eacute;"),
    ]
