"""Wire shapes of notification preferences and email templates."""

from typing import Any

from rest_framework import serializers

from apps.achievements.serializers import AttributeRefSerializer
from apps.core.api.fields import StrictSerializer, StringField
from apps.notifications.choices import Channel, NotificationType, TemplateStatus
from apps.notifications.models import EmailTemplate, Message
from apps.streaks.serializers import StreakPreferencesSerializer

MAX_SUBJECT = 1_000
MAX_HTML = 200_000
MAX_TEXT = 100_000


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
    priority = serializers.IntegerField(min_value=-1_000_000, max_value=1_000_000, required=False)


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
