"""Application API: a user's preferences. Admin API (gamify extensions, with the usual bulk
envelopes): email and push templates and their previews, push channels."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from apps.accounts.models import Tenant
from apps.core.api.views import AdminApi, AppApi
from apps.core.bulk import Collection, validated
from apps.core.openapi import ADMIN_WRITE_ERRORS, errors, read_errors
from apps.core.scope import Scope
from apps.notifications import configuration, openapi, selectors, serializers, services
from apps.notifications.domain import (
    EmailTemplateSettings,
    PushChannelSettings,
    PushTemplateSettings,
)
from apps.notifications.models import PushChannel
from apps.notifications.previews import push_template_preview, template_preview
from apps.notifications.push import configuration as push_configuration
from apps.streaks.selectors import streak_config, streak_state_get
from apps.streaks.services import streak_preferences_of, streak_preferences_update
from apps.users.selectors import user_get
from apps.users.wire import USER_ID


class UserPreferencesApi(AppApi):
    input_serializer = serializers.PreferencesUpdateSerializer

    def wire_name(self, field: str) -> str:
        # Only the streak part's service (streak_preferences_update) names its fields.
        return super().wire_name(f"streak.{field}")

    @extend_schema(
        operation_id="users_get_preferences",
        summary="Get a user's preferences",
        description="The user's notification preferences and, when streak customization is "
        "enabled or the user turned streaks off, their streak preferences.",
        parameters=[USER_ID],
        responses={
            200: serializers.UserPreferencesResponse,
            **read_errors("User not found"),
        },
    )
    def get(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        user = user_get(scope.tenant, user_id)
        return Response(self._render(scope.tenant, user))

    @extend_schema(
        operation_id="users_update_preferences",
        summary="Update a user's preferences",
        description="Notification channels are merged per type ([] disables a type). "
        "streak.enabled may always be set; streak.evaluationMode, streak.metrics and "
        "streak.daysOff only when the tenant enables streak customization.",
        parameters=[USER_ID],
        request=serializers.PreferencesUpdateSerializer,
        responses={
            200: serializers.UserPreferencesResponse,
            **errors(
                400,
                401,
                (
                    403,
                    "Streak customization is disabled and the body sets streak.evaluationMode, "
                    "streak.metrics or streak.daysOff; or an application API key used for "
                    "another user, or another tenant's Tenant-ID.",
                ),
                (404, "User not found, or unknown Tenant-ID."),
                413,
                (
                    422,
                    "Validation failed: an unknown field or metric key, or daysOff with a "
                    "streak frequency other than daily.",
                ),
            ),
        },
    )
    def patch(self, request: Request, user_id: str) -> Response:
        scope = self.scope(request)
        scope.ensure_user_access(user_id)
        data = validated(serializers.PreferencesUpdateSerializer, request.data)
        user = user_get(scope.tenant, user_id)
        with transaction.atomic():
            if "streak" in data:
                kwargs = serializers.PreferencesUpdateSerializer.streak_kwargs(data)
                streak_preferences_update(scope.tenant, user, **kwargs)
            if "notifications" in data:
                services.notification_preferences_update(user, data["notifications"])
        return Response(self._render(scope.tenant, user))

    @staticmethod
    def _render(tenant: Any, user: Any) -> dict[str, Any]:
        streak = streak_preferences_of(streak_config(tenant), streak_state_get(user))
        return serializers.user_preferences_response_render(user, streak)


@dataclass(frozen=True)
class TemplateKind:
    """What differs between email and push templates for the admin collection."""

    content_fields: tuple[str, ...]
    settings: Callable[..., Any]  # the declaration the services take
    seed: Callable[[Tenant], None]
    rows: Callable[[Tenant, int, int], Sequence[Any]]
    row: Callable[[Tenant, str], Any]
    create: Callable[..., Any]
    update: Callable[..., Any]
    delete: Callable[[Any], None]
    render: Callable[[Any], dict[str, Any]]
    preview: Callable[..., dict[str, Any]]  # (template, user, keep_links=) -> the wire body


class _TemplateCollection(Collection):
    """Email and push templates: the same envelope, the tenant's built-in defaults given on
    first sight, and each kind's content fields (subject/html/text or title/body/url/data)."""

    kind: ClassVar[TemplateKind]

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[Any]:
        self.kind.seed(scope.tenant)
        return self.kind.rows(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> Any:
        self.kind.seed(scope.tenant)
        return self.kind.row(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> Any:
        self.kind.seed(scope.tenant)
        assert self.create_serializer is not None  # noqa: S101 - both kinds are writable
        kwargs = self.create_serializer.service_kwargs(data)
        return self.kind.create(scope.tenant, self.kind.settings(**kwargs))

    def update(self, scope: Scope, parent: Any, obj: Any, data: dict[str, Any]) -> Any:
        assert self.update_serializer is not None  # noqa: S101 - both kinds are writable
        kwargs = self.update_serializer.service_kwargs(data)
        return self.kind.update(scope.tenant, obj, self.kind.settings(**kwargs))

    def delete(self, scope: Scope, parent: Any, obj: Any) -> None:
        self.kind.delete(obj)

    def render(self, obj: Any) -> dict[str, Any]:
        return self.kind.render(obj)


class EmailTemplateCollection(_TemplateCollection):
    noun = "Email template"
    create_serializer = serializers.EmailTemplateCreateSerializer
    update_serializer = serializers.EmailTemplateUpdateSerializer
    output_schema = serializers.EmailTemplateSerializer
    schema_prefix = "email-templates"
    kind = TemplateKind(
        content_fields=("subject", "html", "text"),
        settings=EmailTemplateSettings,
        seed=configuration.email_templates_seed,
        rows=selectors.email_templates_list,
        row=selectors.email_template_get,
        create=configuration.email_template_create,
        update=configuration.email_template_update,
        delete=configuration.email_template_delete,
        render=serializers.email_template_render,
        preview=lambda template, user, **kw: serializers.email_preview_render(
            template_preview(template, user, **kw)
        ),
    )


class _TemplatePreviewApi(AdminApi):
    collection: ClassVar[type[_TemplateCollection]]

    def post(self, request: Request, object_id: str) -> Response:
        scope = self.scope(request)
        data = validated(serializers.PreviewSerializer, request.data)
        template = self.collection().get_or_404(scope, None, object_id)
        user = user_get(scope.tenant, data["userId"])
        # The admin API's caller is the tenant's backend: the user's real links are kept.
        return Response(self.collection.kind.preview(template, user, keep_links=True))


def _preview_schema(kind: str, summary: str, response: type[Serializer]) -> Any:
    return extend_schema_view(
        post=extend_schema(
            operation_id=f"admin_{kind}_templates_preview",
            summary=summary,
            description="Renders the template with the user's current data (a gamify "
            "extension). Nothing is sent.",
            parameters=[openapi.TEMPLATE_ID],
            request=serializers.PreviewSerializer,
            responses={200: response, **ADMIN_WRITE_ERRORS},
        )
    )


@_preview_schema("email", "Preview an email template for a user", serializers.EmailPreview)
class EmailTemplatePreviewApi(_TemplatePreviewApi):
    collection = EmailTemplateCollection


class PushChannelCollection(Collection):
    noun = "Push channel"
    create_serializer = serializers.PushChannelCreateSerializer
    update_serializer = serializers.PushChannelUpdateSerializer
    output_schema = serializers.PushChannelSerializer
    schema_prefix = "push-channels"

    def list(self, scope: Scope, parent: Any, limit: int, skip: int) -> Sequence[PushChannel]:
        return selectors.push_channels_list(scope.tenant, limit, skip)

    def get(self, scope: Scope, parent: Any, object_id: str) -> PushChannel | None:
        return selectors.push_channel_get(scope.tenant, object_id)

    def create(self, scope: Scope, parent: Any, data: dict[str, Any]) -> PushChannel:
        kwargs = serializers.PushChannelCreateSerializer.service_kwargs(data)
        return push_configuration.push_channel_create(scope.tenant, PushChannelSettings(**kwargs))

    def update(
        self, scope: Scope, parent: Any, obj: PushChannel, data: dict[str, Any]
    ) -> PushChannel:
        kwargs = serializers.PushChannelUpdateSerializer.service_kwargs(data)
        changes = PushChannelSettings(**kwargs)
        return push_configuration.push_channel_update(scope.tenant, obj, changes)

    def delete(self, scope: Scope, parent: Any, obj: PushChannel) -> None:
        push_configuration.push_channel_delete(obj)

    def render(self, obj: PushChannel) -> dict[str, Any]:
        return serializers.push_channel_render(obj)


class PushTemplateCollection(_TemplateCollection):
    noun = "Push template"
    create_serializer = serializers.PushTemplateCreateSerializer
    update_serializer = serializers.PushTemplateUpdateSerializer
    output_schema = serializers.PushTemplateSerializer
    schema_prefix = "push-templates"
    kind = TemplateKind(
        content_fields=("title", "body", "url", "data"),
        settings=PushTemplateSettings,
        seed=push_configuration.push_templates_seed,
        rows=selectors.push_templates_list,
        row=selectors.push_template_get,
        create=push_configuration.push_template_create,
        update=push_configuration.push_template_update,
        delete=push_configuration.push_template_delete,
        render=serializers.push_template_render,
        preview=lambda template, user, **kw: serializers.push_preview_render(
            push_template_preview(template, user, **kw)
        ),
    )


@_preview_schema("push", "Preview a push template for a user", serializers.PushPreview)
class PushTemplatePreviewApi(_TemplatePreviewApi):
    collection = PushTemplateCollection
