"""The ``zoneinfo`` stand-in in both modes: ZoneInfo with datetime."""

from __future__ import annotations

from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


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
