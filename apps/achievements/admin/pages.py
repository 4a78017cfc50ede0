"""Dashboard pages for achievements (written by the admin API's services, achievement_create
and achievement_update), their completions (read-only: recorded by the pipeline, the API and
backdating). The end-user page's achievements card is the pipeline's
(apps/pipeline/dashboard_user)."""

import dataclasses
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import Count, ForeignObjectRel, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models import Value as V
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from apps.accounts.admin.base import ReadOnlyAdmin, ScopedFilter, admin_link
from apps.accounts.admin.config_pages import ConfigAdmin, Heading, Section
from apps.accounts.admin.dependents import NAMED_LIMIT, dependents
from apps.accounts.staff import selected_tenant
from apps.achievements import configuration, selectors
from apps.achievements.admin.forms import KIND_LABELS, KIND_SETTINGS, PERIODS, AchievementForm
from apps.achievements.choices import Status, Trigger
from apps.achievements.domain import TRIGGER_FIELDS, AchievementSettings, rarity
from apps.achievements.models import Achievement, AchievementCompletion, AchievementPrerequisite
from apps.core.declarations import settings_of
from apps.core.guards import Impact
from apps.core.wording import counted
from apps.streaks.selectors import streak_config
from apps.users.end_user_rows import EndUserRowsMixin, end_user_link

# The change page shows this many of the latest completions; the completion list has them all.
RECENT_COMPLETIONS = 10
# Every kind's settings, in the order the declaration states them.
KIND_FIELD_ORDER = tuple(n for n in settings_of(AchievementSettings) if n in KIND_SETTINGS)
_ROW_RELATIONS = (AchievementCompletion, AchievementPrerequisite)


def _completions_url(achievement_pk: int) -> str:
    query = urlencode({"achievement__id__exact": achievement_pk})
    return f"{reverse('admin:achievements_achievementcompletion_changelist')}?{query}"


def _amount(value: Any) -> str:
    return format(value.normalize(), "f") if value is not None else "?"


def _kind_detail(obj: Achievement) -> str:
    """One line saying what completes it, e.g. "Words ≥ 1000" or "7 days in a row"."""
    if obj.trigger == Trigger.METRIC:
        metric = obj.metric.name if obj.metric else "deleted metric"
        filtered = ", some events only" if obj.event_attributes else ""
        return f"{metric} ≥ {_amount(obj.metric_value)}{filtered}"
    if obj.trigger == Trigger.STREAK:
        period = PERIODS.get(streak_config(obj.tenant).frequency, "periods")
        return f"{obj.streak_length} {period} in a row"
    if obj.trigger == Trigger.API:
        return "completed by your backend"
    if obj.trigger == Trigger.ANNIVERSARY:
        years = obj.anniversary_years or 0
        return f"{counted(years, 'year')} after sign-up"
    count = getattr(obj, "prerequisite_count", 0)
    return f"all of {counted(count, 'achievement')}"


class KindFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(str(kind), label) for kind, label in KIND_LABELS.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(trigger=self.value()) if self.value() else queryset


class AchievementFilter(ScopedFilter):
    """The selected tenant's achievements; one query."""

    ordering = ("name",)

    def label(self, row: Achievement) -> str:
        return row.name


@dataclasses.dataclass(frozen=True)
class Summary:
    """The completions section of the change page."""

    completions: int
    users: int
    rarity: float
    completions_url: str
    latest: list[AchievementCompletion]
    backdating: selectors.BackdateProgress | None


@admin.register(Achievement)
class AchievementAdmin(ConfigAdmin):
    config_form = AchievementForm
    list_display = (
        "badge_column",
        "name",
        "key_column",
        "kind_column",
        "status_column",
        "completions_column",
        "rarity_column",
    )
    list_display_links = ("name",)
    list_filter = (KindFilter, "status")
    search_fields = ("name", "key")
    ordering = ("created", "id")

    class Media:
        css = {"all": ("achievements/achievements.css",)}
        js = ("achievements/achievement-form.js",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Achievement]:
        """Completions and composites' prerequisites are counted by the database, one subquery per
        column; rarity divides by the tenant's user count, read once per page."""
        tenant = selected_tenant(request)
        completions = (
            AchievementCompletion.objects.filter(achievement=OuterRef("pk"))
            .values("achievement")
            .annotate(n=Count("pk"))
            .values("n")
        )
        # Rarity leaves out users excluded from the rankings (apps/fairplay), as the API's.
        ranked = (
            AchievementCompletion.objects.filter(
                achievement=OuterRef("pk"), user__excluded_at__isnull=True
            )
            .values("achievement")
            .annotate(n=Count("pk"))
            .values("n")
        )
        prerequisites = (
            AchievementPrerequisite.objects.filter(composite=OuterRef("pk"))
            .values("composite")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return (
            super()
            .get_queryset(request)
            .select_related("metric", "tenant")
            .annotate(
                completion_count=Coalesce(Subquery(completions), 0),
                ranked_count=Coalesce(Subquery(ranked), 0),
                prerequisite_count=Coalesce(Subquery(prerequisites), 0),
                users_count=V(
                    selectors.rarity_users(tenant) if tenant else 0, output_field=IntegerField()
                ),
            )
        )

    def form_sections(self, obj: Achievement | None) -> list[Section]:
        kind_fields = Heading(
            "Completed when",
            description="The settings of the kind chosen above; those of other kinds are not "
            "saved.",
            classes="achievement-kind-fields",
        )
        sections: list[Section] = [
            (None, ("trigger",)),
            ("Achievement", ("name", "description", "badge_url", "status")),
            (kind_fields, KIND_FIELD_ORDER),
            ("Who can complete it", ("user_attributes",)),
        ]
        if obj is not None:
            sections.append(
                (Heading("Record", classes="collapse"), ("public_id", "created", "updated"))
            )
        return sections

    # --- writes, through the admin API's service -----------------------------------------------

    def create(self, request: HttpRequest, form: AchievementForm) -> Achievement:
        return configuration.achievement_create(form.valid_tenant, form.valid_settings)

    def update(self, request: HttpRequest, obj: Achievement, form: AchievementForm) -> None:
        configuration.achievement_update(obj.tenant, obj, form.valid_settings)

    def remove(self, request: HttpRequest, obj: Achievement) -> None:
        configuration.achievement_delete(obj.tenant, obj, confirm=self.typed_key(request, obj))

    def deletion_impact(self, obj: Achievement) -> Impact:
        return selectors.achievement_deletion_impact(obj.tenant, obj)

    def deletion_alternative(self, obj: Achievement) -> str:
        return format_html(
            'Instead, <a href="{}#id_status">lock it</a>: users who completed it keep it and '
            "still see it; nobody new completes it.",
            self.url("change", obj),
        )

    @admin.action(permissions=["delete"], description="Delete selected %(verbose_name_plural)s")
    def delete_selected(self, request: HttpRequest, queryset: Any) -> HttpResponse | None:
        # A composite goes before its prerequisites: the service refuses to delete an
        # achievement that another one still requires.
        ordered: Any = _composites_first(list(queryset))  # the base lists what it is given
        return super().delete_selected(request, ordered)

    def deletion_counts(self, objs: list[Any]) -> dict[str, int]:
        """Completions and the configuration that names the achievement (points triggers), from
        the relations themselves: points sits above achievements and cannot be imported here.
        Links between composites and prerequisites are the `protected` list instead."""
        return {
            f"{dependent.label} ({dependent.effect})": dependent.count
            for dependent in dependents(objs)
            if dependent.label != AchievementPrerequisite._meta.verbose_name_plural
        }

    def deletion_listed(self, objs: list[Any]) -> list[Any]:
        return list(_configuration_going_with(objs))

    def deletion_protected(self, objs: list[Any]) -> list[Any]:
        # Composites that require one of them (and are not deleted with it) block the delete.
        return [
            format_html("Achievement that requires it: {}", admin_link(composite))
            for composite in Achievement.objects.filter(prerequisites__in=objs)
            .exclude(pk__in=[o.pk for o in objs])
            .distinct()
            .order_by("name")
        ]

    # --- the change page's completions section -------------------------------------------------

    def page_context(self, request: HttpRequest, obj: Any) -> dict[str, Any]:
        if obj is None:
            return {"kind_fields": TRIGGER_FIELDS}
        return {
            "kind_fields": TRIGGER_FIELDS,
            "summary": _summary(obj),
            "recent_limit": RECENT_COMPLETIONS,
        }

    # --- columns -------------------------------------------------------------------------------

    @admin.display(description="Badge")
    def badge_column(self, obj: Achievement) -> SafeString:
        if not obj.badge_url:
            return mark_safe('<span class="achievement-thumb achievement-thumb-none"></span>')
        return format_html(
            '<img class="achievement-thumb" src="{}" alt="" loading="lazy">', obj.badge_url
        )

    @admin.display(description="Key", ordering="key")
    def key_column(self, obj: Achievement) -> SafeString | str:
        return format_html("<code>{}</code>", obj.key) if obj.key else "-"

    @admin.display(description="Kind", ordering="trigger")
    def kind_column(self, obj: Achievement) -> SafeString:
        return format_html(
            '{}<div class="achievement-quiet">{}</div>',
            KIND_LABELS[Trigger(obj.trigger)],
            _kind_detail(obj),
        )

    @admin.display(description="Status", ordering="status")
    def status_column(self, obj: Achievement) -> SafeString:
        return status_badge(obj.status)

    @admin.display(description="Completions", ordering="completion_count")
    def completions_column(self, obj: Any) -> SafeString:
        return format_html('<a href="{}">{}</a>', _completions_url(obj.pk), obj.completion_count)

    @admin.display(description="Rarity", ordering="ranked_count")
    def rarity_column(self, obj: Any) -> str:
        return f"{rarity(obj.ranked_count, obj.users_count)}%"


def status_badge(status: str) -> SafeString:
    return format_html(
        '<span class="achievement-status achievement-status-{}">{}</span>',
        status,
        Status(status).label,
    )


def _summary(obj: Any) -> Summary:
    users = obj.users_count
    completions = obj.completion_count
    return Summary(
        completions=completions,
        users=users,
        rarity=rarity(obj.ranked_count, users),
        completions_url=_completions_url(obj.pk),
        latest=selectors.achievement_completions_latest(obj.tenant, obj.pk, RECENT_COMPLETIONS),
        backdating=selectors.achievement_backdate_progress(
            obj.tenant, obj.pk, timezone.now().date()
        ),
    )


def _composites_first(objs: list[Achievement]) -> list[Achievement]:
    """An order in which no achievement is deleted while another one in the list requires it."""
    required = set(
        AchievementPrerequisite.objects.filter(
            composite__in=objs, prerequisite__in=objs
        ).values_list("composite_id", "prerequisite_id")
    )
    ordered: list[Achievement] = []
    remaining = list(objs)
    while remaining:
        left = {o.pk for o in remaining}
        ready = [o for o in remaining if not any(c in left and p == o.pk for c, p in required)]
        if not ready:  # a cycle, which the service never lets happen: the service decides
            ready = remaining
        ordered += ready
        remaining = [o for o in remaining if o not in ready]
    return ordered


def _configuration_going_with(objs: list[Achievement]) -> list[SafeString]:
    """Configuration rows of other apps that name the achievements (points triggers), linked
    one by one when they are few: the base names only rows with a name or a key."""
    rows = []
    for relation in Achievement._meta.get_fields(include_hidden=True):
        if not isinstance(relation, ForeignObjectRel) or relation.many_to_many:
            continue
        model: Any = relation.related_model
        if model in _ROW_RELATIONS or {"name", "key"} & {f.name for f in model._meta.get_fields()}:
            continue
        found = list(model._base_manager.filter(**{f"{relation.field.name}__in": objs}))
        if len(found) > NAMED_LIMIT:
            continue
        kind = str(model._meta.verbose_name).capitalize()
        rows += [format_html("{} (deleted with it): {}", kind, admin_link(row)) for row in found]
    return rows


@admin.register(AchievementCompletion)
class AchievementCompletionAdmin(EndUserRowsMixin, ReadOnlyAdmin):
    """Recorded by the pipeline, the completion endpoint and backdating: shown, never written."""

    list_display = ("completed_at", "user_column", "achievement_column", "backdated")
    list_display_links = ("completed_at",)
    list_select_related = ("user", "achievement")
    list_filter = (("achievement", AchievementFilter), "backdated")
    fields = ("achievement_column", "user_column", "completed_at", "backdated", "public_id")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[AchievementCompletion]:
        return super().get_queryset(request).select_related("user", "achievement")

    @admin.display(description="User", ordering="user__external_id")
    def user_column(self, obj: AchievementCompletion) -> SafeString:
        return end_user_link(obj.user)

    @admin.display(description="Achievement", ordering="achievement__name")
    def achievement_column(self, obj: AchievementCompletion) -> SafeString:
        return admin_link(obj.achievement)
