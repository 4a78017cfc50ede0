"""The push channel form: the declared settings (PushChannelSettings) that push_channel_create
or push_channel_update is given, with only the chosen provider's fields, secrets that are
write-only (pasted or uploaded as a file), and refusals of the push services shown next to the
input they are about."""

import json
from typing import Any, cast

from django import forms
from django.core.files.uploadedfile import UploadedFile

from apps.accounts.admin.declared import declared_form, own_input
from apps.accounts.admin.forms import text_rules
from apps.core.api.fields import camel_case, control_characters_error
from apps.core.declarations import settings_of
from apps.core.errors import ApplicationError
from apps.notifications import domain
from apps.notifications.admin.forms import CODE_ATTRS
from apps.notifications.choices import PushChannelStatus, PushKind
from apps.notifications.domain import PushChannelSettings
from apps.notifications.models import PushChannel
from apps.notifications.push.credentials import REQUIRED, SECRETS, SETTINGS

# Each provider's form fields, in the order of its fieldset. A secret has a text field and, for
# keys that come as a file, a file twin.
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("team_id", "key_id", "bundle_id", "signing_key", "signing_key_file", "sandbox"),
    PushKind.FCM: ("service_account", "service_account_file"),
    PushKind.EXPO: ("access_token",),
}
_FILE_OF = {"signing_key": "signing_key_file", "service_account": "service_account_file"}
# Write-only: the page never shows them, nor what was typed, and keeps them out of error reports.
SECRET_FIELDS = tuple(n for n, s in settings_of(PushChannelSettings).items() if s.secret)
# Larger than any .p8 or service-account file; read into memory, so bounded.
MAX_KEY_FILE = 64 * 1024
KIND_HELP: dict[str, str] = {
    PushKind.APNS: "Only for APNs channels. From the Apple developer account: Certificates, "
    "Identifiers &amp; Profiles > Keys, a key with Apple Push Notifications service enabled.",
    PushKind.FCM: "Only for FCM channels. From the Firebase console: Project settings > "
    "Service accounts > Generate new private key. The project id is taken from the file.",
    PushKind.EXPO: "Only for Expo channels. Expo needs no credentials unless the project "
    "requires access tokens for push (enhanced push security).",
}


def _kind_label(kind: str) -> str:
    return str(PushKind(kind).label) if kind in PushKind.values else kind


class SecretTextarea(forms.Textarea):
    """Shows no value, ever: nothing stored is rendered back, and neither is what was typed when
    the form returns with an error."""

    def format_value(self, value: Any) -> None:
        return None


def _service_account_size(account: dict[str, Any]) -> None:
    if len(str(account)) > domain.MAX_CHANNEL_LENGTHS["service_account"]:
        raise forms.ValidationError("is too large")


def _secret(name: str, widget: forms.Widget) -> Any:
    """A secret's input (its file twin is a FileField): write-only, kept as typed."""
    return own_input(PushChannelSettings, name, forms.CharField, strip=False, widget=widget)


def _at_most(name: str) -> list[Any]:
    return text_rules(settings_of(PushChannelSettings)[name].max_length or 0)


_Declared: Any = declared_form(
    PushChannelSettings,
    model=PushChannel,
    skip=(*SECRET_FIELDS, "flagged"),  # the flag is cleared by a box of its own
    choices={"kind": [("", "---------"), *PushKind.choices], "status": PushChannelStatus.choices},
)
_PASTED = SecretTextarea(attrs={**CODE_ATTRS, "autocomplete": "off", "rows": 6})


class PushChannelForm(_Declared):
    """The push channel services' settings: only the chosen provider's fields are given, and
    a secret left empty on the change page is not, so the service keeps it."""

    signing_key = _secret("signing_key", _PASTED)
    signing_key_file = forms.FileField(required=False, label="…or the .p8 file")
    service_account = _secret("service_account", _PASTED)
    service_account_file = forms.FileField(required=False, label="…or the JSON file")
    access_token = _secret(
        "access_token", forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"})
    )
    clear_flag = forms.BooleanField(
        required=False,
        label="Clear the flag",
        help_text="Once the settings are right: dead tokens are pruned again.",
    )

    # A key file pasted as text has line breaks (the declaration's service account is JSON).
    free_text = ("signing_key", "service_account")
    # What each secret may be, as the admin API checks it, once read (perhaps from its file).
    limits: dict[str, Any] = {
        "signing_key": _at_most("signing_key"),
        "service_account": [_service_account_size],
        "access_token": _at_most("access_token"),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.given: dict[str, Any] = {}  # secret -> what the call gets for it
        self.settings: PushChannelSettings | None = None  # once the form is valid
        super().__init__(*args, **kwargs)
        channel = self.instance
        if channel is None:
            self.fields.pop("clear_flag")
            return
        # The page shows the channel's own provider only (its kind is fixed).
        self.fields.pop("kind")
        for kind, names in KIND_FIELDS.items():
            for name in names if kind != channel.kind else ():
                self.fields.pop(name)
        if channel.flagged_at is None:
            self.fields.pop("clear_flag")
        keep = "Write-only: the stored one is never shown. Empty: keep the current one."
        for name in SECRET_FIELDS if channel.credentials else ():
            if name in self.fields:
                self.fields[name].help_text = keep

    def initial_from(self, obj: PushChannel) -> dict[str, Any]:
        # The provider's settings are stored as the admin API names them ("teamId").
        provider = {name: obj.settings.get(camel_case(name), "") for name in SETTINGS[obj.kind]}
        if "sandbox" in provider:
            provider["sandbox"] = bool(provider["sandbox"])
        return {**super().initial_from(obj), **provider}

    def _file_text(self, name: str) -> str | None:
        upload = cast(UploadedFile | None, self.cleaned_data.get(name))
        if upload is None:
            return None
        if (upload.size or 0) > MAX_KEY_FILE:
            self.add_error(name, f"is larger than {MAX_KEY_FILE // 1024} KB: not a key file")
            return None
        try:
            return b"".join(upload.chunks()).decode()
        except UnicodeDecodeError:
            self.add_error(name, "is not a text file")
            return None

    def _secret(self, name: str) -> tuple[str, Any]:
        """(field that holds the secret, its value, or None when not given)."""
        text = self.cleaned_data.get(name) or None
        file_name = _FILE_OF.get(name)
        from_file = self._file_text(file_name) if file_name else None
        if text and from_file:
            self.add_error(file_name, "paste the key or upload its file, not both")
            return cast(str, file_name), None
        if from_file is not None:
            return cast(str, file_name), from_file
        return name, text

    def _service_account(self, field: str, text: str) -> dict[str, Any] | None:
        try:
            account = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's
            account = None
        if not isinstance(account, dict):
            # The message never quotes the input: it may be most of a private key.
            self.add_error(field, "is not a JSON object: give the whole key file of the account")
            return None
        return account

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        self.settings = None
        if not self.errors:
            settings = PushChannelSettings(**self._values())
            self._check_given()
            self.settings = None if self.errors else settings
        return cleaned

    @property
    def valid_settings(self) -> PushChannelSettings:
        assert self.settings is not None  # noqa: S101 - a valid form has them
        return self.settings

    def _check_given(self) -> None:
        """What the call gets (a secret perhaps read from its file), as the admin API checks
        it: no control characters, then the limits."""
        for name, value in self.given.items():
            if isinstance(value, str):
                problem = control_characters_error(name, value, name in self.free_text)
                if problem is not None and not self.has_error(name):
                    self.add_error(name, f"This field {problem}.")
        for name, rules in self.limits.items():
            if self.has_error(name) or self.given.get(name) in (None, ""):
                continue
            for rule in rules:
                try:
                    rule(self.given[name])
                except forms.ValidationError as exc:
                    for text in exc.messages:
                        self.add_error(name, text[:1].upper() + text[1:])

    def refuse(self, exc: ApplicationError) -> None:
        """A secret that came as a file: its refusal goes under the file input."""
        super().refuse(exc)
        field = exc.fields[0] if len(exc.fields) == 1 else ""
        twin = _FILE_OF.get(field)
        errors = self.errors
        if twin and self.files.get(twin) and field in errors:
            errors[twin] = errors.pop(field)

    def _values(self) -> dict[str, Any]:
        """The settings given: only the chosen provider's fields, and a secret only when given
        (on the change page, empty keeps the stored one)."""
        cleaned = self.cleaned_data
        channel = self.instance
        kind = cleaned["kind"] if channel is None else channel.kind
        declared = self.declared_values()  # the sandbox box is given even when unticked
        values = {n: declared[n] for n in ("kind", "status", *SETTINGS[kind]) if n in declared}
        for other, names in KIND_FIELDS.items():
            for name in names if other != kind else ():
                if cleaned.get(name):
                    self.add_error(
                        name,
                        f"only for {_kind_label(other)} channels, not {_kind_label(kind)}",
                    )
        kept = channel is not None and bool(channel.credentials)
        for name in SECRETS[kind]:
            field, value = self._secret(name)
            if value is not None and name == "service_account":
                value = self._service_account(field, value)
            if value is not None:
                values[name] = self.given[name] = value
        for name in REQUIRED[kind]:
            if name in values or (kept and name in SECRETS[kind]):
                continue
            if not self.has_error(name) and not self.has_error(_FILE_OF.get(name, name)):
                self.add_error(name, f"required for {_kind_label(kind)} channels")
        if cleaned.get("clear_flag"):
            values["flagged"] = False
        return values
