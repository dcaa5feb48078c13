"""Time tool (toolset ``time``): the current date and time in an IANA time zone.

Models have no clock and a stale sense of "today"; this gives them one.
datetime and zoneinfo are imported by the first call, not when the tool registers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from toolreg import registry, tool_error, tool_result

from ._common import handler_of

if TYPE_CHECKING:
    import datetime as dt


def _zone(name: str) -> dt.tzinfo | None:
    import datetime as dt
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # ValueError: malformed keys like "../x"; OSError: keys naming a directory.
        # Hosts without a tz database (Windows without tzdata) still get UTC.
        return dt.timezone.utc if name.upper() in ("UTC", "Z", "ETC/UTC") else None


def _format_offset(offset: dt.timedelta) -> str:
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


@registry.tool(
    name="current_time",
    toolset="time",
    emoji="🕒",
    annotations={"title": "Current time", "readOnlyHint": True, "openWorldHint": False},
)
def current_time_in(
    timezone: Annotated[
        str, "IANA time zone name, e.g. 'UTC', 'Asia/Tokyo', 'America/Los_Angeles'."
    ] = "UTC",
) -> str:
    """Get the current date and time in an IANA time zone.

    Returns JSON `{timezone, iso, unix, utc_offset, abbreviation, weekday}`, e.g. iso
    '2025-01-31T14:05:09+01:00', utc_offset '+01:00', unix seconds since 1970-01-01 UTC.
    """
    import datetime as dt

    name = timezone.strip() or "UTC"
    zone = _zone(name)
    if zone is None:
        return tool_error(
            f"unknown time zone {name!r}; use an IANA name such as 'UTC', 'Europe/Paris' "
            "or 'America/New_York'"
        )
    now = dt.datetime.now(zone).replace(microsecond=0)
    offset = now.utcoffset() or dt.timedelta(0)
    return tool_result(
        timezone=name,
        iso=now.isoformat(),
        unix=int(now.timestamp()),
        utc_offset=_format_offset(offset),
        abbreviation=now.tzname(),
        weekday=now.strftime("%A"),
    )


#: The registered handler, for callers holding the model's JSON arguments.
current_time = handler_of(current_time_in)
