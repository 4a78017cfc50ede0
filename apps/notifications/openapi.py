"""OpenAPI documentation of preferences and email templates (documentation only)."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.achievements.openapi import AttributeRef
from apps.notifications.choices import Channel, NotificationType, TemplateStatus
from apps.streaks.openapi import StreakPreferences


def _channels() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=Channel.choices),
        required=False,
        help_text="Channels for this type; [] disables it. Absent: never set by the user.",
    )


class NotificationPreferences(serializers.Serializer):
    achievement_completed = _channels()
    recap = _channels()
    reactivation = _channels()
    streak_reminder = _channels()


class UserPreferencesResponse(serializers.Serializer):
    notifications = NotificationPreferences()
    streak = StreakPreferences(
        required=False,
        help_text="Present when streak customization is enabled or the user turned streaks off.",
    )


class EmailTemplate(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=NotificationType.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TemplateStatus.choices)
    subject = serializers.CharField(help_text="Jinja2 syntax, rendered in a sandbox.")
    html = serializers.CharField(help_text="Jinja2 syntax, HTML-escaped, CSS inlined on send.")
    text = serializers.CharField(
        allow_null=True, help_text="The plain-text part; null: derived from the rendered HTML."
    )
    userAttributes = AttributeRef(many=True, help_text="All must match the user's attributes.")
    priority = serializers.IntegerField(
        help_text="With several active templates of a type, the highest matching one wins."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class EmailPreview(serializers.Serializer):
    subject = serializers.CharField()
    html = serializers.CharField()
    text = serializers.CharField()


TEMPLATE_ID = OpenApiParameter(
    "object_id", str, OpenApiParameter.PATH, description="The email template's id."
)
