"""Writes of email template configuration, for the admin API and the dashboard alike: the
built-in templates seeded once per tenant, and creating, changing and deleting templates. Every
change bumps the tenant's configuration version."""

import datetime as dt
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.arguments import UNSET, Unset, given
from apps.notifications.choices import NotificationType, TemplateStatus
from apps.notifications.models import EmailTemplate, NotificationSettings
from apps.notifications.rendering import default_email_template, template_check
from apps.users.configuration import attribute_refs_check


def defaults_seed_once(
    tenant: Tenant, marker: str, make: Callable[[], None], now: dt.datetime | None = None
) -> None:
    """Run `make` (creating a tenant's built-in templates) once per tenant. The conditional
    update of the `marker` timestamp is the claim: of two concurrent first reads only one
    seeds, and a default the tenant deleted does not come back."""
    settings, _ = NotificationSettings.objects.get_or_create(tenant=tenant)
    if getattr(settings, marker) is not None:
        return
    with transaction.atomic():
        claimed = NotificationSettings.objects.filter(
            pk=settings.pk, **{f"{marker}__isnull": True}
        ).update(**{marker: now or timezone.now()})
        if claimed:
            make()


def email_templates_seed(tenant: Tenant, now: dt.datetime | None = None) -> None:
    """Give the tenant the built-in default email template of each type, inactive, once."""

    def make() -> None:
        EmailTemplate.objects.bulk_create(
            [
                EmailTemplate(
                    tenant=tenant,
                    type=type,
                    name=default.name,
                    subject=default.subject,
                    html=default.html,
                    text=default.text,
                )
                for type in NotificationType.values
                for default in [default_email_template(type)]
            ]
        )

    defaults_seed_once(tenant, "defaults_seeded_at", make, now)


def _check_parts(subject: str, html: str, text: str) -> None:
    template_check(subject=subject, html=html, text=text or None)


def email_template_create(
    tenant: Tenant,
    *,
    type: str,
    name: str,
    subject: str | None = None,
    html: str | None = None,
    text: str | None = None,
    status: str = TemplateStatus.INACTIVE,
    user_attributes: list[dict[str, str]] | None = None,
    priority: int = 0,
) -> EmailTemplate:
    """A new template; subject and html default to the built-in template of the type."""
    default = default_email_template(type)
    if subject is None and html is None:
        text = default.text if text is None else text
    subject = default.subject if subject is None else subject
    html = default.html if html is None else html
    text = text or ""
    _check_parts(subject, html, text)
    template = EmailTemplate.objects.create(
        tenant=tenant,
        type=type,
        name=name,
        subject=subject,
        html=html,
        text=text,
        status=status,
        user_attributes=attribute_refs_check(tenant, user_attributes, "user"),
        priority=priority,
    )
    tenant_config_changed(tenant)
    return template


def email_template_update(
    template: EmailTemplate,
    *,
    name: str | Unset = UNSET,
    subject: str | Unset = UNSET,
    html: str | Unset = UNSET,
    text: str | Unset | None = UNSET,  # empty or None: derived from the HTML
    status: str | Unset = UNSET,
    priority: int | Unset = UNSET,
    user_attributes: list[dict[str, str]] | None = None,  # None: unchanged
) -> EmailTemplate:
    """Change the given fields; the type cannot change. A template that no longer renders is
    refused."""
    fields = given(
        name=name, subject=subject, html=html, text=text, status=status, priority=priority
    )
    for field, value in fields.items():
        setattr(template, field, "" if field == "text" and value is None else value)
    if user_attributes is not None:
        template.user_attributes = attribute_refs_check(template.tenant, user_attributes, "user")
    if {"subject", "html", "text"} & set(fields):
        _check_parts(template.subject, template.html, template.text)
    template.save()
    tenant_config_changed(template.tenant)
    return template


def email_template_delete(template: EmailTemplate) -> None:
    """Messages already scheduled with it choose another template at send time, or none."""
    tenant = template.tenant
    template.delete()
    tenant_config_changed(tenant)
