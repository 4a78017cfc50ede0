"""The user's wire vocabulary that other apps' routes, bodies and documents share: the {user_id}
path parameter, the user object (`User`, `user_render`: user reads, the year in review,
webhook payloads), the user a request body upserts (`UpsertedUserSerializer`: events,
identification, completions; `user_fields` hands its fields to the services) and the shapes
of attribute filters (`AttributeRefSerializer` and `AttributeRef` on the admin side,
`AttributeKeyValue` on the application side).

Each is declared once here, beside the data it describes; the apps that embed them import this
module, never the users app's interface modules (docs/style.md, "One app from another")."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.fields import Field

from apps.accounts.models import Tenant
from apps.core.api.fields import MAX_ATTRIBUTE_VALUE, StrictSerializer, StringField
from apps.core.api.shapes import Shape, renders
from apps.core.arguments import UNSET
from apps.users.domain import UserFields, tz_is_valid
from apps.users.models import EndUser
from apps.users.selectors import attribute_definitions

USER_ID = OpenApiParameter(
    "user_id",
    str,
    OpenApiParameter.PATH,
    description="Your identifier of the user.",
)


# --- the user object -------------------------------------------------------------------


class User(Shape):
    # An EndUser, with only the values of the attributes its tenant defines: a removed
    # definition's values stay stored but leave the wire. Rendered by `user_render`.

    id = serializers.CharField(help_text="Your identifier of the user.")
    email = serializers.CharField(allow_null=True)
    name = serializers.CharField(allow_null=True)
    tz = serializers.CharField(allow_null=True, help_text="IANA time zone, e.g. Europe/Paris.")
    signUpDate = serializers.DateField(allow_null=True)
    deviceTokens = serializers.ListField(child=serializers.CharField())
    subscribeToEmails = serializers.BooleanField()
    attributes = serializers.DictField(
        child=serializers.CharField(),
        help_text="Values of the defined user attributes, by key.",
    )
    control = serializers.BooleanField(help_text="Whether the user is in the control group.")
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


@renders(User)
def user_render(user: EndUser, tenant: Tenant) -> dict[str, Any]:
    """`User` with the values of the attributes the tenant defines."""
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


# --- the user in request bodies --------------------------------------------------------

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


def user_fields(validated: Mapping[str, Any]) -> UserFields:
    """The user fields that data validated by UserFieldsSerializer (or UpsertedUserSerializer,
    whose id is not one of them) supplies, for the services. Runs once per event: plain
    lookups, nothing more."""
    get = validated.get
    tokens = get("deviceTokens", UNSET)
    return UserFields(
        email=get("email", UNSET),
        name=get("name", UNSET),
        tz=get("tz", UNSET),
        sign_up_date=get("signUpDate", UNSET),
        device_tokens=tokens if tokens is UNSET or tokens is None else tuple(tokens),
        subscribe_to_emails=get("subscribeToEmails", UNSET),
        attributes=get("attributes", UNSET),
    )


def user_fields_stored(fields: UserFields) -> dict[str, Any]:
    """The supplied fields as JSON under their wire names (a queued event of a batch keeps
    them so); `user_fields_restored` reads them back."""
    stored: dict[str, Any] = {}
    value: Any
    for wire_name, value in (
        ("email", fields.email),
        ("name", fields.name),
        ("tz", fields.tz),
        ("signUpDate", fields.sign_up_date),
        ("deviceTokens", fields.device_tokens),
        ("subscribeToEmails", fields.subscribe_to_emails),
        ("attributes", fields.attributes),
    ):
        if value is UNSET:
            continue
        if isinstance(value, dt.date):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        stored[wire_name] = value
    return stored


def user_fields_restored(stored: Mapping[str, Any]) -> UserFields:
    """The UserFields that `user_fields_stored` wrote."""
    sign_up_date = stored.get("signUpDate")
    if isinstance(sign_up_date, str):
        stored = {**stored, "signUpDate": dt.date.fromisoformat(sign_up_date)}
    return user_fields(stored)


# --- attribute filters ------------------------------------------------------------------


class _AttributeRefList(serializers.ListSerializer):
    """A null list means none; DRF hands `allow_null` to the items too, and [null] reached the
    services as None (a 500). Items are never null."""

    def run_child_validation(self, data: Any) -> Any:
        if data is None:
            raise serializers.ValidationError(Field.default_error_messages["null"], code="null")
        return super().run_child_validation(data)


class AttributeRefSerializer(StrictSerializer):
    attributeId = serializers.UUIDField(format="hex_verbose")
    attributeValue = StringField(max_length=MAX_ATTRIBUTE_VALUE)

    class Meta:
        list_serializer_class = _AttributeRefList

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        return {"attributeId": str(value["attributeId"]), "attributeValue": value["attributeValue"]}


class AttributeRef(serializers.Serializer):
    attributeId = serializers.UUIDField(help_text="The attribute's id.")
    attributeValue = serializers.CharField()


class AttributeKeyValue(serializers.Serializer):
    key = serializers.CharField()
    value = serializers.CharField()
