"""A template rendered for one end-user now (or for sample data, in the tenant's brand), as the
admin API preview, the dashboard preview, the block editor and the dashboard's test sends show
it. Nothing is recorded."""

import datetime as dt
from typing import Any

from django.utils import timezone

from apps.accounts.models import Tenant
from apps.notifications.choices import TemplateMode
from apps.notifications.context import app_context, message_context, preview_payload
from apps.notifications.models import EmailTemplate, PushTemplate
from apps.notifications.rendering import (
    RenderedEmail,
    RenderedPush,
    email_render,
    push_render,
    sample_context,
    with_preferences_link,
)
from apps.notifications.rendering.blocks import blocks_check, blocks_compile
from apps.users.models import EndUser

# What a preview shown to staff puts in place of the end-user's own preference links: one
# click by a staff member would otherwise change that user's preferences.
NOT_A_LINK = "#preview"


def links_hidden(context: dict[str, Any]) -> dict[str, Any]:
    """A message's context for staff's eyes: the user's preference links replaced."""
    context["preferencesUrl"] = context["unsubscribeUrl"] = NOT_A_LINK
    return context


def brand_sample_context(tenant: Tenant, base_url: str | None = None) -> dict[str, Any]:
    """Sample data in the tenant's own brand (its app name, colour and logo, or their
    defaults), with gamify's sample images under `base_url` (default PUBLIC_URL)."""
    return sample_context(app=app_context(tenant), base_url=base_url)


def template_preview(
    template: EmailTemplate,
    user: EndUser | None,
    *,
    keep_links: bool = False,
    now: dt.datetime | None = None,
    base_url: str | None = None,
) -> RenderedEmail:
    """`template` as `user` would get it now (their latest achievement, the last recap period,
    a first reactivation message), or with sample data in the tenant's brand when there is no
    user (images under `base_url`, see brand_sample_context). Unless `keep_links`, the user's
    preference and unsubscribe links are replaced. Raises TemplateRenderError."""
    if user is None:
        context = brand_sample_context(template.tenant, base_url)
        seed = f"preview:{template.public_id}"
    else:
        tenant, now = template.tenant, now or timezone.now()
        payload = preview_payload(tenant, user, template.type, now)
        context = message_context(tenant, user, template.type, payload, now)
        if not keep_links:
            links_hidden(context)
        seed = f"preview:{template.public_id}:{user.pk}"
    rendered = email_render(
        subject=template.subject,
        html=template.html,
        text=template.text or None,
        context=context,
        seed=seed,
    )
    if user is not None and keep_links:
        rendered = with_preferences_link(rendered, context["preferencesUrl"])
    return rendered


def draft_template(
    tenant: Tenant, type: str, subject: str, blocks: Any, *, name: str = ""
) -> EmailTemplate:
    """An unsaved blocks template, as the block editor holds it before it is saved: its blocks
    checked and compiled. Raises ValidationError about the blocks."""
    compiled = blocks_compile(blocks_check(blocks))
    return EmailTemplate(
        tenant=tenant,
        type=type,
        name=name,
        subject=subject,
        html=compiled.html,
        text=compiled.text,
        mode=TemplateMode.BLOCKS,
        blocks=blocks,
    )


def push_template_preview(
    template: PushTemplate, user: EndUser | None, *, keep_links: bool = False
) -> RenderedPush:
    """A push template as `user` would get it now, or with sample data in the tenant's brand."""
    if user is None:
        context = brand_sample_context(template.tenant)
        seed = f"preview:{template.public_id}"
    else:
        now = timezone.now()
        payload = preview_payload(template.tenant, user, template.type, now)
        context = message_context(template.tenant, user, template.type, payload, now)
        if not keep_links:
            links_hidden(context)
        seed = f"preview:{template.public_id}:{user.pk}"
    return push_render(
        title=template.title,
        body=template.body,
        url=template.url,
        data=template.data,
        context=context,
        seed=seed,
    )
