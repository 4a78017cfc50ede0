"""Input and response shapes of fair play's admin routes (/admin/ext/v1/users/{userId}/
exclusion), each `Shape` with the function that renders it below it."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.shapes import Shape, renders
from apps.fairplay.services import MAX_REASON
from apps.users.models import EndUser


class ExclusionSerializer(StrictSerializer):
    reason = StringField(
        max_length=MAX_REASON,
        help_text=f"Why the user is excluded (1 to {MAX_REASON} characters), kept on the "
        "exclusion with who made it.",
    )


class ExclusionResponse(Shape):
    # A user's exclusion from the rankings.
    userId = serializers.CharField()
    excluded = serializers.BooleanField(help_text="Whether the user is excluded now.")
    excludedAt = serializers.DateTimeField(
        allow_null=True, help_text="When the exclusion was made (null: not excluded)."
    )
    reason = serializers.CharField(allow_null=True, help_text="Why (null: not excluded).")
    excludedBy = serializers.CharField(
        allow_null=True,
        help_text="Who made it: `api_key:<key name>` or `staff:<username>` (null: not excluded).",
    )
    changed = serializers.BooleanField(
        help_text="Whether this request changed anything (false: the user already was, or was "
        "not, excluded)."
    )


@renders(ExclusionResponse)
def exclusion_response_render(user: EndUser, changed: bool) -> dict[str, Any]:
    excluded = user.excluded_at is not None
    return {
        "userId": user.external_id,
        "excluded": excluded,
        "excludedAt": user.excluded_at,
        "reason": user.excluded_reason if excluded else None,
        "excludedBy": user.excluded_by if excluded else None,
        "changed": changed,
    }
