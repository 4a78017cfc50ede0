"""Checks of the points pages' inputs that several of their forms share."""

from django import forms

from apps.accounts.admin.base import url_problems


def badge_rule(url: str) -> None:
    """A badge's URL, as the admin API checks a badge ({"url"}): its messages name the url."""
    if problems := url_problems(url):
        raise forms.ValidationError([f"url: {problem}" for problem in problems])
