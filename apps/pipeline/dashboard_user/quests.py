"""The quests card of the end-user page: the quests the user has now (their pools' choice and
everyone's, as the application API shows them), with the progress in each goal, and their
latest past periods. Two queries, whatever the history."""

from dataclasses import dataclass

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone

from apps.accounts.staff import selected_tenant
from apps.quests.models import QuestProgress
from apps.quests.selectors import (
    Assigned,
    Names,
    names,
    progress_current,
    quests_config,
    user_quest_rows,
    user_quests_at,
)
from apps.users.end_user_page import EndUserCard
from apps.users.models import EndUser

RECENT_PERIODS = 10


@dataclass(frozen=True)
class QuestRow:
    pk: int
    key: str
    name: str
    cadence: str
    pool: str | None
    goals: list[str]  # "12 / 50 words", ...
    completed_at: object
    period_end: object


def _goal_texts(
    stored: tuple[dict[str, object], ...], states: list[dict[str, object]], names: Names
) -> list[str]:
    """Each goal as "12 / 50 words", "1 / 3 active days", "30 / 100 xp points"."""
    padded = states + [{}] * (len(stored) - len(states))
    texts = []
    for goal, state in zip(stored, padded, strict=False):
        kind = str(goal["kind"])
        what = {
            "metric": names.keys.get(str(goal.get("metric_id")), "metric"),
            "points": f"{names.keys.get(str(goal.get('points_system_id')), '')} points".strip(),
            "achievement": "achievement",
            "streak": "streak extensions",
        }.get(kind, kind.replace("_", " "))
        texts.append(f"{state.get('value', 0)} / {goal.get('target')} {what}")
    return texts


def _row(assigned: Assigned, row: QuestProgress | None, names: Names) -> QuestRow:
    quest = assigned.quest
    return QuestRow(
        pk=quest.pk,
        key=quest.key,
        name=quest.name,
        cadence=quest.cadence,
        pool=assigned.pool_key,
        goals=_goal_texts(quest.goals_stored, row.goals if row else [], names),
        completed_at=row.completed_at if row else None,
        period_end=assigned.period.end,
    )


def quest_cards(request: HttpRequest, user: EndUser) -> list[EndUserCard]:
    """The "Quests" card (none when the tenant has no quest)."""
    tenant = selected_tenant(request)
    if tenant is None or tenant.pk != user.tenant_id:  # the page's scoped queryset rules it out
        return []
    config = quests_config(tenant)
    if not config.quests:
        return []
    now = timezone.now()
    assigned = user_quests_at(
        tenant,
        config,
        user_id=user.external_id,
        tz_name=user.tz,
        attributes=user.attributes or {},
        now=now,
    )
    rows = progress_current(user, assigned)
    known = names(tenant)
    current = [_row(a, rows.get(a.quest.pk), known) for a in assigned]
    past: list[QuestProgress] = [
        r for r in user_quest_rows(tenant, user, RECENT_PERIODS) if r.period_end <= now
    ]
    context = {"end_user": user, "current": current, "past": past, "recent": RECENT_PERIODS}
    body = render_to_string("admin/users/enduser/cards/quests.html", context, request)
    return [EndUserCard(slug="quests", title="Quests", body=body, wide=True)]
