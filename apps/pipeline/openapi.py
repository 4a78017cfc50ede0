"""OpenAPI documentation of metric events and of achievement completion (documentation only):
what introspection cannot know, the parameters and the metric value's number. The answers are
declared, once, in apps.pipeline.wire."""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiParameter

from apps.pipeline.serializers import MAX_IDEMPOTENCY_KEY

# What a client can send in a header and get back unchanged: visible ASCII, inner spaces (HTTP
# strips the outer ones).
IDEMPOTENCY_KEY_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_IDEMPOTENCY_KEY,
    "pattern": "^[!-~]([ -~]*[!-~])?$",
}
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    IDEMPOTENCY_KEY_SCHEMA,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"1 to {MAX_IDEMPOTENCY_KEY} characters. Reusing a key for the same user and metric "
        "applies nothing and answers 202 with the current state and idempotentReplayed: true."
    ),
)
BATCH_IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    IDEMPOTENCY_KEY_SCHEMA,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        f"1 to {MAX_IDEMPOTENCY_KEY} characters. Sending a batch again with a key the tenant "
        "used before stores nothing and answers 202 with the first batch's accepted count "
        "(keys are kept QUEUED_EVENTS_RETENTION_DAYS)."
    ),
)

ACHIEVEMENT_KEY = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, description="The key of an api-trigger achievement."
)


class MetricValueFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.pipeline.serializers.MetricValueField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {
            "type": "number",
            "description": "Added to the user's total; may be negative or decimal (at most "
            "±1e12, rounded to 6 decimal places).",
        }
