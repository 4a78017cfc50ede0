"""OpenAPI documentation of preferences, templates and push channels (documentation only)."""

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.notifications.choices import (
    Channel,
    NotificationType,
    PushChannelStatus,
    PushKind,
    TemplateStatus,
)
from apps.streaks.wire import StreakPreferences
from apps.users.wire import AttributeRef


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


class PushChannel(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.ChoiceField(choices=PushKind.choices)
    status = serializers.ChoiceField(choices=PushChannelStatus.choices)
    teamId = serializers.CharField(required=False, help_text="APNs only.")
    keyId = serializers.CharField(required=False, help_text="APNs only.")
    bundleId = serializers.CharField(required=False, help_text="APNs only.")
    sandbox = serializers.BooleanField(required=False, help_text="APNs only.")
    projectId = serializers.CharField(required=False, help_text="FCM only, from serviceAccount.")
    hasCredentials = serializers.BooleanField(
        help_text="Credentials (signingKey, serviceAccount, accessToken) are write-only."
    )
    flagged = serializers.BooleanField(
        help_text="Most device tokens of a batch were refused as not belonging to this app: "
        "pruning stops until the flag is cleared (PATCH flagged: false)."
    )
    flagReason = serializers.CharField(allow_null=True)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class PushTemplate(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=NotificationType.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TemplateStatus.choices)
    title = serializers.CharField(help_text="Jinja2 syntax, rendered in a sandbox.")
    body = serializers.CharField()
    url = serializers.CharField(allow_null=True, help_text="A deep link, sent in the data.")
    # A field named like Serializer.data: DRF\'s metaclass moves it into the fields.
    data = serializers.DictField(  # type: ignore[assignment]  # a field: DRF's metaclass moves it
        child=serializers.CharField(), help_text="Values are templates."
    )
    userAttributes = AttributeRef(many=True)
    priority = serializers.IntegerField()
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class PushPreview(serializers.Serializer):
    title = serializers.CharField()
    body = serializers.CharField()
    url = serializers.CharField(allow_null=True)
    # A field named like Serializer.data: DRF\'s metaclass moves it into the fields.
    data = serializers.DictField(child=serializers.CharField())  # type: ignore[assignment]
