"""The end-user pages linked from emails: manage preferences and (one-click) unsubscribe."""

import json
import re

import pytest
from django.core import signing
from django.test import Client

from apps.accounts.services import settings_update, tenant_archive
from apps.notifications.pages import email_mask
from apps.notifications.tokens import (
    preferences_token,
    preferences_url,
    unsubscribe_token,
    unsubscribe_url,
)
from apps.users.models import EndUser

ALL_ON = {"email": True, "push": True}
TYPES = ("achievement_completed", "recap", "reactivation", "streak_reminder")


@pytest.fixture
def user(tenant):
    return EndUser.objects.create(tenant=tenant, external_id="u1", email="ada@example.com")


@pytest.fixture
def browser():
    """A browser: keeps cookies, and Django checks CSRF as it would in production."""
    return Client(enforce_csrf_checks=True)


@pytest.fixture
def mail_client():
    """A mail client sending RFC 8058 one-click posts: no cookies, no CSRF token."""
    return Client(enforce_csrf_checks=True)


def path_of(url):
    assert url.startswith("http://testserver/")
    return url.removeprefix("http://testserver")


def prefs_path(user):
    return path_of(preferences_url(user))


def unsub_path(user, type):
    return path_of(unsubscribe_url(user, type))


def checked(html):
    """{(type, channel)} of the ticked checkboxes."""
    boxes = re.findall(r"<input type=\"checkbox\"[^>]*>", html)
    return {
        (re.search(r'name="([^"]+)"', box)[1], re.search(r'value="([^"]+)"', box)[1])
        for box in boxes
        if " checked" in box
    }


def save(browser, path, boxes, **extra):
    """Post the page's form with these boxes ticked."""
    data: dict = {}
    for type, channel in boxes:
        data.setdefault(type, []).append(channel)
    return browser.post(path, data, **extra)


def tamper(token):
    """Change one character of the signed payload (not of the signature)."""
    i = 1
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]


def every(**but):
    return {(t, c) for t in TYPES for c in ("email", "push")} - set(but.get("off", ()))


# --- manage preferences ----------------------------------------------------------------------


def test_preferences_page_shows_branding_and_current_choices(tenant, user, browser):
    settings_update(
        tenant,
        branding={
            "app_name": "Wordsmith",
            "brand_color": "#4f46e5",
            "logo_url": "https://cdn.example.com/logo.png",
        },
    )
    user.notification_preferences = {"recap": [], "streak_reminder": ["push"]}
    user.save()

    response = browser.get(prefs_path(user))

    assert response.status_code == 200
    html = response.content.decode()
    assert "Wordsmith" in html
    assert "#4f46e5" in html
    assert 'src="https://cdn.example.com/logo.png"' in html
    for label in ("Achievement completed", "Recap", "Reactivation", "Streak reminder"):
        assert label in html
    # Absent types are on; [] is off; a list names the channels that are on.
    assert checked(html) == every(
        off=[("recap", "email"), ("recap", "push"), ("streak_reminder", "email")]
    )


def test_without_branding_the_page_uses_the_default_name_and_colour_of_emails(tenant, user):
    html = Client().get(prefs_path(user)).content.decode()
    assert tenant.name in html
    assert "--brand: #374151;" in html


def test_a_colour_that_is_not_a_colour_never_reaches_the_style_sheet(tenant, user):
    tenant.branding = {"brandColor": "red;} body{display:none"}  # stored bypassing the API
    tenant.save()
    html = Client().get(prefs_path(user)).content.decode()
    assert "display:none" not in html
    assert "--brand: #374151;" in html


def test_saving_writes_every_type_and_the_api_reads_the_same(user, browser, api_client):
    path = prefs_path(user)
    response = save(
        browser,
        path,
        [("achievement_completed", "email"), ("achievement_completed", "push"), ("recap", "push")],
    )

    assert response.status_code == 303
    assert response["Location"] == f"{path}?saved=1"
    user.refresh_from_db()
    expected = {
        "achievement_completed": ["email", "push"],
        "recap": ["push"],
        "reactivation": [],
        "streak_reminder": [],
    }
    assert user.notification_preferences == expected
    api = api_client.get("/v1/users/u1/preferences")
    assert api.status_code == 200
    assert api.json()["notifications"] == expected

    after = browser.get(response["Location"])
    html = after.content.decode()
    assert "Saved" in html
    assert checked(html) == {
        ("achievement_completed", "email"),
        ("achievement_completed", "push"),
        ("recap", "push"),
    }


def test_the_page_shows_what_the_api_wrote(user, api_client):
    api_client.patch("/v1/users/u1/preferences", {"notifications": {"reactivation": ["email"]}})
    html = Client().get(prefs_path(user)).content.decode()
    assert checked(html) == every(off=[("reactivation", "push")])
    assert "Saved" not in html


def test_the_form_needs_no_csrf_token_the_link_is_the_credential(user, browser):
    response = browser.post(prefs_path(user), {"recap": ["push"]}, HTTP_ORIGIN="null")
    assert response.status_code == 303
    user.refresh_from_db()
    assert user.notification_preferences["recap"] == ["push"]


def test_a_user_without_email_is_told_they_will_not_get_emails(tenant):
    nomail = EndUser.objects.create(tenant=tenant, external_id="u2")
    html = Client().get(prefs_path(nomail)).content.decode()
    assert "no email address" in html
    assert "no address" in html


def test_the_email_address_is_masked(user):
    for response in (
        Client().get(prefs_path(user)),
        Client().get(unsub_path(user, "recap")),
        Client().post(unsub_path(user, "recap")),
    ):
        html = response.content.decode()
        assert "a***@example.com" in html
        assert "ada@example.com" not in html


def test_email_mask():
    assert email_mask("ada@example.com") == "a***@example.com"
    assert email_mask("x@y.org") == "x***@y.org"
    assert email_mask("not-an-address") == "***"
    assert email_mask("") is None
    assert email_mask(None) is None


# --- unsubscribe ------------------------------------------------------------------------------


def test_one_click_unsubscribe_turns_off_only_that_email(user, mail_client):
    user.notification_preferences = {"recap": ["email", "push"], "reactivation": ["email"]}
    user.save()

    response = mail_client.post(
        unsub_path(user, "recap"),
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )

    assert response.status_code == 200
    assert "unsubscribed" in response.content.decode()
    user.refresh_from_db()
    assert user.notification_preferences == {"recap": ["push"], "reactivation": ["email"]}


def test_one_click_for_a_type_never_set_keeps_its_push(user, mail_client):
    response = mail_client.post(
        unsub_path(user, "streak_reminder"),
        {"List-Unsubscribe": "One-Click"},
    )
    assert response.status_code == 200
    user.refresh_from_db()
    assert user.notification_preferences == {"streak_reminder": ["push"]}


def test_one_click_twice_changes_nothing_more(user, mail_client):
    path = unsub_path(user, "recap")
    mail_client.post(path, {"List-Unsubscribe": "One-Click"})
    assert mail_client.post(path, {"List-Unsubscribe": "One-Click"}).status_code == 200
    user.refresh_from_db()
    assert user.notification_preferences == {"recap": ["push"]}


@pytest.mark.parametrize("body", [{}, {"anything": "else"}])
def test_any_post_to_the_link_unsubscribes(user, mail_client, body):
    response = mail_client.post(unsub_path(user, "reactivation"), body)
    assert response.status_code == 200
    user.refresh_from_db()
    assert user.notification_preferences == {"reactivation": ["push"]}


def test_opening_the_unsubscribe_link_changes_nothing_and_asks(user, browser):
    response = browser.get(unsub_path(user, "achievement_completed"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Unsubscribe from Achievement completed emails?" in html
    assert '<form method="post">' in html
    assert "/notifications/preferences/" not in html  # the link may turn one email off only
    assert browser.head(unsub_path(user, "achievement_completed")).status_code == 200
    user.refresh_from_db()
    assert user.notification_preferences == {}


def test_the_confirmation_form_unsubscribes_and_hands_out_no_preferences_link(user, browser):
    path = unsub_path(user, "recap")
    browser.get(path)
    response = browser.post(path)  # the confirmation form carries no CSRF token
    assert response.status_code == 200
    html = response.content.decode()
    assert "You are unsubscribed" in html
    assert "/notifications/preferences/" not in html
    user.refresh_from_db()
    assert user.notification_preferences == {"recap": ["push"]}


def test_a_preferences_token_is_not_an_unsubscribe_token(user, mail_client):
    token = preferences_token(user)
    response = mail_client.post(f"/notifications/unsubscribe/{token}")
    assert response.status_code == 400
    user.refresh_from_db()
    assert user.notification_preferences == {}


@pytest.mark.parametrize("method", ["get", "post"])
def test_an_unsubscribe_token_does_not_open_the_preferences_page(user, browser, method):
    user.notification_preferences = {"recap": []}
    user.save()
    token = unsubscribe_token(user, "recap")
    response = getattr(browser, method)(f"/notifications/preferences/{token}", {"recap": "email"})
    assert response.status_code == 400
    assert "This link is invalid" in response.content.decode()
    user.refresh_from_db()
    assert user.notification_preferences == {"recap": []}


def _payload(token):
    """What a signed token carries, as anyone holding the link can read it."""
    return json.loads(signing.b64_decode(token.split(":")[0].encode()))


def test_tokens_name_the_user_by_public_id_not_by_primary_key(user):
    assert _payload(preferences_token(user)) == str(user.public_id)
    assert _payload(unsubscribe_token(user, "recap")) == [str(user.public_id), "recap"]


def legacy_token(user, type=None):
    """A link as emails sent before the two tokens were separated carry it."""
    return signing.dumps([user.tenant_id, user.pk, type], salt="gamify.notifications.preferences")


def test_an_unsubscribe_link_sent_before_still_unsubscribes_and_opens_nothing_else(
    user, mail_client
):
    token = legacy_token(user, "recap")
    assert mail_client.post(f"/notifications/unsubscribe/{token}").status_code == 200
    assert mail_client.get(f"/notifications/preferences/{token}").status_code == 400
    user.refresh_from_db()
    assert user.notification_preferences == {"recap": ["push"]}


def test_a_preferences_link_sent_before_still_opens_the_page_and_does_not_unsubscribe(
    user, browser
):
    token = legacy_token(user)
    assert browser.get(f"/notifications/preferences/{token}").status_code == 200
    assert browser.post(f"/notifications/unsubscribe/{token}").status_code == 400
    user.refresh_from_db()
    assert user.notification_preferences == {}


def test_an_unknown_type_is_an_invalid_link(user, mail_client):
    response = mail_client.post(unsub_path(user, "newsletter"))
    assert response.status_code == 400
    assert "This link is invalid" in response.content.decode()


# --- links that are not, or no longer, good --------------------------------------------------


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("kind", ["preferences", "unsubscribe"])
def test_a_tampered_token_is_refused_and_writes_nothing(user, browser, method, kind):
    token = unsubscribe_token(user, "recap") if kind == "unsubscribe" else preferences_token(user)
    for bad in (tamper(token), token[:-1], "garbage", token + "x"):
        response = getattr(browser, method)(f"/notifications/{kind}/{bad}", {"recap": []})
        assert response.status_code == 400, bad
        assert "This link is invalid" in response.content.decode()
    user.refresh_from_db()
    assert user.notification_preferences == {}


def test_a_token_is_bound_to_its_user(tenant, other_tenant, user, mail_client):
    other = EndUser.objects.create(tenant=other_tenant, external_id="u1", email="bob@example.com")
    token = unsubscribe_token(other, "recap")
    # Whatever single character is changed, the link fails; it never names another user.
    for i in range(len(token)):
        forged = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]
        assert mail_client.post(f"/notifications/unsubscribe/{forged}").status_code == 400, i
    assert mail_client.post(f"/notifications/unsubscribe/{token}").status_code == 200
    user.refresh_from_db()
    other.refresh_from_db()
    assert user.notification_preferences == {}
    assert other.notification_preferences == {"recap": ["push"]}


@pytest.mark.parametrize("kind", ["preferences", "unsubscribe"])
def test_the_link_of_a_deleted_user_answers_a_harmless_page(tenant, user, browser, kind):
    path = prefs_path(user) if kind == "preferences" else unsub_path(user, "recap")
    user.delete()
    # Same external id, new user: the link named the old one and must not reach this one.
    again = EndUser.objects.create(tenant=tenant, external_id="u1", email="ada@example.com")

    for response in (browser.get(path), browser.post(path, {"recap": ["push"]})):
        assert response.status_code == 404
        html = response.content.decode()
        assert "This link is no longer valid" in html
        assert "example.com" not in html
    again.refresh_from_db()
    assert again.notification_preferences == {}


@pytest.mark.parametrize("kind", ["preferences", "unsubscribe"])
def test_the_link_of_an_archived_tenant_answers_a_harmless_page(org, other_tenant, browser, kind):
    archived = EndUser.objects.create(tenant=other_tenant, external_id="u1", email="a@b.c")
    path = prefs_path(archived) if kind == "preferences" else unsub_path(archived, "recap")
    tenant_archive(other_tenant)

    for response in (browser.get(path), browser.post(path)):
        assert response.status_code == 404
        assert "This link is no longer valid" in response.content.decode()
    archived.refresh_from_db()
    assert archived.notification_preferences == {}


def test_a_link_sent_before_naming_another_tenant_is_no_longer_valid(tenant, other_tenant, user):
    moved = EndUser(pk=user.pk, tenant=other_tenant)  # signed for the wrong tenant
    response = Client().post(f"/notifications/unsubscribe/{legacy_token(moved, 'recap')}")
    assert response.status_code == 404
    user.refresh_from_db()
    assert user.notification_preferences == {}


# --- what every page carries -------------------------------------------------------------------


def test_every_page_is_private(user, browser):
    good_prefs, good_unsub = prefs_path(user), unsub_path(user, "recap")
    responses = [
        browser.get(good_prefs),
        save(browser, good_prefs, []),
        browser.get(f"{good_prefs}?saved=1"),
        browser.get(good_unsub),
        browser.post(good_unsub),
        browser.get("/notifications/preferences/garbage"),
        browser.post("/notifications/unsubscribe/garbage"),
        browser.put(good_unsub),  # method not allowed
    ]
    user.delete()
    responses.append(browser.get(good_prefs))

    assert [r.status_code for r in responses] == [200, 303, 200, 200, 200, 400, 400, 405, 404]
    for response in responses:
        assert response["Referrer-Policy"] == "no-referrer"
        assert "no-store" in response["Cache-Control"]
        assert response["X-Robots-Tag"] == "noindex"
        if response.status_code in (200, 400, 404):
            assert '<meta name="robots" content="noindex">' in response.content.decode()
