"""The end-user dashboard page's extension points. The page is the users app's
(apps/users/admin.py renders it), but most of what it shows belongs to the apps above users,
which it cannot import: they register their cards, sections and views here instead
(apps/pipeline/dashboard_user/, apps/metrics/admin.py)."""

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import URLPattern
from django.utils.safestring import SafeString

from apps.accounts.models import Tenant
from apps.users.models import EndUser

# Read-only sections of the end-user page contributed by higher apps (metric totals, recent
# events, later streaks and points): users sits below them and cannot import their models, so
# they register a callable taking the EndUser, decorated with @admin.display for its label.
END_USER_SECTIONS: list[Callable[[EndUser], Any]] = []


def end_user_section(section: Callable[[EndUser], Any]) -> Callable[[EndUser], Any]:
    END_USER_SECTIONS.append(section)
    return section


@dataclass(frozen=True)
class EndUserCard:
    """One card of the end-user page, rendered by the app that contributes it."""

    slug: str  # the card's anchor on the page: #user-<slug>
    title: str
    body: SafeString
    wide: bool = False  # spans the page's two columns


# The end-user page as higher apps compose it (apps/pipeline/dashboard_user: streak calendar,
# points, achievements, leaderboards, notifications, with their actions). Each provider takes
# the request (for permissions and the selected tenant) and the user, and returns its cards.
END_USER_CARDS: list[Callable[[HttpRequest, EndUser], list[EndUserCard]]] = []
# Views beside the page (the actions' confirmation pages): each provider takes EndUserAdmin and
# returns URL patterns, included before Django's own so its "<object_id>/" catch-all does not
# swallow them.
END_USER_URLS: list[Callable[[admin.ModelAdmin], list[URLPattern]]] = []


@dataclass(frozen=True)
class EndUserColumn:
    """A column of the end-user list contributed by a higher app (level, streak): `load` reads
    its cells for a page of the tenant's users at once, in a fixed number of queries."""

    title: str
    load: Callable[[Tenant, Sequence[EndUser], dt.datetime], dict[int, str]]


END_USER_COLUMNS: list[EndUserColumn] = []

# The moment of each user's latest event, for "Last active" on the end-user list and page. The
# users app records the first event of each of a user's days only (user_activity_mark: one
# write a day on the event path); the metrics app knows every event's moment and registers its
# read here (apps/metrics/admin.py). Each provider takes a page of users, in one query.
END_USER_LATEST_EVENT: list[Callable[[Sequence[EndUser]], dict[int, dt.datetime]]] = []


def last_active_of(users: Sequence[EndUser]) -> dict[int, dt.datetime | None]:
    """Each user's latest event: the latest the providers know, never before the recorded
    first event of their last active day."""
    latest: dict[int, dt.datetime] = {}
    for provider in END_USER_LATEST_EVENT:
        for pk, moment in provider(users).items():
            latest[pk] = max(moment, latest.get(pk, moment))
    return {
        user.pk: max(
            (m for m in (user.last_active_at, latest.get(user.pk)) if m is not None),
            default=None,
        )
        for user in users
    }
