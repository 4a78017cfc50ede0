"""A template rendered for one end-user now (or for sample data), as the admin API preview,
the dashboard preview and the dashboard's "send a test to me" show it. Nothing is recorded."""

import datetime as dt
from typing import Any

from django.utils import timezone

from apps.notifications.context import message_context, preview_payload
from apps.notifications.models import EmailTemplate, PushTemplate
from apps.notifications.rendering import (
    RenderedEmail,
    RenderedPush,
    email_render,
    push_render,
    sample_context,
    with_preferences_link,
)
from apps.users.models import EndUser

# What a preview shown to staff puts in place of the end-user's own preference links: one
# click by a staff member would otherwise change that user's preferences.
NOT_A_LINK = "#preview"


def links_hidden(context: dict[str, Any]) -> dict[str, Any]:
    """A message's context for staff's eyes: the user's preference links replaced."""
    context["preferencesUrl"] = context["unsubscribeUrl"] = NOT_A_LINK
    return context


def template_preview(
    template: EmailTemplate,
    user: EndUser | None,
    *,
    keep_links: bool = False,
    now: dt.datetime | None = None,
) -> RenderedEmail:
    """`template` as `user` would get it now (their latest achievement, the last recap period,
    a first reactivation message), or with sample data when there is no user. Unless
    `keep_links`, the user's preference and unsubscribe links are replaced. Raises
    TemplateRenderError."""
    if user is None:
        context = sample_context()
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


def push_template_preview(
    template: PushTemplate, user: EndUser | None, *, keep_links: bool = False
) -> RenderedPush:
    """A push template as `user` would get it now, or with sample data."""
    if user is None:
        context = sample_context()
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
