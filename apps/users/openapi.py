"""OpenAPI documentation of users and attributes (documentation only): what introspection of
their shapes cannot know. The user's shapes, which other apps' documents embed, are declared in
apps/users/wire.py; the attribute definition in apps/users/serializers.py."""

from typing import Any

from drf_spectacular.extensions import (
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)

from apps.users.domain import zone_names


class SignUpDateFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.users.wire.SignUpDateField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        return {
            "type": "string",
            "format": "date",
            "description": "YYYY-MM-DD; an ISO 8601 date-time is accepted and truncated to its "
            "UTC day.",
        }


class TimeZoneFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "apps.users.wire.TimeZoneField"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        names: list[str | None] = list(zone_names())
        if self.target.allow_null:
            names.append(None)  # OpenAPI 3.0: a nullable enum lists null
        return {
            "type": "string",
            "enum": names,
            "description": "IANA time zone, e.g. Europe/Paris.",
        }


class UpsertedUserSerializerExtension(OpenApiSerializerExtension):
    """UpsertedUserSerializer inherits the docstring of UpdatedUser ("every field optional"),
    which its required `id` contradicts; describe it in its own words."""

    target_class = "apps.users.wire.UpsertedUserSerializer"

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = auto_schema._map_serializer(
            self.target, direction, bypass_extensions=True
        )
        schema["description"] = (
            "UpsertedUser: the user's `id` and any fields to set. Creates the user when unknown, "
            "otherwise updates the supplied fields; null clears email, name, tz and deviceTokens, "
            "and an attribute set to null is removed."
        )
        return schema
