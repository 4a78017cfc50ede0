"""Wire shapes of notification preferences, email and push templates, and push channels: input
serializers, and the response shapes (apps/core/api/shapes.py), each documenting its body, with
the typed function that renders it (`@renders`) below it."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, StringField
from apps.core.api.shapes import Shape, renders
from apps.notifications import domain
from apps.notifications.choices import (
    TROPHY_TYPES,
    Channel,
    NotificationType,
    PushChannelStatus,
    PushKind,
    TemplateMode,
    TemplateStatus,
)
from apps.notifications.models import EmailTemplate, PushChannel, PushTemplate
from apps.notifications.rendering import RenderedEmail, RenderedPush
from apps.notifications.rendering.blocks import BLOCK_TYPES, MAX_BLOCKS
from apps.streaks.wire import StreakPreferences, StreakPreferencesSerializer
from apps.users.models import EndUser
from apps.users.wire import AttributeRef, AttributeRefSerializer

MAX_SUBJECT = domain.MAX_TEMPLATE_SUBJECT
MAX_HTML = domain.MAX_TEMPLATE_HTML
MAX_TEXT = domain.MAX_TEMPLATE_TEXT
_PRIORITY = domain.MAX_TEMPLATE_PRIORITY
_CHANNEL = domain.MAX_CHANNEL_LENGTHS


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


_BLOCKS_HELP = (
    "The template's blocks, in order (blocks mode): each an object with a `type` ("
    + ", ".join(BLOCK_TYPES)
    + ") and that type's fields; `conditional` holds `blocks` of its own. Text may hold "
    "variable references such as {{ user.name }}; everything else in it is text."
)


class _EmailTemplateFields(_TemplateFields):
    mode = serializers.ChoiceField(
        choices=TemplateMode.choices,
        required=False,
        help_text="blocks: html and text are generated from `blocks`; advanced: raw Jinja2. "
        "Absent: blocks when `blocks` is given, else unchanged (advanced on creation).",
    )
    blocks = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        max_length=MAX_BLOCKS,
        help_text=_BLOCKS_HELP,
    )


class EmailTemplateCreateSerializer(_EmailTemplateFields):
    type = serializers.ChoiceField(choices=NotificationType.choices)


class EmailTemplateUpdateSerializer(_EmailTemplateFields):
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
    teamId = StringField(max_length=_CHANNEL["team_id"], required=False)
    keyId = StringField(max_length=_CHANNEL["key_id"], required=False)
    bundleId = StringField(max_length=_CHANNEL["bundle_id"], required=False)
    signingKey = StringField(
        max_length=_CHANNEL["signing_key"], required=False, trim_whitespace=False
    )
    sandbox = serializers.BooleanField(required=False)
    # FCM: the service-account JSON object, as Google's console downloads it
    serviceAccount = serializers.DictField(required=False)
    # Expo
    accessToken = StringField(
        max_length=_CHANNEL["access_token"], required=False, allow_null=True, allow_blank=True
    )

    def validate_serviceAccount(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(str(value)) > _CHANNEL["service_account"]:
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


# --- responses: each shape documents a body, its render function writes it ----------------
# Component names drop the Serializer suffix (EmailTemplate, PushChannel, PushTemplate), which
# keeps the classes apart from the models of the same name; so do the render functions' names.


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
    notifications = NotificationPreferences()
    streak = StreakPreferences(
        required=False,
        help_text="Present when streak customization is enabled or the user turned streaks off.",
    )


@renders(UserPreferencesResponse)
def user_preferences_response_render(
    user: EndUser, streak: dict[str, Any] | None
) -> dict[str, Any]:
    """`user`'s preferences, with their streak preferences when there are some. Only Trophy's
    types: the league types' preferences (set on the preferences page) stay out of Trophy's
    body."""
    stored = user.notification_preferences
    body: dict[str, Any] = {"notifications": {t: stored[t] for t in TROPHY_TYPES if t in stored}}
    if streak is not None:
        body["streak"] = streak
    return body


class EmailTemplateSerializer(Shape):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=NotificationType.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TemplateStatus.choices)
    subject = serializers.CharField(help_text="Jinja2 syntax, rendered in a sandbox.")
    html = serializers.CharField(help_text="Jinja2 syntax, HTML-escaped, CSS inlined on send.")
    text = serializers.CharField(
        allow_null=True,
        help_text="The plain-text part; null: derived from the rendered HTML.",
    )
    userAttributes = AttributeRef(many=True, help_text="All must match the user's attributes.")
    priority = serializers.IntegerField(
        help_text="With several active templates of a type, the highest matching one wins."
    )
    mode = serializers.ChoiceField(
        choices=TemplateMode.choices,
        help_text="blocks: html and text are generated from `blocks`; advanced: raw Jinja2.",
    )
    blocks = serializers.ListField(
        child=serializers.DictField(), allow_null=True, help_text=_BLOCKS_HELP + " null: advanced."
    )
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(EmailTemplateSerializer)
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
        "mode": template.mode,
        "blocks": template.blocks if template.mode == TemplateMode.BLOCKS else None,
        "created": template.created,
        "updated": template.updated,
    }


class EmailPreview(Shape):
    subject = serializers.CharField()
    html = serializers.CharField()
    text = serializers.CharField()


@renders(EmailPreview)
def email_preview_render(rendered: RenderedEmail) -> dict[str, Any]:
    return {"subject": rendered.subject, "html": rendered.html, "text": rendered.text}


class PushChannelSerializer(Shape):
    # Never the secrets: they are write-only.

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
        help_text="Most device tokens of a batch were refused as not belonging to this "
        "app: pruning stops until the flag is cleared (PATCH flagged: false)."
    )
    flagReason = serializers.CharField(allow_null=True)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(PushChannelSerializer)
def push_channel_render(channel: PushChannel) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": str(channel.public_id),
        "kind": channel.kind,
        "status": channel.status,
    }
    settings = channel.settings
    if channel.kind == PushKind.APNS:
        body["teamId"] = settings.get("teamId")
        body["keyId"] = settings.get("keyId")
        body["bundleId"] = settings.get("bundleId")
        body["sandbox"] = bool(settings.get("sandbox"))
    elif channel.kind == PushKind.FCM:
        body["projectId"] = settings.get("projectId")
    body["hasCredentials"] = bool(channel.credentials)
    body["flagged"] = channel.flagged_at is not None
    body["flagReason"] = channel.flag_reason or None
    body["created"] = channel.created
    body["updated"] = channel.updated
    return body


class PushTemplateSerializer(Shape):
    id = serializers.UUIDField()
    type = serializers.ChoiceField(choices=NotificationType.choices)
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=TemplateStatus.choices)
    title = serializers.CharField(help_text="Jinja2 syntax, rendered in a sandbox.")
    body = serializers.CharField()
    url = serializers.CharField(allow_null=True, help_text="A deep link, sent in the data.")
    # A field named like Serializer.data: DRF's metaclass moves it into the fields.
    data = serializers.DictField(  # type: ignore[assignment]  # a field, moved by DRF's metaclass
        child=serializers.CharField(), help_text="Values are templates."
    )
    userAttributes = AttributeRef(many=True)
    priority = serializers.IntegerField()
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(PushTemplateSerializer)
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


class PushPreview(Shape):
    title = serializers.CharField()
    body = serializers.CharField()
    url = serializers.CharField(allow_null=True)
    # A field named like Serializer.data: DRF's metaclass moves it into the fields.
    data = serializers.DictField(child=serializers.CharField())  # type: ignore[assignment]


@renders(PushPreview)
def push_preview_render(rendered: RenderedPush) -> dict[str, Any]:
    return {
        "title": rendered.title,
        "body": rendered.body,
        "url": rendered.url or None,
        "data": rendered.data,
    }
