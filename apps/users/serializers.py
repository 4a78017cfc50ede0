"""Wire shapes of users and attributes."""

import datetime as dt
from typing import Any

from rest_framework import serializers

from apps.accounts.models import Tenant
from apps.core.api.fields import StrictSerializer, StringField, key_field
from apps.users.choices import AttributeType
from apps.users.domain import tz_is_valid
from apps.users.models import Attribute, EndUser
from apps.users.selectors import attribute_definitions

MAX_DEVICE_TOKENS = 100
MAX_ATTRIBUTES = 100


class SignUpDateField(serializers.Field):
    """YYYY-MM-DD; an ISO date-time is accepted and truncated to its UTC day (reference §3.2)."""

    default_error_messages = {"invalid": "must be a date (YYYY-MM-DD) or an ISO 8601 date-time"}

    def to_internal_value(self, data: Any) -> dt.date:
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            if len(data) == 10:
                return dt.date.fromisoformat(data)
            moment = dt.datetime.fromisoformat(data.replace("Z", "+00:00"))
        except ValueError:
            self.fail("invalid")
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC).date()

    def to_representation(self, value: Any) -> Any:
        return value.isoformat()


class TimeZoneField(serializers.CharField):
    """An IANA time zone name such as Europe/Paris (documented as the list this server knows)."""

    default_error_messages = {"zone": "must be an IANA time zone such as Europe/Paris"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=64, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = str(super().to_internal_value(data))
        if not tz_is_valid(value):
            self.fail("zone")
        return value


class StringMapField(serializers.DictField):
    """{key: string} attribute values; a null value removes the key (users only)."""

    def __init__(self, allow_null_values: bool, **kwargs: Any) -> None:
        super().__init__(
            child=StringField(max_length=255, allow_blank=True, allow_null=allow_null_values),
            **kwargs,
        )

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if len(value) > MAX_ATTRIBUTES:
            raise serializers.ValidationError(f"at most {MAX_ATTRIBUTES} attributes")
        return value


class UserFieldsSerializer(StrictSerializer):
    """UpdatedUser: every field optional; null clears name, email, tz, deviceTokens."""

    email = serializers.EmailField(max_length=254, required=False, allow_null=True)
    name = serializers.CharField(max_length=255, required=False, allow_null=True, allow_blank=True)
    tz = TimeZoneField(required=False, allow_null=True)
    signUpDate = SignUpDateField(required=False, allow_null=True)
    deviceTokens = serializers.ListField(
        child=StringField(max_length=4096),
        required=False,
        allow_null=True,
        max_length=MAX_DEVICE_TOKENS,
    )
    subscribeToEmails = serializers.BooleanField(required=False)
    attributes = StringMapField(allow_null_values=True, required=False)

    def to_internal_value(self, data: Any) -> Any:
        # BooleanField would accept "true", 1 and "yes"; JSON has booleans, so require one.
        if (
            isinstance(data, dict)
            and "subscribeToEmails" in data
            and not isinstance(data["subscribeToEmails"], bool)
        ):
            raise serializers.ValidationError({"subscribeToEmails": "must be a boolean"})
        return super().to_internal_value(data)


class UpsertedUserSerializer(UserFieldsSerializer):
    id = serializers.CharField(max_length=255)


class AttributeCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=255)
    key = key_field()
    type = serializers.ChoiceField(choices=AttributeType.choices)


class AttributeUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = serializers.CharField(max_length=255, required=False)


def user_fields(validated: dict[str, Any]) -> dict[str, Any]:
    """The supplied user fields without the id."""
    return {key: value for key, value in validated.items() if key != "id"}


def user_render(user: EndUser, tenant: Tenant) -> dict[str, Any]:
    defined = attribute_definitions(tenant).user_keys
    return {
        "id": user.external_id,
        "email": user.email,
        "name": user.name,
        "tz": user.tz,
        "signUpDate": user.sign_up_date.isoformat() if user.sign_up_date else None,
        "deviceTokens": list(user.device_tokens),
        "subscribeToEmails": user.subscribe_to_emails,
        "attributes": {k: v for k, v in user.attributes.items() if k in defined},
        "control": user.control,
        "created": user.created,
        "updated": user.updated,
    }


def attribute_render(attribute: Attribute) -> dict[str, Any]:
    return {
        "id": str(attribute.public_id),
        "name": attribute.name,
        "key": attribute.key,
        "type": attribute.type,
    }
