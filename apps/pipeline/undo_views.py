"""POST /admin/ext/v1/events/undo: undoing events (apps/pipeline/undo.py)."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.achievements.models import Achievement
from apps.core.api.views import AdminApi
from apps.core.bulk import validated
from apps.core.openapi import ADMIN_WRITE_ERRORS
from apps.metrics.models import Metric
from apps.pipeline import undo
from apps.pipeline.undo_serializers import (
    UndoRequestSerializer,
    UndoResult,
    undo_result_render,
)

TAGS = ["undo"]


class EventsUndoApi(AdminApi):
    @extend_schema(
        operation_id="ext_admin_events_undo",
        summary="Undo events",
        description="Takes recorded events back and sets right what they did, for each user "
        "in one transaction: metric totals and daily rollups, metric points triggers (by "
        "reversing awards, never deletions) with totals and levels, metric achievements the "
        "remaining events no longer reach (with `revokeAchievements`), the user's entries in "
        "the current runs of metric and points leaderboards and their current league weeks. "
        "Streaks, time-triggered points, finished runs and weeks are left as they are. Name "
        "the events by id, by idempotency key, or as all of a user's events in a time range "
        "(at most 1000). The events stay, marked: undoing again does nothing (an issue says "
        "so) and a retry of an undone event's idempotency key counts nothing. Unknown events "
        "are issues, per item.",
        tags=TAGS,
        request=UndoRequestSerializer,
        responses={200: UndoResult, **ADMIN_WRITE_ERRORS},
    )
    def post(self, request: Request) -> Response:
        tenant = self.scope(request).tenant
        data = validated(UndoRequestSerializer, request.data)
        if "eventIds" in data:
            targets = undo.undo_targets_by_id(tenant, [str(i) for i in data["eventIds"]])
        elif "idempotencyKeys" in data:
            targets = undo.undo_targets_by_key(tenant, data["idempotencyKeys"])
        else:
            targets = undo.undo_targets_in_range(
                tenant, data["userId"], data["since"], data["until"], data.get("metric")
            )
        undos = undo.events_undo(
            tenant,
            targets.events,
            reason=data["reason"],
            revoke_achievements=data["revokeAchievements"],
            now=timezone.now(),
        )
        done = [e for u in undos for e in u.events]
        users = {u.user.pk: u.user for u in undos}
        for e in done:
            e.user = users[e.user_id]
        metric_keys = dict(Metric.objects.filter(tenant=tenant).values_list("pk", "key"))
        revoked = {pk for u in undos for pk in u.revoked}
        achievement_ids = {
            pk: str(public_id)
            for pk, public_id in Achievement.objects.filter(pk__in=revoked).values_list(
                "pk", "public_id"
            )
        }
        body = undo_result_render(done, undos, targets.issues.items, metric_keys, achievement_ids)
        return Response(body)
