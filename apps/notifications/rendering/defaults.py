"""The built-in default templates every tenant starts with, and the sample context that
templates are checked and previewed against."""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.templatetags.static import static

from apps.notifications.choices import NotificationType

# --- the built-in defaults ----------------------------------------------------------------


@dataclass(frozen=True)
class DefaultTemplate:
    name: str
    subject: str
    html: str
    text: str


def _reader(channel: str, type: str) -> Callable[[str], str]:
    """The files of a type's built-in template, templates/notifications/<channel>/<type><end>."""
    if type not in NotificationType.values:  # the type names a file
        raise ValueError(f"unknown notification type {type!r}")
    folder = settings.BASE_DIR / "templates" / "notifications" / channel
    return lambda end: (folder / f"{type}{end}").read_text(encoding="utf-8")


@functools.cache
def default_email_template(type: str) -> DefaultTemplate:
    """The built-in template of a notification type: what every tenant starts with."""
    read = _reader("email", type)
    return DefaultTemplate(
        name=NotificationType(type).label,
        subject=read(".subject.txt").strip(),
        html=read(".html"),
        text=read(".txt"),
    )


@dataclass(frozen=True)
class DefaultPushTemplate:
    name: str
    title: str
    body: str


@functools.cache
def default_push_template(type: str) -> DefaultPushTemplate:
    """The built-in push template of a notification type."""
    read = _reader("push", type)
    return DefaultPushTemplate(
        name=NotificationType(type).label,
        title=read(".title.txt").strip(),
        body=read(".body.txt").strip(),
    )


# A league week as the league types' templates see it (`league`): the result's fields for
# league_result, the standing's for league_at_risk (apps/notifications/leagues.py).
LEAGUE_SAMPLE: dict[str, Any] = {
    "key": "weekly",
    "name": "Weekly League",
    "tier": "Gold",
    "newTier": "Sapphire",
    "placement": 3,
    "rank": 26,
    "members": 30,
    "zone": "promotion",
    "score": Decimal("1250"),
    "left": False,
    "weekEnd": "2026-06-07T00:00:00+00:00",
    "hoursLeft": 7,
}


# Sample images that gamify serves itself (static files), so that previews never show a
# broken image nor reach out to another site.
SAMPLE_IMAGES = {
    "logo": "notifications/sample/logo.png",
    "badge": "notifications/sample/badge.png",
}


def sample_image_url(name: str, base_url: str | None = None) -> str:
    """The absolute address of a sample image: under `base_url` (the dashboard's own address,
    for a preview), else PUBLIC_URL (what an email, a test one included, can reach)."""
    base = (base_url or settings.PUBLIC_URL).rstrip("/")
    try:
        return base + static(SAMPLE_IMAGES[name])
    except ValueError:
        # No collected manifest (DEBUG off before `collectstatic`): the file's own name, which
        # the finders serve in development; a template check must not fail on an image.
        return base + settings.STATIC_URL.rstrip("/") + "/" + SAMPLE_IMAGES[name]


# Today's quests as the quest_reminder's templates see them (`quests`,
# apps/notifications/quests.py).
QUESTS_SAMPLE: dict[str, Any] = {
    "date": "2026-06-03",
    "total": 3,
    "unfinished": 2,
    "names": "Write 50 words and Keep your streak",
    "items": [
        {"key": "words-50", "name": "Write 50 words", "completed": False},
        {"key": "streak", "name": "Keep your streak", "completed": False},
        {"key": "practice", "name": "Practice twice", "completed": True},
    ],
}


def sample_context(
    *, app: dict[str, Any] | None = None, base_url: str | None = None
) -> dict[str, Any]:
    """Every template variable with plausible values: what template_check renders against
    and what the dashboard preview shows when it has no real user. `app` (a tenant's brand,
    context.app_context) replaces the sample app; images are gamify's own sample images,
    under `base_url` (see sample_image_url)."""
    site = "https://app.example.com"
    return {
        "user": {
            "id": "user-123",
            "name": "Jamie",
            "email": "jamie@example.com",
            "attributes": {"plan": "pro", "city": "Lisbon"},
        },
        "app": app
        or {
            "name": "Acme Fitness",
            "url": site,
            "logoUrl": sample_image_url("logo", base_url),
            "brandColor": "#4F46E5",
        },
        "achievement": {
            "key": "ten-workouts",
            "name": "Ten workouts",
            "description": "Finish ten workouts.",
            "badgeUrl": sample_image_url("badge", base_url),
            "completions": 1284,
            "rarity": 12.5,
        },
        "streak": {
            "length": 12,
            "frequency": "daily",
            "extended": False,
            "expires": "2026-06-01",
            "periodStart": "2026-06-01",
            "periodEnd": "2026-06-01",
        },
        "metrics": {
            "workouts": {
                "name": "Workouts",
                "units": None,
                "total": Decimal("57"),
                "change": Decimal("4"),
                "percentChange": 33.3,
            },
            "distance": {
                "name": "Distance",
                "units": "km",
                "total": Decimal("1312.500000"),
                "change": Decimal("21.3"),
                "percentChange": None,
            },
        },
        "points": {
            "xp": {
                "name": "XP",
                "total": Decimal("4250"),
                "change": Decimal("350"),
                "level": {"key": "gold", "name": "Gold"},
            },
        },
        "recap": {"periodStart": "2026-05-25", "periodEnd": "2026-05-31"},
        "reactivation": {"messageNumber": 1, "daysSinceLastActive": 3},
        "leaderboards": {
            "weekly-words": {"name": "Weekly words", "rank": 4, "value": Decimal("1250")},
        },
        "league": LEAGUE_SAMPLE,
        "quests": QUESTS_SAMPLE,
        "preferencesUrl": "https://gamify.example.com/notifications/preferences/sample",
        "unsubscribeUrl": "https://gamify.example.com/notifications/unsubscribe/sample",
    }


_sample_context = sample_context  # template_check's parameter shadows the public name
