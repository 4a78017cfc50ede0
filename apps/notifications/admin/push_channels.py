"""Dashboard pages for push channels, whose credentials are write-only; written by the push
services, with the admin API's validation."""

import json
import re
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.debug import sensitive_post_parameters

from apps.accounts.admin.base import (
    TENANT_RELATED,
    ServiceAdmin,
    TenantColumnMixin,
    TenantFilter,
    delete_selected,
)
from apps.accounts.models import Tenant
from apps.notifications import serializers
from apps.notifications.admin.forms import with_field_errors
from apps.notifications.choices import (
    PushChannelStatus,
    PushKind,
)
from apps.notifications.models import PushChannel
from apps.notifications.push import services
from apps.notifications.push.credentials import REQUIRED
from apps.points.admin import ConfigForm

_CODE = {"spellcheck": "false", "style": "font-family: monospace; width: 100%"}
_SECRET = {**_CODE, "autocomplete": "off", "rows": 6}


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


class PushChannelForm(ConfigForm):
    """The body of the admin API's create or update call: only the chosen provider's fields are
    sent, and a secret left empty on the change page is not sent, so the service keeps it."""

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
    signing_key = forms.CharField(
        required=False,
        strip=False,
        label="Signing key",
        widget=SecretTextarea(attrs=_SECRET),
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
    service_account = forms.CharField(
        required=False,
        strip=False,
        widget=SecretTextarea(attrs=_SECRET),
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

    create_serializer = serializers.PushChannelCreateSerializer
    update_serializer = serializers.PushChannelUpdateSerializer
    api_keys = {
        "kind": "kind",
        "status": "status",
        "team_id": "teamId",
        "key_id": "keyId",
        "bundle_id": "bundleId",
        "signing_key": "signingKey",
        "sandbox": "sandbox",
        "service_account": "serviceAccount",
        "access_token": "accessToken",
        "clear_flag": "flagged",
    }
    create_only = ("kind",)

    class Meta:
        model = PushChannel
        fields = ("tenant",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        channel = self.instance
        if not channel.pk:
            self.fields.pop("clear_flag")
            return
        # The page shows the channel's own provider only (its kind is fixed).
        for kind, names in KIND_FIELDS.items():
            for name in names if kind != channel.kind else ():
                self.fields.pop(name)
        if channel.flagged_at is None:
            self.fields.pop("clear_flag")
        keep = "Write-only: the stored one is never shown. Empty: keep the current one."
        for name in SECRET_FIELDS if channel.credentials else ():
            if name in self.fields:
                self.fields[name].help_text = keep

    def config_tenant(self) -> Tenant | None:
        return self.instance.tenant if self.instance.pk else self.cleaned_data.get("tenant")

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
            # chunks() starts from the beginning: the form is cleaned twice when a service
            # refuses (see ServiceAdmin).
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
        except ValueError:
            account = None
        if not isinstance(account, dict):
            # The message never quotes the input: it may be most of a private key.
            self.add_error(field, "is not a JSON object: give the whole key file of the account")
            return None
        return account

    def body(self, cleaned: dict[str, Any], tenant: Tenant) -> dict[str, Any]:
        channel = self.instance
        kind = channel.kind if channel.pk else cleaned["kind"]
        body: dict[str, Any] = {"status": cleaned["status"]}
        if not channel.pk:
            body["kind"] = kind
        for other, names in KIND_FIELDS.items():
            for name in names if other != kind else ():
                if cleaned.get(name):
                    self.add_error(
                        name,
                        f"only for {_kind_label(other)} channels, not {_kind_label(kind)}",
                    )
        for name in KIND_FIELDS[kind]:
            key = self.api_keys.get(name)
            # File twins are read with their text field; the sandbox box is sent below, even
            # when unticked.
            if key is None or name == "sandbox":
                continue
            if name in SECRET_FIELDS:
                field, value = self._secret(name)
                if value is not None and key == "serviceAccount":
                    value = self._service_account(field, value)
                # A secret left empty on the change page keeps the stored one.
                missing = value is None and not channel.credentials
            else:
                field, value = name, cleaned.get(name) or None
                missing = value is None
            if value is not None:
                body[key] = value
            elif missing and key in REQUIRED[kind] and not self.has_error(field):
                self.add_error(name, f"required for {_kind_label(kind)} channels")
        if kind == PushKind.APNS:
            body["sandbox"] = bool(cleaned.get("sandbox"))
        if cleaned.get("clear_flag"):
            body["flagged"] = False
        return body


# A refusal of the service names the wire field first ("signingKey (the .p8 file) is not a PEM
# private key", "serviceAccount.token_uri must be one of ..."): shown next to that input.
_WIRE_KEY = re.compile(r"[A-Za-z]+")


def _credential_field(message: str, form: forms.ModelForm) -> str | None:
    """The input a credential refusal ("signingKey ... is not a PEM private key") is about:
    the file input when the key came as a file."""
    fields_by_key = {key: name for name, key in PushChannelForm.api_keys.items()}
    match = _WIRE_KEY.match(message)
    name = fields_by_key.get(match.group()) if match else None
    if name in _FILE_OF and form.cleaned_data.get(_FILE_OF[name]):
        name = _FILE_OF[name]
    return name


class FlaggedFilter(admin.SimpleListFilter):
    title = "flag"
    parameter_name = "flagged"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Flagged"), ("no", "Not flagged")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in ("yes", "no"):
            return queryset.filter(flagged_at__isnull=self.value() == "no")
        return queryset


@admin.action(permissions=["change"], description="Clear the flag of selected push channels")
def clear_flag(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    flagged = list(queryset.filter(flagged_at__isnull=False).select_related("tenant"))
    for channel in flagged:
        services.push_channel_update(channel, flagged=False, fields={})
    modeladmin.message_user(
        request,
        f"Cleared the flag of {len(flagged)} push channel(s): dead tokens are pruned again."
        if flagged
        else "None of the selected channels was flagged.",
        messages.SUCCESS if flagged else messages.WARNING,
    )


# Kept out of error reports (DEBUG pages, mails to ADMINS) along with the rest of the POST.
_sensitive = method_decorator(sensitive_post_parameters(*SECRET_FIELDS))


@admin.register(PushChannel)
class PushChannelAdmin(TenantColumnMixin, ServiceAdmin):
    form = PushChannelForm
    list_display = ("kind", "app_column", "status", "flag_column", "tenant_column", "created")
    list_select_related = (TENANT_RELATED,)
    list_filter = ("kind", "status", FlaggedFilter, ("tenant", TenantFilter))
    ordering = ("tenant_id", "kind", "pk")
    actions = [clear_flag, delete_selected]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PushChannel]:
        return super().get_queryset(request).select_related(TENANT_RELATED)

    @_sensitive
    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        return super().changeform_view(request, object_id, form_url, extra_context)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> list[tuple[Any, Any]]:
        if obj is None:
            return [
                (None, {"fields": ("tenant", "kind", "status")}),
                *(
                    (
                        _kind_label(kind),
                        {
                            "fields": names,
                            "classes": ("push-kind", f"push-kind-{kind}"),
                            "description": KIND_HELP[kind],
                        },
                    )
                    for kind, names in KIND_FIELDS.items()
                ),
            ]
        head = ("tenant_column", "kind", "public_id", "status", "created", "updated")
        fieldsets: list[tuple[Any, Any]] = [(None, {"fields": head})]
        if obj.flagged_at is not None:
            # The reason and date are above the form (pushchannel/change_form.html).
            fieldsets.append(("Flag", {"fields": ("clear_flag",)}))
        provider = (*KIND_FIELDS[obj.kind], *self._derived(obj), "credentials_state")
        fieldsets.append(
            (_kind_label(obj.kind), {"fields": provider, "description": KIND_HELP[obj.kind]})
        )
        return fieldsets

    @staticmethod
    def _derived(obj: PushChannel) -> tuple[str, ...]:
        return ("project_id",) if obj.kind == PushKind.FCM else ()

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return (
            "tenant_column",
            "kind",
            "public_id",
            "created",
            "updated",
            "project_id",
            "credentials_state",
        )

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        kwargs["fields"] = ("tenant",) if obj is None else ()
        return with_field_errors(
            super().get_form(request, obj, change, **kwargs), _credential_field
        )

    def service_create(self, request: HttpRequest, form: forms.ModelForm) -> PushChannel:
        data = cast(PushChannelForm, form).api_data
        return services.push_channel_create(
            form.cleaned_data["tenant"],
            kind=data["kind"],
            status=data.get("status", PushChannelStatus.ACTIVE),
            fields=serializers.channel_fields(data),
        )

    def service_update(
        self, request: HttpRequest, current: PushChannel, form: forms.ModelForm
    ) -> None:
        data = cast(PushChannelForm, form).api_data
        services.push_channel_update(
            current,
            status=data.get("status"),
            flagged=data.get("flagged"),
            fields=serializers.channel_fields(data),
        )

    def service_delete(self, request: HttpRequest, obj: PushChannel) -> None:
        services.push_channel_delete(obj)

    @admin.display(description="app")
    def app_column(self, obj: PushChannel) -> str:
        if obj.kind == PushKind.APNS:
            bundle = obj.settings.get("bundleId") or "-"
            return f"{bundle} (sandbox)" if obj.settings.get("sandbox") else bundle
        return str(obj.settings.get("projectId") or "-")

    @admin.display(description="flag", ordering="flagged_at")
    def flag_column(self, obj: PushChannel) -> SafeString | str:
        if obj.flagged_at is None:
            return "-"
        return format_html(
            '<span class="push-flag" title="{}" style="background: var(--error-fg, #ba2121); '
            "color: #fff; border-radius: 4px; padding: 2px 8px; font-weight: 600; "
            'cursor: help; white-space: nowrap">flagged</span>',
            obj.flag_reason or "flagged",
        )

    @admin.display(description="project id")
    def project_id(self, obj: PushChannel) -> str:
        return str(obj.settings.get("projectId") or "-")

    @admin.display(description="credentials")
    def credentials_state(self, obj: PushChannel) -> str:
        if not obj.credentials:
            return "None stored."
        return "Stored, encrypted. Write-only: never shown; enter a new one above to replace it."
