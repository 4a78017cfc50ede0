"""Writes of email template configuration, for the admin API and the dashboard alike: the
built-in templates seeded once per tenant, and creating, changing and deleting templates. Every
change bumps the tenant's configuration version."""

import datetime as dt
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from apps.accounts import history
from apps.accounts.history import recorded
from apps.accounts.models import Tenant
from apps.accounts.services import tenant_config_changed
from apps.core.declarations import given_values, required_check
from apps.core.errors import ValidationError
from apps.leagues.selectors import leagues_config
from apps.notifications import domain
from apps.notifications.choices import (
    LEAGUE_TYPES,
    QUEST_TYPES,
    TROPHY_TYPES,
    TemplateMode,
    TemplateStatus,
)
from apps.notifications.domain import EmailTemplateSettings
from apps.notifications.models import EmailTemplate, NotificationSettings
from apps.notifications.rendering import default_email_template, template_check
from apps.notifications.rendering.blocks import (
    STARTER_SUBJECTS,
    blocks_check,
    blocks_compile,
    starter_blocks,
)
from apps.quests.selectors import quests_config
from apps.users.configuration import attribute_refs_check


def defaults_seed_once(
    tenant: Tenant,
    marker: str,
    make: Callable[[], None],
    now: dt.datetime | None = None,
    *,
    kind: str = "email_template",
) -> None:
    """Run `make` (creating a tenant's built-in templates) once per tenant. The conditional
    update of the `marker` timestamp is the claim: of two concurrent first reads only one
    seeds, and a default the tenant deleted does not come back. The templates made enter the
    change history as the server's (source "seed")."""
    settings, _ = NotificationSettings.objects.get_or_create(tenant=tenant)
    if getattr(settings, marker) is not None:
        return
    with transaction.atomic():
        claimed = NotificationSettings.objects.filter(
            pk=settings.pk, **{f"{marker}__isnull": True}
        ).update(**{marker: now or timezone.now()})
        if claimed:
            with history.how("seed"), history.recording(tenant, (kind,)):
                make()


def email_templates_seed(tenant: Tenant, now: dt.datetime | None = None) -> None:
    """Give the tenant the built-in default email template of each type, inactive, once (the
    league types, once the tenant has a league)."""

    def make(types: tuple[str, ...]) -> Callable[[], None]:
        def seed() -> None:
            # Not for a type the tenant already has a template of (one a configuration file
            # or a promote made before the tenant's first league, say).
            present = set(
                EmailTemplate.objects.filter(tenant=tenant, type__in=types).values_list(
                    "type", flat=True
                )
            )
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
                    for type in types
                    if type not in present
                    for default in [default_email_template(type)]
                ]
            )

        return seed

    defaults_seed_once(tenant, "defaults_seeded_at", make(TROPHY_TYPES), now)
    if leagues_config(tenant):  # the league types' once the tenant has a league
        defaults_seed_once(tenant, "league_defaults_seeded_at", make(LEAGUE_TYPES), now)
    if quests_config(tenant).quests:  # the quest types' once the tenant has a quest
        defaults_seed_once(tenant, "quest_defaults_seeded_at", make(QUEST_TYPES), now)


def _check_parts(subject: str, html: str, text: str) -> None:
    template_check(subject=subject, html=html, text=text or None)


def _generated_problem(given: dict[str, object]) -> None:
    """In blocks mode the HTML and the text are generated: giving either is refused."""
    parts = [part for part in ("html", "text") if part in given]
    if parts:
        names = " and ".join("{" + part + "}" for part in parts)
        raise ValidationError(
            f"{names} {'is' if len(parts) == 1 else 'are'} generated from the blocks in blocks "
            "mode: leave them out, or set mode to advanced",
            fields=parts,
            code="generated",
        )


def _blocks_only_problem() -> ValidationError:
    return ValidationError(
        "{blocks} are only taken in blocks mode", fields="blocks", code="advanced_mode"
    )


def defaults_claimed(tenant: Tenant, now: dt.datetime | None = None) -> None:
    """The tenant's templates are what a configuration file or a promote says
    (apps/changes): the built-in defaults are not given to it any more, of any type."""
    settings, _ = NotificationSettings.objects.get_or_create(tenant=tenant)
    markers = [
        field.name
        for field in NotificationSettings._meta.get_fields()
        if field.name.endswith("_seeded_at") and getattr(settings, field.name) is None
    ]
    if markers:
        NotificationSettings.objects.filter(pk=settings.pk).update(
            **dict.fromkeys(markers, now or timezone.now())
        )


@recorded("email_template")
def email_template_create(tenant: Tenant, settings: EmailTemplateSettings) -> EmailTemplate:
    """A new template; subject and html default to the built-in template of the type (and the
    text too when neither is given). In blocks mode (given blocks, or mode blocks), the HTML
    and the text are generated from the blocks (the type's starter blocks when none are
    given)."""
    required_check(settings)
    values = given_values(settings)
    type = values["type"]
    default = default_email_template(type)
    mode = values.get("mode", TemplateMode.BLOCKS if "blocks" in values else TemplateMode.ADVANCED)
    blocks = None
    if mode == TemplateMode.BLOCKS:
        _generated_problem(values)
        blocks = blocks_check(values.get("blocks") or starter_blocks(type))
        compiled = blocks_compile(blocks)
        values["html"], values["text"] = compiled.html, compiled.text
        values.setdefault("subject", STARTER_SUBJECTS.get(type, default.subject))
    elif "blocks" in values:
        raise _blocks_only_problem()
    subject, html, text = (values.get(part) for part in ("subject", "html", "text"))
    if subject is None and html is None:
        text = default.text if text is None else text
    subject = default.subject if subject is None else subject
    html = default.html if html is None else html
    text = text or ""
    _check_parts(subject, html, text)
    template = EmailTemplate.objects.create(
        tenant=tenant,
        type=type,
        name=values["name"],
        subject=subject,
        html=html,
        text=text,
        mode=mode,
        blocks=blocks,
        status=values.get("status", TemplateStatus.INACTIVE),
        user_attributes=attribute_refs_check(tenant, values.get("user_attributes"), "user"),
        priority=values.get("priority", 0),
    )
    tenant_config_changed(tenant)
    return template


@recorded("email_template")
def email_template_update(
    tenant: Tenant, template: EmailTemplate, changes: EmailTemplateSettings
) -> EmailTemplate:
    """Change the given settings; the type cannot change. A template that no longer renders is
    refused. An empty or None text is derived from the HTML; None user attributes keep
    theirs. Given blocks, the template is in blocks mode and its HTML and text are generated
    from them; switched to advanced mode, it keeps the generated HTML and text, to edit."""
    values = given_values(changes)
    # A template is written for its type's variables: another type is another template.
    if values.pop("type", template.type) != template.type:
        raise domain.set_for_good_problem("type")
    user_attributes = values.pop("user_attributes", None)
    blocks = values.pop("blocks", None)
    mode = values.pop("mode", TemplateMode.BLOCKS if blocks is not None else template.mode)
    if mode == TemplateMode.BLOCKS:
        _generated_problem(values)
        if blocks is None and template.mode != TemplateMode.BLOCKS:
            raise ValidationError(
                "{blocks} are required to switch a template to blocks mode",
                fields="blocks",
                code="required",
            )
        if blocks is not None:
            template.blocks = blocks_check(blocks)
            compiled = blocks_compile(template.blocks)
            values["html"], values["text"] = compiled.html, compiled.text
    elif blocks is not None:
        raise _blocks_only_problem()
    else:
        template.blocks = None
    template.mode = mode
    for field, value in values.items():
        setattr(template, field, "" if field == "text" and value is None else value)
    if user_attributes is not None:
        template.user_attributes = attribute_refs_check(tenant, user_attributes, "user")
    if {"subject", "html", "text"} & set(values):
        _check_parts(template.subject, template.html, template.text)
    template.save()
    tenant_config_changed(tenant)
    return template


@recorded("email_template")
def email_template_delete(template: EmailTemplate) -> None:
    """Messages already scheduled with it choose another template at send time, or none."""
    tenant = template.tenant
    template.delete()
    tenant_config_changed(tenant)
