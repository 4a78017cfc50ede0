"""Rendering of email templates, which tenants write and which are therefore untrusted.

A template runs in Jinja2's sandbox with everything beyond plain data taken away (`sandbox`);
`render` turns a template's three parts into an email, `text` derives a plain-text part from
HTML, and `defaults` holds the built-in templates and the sample context.
"""

from apps.notifications.rendering.defaults import (
    LEAGUE_SAMPLE,
    QUESTS_SAMPLE,
    DefaultPushTemplate,
    DefaultTemplate,
    default_email_template,
    default_push_template,
    sample_context,
)
from apps.notifications.rendering.render import (
    RenderedEmail,
    RenderedPush,
    email_render,
    push_render,
    push_template_check,
    template_check,
    with_preferences_link,
)
from apps.notifications.rendering.text import html_to_text

__all__ = [
    "LEAGUE_SAMPLE",
    "QUESTS_SAMPLE",
    "DefaultPushTemplate",
    "DefaultTemplate",
    "RenderedEmail",
    "RenderedPush",
    "default_email_template",
    "default_push_template",
    "email_render",
    "html_to_text",
    "push_render",
    "push_template_check",
    "sample_context",
    "template_check",
    "with_preferences_link",
]
