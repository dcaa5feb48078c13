"""current_time: real clock, real tz database."""

from __future__ import annotations

import datetime as dt
import json
import time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from conftest import builtin_registry, ok, registered_strictly
from toolreg.builtin_tools import time_tool
from toolreg.builtin_tools.time_tool import current_time


def _has_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except ZoneInfoNotFoundError:
        return False
    return True


needs_tzdata = pytest.mark.skipif(
    not _has_zone("Asia/Kolkata"), reason="no IANA time zone database (install tzdata)"
)


def test_utc_by_default() -> None:
    before = int(time.time())
    data = ok(current_time({}))
    after = int(time.time())
    assert data["timezone"] == "UTC"
    assert data["utc_offset"] == "+00:00"
    assert data["iso"].endswith("+00:00")
    assert before <= data["unix"] <= after
    assert dt.datetime.fromisoformat(data["iso"]).timestamp() == data["unix"]


@needs_tzdata
def test_half_hour_offset_zone() -> None:
    data = ok(current_time({"timezone": "Asia/Kolkata"}))
    assert data["timezone"] == "Asia/Kolkata"
    assert data["utc_offset"] == "+05:30"  # India has no daylight saving time
    assert data["iso"].endswith("+05:30")
    assert abs(data["unix"] - time.time()) < 5
    parsed = dt.datetime.fromisoformat(data["iso"])
    assert parsed.timestamp() == data["unix"]
    assert data["weekday"] == parsed.strftime("%A")


@needs_tzdata
def test_negative_offset_zone() -> None:
    # POSIX-style Etc zones invert the sign: Etc/GMT+5 is five hours *behind* UTC.
    data = ok(current_time({"timezone": "Etc/GMT+5"}))
    assert data["utc_offset"] == "-05:00"
    assert data["iso"].endswith("-05:00")


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "../etc/passwd", "America"])
def test_unknown_zone_is_an_error_naming_it(zone: str) -> None:
    data = json.loads(current_time({"timezone": zone}))
    assert "unknown time zone" in data["error"]
    assert zone in data["error"]


def test_non_string_zone_is_an_error() -> None:
    assert "timezone" in json.loads(current_time({"timezone": 5}))["error"]


def test_registered_with_a_strict_schema() -> None:
    registered_strictly(time_tool, "current_time", "time", [])


def test_dispatch_through_registry() -> None:
    reg = builtin_registry(time_tool)
    data = json.loads(reg.dispatch("current_time", {"timezone": "UTC"}))
    assert data["utc_offset"] == "+00:00"


def test_annotations_say_reading_the_clock_changes_nothing() -> None:
    entry = builtin_registry(time_tool).get_entry("current_time")
    assert dict(entry.annotations) == {
        "title": "Current time",
        "readOnlyHint": True,
        "openWorldHint": False,
    }
