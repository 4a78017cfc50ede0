"""One exception handler: every error leaves as {"error": "<message>"} with the right status."""

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions as drf
from rest_framework import serializers
from rest_framework.response import Response

from apps.core.api.naming import Namer, wire_namer
from apps.core.api.ratelimit import TIER_SETTINGS, WAIT_ATTR, retry_after_headers
from apps.core.api.shapes import Shape, renders
from apps.core.errors import ApplicationError

logger = logging.getLogger("gamify.api")


def flatten_validation_detail(detail: Any, prefix: str = "") -> list[str]:
    """Turn DRF's nested error structure into 'field: message' lines naming the field."""
    if isinstance(detail, dict):
        lines: list[str] = []
        for key, value in detail.items():
            name = (
                prefix
                if key in ("non_field_errors", "__all__")
                else (f"{prefix}.{key}" if prefix else str(key))
            )
            lines.extend(flatten_validation_detail(value, name))
        return lines
    if isinstance(detail, list):
        if detail and all(not isinstance(item, dict | list) for item in detail):
            return [f"{prefix}: {item}" if prefix else str(item) for item in detail]
        lines = []
        for index, item in enumerate(detail):
            if item in ({}, []):
                continue
            lines.extend(flatten_validation_detail(item, f"{prefix}[{index}]"))
        return lines
    return [f"{prefix}: {detail}" if prefix else str(detail)]


def validation_message(detail: Any) -> str:
    return "; ".join(flatten_validation_detail(detail)) or "Invalid input"


class ErrorBody(Shape):
    """The body of every error response (ErrorBody / AdminErrorBody)."""

    error = serializers.CharField(help_text="What went wrong, for a human.")


@renders(ErrorBody)
def error_body_render(message: str) -> dict[str, Any]:
    return {"error": message}


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(error_body_render(message), status=status, headers=headers)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        # The fields it names are written as the view's input serializer names them.
        view = context.get("view")
        name: Namer = getattr(view, "wire_name", wire_namer(None))
        return error_response(exc.status_code, exc.worded(name))
    if isinstance(exc, drf.ValidationError):
        return error_response(422, validation_message(exc.detail))
    if isinstance(exc, drf.ParseError):
        return error_response(400, f"Malformed JSON: {exc.detail}")
    if isinstance(exc, drf.UnsupportedMediaType):
        return error_response(415, "Content-Type must be application/json")
    if isinstance(exc, drf.MethodNotAllowed):
        return error_response(405, f"Method {context['request'].method} not allowed")
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return error_response(401, str(exc.detail))
    if isinstance(exc, drf.PermissionDenied | PermissionDenied):
        detail = getattr(exc, "detail", None) or "Forbidden"
        return error_response(403, str(detail))
    if isinstance(exc, drf.NotFound | Http404):
        return error_response(404, "Not found")
    if isinstance(exc, drf.Throttled):
        tier = getattr(context.get("view"), "rate_tier", 2)
        return error_response(
            429,
            f"Rate limit exceeded: tier {tier} allows "
            f"{getattr(settings, TIER_SETTINGS[tier])} requests per second per organization",
            # DRF rounds the wait up to seconds; the throttle kept it exact on the request.
            headers=retry_after_headers(getattr(context.get("request"), WAIT_ATTR, 1.0)),
        )
    if isinstance(exc, RequestDataTooBig):
        return error_response(413, "Request body too large")
    if isinstance(exc, drf.APIException):
        return error_response(exc.status_code, str(exc.detail))
    logger.exception("unhandled error", exc_info=exc)
    return error_response(500, "Internal server error")


def json_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(
        error_body_render(f"No route for {request.method} {request.path}"), status=404
    )


def json_server_error(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body_render("Internal server error"), status=500)


def json_bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse(error_body_render("Bad request"), status=400)


def json_permission_denied(
    request: HttpRequest, exception: Exception | None = None
) -> JsonResponse:
    return JsonResponse(error_body_render("Forbidden"), status=403)
