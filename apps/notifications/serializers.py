"""Wire shapes of notification preferences, email and push templates, and push channels: input
serializers, and the response shapes that render and document themselves
(apps/core/api/shapes.py)."""

from collections.abc import Callable, Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.shapes import OMIT, Getter, Shape, out
from apps.notifications import domain
from apps.notifications.choices import (
    Channel,
    NotificationType,
    PushChannelStatus,
    PushKind,
    TemplateStatus,
)
from apps.notifications.models import EmailTemplate, PushTemplate
from apps.notifications.push.credentials import MAX_LENGTHS
from apps.streaks.wire import StreakPreferences, StreakPreferencesSerializer
from apps.users.wire import AttributeRef, AttributeRefSerializer

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


# --- push ------------------------------------------------------------------------------------


class _ChannelFields(StrictSerializer):
    status = serializers.ChoiceField(choices=PushChannelStatus.choices, required=False)
    # APNs
    teamId = StringField(max_length=MAX_LENGTHS["team_id"], required=False)
    keyId = StringField(max_length=MAX_LENGTHS["key_id"], required=False)
    bundleId = StringField(max_length=MAX_LENGTHS["bundle_id"], required=False)
    signingKey = StringField(
        max_length=MAX_LENGTHS["signing_key"], required=False, trim_whitespace=False
    )
    sandbox = serializers.BooleanField(required=False)
    # FCM: the service-account JSON object, as Google's console downloads it
    serviceAccount = serializers.DictField(required=False)
    # Expo
    accessToken = StringField(
        max_length=MAX_LENGTHS["access_token"], required=False, allow_null=True, allow_blank=True
    )

    def validate_serviceAccount(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > MAX_LENGTHS["service_account"]:
            raise serializers.ValidationError("is too large")
        return value


class PushChannelCreateSerializer(_ChannelFields):
    kind = serializers.ChoiceField(choices=PushKind.choices)


class PushChannelUpdateSerializer(_ChannelFields):
    id = serializers.UUIDField()
    flagged = serializers.BooleanField(required=False, help_text="false clears the bad-token flag.")


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


# --- responses: each shape renders (Shape.render) and documents itself ------------------
# Component names drop the Serializer suffix (EmailTemplate, PushChannel, PushTemplate), which
# keeps the classes apart from the models of the same name.


def _channels_documented() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=Channel.choices),
        required=False,
        help_text="Channels for this type; [] disables it. Absent: never set by the user.",
    )


class NotificationPreferences(serializers.Serializer):
    # The stored preferences as they are (the value of UserPreferencesResponse.notifications).

    achievement_completed = _channels_documented()
    recap = _channels_documented()
    reactivation = _channels_documented()
    streak_reminder = _channels_documented()


class UserPreferencesResponse(Shape):
    # Renders the EndUser with, as context, its streak preferences (None when there are none).

    notifications = out(
        NotificationPreferences(), lambda user, _: dict(user.notification_preferences)
    )
    streak = out(
        StreakPreferences(
            required=False,
            help_text="Present when streak customization is enabled or the user turned streaks "
            "off.",
        ),
        lambda _, streak: OMIT if streak is None else streak,
    )


def _public_id(obj: Any, _: Any) -> str:
    return str(obj.public_id)


def _user_attributes(template: EmailTemplate | PushTemplate, _: Any) -> list[Any]:
    return list(template.user_attributes)


class EmailTemplateSerializer(Shape):
    id = out(serializers.UUIDField(), _public_id)
    type = serializers.ChoiceField(choices=NotificationType.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TemplateStatus.choices)
    subject = serializers.CharField(help_text="Jinja2 syntax, rendered in a sandbox.")
    html = serializers.CharField(help_text="Jinja2 syntax, HTML-escaped, CSS inlined on send.")
    text = out(
        serializers.CharField(
            allow_null=True,
            help_text="The plain-text part; null: derived from the rendered HTML.",
        ),
        lambda template, _: template.text or None,
    )
    userAttributes = out(
        AttributeRef(many=True, help_text="All must match the user's attributes."),
        _user_attributes,
    )
    priority = serializers.IntegerField(
        help_text="With several active templates of a type, the highest matching one wins."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class EmailPreview(Shape):
    # Renders a preview (RenderedEmail).

    subject = serializers.CharField()
    html = serializers.CharField()
    text = serializers.CharField()


def _apns(get: Callable[[Mapping[str, Any]], Any]) -> Getter:
    """The getter of a setting that only APNs channels show."""
    return lambda channel, _: get(channel.settings) if channel.kind == PushKind.APNS else OMIT


class PushChannelSerializer(Shape):
    # Renders a PushChannel. Never the secrets: they are write-only.

    id = out(serializers.UUIDField(), _public_id)
    kind = serializers.ChoiceField(choices=PushKind.choices)
    status = serializers.ChoiceField(choices=PushChannelStatus.choices)
    teamId = out(
        serializers.CharField(required=False, help_text="APNs only."),
        _apns(lambda settings: settings.get("teamId")),
    )
    keyId = out(
        serializers.CharField(required=False, help_text="APNs only."),
        _apns(lambda settings: settings.get("keyId")),
    )
    bundleId = out(
        serializers.CharField(required=False, help_text="APNs only."),
        _apns(lambda settings: settings.get("bundleId")),
    )
    sandbox = out(
        serializers.BooleanField(required=False, help_text="APNs only."),
        _apns(lambda settings: bool(settings.get("sandbox"))),
    )
    projectId = out(
        serializers.CharField(required=False, help_text="FCM only, from serviceAccount."),
        lambda c, _: c.settings.get("projectId") if c.kind == PushKind.FCM else OMIT,
    )
    hasCredentials = out(
        serializers.BooleanField(
            help_text="Credentials (signingKey, serviceAccount, accessToken) are write-only."
        ),
        lambda channel, _: bool(channel.credentials),
    )
    flagged = out(
        serializers.BooleanField(
            help_text="Most device tokens of a batch were refused as not belonging to this "
            "app: pruning stops until the flag is cleared (PATCH flagged: false)."
        ),
        lambda channel, _: channel.flagged_at is not None,
    )
    flagReason = out(
        serializers.CharField(allow_null=True), lambda channel, _: channel.flag_reason or None
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class PushTemplateSerializer(Shape):
    id = out(serializers.UUIDField(), _public_id)
    type = serializers.ChoiceField(choices=NotificationType.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TemplateStatus.choices)
    title = serializers.CharField(help_text="Jinja2 syntax, rendered in a sandbox.")
    body = serializers.CharField()
    url = out(
        serializers.CharField(allow_null=True, help_text="A deep link, sent in the data."),
        lambda template, _: template.url or None,
    )
    # A field named like Serializer.data: DRF's metaclass moves it into the fields.
    data = out(
        serializers.DictField(child=serializers.CharField(), help_text="Values are templates."),
        lambda template, _: dict(template.data),
    )
    userAttributes = out(AttributeRef(many=True), _user_attributes)
    priority = serializers.IntegerField()
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class PushPreview(Shape):
    # Renders a preview (RenderedPush).

    title = serializers.CharField()
    body = serializers.CharField()
    url = out(serializers.CharField(allow_null=True), lambda rendered, _: rendered.url or None)
    # A field named like Serializer.data: DRF's metaclass moves it into the fields.
    data = serializers.DictField(child=serializers.CharField())  # type: ignore[assignment]
