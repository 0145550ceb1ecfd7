"""The ``csv`` stand-in in both modes: csv over io.StringIO."""

from __future__ import annotations

from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


def test_csv_roundtrip_matches_cpython(sandbox: Sandbox) -> None:
    src = (
        "import csv, io\nf = io.StringIO()\nw = csv.writer(f)\nw.writerow(['a', 'b,c'])\n"
        "w.writerows([[1, 2], ['x\"y', '']])\nrows = list(csv.reader(io.StringIO(f.getvalue())))\n"
        "g = io.StringIO()\ndw = csv.DictWriter(g, ['x', 'y'])\ndw.writeheader()\n"
        "dw.writerow({'x': 1, 'y': 2})\nd = list(csv.DictReader(io.StringIO(g.getvalue())))\n"
        "t = list(csv.reader(['a\\tb'], dialect='excel-tab'))\n"
        "[rows, d, t, f.getvalue(), csv.QUOTE_ALL]"
    )
    import csv
    import io

    f = io.StringIO()
    w = csv.writer(f)
    w.writerow(["a", "b,c"])
    w.writerows([[1, 2], ['x"y', ""]])
    expected = [
        list(csv.reader(io.StringIO(f.getvalue()))),
        [{"x": "1", "y": "2"}],
        [["a", "b"]],
        f.getvalue(),
        csv.QUOTE_ALL,
    ]
    assert value(sandbox, src) == expected


def test_csv_open_stays_unavailable(sandbox: Sandbox) -> None:
    refused(sandbox, "open('x.csv')", "open")
    refused(sandbox, "import csv\ncsv.field_size_limit(10**9)", "field_size_limit")
