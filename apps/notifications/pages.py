"""End-user pages linked from emails: manage notification preferences, and unsubscribe from one
notification type (RFC 8058 one-click included).

Nobody logs in here: the signed token in the URL (tokens.py) is the only authority. So every
response is kept out of caches, search engines and Referer headers, and shows no more of the
user than a masked email address.

Every link is answered with a page, never a 500:
- 400 "This link is invalid": the token is tampered or malformed, or (unsubscribe) carries no
  notification type we know. The link never came from us as it stands.
- 404 "This link is no longer valid": a genuine token whose user is deleted, whose tenant is
  archived or gone, or whose tenant is not the user's. 404 because what the link names no
  longer exists; it is one page for all these cases (like a selector's "not found"), so a link
  tells nobody which case it is. Nothing is written.
"""

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from apps.accounts.choices import TenantStatus
from apps.accounts.domain import BRAND_COLOR_DEFAULT
from apps.accounts.models import Tenant
from apps.core.cells import current_cell, using_cell
from apps.leagues.selectors import leagues_config
from apps.notifications.choices import (
    LEAGUE_TYPES,
    QUEST_TYPES,
    TROPHY_TYPES,
    Channel,
    NotificationType,
)
from apps.notifications.context import app_context
from apps.notifications.domain import channel_allowed
from apps.notifications.services import notification_preferences_update, notification_unsubscribe
from apps.notifications.tokens import (
    LinkUser,
    link_cell,
    preferences_token_read,
    unsubscribe_token_read,
)
from apps.quests.selectors import quests_config
from apps.users.models import EndUser
from apps.users.services import user_lock_pk

PageView = Callable[[HttpRequest, str], HttpResponse]

_TEMPLATES = "notifications/pages"

DESCRIPTIONS = {
    NotificationType.ACHIEVEMENT_COMPLETED: "When you complete an achievement.",
    NotificationType.RECAP: "A summary of your progress each week or month.",
    NotificationType.REACTIVATION: "A nudge when you have not been active for a while.",
    NotificationType.STREAK_REMINDER: "A reminder before your streak is about to end.",
    NotificationType.LEAGUE_RESULT: "Your result when a league week ends.",
    NotificationType.LEAGUE_AT_RISK: "On a league week's last day, when you could go down.",
    NotificationType.QUEST_REMINDER: "In the evening, when today's quests are unfinished.",
}

# Tenant branding reaches an inline <style> and an <img src>; autoescaping keeps it inside the
# HTML but not inside CSS, so only plain colour values (the forms the settings API accepts) and
# web URLs are used, whatever path (API, dashboard, database) stored them.
_BYTE = r"\s*(\d{1,3})\s*"
_COLOR = re.compile(
    rf"#[0-9a-fA-F]{{3}}|#[0-9a-fA-F]{{6}}|rgba?\({_BYTE},{_BYTE},{_BYTE}(?:,\s*[0-9.]{{1,6}}\s*)?\)"
)
_WEB_URL = re.compile(r"https?://[^\s\"'<>]+")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class Brand:
    name: str
    logo_url: str | None
    color: str
    on_color: str  # text colour readable on `color`


def brand_of(tenant: Tenant | None) -> Brand:
    """The tenant's app name, logo and colour, with the same fallbacks as its emails; the
    default colour when the page is not about a known tenant."""
    if tenant is None:
        color = BRAND_COLOR_DEFAULT
        return Brand(name="", logo_url=None, color=color, on_color=_text_color_on(color))
    app = app_context(tenant)
    raw_color = str(app["brandColor"] or "")
    color = raw_color if _COLOR.fullmatch(raw_color) else BRAND_COLOR_DEFAULT
    logo = app["logoUrl"] if isinstance(app["logoUrl"], str) else ""
    return Brand(
        name=str(app["name"]),
        logo_url=logo if _WEB_URL.fullmatch(logo) else None,
        color=color,
        on_color=_text_color_on(color),
    )


def _text_color_on(color: str) -> str:
    """Black or white, whichever reads better on `color` (WCAG relative luminance)."""
    if color.startswith("#"):
        digits = color[1:] if len(color) == 7 else "".join(c * 2 for c in color[1:])
        rgb = [int(digits[i : i + 2], 16) for i in (0, 2, 4)]
    else:
        rgb = [int(part) for part in re.findall(r"\d+", color)[:3]]

    def linear(value: int) -> float:
        c = min(max(value, 0), 255) / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(v) for v in rgb)
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    # White wins while its contrast ratio beats black's: (1.05)/(L+0.05) > (L+0.05)/0.05.
    return "#ffffff" if luminance < 0.179 else "#111827"


def email_mask(email: str | None) -> str | None:
    """`ada@example.com` -> `a***@example.com`: enough for the owner to recognise it, not
    enough to learn someone's address from a forwarded link."""
    if not email:
        return None
    local, at, domain = email.partition("@")
    return f"{local[:1]}***@{domain}" if at and local else "***"


# --- the frame every page shares -------------------------------------------------------------


def _private(view: PageView) -> PageView:
    """The URL carries a bearer token: never cache, index or pass it on as a Referer, and let
    the page load nothing from elsewhere (branding values are the tenant's)."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, token: str) -> HttpResponse:
        cell = link_cell(token)  # the user's cell, with several (apps/cells)
        with using_cell(cell or current_cell()):
            response = view(request, token)
        response["Cache-Control"] = "no-store"
        response["Referrer-Policy"] = "no-referrer"
        response["X-Robots-Tag"] = "noindex"
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return response

    return wrapped


def _page(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    status: int = 200,
    tenant: Tenant | None = None,
) -> HttpResponse:
    return render(
        request,
        f"{_TEMPLATES}/{template}",
        {"brand": brand_of(tenant), **context},
        status=status,
    )


def _invalid(request: HttpRequest) -> HttpResponse:
    return _page(
        request,
        "message.html",
        {
            "title": "This link is invalid",
            "message": "It may have been cut off or mistyped. Please open the link from the "
            "email again, or copy all of it.",
        },
        status=400,
    )


def _gone(request: HttpRequest) -> HttpResponse:
    return _page(
        request,
        "message.html",
        {
            "title": "This link is no longer valid",
            "message": "There is nothing to manage here any more. Nothing was changed.",
        },
        status=404,
    )


def _user_find(who: LinkUser) -> EndUser | None:
    """The user a genuine token names, if they still exist in an active tenant.

    By their public id, not the external id, which a customer could reassign to someone else
    (a legacy link: by primary key, in the tenant it names)."""
    users = EndUser.objects.select_related("tenant")
    if who.public_id is not None:
        user = users.filter(public_id=who.public_id).first()
    elif who.user_pk is not None and who.tenant_pk is not None:
        user = users.filter(pk=who.user_pk, tenant_id=who.tenant_pk).first()
    else:
        return None
    return user if user is not None and user.tenant.status == TenantStatus.ACTIVE else None


def _user_locked(user: EndUser) -> EndUser | None:
    """`user` again under their row lock (user_lock_pk, the pipeline's lock point), inside the
    caller's transaction, so that the read-merge-write of the preferences is not interleaved
    with another locked writer of this user; None when they or their tenant went meanwhile."""
    locked = user_lock_pk(user.pk)
    return locked if locked is not None and locked.tenant.status == TenantStatus.ACTIVE else None


# --- manage preferences ----------------------------------------------------------------------


def _types_shown(tenant: Tenant) -> list[str]:
    """The types the page offers: Trophy's, and the league types when the tenant has a
    league (a type not shown is left as it is when the page is saved)."""
    shown: list[str] = list(TROPHY_TYPES)
    if leagues_config(tenant):
        shown += LEAGUE_TYPES
    if quests_config(tenant).quests:
        shown += QUEST_TYPES
    return shown


def _checked_preferences(data: QueryDict, types: list[str]) -> dict[str, list[str]]:
    """Every type shown, from the form's checkboxes (name = type, value = channel), so a type
    left with no box ticked is written as [] (off) rather than left absent (on)."""
    return {
        type: [channel for channel in Channel.values if channel in data.getlist(type)]
        for type in types
    }


# No CSRF check: the signed token in the URL is the credential, not a cookie, so a forged
# cross-site post would need the token, and with it anyone can post directly anyway. (A check
# would also refuse our own form: under `Referrer-Policy: no-referrer`, browsers post with
# `Origin: null`.)
@csrf_exempt
@_private
@require_http_methods(["GET", "HEAD", "POST"])
def preferences_page(request: HttpRequest, token: str) -> HttpResponse:
    """The user's notification types x channels as checkboxes.

    POST writes every type from the checkboxes through notification_preferences_update, then
    redirects (303) to the same URL with `?saved=1`, which shows a "Saved" notice: reloading
    the page does not post the form again. A bad token gets a 400 page, a stale one a 404.
    """
    who = preferences_token_read(token)
    if who is None:
        return _invalid(request)
    user = _user_find(who)
    if user is None:
        return _gone(request)
    return _preferences_form(request, user)


def _preferences_form(request: HttpRequest, user: EndUser) -> HttpResponse:
    if request.method == "POST":
        with transaction.atomic():
            locked = _user_locked(user)
            if locked is None:
                return _gone(request)
            checked = _checked_preferences(request.POST, _types_shown(locked.tenant))
            notification_preferences_update(locked, checked)
        return HttpResponseRedirect(f"{request.path}?saved=1", status=303)
    return _page(
        request,
        "preferences.html",
        {
            "rows": [
                {
                    "type": type,
                    "label": label,
                    "description": DESCRIPTIONS[NotificationType(type)],
                    "channels": [
                        {
                            "value": channel,
                            "label": channel_label,
                            "checked": channel_allowed(
                                user.notification_preferences, type, channel
                            ),
                        }
                        for channel, channel_label in Channel.choices
                    ],
                }
                for type in _types_shown(user.tenant)
                for label in [NotificationType(type).label]
            ],
            "email": email_mask(user.email),
            "emails_off": bool(user.email) and not user.subscribe_to_emails,
            "saved": request.GET.get("saved") == "1",
        },
        tenant=user.tenant,
    )


# --- unsubscribe -----------------------------------------------------------------------------


# Mail clients post RFC 8058 one-click requests with neither cookie nor CSRF token; the signed
# token is the authority, and all it can do is turn one kind of email off.
@csrf_exempt
@_private
@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe_page(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks for confirmation and changes nothing, as link scanners open links.

    POST turns email off for the token's type (keeping push and the other types) and answers
    200 with a confirmation page, never a redirect (RFC 8058 clients do not follow one). The
    body is not read: `List-Unsubscribe=One-Click` from a mail client, the confirmation form,
    or any other body all unsubscribe, because the token, not the body, is the authority; and
    a client sending a slightly different body should still stop the emails. Repeating it
    changes nothing more.
    """
    claims = unsubscribe_token_read(token)
    if claims is None or claims[1] not in NotificationType.values:
        return _invalid(request)
    type = NotificationType(claims[1])
    user = _user_find(claims[0])
    if user is None:
        return _gone(request)
    if request.method == "POST":
        with transaction.atomic():
            locked = _user_locked(user)
            if locked is None:
                return _gone(request)
            notification_unsubscribe(locked, type, Channel.EMAIL)
    # No link to the preferences page: this token may turn one kind of email off, nothing more.
    context = {"type_label": type.label, "email": email_mask(user.email)}
    template = "unsubscribed.html" if request.method == "POST" else "unsubscribe.html"
    return _page(request, template, context, tenant=user.tenant)
