"""The ``zoneinfo`` stand-in in both modes: ZoneInfo with datetime."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    box = Sandbox(limits=Limits(timeout=10), isolation=request.param)
    yield box
    box.close()


def value(box: Sandbox, source: str) -> Any:
    result: ScriptResult = box.run_sync(source)
    assert result.ok, result.error
    return result.value


def refused(box: Sandbox, source: str, words: str) -> None:
    result = box.run_sync(source)
    assert result.error is not None, result.value
    assert words in result.error.message, result.error.message


def test_zoneinfo_with_datetime_matches_cpython(sandbox: Sandbox) -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    src = (
        "import zoneinfo\nfrom zoneinfo import ZoneInfo\nfrom datetime import datetime\n"
        "d = datetime(2024, 6, 1, 12, tzinfo=ZoneInfo('Europe/Paris'))\n"
        "[d.isoformat(), d.astimezone(ZoneInfo('America/New_York')).isoformat(), str(d.tzinfo),"
        " d.tzinfo.key, 'UTC' in zoneinfo.available_timezones()]"
    )
    d = datetime(2024, 6, 1, 12, tzinfo=ZoneInfo("Europe/Paris"))
    assert value(sandbox, src) == [
        d.isoformat(),
        d.astimezone(ZoneInfo("America/New_York")).isoformat(),
        "Europe/Paris",
        "Europe/Paris",
        True,
    ]


def test_zoneinfo_keys_and_file_methods_are_refused(sandbox: Sandbox) -> None:
    refused(sandbox, "from zoneinfo import ZoneInfo\nZoneInfo('../../etc/passwd')", "No time zone")
    refused(sandbox, "from zoneinfo import ZoneInfo\nZoneInfo('/etc/localtime')", "No time zone")
    refused(sandbox, "from zoneinfo import ZoneInfo\nZoneInfo.from_file(None)", "not available")
    refused(sandbox, "from zoneinfo import ZoneInfo\nZoneInfo.clear_cache()", "not available")
