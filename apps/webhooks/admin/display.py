"""Pieces shared by the webhook pages: status badges, event type choices, short errors."""

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.webhooks.choices import DeliveryStatus, EndpointStatus, EventType

# Errors are long (a connection failure, "refused: ..."); lists show their start.
ERROR_COLUMN_CHARS = 80

# Event types grouped by their prefix, for the checkbox list of an endpoint's form.
_GROUPS = {
    "achievement": "Achievements",
    "streak": "Streaks",
    "points": "Points",
    "leaderboard": "Leaderboards",
    "emails": "Emails due",
    "league": "Leagues",
    "quest": "Quests",
    "user": "Fair play",
}
_SAME_GROUP = {"quests": "quest"}  # quests.renewed beside quest.completed
EVENT_TYPE_GROUPS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        label,
        [
            (t.value, t.value)
            for t in EventType
            if _SAME_GROUP.get(t.value.partition(".")[0], t.value.partition(".")[0]) == prefix
        ],
    )
    for prefix, label in _GROUPS.items()
]

# Badge classes are styled in templates/admin/webhooks/styles.html.
_BADGES: dict[str, str] = {
    EndpointStatus.ACTIVE: "ok",
    EndpointStatus.DISABLED: "bad",
    DeliveryStatus.PENDING: "wait",
    DeliveryStatus.DELIVERING: "busy",
    DeliveryStatus.SUCCEEDED: "ok",
    DeliveryStatus.FAILED: "bad",
}


def status_badge(status: str) -> SafeString:
    return format_html(
        '<span class="dash-pill dash-pill-{}">{}</span>',
        _BADGES.get(status, "wait"),
        status,
    )


def short_error(error: str) -> SafeString | str:
    """The start of an error; the full text is its tooltip."""
    if not error:
        return "-"
    short = Truncator(error).chars(ERROR_COLUMN_CHARS)
    return format_html('<span title="{}">{}</span>', error, short)


def events_label(events: list[str]) -> str:
    return ", ".join(events) if events else "all"


def url_label(url: str, chars: int = 70, *, scheme: bool = True) -> SafeString:
    """A URL that may wrap in a narrow column after any "/" of its path, not mid-name; without
    its scheme where space is short (the full URL goes in a tooltip)."""
    prefix, sep, rest = url.partition("://")
    if not sep:
        prefix, rest = "", url
    head, *path = Truncator(rest).chars(chars).split("/")
    parts = [f"{prefix}{sep}{head}" if scheme else head, *path]
    return format_html(
        '<span class="webhook-url">{}</span>',
        format_html_join(SafeString("/<wbr>"), "{}", ((part,) for part in parts)),
    )
