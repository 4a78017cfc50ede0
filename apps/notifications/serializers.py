"""Wire shapes of notification preferences, email and push templates, and push channels."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.notifications import domain
from apps.notifications.choices import (
    Channel,
    NotificationType,
    PushChannelStatus,
    PushKind,
    TemplateStatus,
)
from apps.notifications.models import EmailTemplate, Message, PushChannel, PushTemplate
from apps.notifications.push.credentials import MAX_LENGTHS
from apps.streaks.wire import StreakPreferencesSerializer
from apps.users.wire import AttributeRefSerializer

MAX_SUBJECT = domain.MAX_TEMPLATE_SUBJECT
MAX_HTML = domain.MAX_TEMPLATE_HTML
MAX_TEXT = domain.MAX_TEMPLATE_TEXT
_PRIORITY = domain.MAX_TEMPLATE_PRIORITY


def _channels() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=Channel.choices), required=False, max_length=2
    )


class NotificationPreferencesSerializer(StrictSerializer):
    achievement_completed = _channels()
    recap = _channels()
    reactivation = _channels()
    streak_reminder = _channels()


class PreferencesUpdateSerializer(StrictSerializer):
    notifications = NotificationPreferencesSerializer(required=False)
    streak = StreakPreferencesSerializer(required=False)

    @staticmethod
    def streak_kwargs(data: Mapping[str, Any]) -> dict[str, Any]:
        """streak_preferences_update's arguments, from the body's streak part."""
        return StreakPreferencesSerializer.service_kwargs(data["streak"])


class _TemplateFields(StrictSerializer):
    name = StringField(max_length=255)
    status = serializers.ChoiceField(choices=TemplateStatus.choices, required=False)
    subject = StringField(max_length=MAX_SUBJECT, required=False)
    html = StringField(max_length=MAX_HTML, required=False, trim_whitespace=False)
    text = StringField(
        max_length=MAX_TEXT,
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
    )
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    priority = serializers.IntegerField(min_value=-_PRIORITY, max_value=_PRIORITY, required=False)


class EmailTemplateCreateSerializer(_TemplateFields):
    type = serializers.ChoiceField(choices=NotificationType.choices)


class EmailTemplateUpdateSerializer(_TemplateFields):
    id = serializers.UUIDField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False


class PreviewSerializer(StrictSerializer):
    userId = StringField(max_length=255)


def email_template_render(template: EmailTemplate) -> dict[str, Any]:
    return {
        "id": str(template.public_id),
        "type": template.type,
        "name": template.name,
        "status": template.status,
        "subject": template.subject,
        "html": template.html,
        "text": template.text or None,
        "userAttributes": list(template.user_attributes),
        "priority": template.priority,
        "created": template.created,
        "updated": template.updated,
    }


def message_render(message: Message) -> dict[str, Any]:
    """A delivery-log row (dashboard and end-user page)."""
    return {
        "id": str(message.public_id),
        "type": message.type,
        "channel": message.channel,
        "status": message.status,
        "sendAt": message.send_at,
        "sentAt": message.sent_at,
        "attempts": message.attempts,
        "recipient": message.recipient,
        "subject": message.subject,
        "error": message.error or None,
    }


# --- push ------------------------------------------------------------------------------------


class _ChannelFields(StrictSerializer):
    status = serializers.ChoiceField(choices=PushChannelStatus.choices, required=False)
    # APNs
    teamId = StringField(max_length=MAX_LENGTHS["teamId"], required=False)
    keyId = StringField(max_length=MAX_LENGTHS["keyId"], required=False)
    bundleId = StringField(max_length=MAX_LENGTHS["bundleId"], required=False)
    signingKey = StringField(
        max_length=MAX_LENGTHS["signingKey"], required=False, trim_whitespace=False
    )
    sandbox = serializers.BooleanField(required=False)
    # FCM: the service-account JSON object, as Google's console downloads it
    serviceAccount = serializers.DictField(required=False)
    # Expo
    accessToken = StringField(
        max_length=MAX_LENGTHS["accessToken"], required=False, allow_null=True, allow_blank=True
    )

    def validate_serviceAccount(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > MAX_LENGTHS["serviceAccount"]:
            raise serializers.ValidationError("is too large")
        return value


class PushChannelCreateSerializer(_ChannelFields):
    kind = serializers.ChoiceField(choices=PushKind.choices)


class PushChannelUpdateSerializer(_ChannelFields):
    id = serializers.UUIDField()
    flagged = serializers.BooleanField(required=False, help_text="false clears the bad-token flag.")


def push_channel_render(channel: PushChannel) -> dict[str, Any]:
    """Never the secrets: they are write-only."""
    settings = channel.settings
    body: dict[str, Any] = {
        "id": str(channel.public_id),
        "kind": channel.kind,
        "status": channel.status,
    }
    if channel.kind == PushKind.APNS:
        body.update(
            teamId=settings.get("teamId"),
            keyId=settings.get("keyId"),
            bundleId=settings.get("bundleId"),
            sandbox=bool(settings.get("sandbox")),
        )
    elif channel.kind == PushKind.FCM:
        body["projectId"] = settings.get("projectId")
    body.update(
        hasCredentials=bool(channel.credentials),
        flagged=channel.flagged_at is not None,
        flagReason=channel.flag_reason or None,
        created=channel.created,
        updated=channel.updated,
    )
    return body


class _PushTemplateFields(StrictSerializer):
    name = StringField(max_length=255)
    status = serializers.ChoiceField(choices=TemplateStatus.choices, required=False)
    title = StringField(max_length=MAX_SUBJECT, required=False)
    body = StringField(max_length=MAX_TEXT, required=False, trim_whitespace=False)
    url = StringField(
        max_length=domain.MAX_TEMPLATE_URL, required=False, allow_blank=True, allow_null=True
    )
    # A field named like Serializer.data: DRF\'s metaclass moves it into the fields.
    data = serializers.DictField(  # type: ignore[assignment]  # a field, moved by DRF's metaclass
        child=StringField(max_length=MAX_TEXT, allow_blank=True), required=False, allow_null=True
    )
    userAttributes = AttributeRefSerializer(many=True, required=False, allow_null=True)
    priority = serializers.IntegerField(min_value=-_PRIORITY, max_value=_PRIORITY, required=False)


class PushTemplateCreateSerializer(_PushTemplateFields):
    type = serializers.ChoiceField(choices=NotificationType.choices)


class PushTemplateUpdateSerializer(_PushTemplateFields):
    id = serializers.UUIDField()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False


def push_template_render(template: PushTemplate) -> dict[str, Any]:
    return {
        "id": str(template.public_id),
        "type": template.type,
        "name": template.name,
        "status": template.status,
        "title": template.title,
        "body": template.body,
        "url": template.url or None,
        "data": dict(template.data),
        "userAttributes": list(template.user_attributes),
        "priority": template.priority,
        "created": template.created,
        "updated": template.updated,
    }
