"""Email and push templates as portable configuration (apps/core/portable.py), named by their
type and name ("streak_lost/Default"). Push channels enter the change history only: their
credentials are secrets and their apps belong to one environment."""

from typing import Any

from apps.core.portable import CollectionKind, State, register
from apps.notifications.choices import TemplateMode
from apps.notifications.models import EmailTemplate, PushChannel, PushTemplate
from apps.notifications.views import (
    EmailTemplateCollection,
    PushChannelCollection,
    PushTemplateCollection,
)


def _template_key(template: Any) -> str:
    return f"{template.type}/{template.name}"


def _email_tidy(state: State) -> State:
    """In blocks mode the HTML and text are generated from the blocks: not settings; in
    advanced mode there are no blocks."""
    generated = ("html", "text") if state.get("mode") == TemplateMode.BLOCKS else ("blocks",)
    return {name: value for name, value in state.items() if name not in generated}


register(
    CollectionKind(
        "email_template",
        "email template",
        80,
        EmailTemplateCollection(),
        model=EmailTemplate,
        key_of=_template_key,
        tidy=_email_tidy,
        archived={"status": "inactive"},
    )
)
register(
    CollectionKind(
        "push_template",
        "push template",
        81,
        PushTemplateCollection(),
        model=PushTemplate,
        key_of=_template_key,
        archived={"status": "inactive"},
    )
)
register(
    CollectionKind(
        "push_channel",
        "push channel",
        91,
        PushChannelCollection(),
        model=PushChannel,
        key_of=lambda channel: channel.kind,
        drop=frozenset({"flagged", "flagReason"}),
        portable=False,
    )
)
