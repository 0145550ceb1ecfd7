"""The ``io`` stand-in in both modes: in-memory files."""

from __future__ import annotations

from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


def test_io_stringio_bytesio_match_cpython(sandbox: Sandbox) -> None:
    src = (
        "import io\ns = io.StringIO('one\\ntwo\\n')\nlines = s.readlines()\ns.write('three')\n"
        "s.seek(0)\nb = io.BytesIO()\nb.write(b'ab')\nb.seek(0)\n"
        "[lines, s.read(), b.read().decode(), b.getvalue().hex(), s.tell()]"
    )
    assert value(sandbox, src) == [["one\n", "two\n"], "one\ntwo\nthree", "ab", b"ab".hex(), 13]


def test_io_sizes_are_bounded(sandbox: Sandbox) -> None:
    refused(sandbox, "import io\ns = io.StringIO()\ns.seek(10**12)\ns.write('x')", "in-memory file")
    refused(
        sandbox,
        "import io\ns = io.StringIO()\nfor i in range(100):\n    s.write('x' * 10**6)",
        "in-memory file",
    )
