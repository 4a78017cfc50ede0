"""Admin API: attribute definitions. The application API's user routes (create, get,
identify, update) are served by the pipeline (apps/pipeline/views.py): identifying a user may
pay their user_creation points."""

from collections.abc import Sequence
from typing import Any

from apps.core.bulk import Collection
from apps.core.scope import Scope
from apps.users import configuration, selectors, serializers
from apps.users.domain import AttributeSettings
from apps.users.models import Attribute


class AttributeCollection(Collection):
    noun = "Attribute"
    create_serializer = serializers.AttributeCreateSerializer
    update_serializer = serializers.AttributeUpdateSerializer
    output_schema = serializers.AdminAttribute

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Attribute]:
        return selectors.attributes_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Attribute | None:
        return selectors.attribute_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Attribute:
        kwargs = serializers.AttributeCreateSerializer.service_kwargs(data)
        return configuration.attribute_create(scope.tenant, AttributeSettings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: Attribute, data: dict[str, Any]) -> Attribute:
        kwargs = serializers.AttributeUpdateSerializer.service_kwargs(data)
        return configuration.attribute_update(scope.tenant, obj, AttributeSettings(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: Attribute) -> None:
        configuration.attribute_delete(obj)

    def render(self, obj: Attribute) -> dict[str, Any]:
        return serializers.admin_attribute_render(obj)
