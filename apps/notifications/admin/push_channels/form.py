"""The push channel form: the arguments of push_channel_create or push_channel_update, with
only the chosen provider's fields, secrets that are write-only (pasted or uploaded as a file),
and refusals of the push services shown next to the input they are about."""

import json
from typing import Any, cast

from django import forms
from django.core.files.uploadedfile import UploadedFile

from apps.accounts.admin.config_pages import ConfigForm
from apps.core.api.fields import control_characters_error
from apps.core.errors import ApplicationError
from apps.notifications.admin.forms import CODE_ATTRS, at_most
from apps.notifications.choices import PushChannelStatus, PushKind
from apps.notifications.models import PushChannel
from apps.notifications.push.credentials import MAX_LENGTHS, REQUIRED

# Each provider's form fields, in the order of its fieldset. A secret has a text field and, for
# keys that come as a file, a file twin.
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    PushKind.APNS: ("team_id", "key_id", "bundle_id", "signing_key", "signing_key_file", "sandbox"),
    PushKind.FCM: ("service_account", "service_account_file"),
    PushKind.EXPO: ("access_token",),
}
_FILE_OF = {"signing_key": "signing_key_file", "service_account": "service_account_file"}
SECRET_FIELDS = ("signing_key", "service_account", "access_token")
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
    if len(str(account)) > MAX_LENGTHS["service_account"]:
        raise forms.ValidationError("is too large")


def _pasted_secret(**kwargs: Any) -> forms.CharField:
    """A secret pasted as text (its file twin is a FileField): write-only, kept as typed."""
    widget = SecretTextarea(attrs={**CODE_ATTRS, "autocomplete": "off", "rows": 6})
    return forms.CharField(required=False, strip=False, widget=widget, **kwargs)


class PushChannelForm(ConfigForm):
    """The arguments of the push channel services: only the chosen provider's fields are
    given, and a secret left empty on the change page is not, so the service keeps it."""

    kind = forms.ChoiceField(
        choices=[("", "---------"), *PushKind.choices],
        help_text="Set for good. Only the fields of the chosen provider apply.",
    )
    status = forms.ChoiceField(
        choices=PushChannelStatus.choices,
        initial=PushChannelStatus.ACTIVE,
        help_text="Only active channels send.",
    )
    team_id = forms.CharField(
        required=False, label="Team ID", help_text="The 10-character id of the Apple team."
    )
    key_id = forms.CharField(
        required=False,
        label="Key ID",
        # Help texts are HTML: the angle brackets are escaped.
        help_text="The 10-character id of the signing key, as in its file name "
        "AuthKey_&lt;key id&gt;.p8.",
    )
    bundle_id = forms.CharField(
        required=False, label="Bundle ID", help_text="The app's bundle id, e.g. com.example.app."
    )
    signing_key = _pasted_secret(
        label="Signing key",
        help_text="Paste the content of the .p8 file (-----BEGIN PRIVATE KEY----- …), or upload "
        "the file below. Write-only: it is stored encrypted and never shown.",
    )
    signing_key_file = forms.FileField(required=False, label="…or the .p8 file")
    sandbox = forms.BooleanField(
        required=False,
        help_text="Send through Apple's development environment, for builds run from Xcode. "
        "TestFlight and App Store builds use production: a wrong choice makes every token "
        "look invalid.",
    )
    service_account = _pasted_secret(
        help_text="Paste the service account's JSON key file, or upload the file below. "
        "Write-only: it is stored encrypted and never shown.",
    )
    service_account_file = forms.FileField(required=False, label="…or the JSON file")
    access_token = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Empty: none. Write-only: it is stored encrypted and never shown.",
    )
    clear_flag = forms.BooleanField(
        required=False,
        label="Clear the flag",
        help_text="Once the settings are right: dead tokens are pruned again.",
    )

    free_text = ("signing_key", "service_account")
    # What each given value may be, as the admin API checks it.
    limits: dict[str, Any] = {
        "team_id": at_most(MAX_LENGTHS["team_id"]),
        "key_id": at_most(MAX_LENGTHS["key_id"]),
        "bundle_id": at_most(MAX_LENGTHS["bundle_id"]),
        "signing_key": at_most(MAX_LENGTHS["signing_key"]),
        "service_account": [_service_account_size],
        "access_token": at_most(MAX_LENGTHS["access_token"]),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.given: dict[str, Any] = {}  # form field -> what the call gets for it
        self.kwargs: dict[str, Any] = {}  # the service's arguments, once the form is valid
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
        settings = obj.settings
        return {
            "status": obj.status,
            "team_id": settings.get("teamId", ""),
            "key_id": settings.get("keyId", ""),
            "bundle_id": settings.get("bundleId", ""),
            "sandbox": bool(settings.get("sandbox")),
        }

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
        if not self.errors:
            self.kwargs = self._arguments()
            self._check_given()
        if self.errors:
            self.kwargs = {}
        return cleaned

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

    def _arguments(self) -> dict[str, Any]:
        """The service's arguments: only the chosen provider's fields, and a secret only when
        given (on the change page, empty keeps the stored one)."""
        cleaned = self.cleaned_data
        channel = self.instance
        kind = cleaned["kind"] if channel is None else channel.kind
        kwargs: dict[str, Any] = {"status": cleaned["status"]}
        if channel is None:
            kwargs["kind"] = kind
        for other, names in KIND_FIELDS.items():
            for name in names if other != kind else ():
                if cleaned.get(name):
                    self.add_error(
                        name,
                        f"only for {_kind_label(other)} channels, not {_kind_label(kind)}",
                    )
        for name in KIND_FIELDS[kind]:
            # File twins are read with their text field; the sandbox box is given below, even
            # when unticked.
            if name in _FILE_OF.values() or name == "sandbox":
                continue
            if name in SECRET_FIELDS:
                field, value = self._secret(name)
                if value is not None and name == "service_account":
                    value = self._service_account(field, value)
                # A secret left empty on the change page keeps the stored one.
                missing = value is None and (channel is None or not channel.credentials)
            else:
                field, value = name, cleaned.get(name) or None
                missing = value is None
            if value is not None:
                kwargs[name] = self.given[name] = value
            elif missing and name in REQUIRED[kind] and not self.has_error(field):
                self.add_error(name, f"required for {_kind_label(kind)} channels")
        if kind == PushKind.APNS:
            kwargs["sandbox"] = bool(cleaned.get("sandbox"))
        if cleaned.get("clear_flag"):
            kwargs["flagged"] = False
        return kwargs
