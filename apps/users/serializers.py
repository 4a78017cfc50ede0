"""Wire shapes of attribute definitions: input serializers and the response shape, with the
function that renders it (apps/core/api/shapes.py). The user's shapes, which other apps
embed, are in apps/users/wire.py."""

from typing import Any

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, key_field
from apps.core.api.shapes import Shape, renders
from apps.users.choices import AttributeType
from apps.users.models import Attribute


class AttributeCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=255)
    key = key_field()
    type = serializers.ChoiceField(choices=AttributeType.choices)


class AttributeUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = serializers.CharField(max_length=255, required=False)


class AdminAttribute(Shape):
    # An attribute definition (admin API), rendered from the Attribute.

    id = serializers.UUIDField()
    name = serializers.CharField()
    key = serializers.CharField()
    type = serializers.ChoiceField(choices=AttributeType.choices)


@renders(AdminAttribute)
def admin_attribute_render(attribute: Attribute) -> dict[str, Any]:
    return {
        "id": str(attribute.public_id),
        "name": attribute.name,
        "key": attribute.key,
        "type": attribute.type,
    }
