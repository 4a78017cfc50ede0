"""The quest pages: the list of quests with their last 30 days in numbers (completion rate,
average time to complete, reward points paid), a quest's page (its settings with its goals as
rows, written through quest_create and quest_update as the admin API writes) with its last
periods in numbers, and the pools with their quests and weights as rows. A quest with history
cannot be deleted (it is archived instead)."""

import datetime as dt
from typing import Any

from django.contrib import admin
from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Q, QuerySet, Sum
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section
from apps.core.wording import counted
from apps.quests import configuration, selectors
from apps.quests.admin.forms import QuestForm, QuestPoolForm
from apps.quests.models import Quest, QuestPool, QuestProgress
from apps.quests.selectors import QuestStats

# The list's figures: the periods that began in the last 30 days.
RECENT_DAYS = 30
PERIODS_SHOWN = 10


def duration_text(seconds: int | None) -> str:
    """A median time to complete as staff read it: "42 min", "3 h 5 min", "2 d 4 h"."""
    if seconds is None:
        return "-"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def rate_text(stats: QuestStats) -> str:
    return "-" if stats.rate is None else f"{stats.rate:.0%}"


@admin.register(Quest)
class QuestAdmin(ConfigAdmin):
    config_form = QuestForm
    list_display = (
        "name",
        "key",
        "status_column",
        "cadence",
        "reward_column",
        "started_column",
        "rate_column",
        "time_column",
        "paid_column",
    )
    list_display_links = ("name",)
    list_select_related = ("tenant", "reward_points_system")
    list_filter = ("status", "cadence")
    search_fields = ("key", "name")
    ordering = ("key",)

    class Media:
        css = {"all": ("quests/quests.css",)}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Quest]:
        # Replaces list_select_related on the list (Django skips it once a queryset selects);
        # the list's figures of the last 30 days come with the quests (one query).
        since = timezone.now().date() - dt.timedelta(days=RECENT_DAYS)
        recent = Q(progress__period_first__gte=since)
        done = recent & Q(progress__completed_at__isnull=False)
        return (
            super()
            .get_queryset(request)
            .select_related(*self.list_select_related)
            .annotate(
                recent_started=Count("progress", filter=recent),
                recent_completed=Count("progress", filter=done),
                recent_paid=Sum("progress__reward_points", filter=done),
                recent_time=Avg(
                    ExpressionWrapper(
                        F("progress__completed_at") - F("progress__started_at"),
                        output_field=DurationField(),
                    ),
                    filter=done,
                ),
            )
        )

    def form_sections(self, obj: Quest | None) -> list[Section]:
        period = Heading(
            "The period",
            description="Daily, weekly and monthly quests renew at each user's own local "
            "midnight; a once quest runs from its start date to its end date, in each user's "
            "calendar. A quest activated mid-period counts from its activation; an archived one "
            "stops counting at once.",
        )
        return [
            (None, ["name", "key", "status", "description", "badge_url"]),
            (period, ["cadence", ("starts_on", "ends_on")]),
            (
                Heading("Goals", description="All must be met within one period."),
                ["goals"],
            ),
            (
                "Reward",
                ["reward_points", "reward_points_system_id", "reward_achievement_id"],
            ),
            ("Who gets it", ["user_attributes"]),
        ]

    # --- writes --------------------------------------------------------------------------------

    def create(self, request: HttpRequest, form: QuestForm) -> Quest:
        return configuration.quest_create(form.valid_tenant, form.valid_settings)

    def update(self, request: HttpRequest, obj: Quest, form: QuestForm) -> None:
        configuration.quest_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: Quest) -> None:
        configuration.quest_delete(obj.tenant, obj)

    def deletion_protected(self, objs: list[Any]) -> list[Any]:
        return [
            format_html("{}: users have made progress in it (archive it instead)", obj)
            for obj in objs
            if selectors.quest_has_history(obj)
        ]

    # --- list columns --------------------------------------------------------------------------

    @admin.display(description="Status", ordering="status")
    def status_column(self, obj: Quest) -> str:
        return obj.status

    @admin.display(description="Reward")
    def reward_column(self, obj: Quest) -> str:
        parts = []
        if obj.reward_points and obj.reward_points_system is not None:
            parts.append(f"{obj.reward_points} {obj.reward_points_system.key}")
        if obj.reward_achievement_id:
            parts.append("an achievement")
        return " and ".join(parts) or "-"

    @admin.display(description=f"Users, {RECENT_DAYS} d")
    def started_column(self, obj: Quest) -> int:
        return int(getattr(obj, "recent_started", 0) or 0)

    @admin.display(description="Completed")
    def rate_column(self, obj: Quest) -> str:
        started = int(getattr(obj, "recent_started", 0) or 0)
        completed = int(getattr(obj, "recent_completed", 0) or 0)
        return f"{completed / started:.0%}" if started else "-"

    @admin.display(description="Avg. time")
    def time_column(self, obj: Quest) -> str:
        average = getattr(obj, "recent_time", None)
        return duration_text(int(average.total_seconds()) if average is not None else None)

    @admin.display(description="Points paid")
    def paid_column(self, obj: Quest) -> int:
        return int(getattr(obj, "recent_paid", 0) or 0)

    # --- the quest's page ----------------------------------------------------------------------

    def page_context(self, request: HttpRequest, obj: Quest | None) -> dict[str, Any]:
        if obj is None:
            return {}
        periods = selectors.quest_period_stats(obj.tenant, obj.pk, PERIODS_SHOWN)
        return {
            "quest_periods": [
                (
                    first,
                    last,
                    stats,
                    rate_text(stats),
                    duration_text(stats.median_seconds),
                )
                for first, last, stats in periods
            ],
            "periods_shown": PERIODS_SHOWN,
            "quest_users": counted(
                QuestProgress.objects.filter(quest=obj).values("user").distinct().count(),
                "user",
            ),
        }


@admin.register(QuestPool)
class QuestPoolAdmin(ConfigAdmin):
    config_form = QuestPoolForm
    list_display = ("name", "key", "status", "cadence", "size", "quests_column")
    list_display_links = ("name",)
    list_filter = ("status", "cadence")
    search_fields = ("key", "name")
    ordering = ("key",)

    def form_sections(self, obj: QuestPool | None) -> list[Section]:
        choice = Heading(
            "The choice",
            description="Each user gets this many of the pool's quests per period, drawn by "
            "weight from a seed of the tenant, the pool, the user and the period: every server "
            "agrees without storing it. A set avoids the previous period's quests when the pool "
            "holds enough; a quest added or activated mid-period joins from each user's next "
            "period, so nobody's current set changes.",
        )
        return [
            (None, ["name", "key", "status"]),
            (choice, ["cadence", "size", "quests"]),
        ]

    def create(self, request: HttpRequest, form: QuestPoolForm) -> QuestPool:
        return configuration.pool_create(form.valid_tenant, form.valid_settings)

    def update(self, request: HttpRequest, obj: QuestPool, form: QuestPoolForm) -> None:
        configuration.pool_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: QuestPool) -> None:
        configuration.pool_delete(obj.tenant, obj)

    @admin.display(description="Quests")
    def quests_column(self, obj: QuestPool) -> SafeString:
        return format_html("{}", counted(len(obj.members), "quest"))
