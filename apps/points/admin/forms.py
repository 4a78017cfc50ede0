"""Checks of the points pages' inputs that several of their forms share."""

from typing import Any

from django import forms

from apps.accounts.admin.forms import url_problems


def badge_rule(url: str) -> None:
    """A badge's URL, as the admin API checks a badge ({"url"}): its messages name the url."""
    if problems := url_problems(url):
        raise forms.ValidationError([f"Url: {problem}" for problem in problems])


def checked(value: Any, rules: list[Any]) -> list[str]:
    """The messages of the `rules` that `value` breaks."""
    messages: list[str] = []
    for rule in rules:
        try:
            rule(value)
        except forms.ValidationError as exc:
            messages += exc.messages
    return messages
