"""Reads of notification configuration and of the delivery log. Every read starts from the
tenant."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from django.db.models import Count, Q, QuerySet

from apps.accounts.models import Tenant
from apps.core.config_cache import tenant_cached
from apps.notifications.choices import PushChannelStatus, TemplateStatus
from apps.notifications.models import (
    EmailTemplate,
    Message,
    PushAttempt,
    PushChannel,
    PushTemplate,
)
from apps.users.domain import attributes_match
from apps.users.models import EndUser
from apps.users.selectors import attribute_filters_resolve


@dataclass(frozen=True)
class TemplateDef:
    pk: int
    type: str
    priority: int
    # {attribute key: value}; None when a filter names a deleted attribute (nobody matches).
    filters: Mapping[str, str] | None


def _best(templates: tuple[TemplateDef, ...], attributes: Mapping[str, str]) -> TemplateDef | None:
    """The highest-priority active template whose filters the user matches."""
    for template in templates:
        if attributes_match(template.filters, attributes):
            return template
    return None


@dataclass(frozen=True)
class NotificationConfig:
    """A tenant's active templates per type, best first, and whether push can be sent at all,
    cached per configuration version so that the event path never queries templates."""

    email_templates: Mapping[str, tuple[TemplateDef, ...]] = field(default_factory=dict)
    push_templates: Mapping[str, tuple[TemplateDef, ...]] = field(default_factory=dict)
    push_channels: bool = False  # at least one active push channel

    def email_enabled(self, type: str) -> bool:
        return bool(self.email_templates.get(type))

    def push_enabled(self, type: str) -> bool:
        return self.push_channels and bool(self.push_templates.get(type))

    def enabled(self, type: str) -> bool:
        return self.email_enabled(type) or self.push_enabled(type)

    def email_template_for(self, type: str, attributes: Mapping[str, str]) -> TemplateDef | None:
        return _best(self.email_templates.get(type, ()), attributes)

    def push_template_for(self, type: str, attributes: Mapping[str, str]) -> TemplateDef | None:
        return _best(self.push_templates.get(type, ()), attributes) if self.push_channels else None


Template = TypeVar("Template", EmailTemplate, PushTemplate)


def template_to_send(
    scheduled: Template | None, chosen: TemplateDef | None, model: type[Template]
) -> Template | None:
    """The template a message goes out with: the one it was scheduled with if that is still the
    best active match for the user (`chosen`), else the best one now, since the tenant may have
    changed its templates after the message was scheduled; None when none matches any more."""
    if chosen is None:
        return None
    if scheduled is not None and scheduled.pk == chosen.pk:
        return scheduled
    return model.objects.filter(pk=chosen.pk).first()


def _active_by_type(
    tenant: Tenant, model: type[EmailTemplate] | type[PushTemplate]
) -> dict[str, tuple[TemplateDef, ...]]:
    by_type: dict[str, list[TemplateDef]] = {}
    rows = model.objects.filter(tenant=tenant, status=TemplateStatus.ACTIVE).order_by(
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
    return {k: tuple(v) for k, v in by_type.items()}


def notification_config(tenant: Tenant) -> NotificationConfig:
    def load() -> NotificationConfig:
        return NotificationConfig(
            email_templates=_active_by_type(tenant, EmailTemplate),
            push_templates=_active_by_type(tenant, PushTemplate),
            push_channels=PushChannel.objects.filter(
                tenant=tenant, status=PushChannelStatus.ACTIVE
            ).exists(),
        )

    return tenant_cached(tenant, "notifications", load)


def push_channels_active(tenant: Tenant) -> list[PushChannel]:
    return list(
        PushChannel.objects.filter(tenant=tenant, status=PushChannelStatus.ACTIVE).order_by(
            "created", "id"
        )
    )


def tenants_with_type(type: str) -> QuerySet[Tenant]:
    """Tenants with at least one active email or push template of this type: the scheduled
    sweeps visit only these."""
    active = Q(type=type, status=TemplateStatus.ACTIVE)
    return Tenant.objects.filter(
        Q(pk__in=EmailTemplate.objects.filter(active).values("tenant_id"))
        | Q(pk__in=PushTemplate.objects.filter(active).values("tenant_id")),
        status="active",
    ).order_by("pk")


def email_templates_list(tenant: Tenant, limit: int, skip: int) -> Sequence[EmailTemplate]:
    return list(
        EmailTemplate.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def email_template_get(tenant: Tenant, public_id: str) -> EmailTemplate | None:
    return EmailTemplate.objects.filter(tenant=tenant, public_id=public_id).first()


def push_templates_list(tenant: Tenant, limit: int, skip: int) -> Sequence[PushTemplate]:
    return list(
        PushTemplate.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def push_template_get(tenant: Tenant, public_id: str) -> PushTemplate | None:
    return PushTemplate.objects.filter(tenant=tenant, public_id=public_id).first()


def push_channels_list(tenant: Tenant, limit: int, skip: int) -> Sequence[PushChannel]:
    return list(
        PushChannel.objects.filter(tenant=tenant).order_by("created", "id")[skip : skip + limit]
    )


def push_channel_get(tenant: Tenant, public_id: str) -> PushChannel | None:
    return PushChannel.objects.filter(tenant=tenant, public_id=public_id).first()


def messages_for_user(user: EndUser, limit: int = 50) -> Sequence[Message]:
    return list(Message.objects.filter(user=user).order_by("-created", "-id")[:limit])


def push_attempt_counts(message_ids: list[int]) -> dict[int, str]:
    """Per push message, its attempts as "3 (2 ok)": one query for all of them."""
    if not message_ids:
        return {}
    counts = (
        PushAttempt.objects.filter(message_id__in=message_ids)
        .values("message_id")
        .annotate(total=Count("pk"), ok=Count("pk", filter=Q(ok=True)))
        .order_by()
    )
    return {row["message_id"]: f"{row['total']} ({row['ok']} ok)" for row in counts}
