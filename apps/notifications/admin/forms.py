"""Form plumbing the notification pages share."""

from collections.abc import Callable
from typing import Any, cast

from django import forms


def with_field_errors(
    form: type[forms.ModelForm], field_for: Callable[[str, forms.ModelForm], str | None]
) -> type[forms.ModelForm]:
    """ServiceAdmin shows a service's refusal above the form; when the message names what
    failed ("html: line 3: ...", "signingKey ..."), `field_for` finds the input it belongs to
    and the error goes next to it instead."""

    class FieldErrorForm(form):  # type: ignore[valid-type,misc]
        def clean(self) -> dict[str, Any]:
            try:
                return cast(dict[str, Any], super().clean())
            except forms.ValidationError as exc:
                name = field_for(exc.messages[0], self) if len(exc.messages) == 1 else None
                if name is None or name not in self.fields:
                    raise
                self.add_error(name, exc)
                return self.cleaned_data

    return FieldErrorForm
