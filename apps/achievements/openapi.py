"""OpenAPI documentation of achievements (documentation only): the query parameters and the
badge's component name. The response shapes (Trophy's wire models, reference §3.5) render and
document themselves: UserAchievementResponse in apps.achievements.wire (event responses and
completions carry it too), the others in apps.achievements.serializers. Request bodies are the
validating serializers themselves.
"""

from typing import Any

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiParameter

from apps.core.api.params import ATTRIBUTE_FILTER_SCHEMA

# --- parameters ---------------------------------------------------------------------------

USER_ATTRIBUTES = OpenApiParameter(
    "userAttributes",
    ATTRIBUTE_FILTER_SCHEMA,
    OpenApiParameter.QUERY,
    description=(
        "Comma-separated key:value pairs of user attributes (plan:pro,region:eu): only the "
        "achievements open to a user with these values. A value may itself contain ':'."
    ),
)
INCLUDE_INCOMPLETE = OpenApiParameter(
    "includeIncomplete",
    bool,
    OpenApiParameter.QUERY,
    description=(
        "true: also the achievements the user has not completed but can (achievedAt null). "
        "Default false: completed achievements only."
    ),
)


class AchievementBadgeSerializerExtension(OpenApiSerializerExtension):
    """apps.accounts.serializers has a BadgeSerializer of its own (branding logo and app icon);
    give the achievement one its own component name."""

    target_class = "apps.achievements.wire.BadgeSerializer"

    def get_name(self, auto_schema: Any, direction: Any) -> str:
        return "AchievementBadge"
