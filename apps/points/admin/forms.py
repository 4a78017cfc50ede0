"""Checks of the points pages' inputs that several of their forms share."""

import re
from typing import Any

from django import forms
from django.core import validators

from apps.accounts.admin.base import sentence, text_rules, url_problems
from apps.core.api.fields import KEY_PATTERN, KEY_RULE


def badge_rule(url: str) -> None:
    """A badge's URL, as the admin API checks a badge ({"url"}): its messages name the url."""
    if problems := url_problems(url):
        raise forms.ValidationError([f"Url: {problem}" for problem in problems])


def key_rules() -> list[Any]:
    """A configuration key (apps/core/api/fields.py key_field), in the page's words."""
    return [
        *text_rules(100),
        validators.RegexValidator(re.compile(KEY_PATTERN), sentence(KEY_RULE)),
    ]


def checked(value: Any, rules: list[Any]) -> list[str]:
    """The messages of the `rules` that `value` breaks."""
    messages: list[str] = []
    for rule in rules:
        try:
            rule(value)
        except forms.ValidationError as exc:
            messages += exc.messages
    return messages
