"""The user attributes as portable configuration (apps/core/portable.py)."""

from apps.core.portable import CollectionKind, register
from apps.users.models import Attribute
from apps.users.views import AttributeCollection

register(CollectionKind("attribute", "user attribute", 10, AttributeCollection(), model=Attribute))
