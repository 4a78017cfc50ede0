"""Wire shapes of attribute definitions: input serializers and the response shape, which
renders and documents itself (apps/core/api/shapes.py). The user's shapes, which other apps
embed, are in apps/users/wire.py."""

from rest_framework import serializers

from apps.core.api.fields import StrictSerializer, key_field
from apps.core.api.shapes import Shape, out
from apps.users.choices import AttributeType


class AttributeCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=255)
    key = key_field()
    type = serializers.ChoiceField(choices=AttributeType.choices)


class AttributeUpdateSerializer(StrictSerializer):
    id = serializers.UUIDField()
    name = serializers.CharField(max_length=255, required=False)


class AdminAttribute(Shape):
    # An attribute definition (admin API), rendered from the Attribute.

    id = out(serializers.UUIDField(), lambda attribute, _: str(attribute.public_id))
    name = serializers.CharField()
    key = serializers.CharField()
    type = serializers.ChoiceField(choices=AttributeType.choices)
