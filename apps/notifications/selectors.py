"""Reads of notification configuration and of the delivery log. Every read starts from the
tenant."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db.models import QuerySet

from apps.accounts.models import Tenant
from apps.achievements.domain import attributes_match
from apps.core.config_cache import tenant_cached
from apps.notifications.choices import NotificationType, TemplateStatus
from apps.notifications.models import EmailTemplate, Message
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve


@dataclass(frozen=True)
class TemplateDef:
    pk: int
    type: str
    priority: int
    # {attribute key: value}; None when a filter names a deleted attribute (nobody matches).
    filters: Mapping[str, str] | None


@dataclass(frozen=True)
class NotificationConfig:
    """A tenant's active templates per type, best first, cached per configuration version so
    that the event path never queries templates."""

    email_templates: Mapping[str, tuple[TemplateDef, ...]] = field(default_factory=dict)

    def email_enabled(self, type: str) -> bool:
        return bool(self.email_templates.get(type))

    @property
    def enabled_types(self) -> frozenset[str]:
        return frozenset(t for t in NotificationType.values if self.email_enabled(t))

    def email_template_for(self, type: str, attributes: Mapping[str, str]) -> TemplateDef | None:
        """The highest-priority active template whose filters the user matches."""
        for template in self.email_templates.get(type, ()):
            if attributes_match(template.filters, attributes):
                return template
        return None


def notification_config(tenant: Tenant) -> NotificationConfig:
    def load() -> NotificationConfig:
        by_type: dict[str, list[TemplateDef]] = {}
        rows = EmailTemplate.objects.filter(tenant=tenant, status=TemplateStatus.ACTIVE).order_by(
            "-priority", "created", "id"
        )
        for row in rows:
            by_type.setdefault(row.type, []).append(
                TemplateDef(
                    pk=row.pk,
                    type=row.type,
                    priority=row.priority,
                    filters=attribute_filters_resolve(tenant, row.user_attributes),
                )
            )
        return NotificationConfig({k: tuple(v) for k, v in by_type.items()})

    return tenant_cached(tenant, "notifications", load)


def tenants_with_email_type(type: str) -> QuerySet[Tenant]:
    """Tenants with at least one active template of this type: the scheduled sweeps visit only
    these."""
    return Tenant.objects.filter(
        pk__in=EmailTemplate.objects.filter(type=type, status=TemplateStatus.ACTIVE).values(
            "tenant_id"
        ),
        status="active",
    ).order_by("pk")


def email_templates_list(tenant: Tenant, limit: int, skip: int) -> Sequence[EmailTemplate]:
    return list(
        EmailTemplate.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def email_template_get(tenant: Tenant, public_id: str) -> EmailTemplate | None:
    return EmailTemplate.objects.filter(tenant=tenant, public_id=public_id).first()


def messages_for_user(user: EndUser, limit: int = 50) -> Sequence[Message]:
    return list(Message.objects.filter(user=user).order_by("-created", "-id")[:limit])
