"""Pure rules of notifications: the settings of email and push templates and of push channels,
who may receive what, and when, in the user's own time zone.

Every function takes `now` (or the moment in question) explicitly; nothing here reads the
clock or the database.
"""

import datetime as dt
import functools
import zoneinfo
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from apps.core import declarations as declare
from apps.core import retries
from apps.core.arguments import Unset
from apps.core.errors import ValidationError
from apps.notifications.choices import (
    NotificationType,
    PushChannelStatus,
    PushKind,
    TemplateMode,
    TemplateStatus,
)

# Users without a time zone are scheduled in New York time, as Trophy does (reference §4.8).
DEFAULT_ZONE = "America/New_York"

# achievement_completed: sent between 17:00 and 21:00 local on the day of completion.
ACHIEVEMENT_WINDOW = (dt.time(17), dt.time(21))
# streak_reminder: daily streaks four hours before the local day ends; weekly on Friday
# morning; monthly on the 25th (reference §4.8).
DAILY_REMINDER = dt.time(20)
PERIODIC_REMINDER = dt.time(9)
FRIDAY_OFFSET = 5  # weeks start on Sunday
MONTHLY_REMINDER_DAY = 25
# reactivation: days without any event -> message number.
REACTIVATION_DAYS: Mapping[int, int] = {3: 1, 5: 2, 7: 3, 14: 4, 30: 5}
REACTIVATION_TIME = dt.time(17)
# recap: Monday 09:00 for the week before, or the 1st at 09:00 for the month before. A recap
# that could not go out within a day of its slot is stale and is not sent.
RECAP_TIME = dt.time(9)
RECAP_LATENESS = dt.timedelta(days=1)

CHANNELS_ALL = ("email", "push")

# The longest template parts a tenant may write (admin API and dashboard alike).
MAX_TEMPLATE_SUBJECT = 1_000  # an email's subject, a push notification's title
MAX_TEMPLATE_HTML = 200_000
MAX_TEMPLATE_TEXT = 100_000  # an email's text, a push body, each value of a push's data
MAX_TEMPLATE_URL = 2_000
MAX_TEMPLATE_PRIORITY = 1_000_000
# The longest value of each provider field of a push channel a tenant may give (characters); a
# service account is counted as its parsed JSON's text.
MAX_CHANNEL_LENGTHS: Mapping[str, int] = {
    "team_id": 20,
    "key_id": 20,
    "bundle_id": 255,
    "signing_key": 10_000,
    "service_account": 20_000,
    "access_token": 1_000,
}


# --- settings: what the configuration services take (apps/core/declarations.py) ------------

_AUDIENCE_HELP = "Sent only to users with all of these attribute values. Empty: everyone."
_PRIORITY_HELP = (
    "Of the active templates of a type whose filters match a user, the highest priority is sent."
)


@dataclass(frozen=True, kw_only=True)
class _TemplateSettings:
    """What email and push templates have alike: their type, name, status and priority."""

    type: str | Unset = declare.choice(
        "Type", NotificationType, required=True, fixed=True, help="Set for good."
    )
    name: str | Unset = declare.text("Name", max_length=255, required=True)
    status: str | Unset = declare.choice(
        "Status", TemplateStatus, help="Only active templates are sent."
    )
    priority: int | Unset = declare.integer(
        "Priority",
        min_value=-MAX_TEMPLATE_PRIORITY,
        max_value=MAX_TEMPLATE_PRIORITY,
        help=_PRIORITY_HELP,
    )


@dataclass(frozen=True, kw_only=True)
class EmailTemplateSettings(_TemplateSettings):
    """An email template's settings, as email_template_create and email_template_update take
    them. The type is set for good; on creation, subject and html left out are the built-in
    template's of the type (and so is the text, when both are)."""

    subject: str | Unset = declare.text("Subject", max_length=MAX_TEMPLATE_SUBJECT)
    html: str | Unset = declare.text("HTML", max_length=MAX_TEMPLATE_HTML, multiline=True)
    # Empty or None: derived from the rendered HTML.
    text: str | Unset | None = declare.text(
        "Text",
        max_length=MAX_TEMPLATE_TEXT,
        nullable=True,
        blank=True,
        multiline=True,
        help="Empty: derived from the HTML.",
    )
    # {"attributeId", "attributeValue"} references; on an update, None keeps them.
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "User attributes", nullable=True, help=_AUDIENCE_HELP
    )
    mode: str | Unset = declare.choice(
        "Mode",
        TemplateMode,
        help="Blocks: written with typed blocks, from which the HTML and the text are generated. "
        "Advanced: raw Jinja2 HTML and text. Given blocks, blocks.",
    )
    # Typed blocks (apps/notifications/rendering/blocks.py), checked by blocks_check.
    blocks: list[dict[str, Any]] | Unset = declare.structure(
        "Blocks", help="The blocks of a template in blocks mode, in order."
    )


@dataclass(frozen=True, kw_only=True)
class PushTemplateSettings(_TemplateSettings):
    """A push template's settings, as push_template_create and push_template_update take them.
    The type is set for good; on creation, title and body left out are the built-in template's
    of the type."""

    title: str | Unset = declare.text("Title", max_length=MAX_TEMPLATE_SUBJECT)
    body: str | Unset = declare.text("Body", max_length=MAX_TEMPLATE_TEXT, multiline=True)
    # A template too ("myapp://achievements/{{ achievement.key }}"), so text, not a URL.
    url: str | Unset | None = declare.text(
        "URL",
        max_length=MAX_TEMPLATE_URL,
        nullable=True,
        blank=True,
        help="A link the app opens when the notification is tapped, e.g. "
        "“myapp://achievements/{{ achievement.key }}”. Empty: none.",
    )
    # Key -> a template, each at most MAX_TEMPLATE_TEXT characters.
    data: dict[str, str] | Unset | None = declare.structure(
        "Data",
        nullable=True,
        help="Custom data for the app, one entry per line as key: value, e.g. “screen: streak”; "
        "values are templates. Keys with a colon or values over several lines: write a JSON "
        "object instead. Empty: none.",
    )
    # {"attributeId", "attributeValue"} references; on an update, None keeps them.
    user_attributes: list[dict[str, str]] | Unset | None = declare.structure(
        "User attributes", nullable=True, help=_AUDIENCE_HELP
    )


_WRITE_ONLY = "Write-only: it is stored encrypted and never shown."


@dataclass(frozen=True, kw_only=True)
class PushChannelSettings:
    """A push channel's settings, as push_channel_create and push_channel_update take them: its
    provider (set for good), its status, and the provider's fields: APNs' team, key and bundle
    ids, sandbox and signing key (the .p8 file's text), FCM's service account (the JSON key
    file, parsed), Expo's access token. The secrets among them are stored encrypted and never
    shown (`secret`); on an update a secret not given is kept."""

    kind: str | Unset = declare.choice(
        "Kind",
        PushKind,
        required=True,
        fixed=True,
        help="Set for good. Only the fields of the chosen provider apply.",
    )
    status: str | Unset = declare.choice(
        "Status", PushChannelStatus, help="Only active channels send."
    )
    team_id: str | Unset = declare.text(
        "Team ID",
        max_length=MAX_CHANNEL_LENGTHS["team_id"],
        help="The 10-character id of the Apple team.",
    )
    key_id: str | Unset = declare.text(
        "Key ID",
        max_length=MAX_CHANNEL_LENGTHS["key_id"],
        # Help texts are HTML: the angle brackets are escaped.
        help="The 10-character id of the signing key, as in its file name "
        "AuthKey_&lt;key id&gt;.p8.",
    )
    bundle_id: str | Unset = declare.text(
        "Bundle ID",
        max_length=MAX_CHANNEL_LENGTHS["bundle_id"],
        help="The app's bundle id, e.g. com.example.app.",
    )
    sandbox: bool | Unset = declare.flag(
        "Sandbox",
        help="Send through Apple's development environment, for builds run from Xcode. "
        "TestFlight and App Store builds use production: a wrong choice makes every token look "
        "invalid.",
    )
    signing_key: str | Unset = declare.text(
        "Signing key",
        max_length=MAX_CHANNEL_LENGTHS["signing_key"],
        multiline=True,
        secret=True,
        help="Paste the content of the .p8 file (-----BEGIN PRIVATE KEY----- …), or upload the "
        f"file below. {_WRITE_ONLY}",
    )
    service_account: dict[str, Any] | Unset = declare.structure(
        "Service account",
        secret=True,
        help=f"Paste the service account's JSON key file, or upload the file below. {_WRITE_ONLY}",
    )
    access_token: str | Unset | None = declare.text(
        "Access token",
        max_length=MAX_CHANNEL_LENGTHS["access_token"],
        nullable=True,
        blank=True,
        secret=True,
        help=f"Empty: none. {_WRITE_ONLY}",
    )
    # An update's only: False clears the bad-token flag, and pruning resumes (True changes
    # nothing: only deliveries flag a channel).
    flagged: bool | Unset = declare.flag("Flagged")


def set_for_good_problem(name: str) -> ValidationError:
    """An update that would change what a template or channel was made with (its type, its
    kind); giving the stored value again is not a change."""
    return ValidationError("{" + name + "} is set for good", fields=name, code="frozen")


@functools.lru_cache(maxsize=1024)
def send_zone(tz: str | None) -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo(tz or DEFAULT_ZONE)


@functools.cache
def all_zone_names() -> tuple[str, ...]:
    """Every zone a user can have (users' `tz` is validated against this same set)."""
    return tuple(sorted(zoneinfo.available_timezones()))


def at_local(day: dt.date, time: dt.time, zone: dt.tzinfo) -> dt.datetime:
    """`time` on `day` in `zone`, as an aware instant in UTC."""
    return dt.datetime.combine(day, time, tzinfo=zone).astimezone(dt.UTC)


# --- who -----------------------------------------------------------------------------------


def channel_allowed(preferences: Mapping[str, list[str]], type: str, channel: str) -> bool:
    """A type the user never set is on; [] turns it off; otherwise the channel must be listed."""
    if type not in preferences:
        return True
    return channel in preferences[type]


@dataclass(frozen=True)
class Recipient:
    """What decides whether a user may get an email or a push notification."""

    email: str | None
    subscribed: bool
    control: bool
    preferences: Mapping[str, list[str]]
    device_tokens: tuple[str, ...] = ()


def email_refusal(recipient: Recipient, type: str) -> str | None:
    """Why this user must not get an email of this type; None when they may."""
    if recipient.control:
        return "the user is in the control group"
    if not recipient.subscribed:
        return "the user is not subscribed to emails"
    if not recipient.email:
        return "the user has no email address"
    if not channel_allowed(recipient.preferences, type, "email"):
        return f"the user turned off {type} emails"
    return None


def push_refusal(recipient: Recipient, type: str) -> str | None:
    """Why this user must not get a push notification of this type; None when they may."""
    if recipient.control:
        return "the user is in the control group"
    if not recipient.device_tokens:
        return "the user has no device tokens"
    if not channel_allowed(recipient.preferences, type, "push"):
        return f"the user turned off {type} push notifications"
    return None


# --- when ----------------------------------------------------------------------------------


# league_result: the first 09:00 local after the week's end; league_at_risk: 17:00 local on the
# user's last day of the week, at least an hour before its end (else the day before).
LEAGUE_RESULT_TIME = dt.time(9)
LEAGUE_AT_RISK_TIME = dt.time(17)
LEAGUE_AT_RISK_MARGIN = dt.timedelta(hours=1)


def league_result_send_at(week_end: dt.datetime, tz: str | None) -> dt.datetime:
    """The user's morning after the week's end: 09:00 local on the day the week ended for
    them, or the next day if it ended after 09:00 there."""
    zone = send_zone(tz)
    day = week_end.astimezone(zone).date()
    morning = at_local(day, LEAGUE_RESULT_TIME, zone)
    if morning < week_end:
        morning = at_local(day + dt.timedelta(days=1), LEAGUE_RESULT_TIME, zone)
    return morning


def league_at_risk_send_at(week_end: dt.datetime, tz: str | None) -> dt.datetime:
    """17:00 local on the user's last day of the week (the local date of the week's last
    moment), or on the day before when that is less than an hour before the end."""
    zone = send_zone(tz)
    last_day = (week_end - dt.timedelta(microseconds=1)).astimezone(zone).date()
    evening = at_local(last_day, LEAGUE_AT_RISK_TIME, zone)
    if evening > week_end - LEAGUE_AT_RISK_MARGIN:
        evening = at_local(last_day - dt.timedelta(days=1), LEAGUE_AT_RISK_TIME, zone)
    return evening


# quest_reminder: from 19:00 to 23:00 local (the sweep's first run in it), to a user last
# active on one of their 3 last local days (today included).
QUEST_REMINDER_FROM, QUEST_REMINDER_UNTIL = dt.time(19), dt.time(23)
QUEST_REMINDER_ACTIVE_DAYS = 3


def quest_reminder_due(now: dt.datetime, tz: str | None, last_active_on: dt.date | None) -> bool:
    """Whether it is the user's evening now and they were active in their last 3 days."""
    local = now.astimezone(send_zone(tz))
    if not QUEST_REMINDER_FROM <= local.time() < QUEST_REMINDER_UNTIL:
        return False
    recent = local.date() - dt.timedelta(days=QUEST_REMINDER_ACTIVE_DAYS - 1)
    return last_active_on is not None and last_active_on >= recent


def league_key(type: str, league_pk: int, week_start: dt.datetime) -> str:
    return f"{type}:{league_pk}:{week_start:%Y%m%dT%H%M}"


def achievement_send_at(completed_at: dt.datetime, tz: str | None) -> dt.datetime:
    """At once inside 17:00-21:00 local, at 17:00 if before it, at 17:00 the next day if
    after it."""
    zone = send_zone(tz)
    local = completed_at.astimezone(zone)
    start, end = ACHIEVEMENT_WINDOW
    if local.time() < start:
        return at_local(local.date(), start, zone)
    if local.time() < end:
        return completed_at
    return at_local(local.date() + dt.timedelta(days=1), start, zone)


def streak_reminder_at(period_start: dt.date, frequency: str, zone: dt.tzinfo) -> dt.datetime:
    """When to remind a user whose streak is not yet extended in the period starting on
    `period_start`: 20:00 on the day (daily), Friday 09:00 (weekly), the 25th at 09:00
    (monthly), in `zone`: the zone the streak's periods are counted in (the user's, UTC when
    they have none), so that the reminder always comes before the period ends."""
    if frequency == "daily":
        return at_local(period_start, DAILY_REMINDER, zone)
    if frequency == "weekly":
        return at_local(period_start + dt.timedelta(days=FRIDAY_OFFSET), PERIODIC_REMINDER, zone)
    return at_local(period_start.replace(day=MONTHLY_REMINDER_DAY), PERIODIC_REMINDER, zone)


# The longest time between a reminder and the end of its period (plus an hour for DST):
# what the reminder sweep looks ahead for streaks that will be missed.
REMINDER_LEAD = {
    "daily": dt.timedelta(hours=5),
    "weekly": dt.timedelta(hours=40),
    "monthly": dt.timedelta(days=6, hours=16),
}


@dataclass(frozen=True)
class Slot:
    """A send slot: the instant some zones reach a send time, and their local date then."""

    at: dt.datetime
    local_date: dt.date


def latest_daily_slot(now: dt.datetime, zone: dt.tzinfo, time: dt.time) -> Slot:
    """The most recent `time` local at or before `now`."""
    today = now.astimezone(zone).date()
    for day in (today, today - dt.timedelta(days=1), today - dt.timedelta(days=2)):
        at = at_local(day, time, zone)
        if at <= now:
            return Slot(at, day)
    raise AssertionError("unreachable: a local time recurs within two days")


def latest_recap_slot(now: dt.datetime, zone: dt.tzinfo, period: str) -> Slot:
    """The most recent Monday 09:00 (weekly) or 1st-of-the-month 09:00 (monthly), local."""
    today = now.astimezone(zone).date()
    if period == "weekly":
        day = today - dt.timedelta(days=today.weekday())  # Monday
        step = dt.timedelta(days=7)
        at = at_local(day, RECAP_TIME, zone)
        if at > now:
            day -= step
            at = at_local(day, RECAP_TIME, zone)
        return Slot(at, day)
    day = today.replace(day=1)
    at = at_local(day, RECAP_TIME, zone)
    if at > now:
        day = (day - dt.timedelta(days=1)).replace(day=1)
        at = at_local(day, RECAP_TIME, zone)
    return Slot(at, day)


def recap_periods(slot_day: dt.date, period: str) -> tuple[dt.date, dt.date, dt.date]:
    """(start, end) of the period a recap sent on `slot_day` covers, and the start of the period
    before it: weekly, the Monday-to-Sunday week before; monthly, the month before."""
    if period == "weekly":
        start = slot_day - dt.timedelta(days=7)
        return start, slot_day - dt.timedelta(days=1), start - dt.timedelta(days=7)
    end = slot_day - dt.timedelta(days=1)
    start = end.replace(day=1)
    before = (start - dt.timedelta(days=1)).replace(day=1)
    return start, end, before


def reactivation_targets(slot_day: dt.date) -> dict[dt.date, tuple[int, int]]:
    """Last-active dates whose users are due a reactivation message at this slot:
    {last active date: (message number, days since last active)}."""
    return {
        slot_day - dt.timedelta(days=days): (number, days)
        for days, number in REACTIVATION_DAYS.items()
    }


SlotFunc = Callable[[dt.datetime, dt.tzinfo], Slot]


def slots_by_instant(
    now: dt.datetime, slot_of: SlotFunc, zones: Iterable[str] | None = None
) -> dict[dt.datetime, tuple[dt.date, list[str]]]:
    """Group zones by their latest slot instant: {instant: (local date, zone names)}. Zones
    sharing a UTC offset share a slot, so there are a few dozen groups, not hundreds."""
    groups: dict[dt.datetime, tuple[dt.date, list[str]]] = {}
    for name in zones if zones is not None else all_zone_names():
        slot = slot_of(now, send_zone(name))
        groups.setdefault(slot.at, (slot.local_date, []))[1].append(name)
    return groups


# --- dedupe keys: one message per thing notified about --------------------------------------


def achievement_key(completion_id: str) -> str:
    return f"{NotificationType.ACHIEVEMENT_COMPLETED}:{completion_id}"


def streak_reminder_key(frequency: str, period_start: dt.date) -> str:
    return f"{NotificationType.STREAK_REMINDER}:{frequency}:{period_start.isoformat()}"


def reactivation_key(last_active: dt.date, number: int) -> str:
    return f"{NotificationType.REACTIVATION}:{last_active.isoformat()}:{number}"


def recap_key(period: str, start: dt.date) -> str:
    return f"{NotificationType.RECAP}:{period}:{start.isoformat()}"


# --- delivery ------------------------------------------------------------------------------

# Temporary failures are tried again after these delays; then the message has failed.
RETRY_DELAYS = retries.BACKOFF


def retry_at(attempts: int, now: dt.datetime) -> dt.datetime | None:
    """When to try again after `attempts` failed attempts; None when out of attempts."""
    return retries.retry_at(RETRY_DELAYS, attempts, now)
