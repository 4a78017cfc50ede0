"""The email block editor in the browser, at a laptop's width (1280 px) and a phone's (390 px):
a staff member writes an achievement email with blocks (the variable picker, a conditional
block, reordering), watches the live preview follow in the tenant's brand with working images,
saves it and sends a test to an address they type, which a local SMTP server receives.
Screenshots of each step are saved (conftest.py)."""

import email
import email.policy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from apps.notifications.choices import TemplateMode
from apps.notifications.models import EmailTemplate
from tests.browser.conftest import HEIGHT, SCREENSHOTS, WIDTH, Staff
from tests.factories import OrganizationWithKey
from tests.notifications.test_smtp import Sink, free_port

WIDTHS = (1280, 390)


@pytest.fixture
def smtp_sink(settings: Any) -> Iterator[Sink]:
    sink = Sink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_TIMEOUT = 5
    settings.DEFAULT_FROM_EMAIL = "gamify <notify@gamify.test>"
    try:
        yield sink
    finally:
        controller.stop()


def shot(staff: Staff, name: str, width: int) -> Path:
    """A screenshot of the whole page `width` pixels wide; the window stays that wide."""
    driver = staff.driver
    driver.set_window_size(width, HEIGHT)
    height, bars = driver.execute_script(
        "return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]"
    )
    driver.set_window_size(width, max(HEIGHT, min(int(height) + int(bars), 6000)))
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{staff.test_name}-{len(staff.shots) + 1:02d}-{name}-{width}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(width, HEIGHT)
    staff.shots.append(path)
    return path


def wait_for(staff: Staff, condition: Any, message: str) -> Any:
    return WebDriverWait(staff.driver, 10).until(lambda driver: condition(), message)


def preview_html(staff: Staff) -> str:
    return staff.driver.execute_script("return document.getElementById('be-preview-frame').srcdoc")


def blocks(staff: Staff) -> list[WebElement]:
    return staff.all(".be-list > .be-block")


def type_into(element: WebElement, text: str, *, clear: bool = True) -> None:
    if clear:
        element.clear()
    element.send_keys(text)


def pick_variable(row: WebElement, label: str) -> None:
    Select(row.find_element(By.CSS_SELECTOR, "select.be-picker")).select_by_visible_text(label)


def image_status(staff: Staff, url: str) -> list[Any]:
    """What fetching an image the preview shows answers: [status, content type]."""
    return staff.driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "fetch(arguments[0]).then(r => done([r.status, r.headers.get('content-type')]))"
        ".catch(e => done([0, String(e)]));",
        url,
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_staff_write_an_achievement_email_with_blocks_preview_it_and_send_a_test(
    staff: Staff, smtp_sink: Sink, width: int
) -> None:
    org = OrganizationWithKey("Acme")
    logo = f"{staff.base_url}/static/notifications/sample/logo.png"
    org.tenant.branding = {
        "appName": "Wordsmith",
        "brandColor": "#0F766E",
        "logo": {"url": logo},
        "appUrl": "https://wordsmith.example",
    }
    org.tenant.save()
    driver = staff.driver
    driver.set_window_size(width, HEIGHT)

    # The list offers an email with blocks; it starts from the type's blocks.
    staff.go("/dashboard/notifications/emailtemplate/")
    staff.click('a[href$="/emailtemplate/blocks/new/"]')
    staff.find("#be-blocks .be-block")
    wait_for(staff, lambda: "Wordsmith" in preview_html(staff), "the first preview")
    assert [b.get_attribute("data-type") for b in blocks(staff)] == [
        "heading",
        "text",
        "achievement",
        "button",
    ]
    shot(staff, "new-email", width)

    # The name, and a subject with a variable from the picker.
    type_into(staff.find("#be-name"), "Badge unlocked")
    subject = staff.find("#be-subject")
    type_into(subject, "You earned ")
    pick_variable(subject.find_element(By.XPATH, ".."), "Achievement: name")
    assert subject.get_attribute("value") == "You earned {{ achievement.name }}"

    # The heading, with the user's name from the picker.
    heading = blocks(staff)[0]
    heading_text = heading.find_element(By.CSS_SELECTOR, "input[data-field=text]")
    type_into(heading_text, "Bravo, ")
    pick_variable(heading, "User: name")
    wait_for(
        staff, lambda: "Bravo, Jamie" in preview_html(staff), "the preview following the typing"
    )

    # A conditional block on a fact, with a text block inside it.
    Select(staff.find("#be-add-type")).select_by_visible_text("Conditional")
    staff.click("#be-add")
    conditional = blocks(staff)[-1]
    Select(
        conditional.find_element(By.CSS_SELECTOR, "select[data-field=variable]")
    ).select_by_visible_text("Streak: length")
    Select(
        conditional.find_element(By.CSS_SELECTOR, "select[data-field=operator]")
    ).select_by_visible_text("is at least")
    type_into(conditional.find_element(By.CSS_SELECTOR, "input[data-field=value]"), "10")
    Select(
        conditional.find_element(By.CSS_SELECTOR, ".be-add-nested select")
    ).select_by_visible_text("Text")
    conditional.find_element(By.CSS_SELECTOR, ".be-add-nested button").click()
    conditional = blocks(staff)[-1]
    inner = conditional.find_element(By.CSS_SELECTOR, ".be-nested textarea[data-field=text]")
    type_into(inner, "Twelve days in a row: you are on a roll!")
    # Moved above the button.
    conditional.find_element(By.CSS_SELECTOR, "button[aria-label='Move up']").click()
    assert [b.get_attribute("data-type") for b in blocks(staff)] == [
        "heading",
        "text",
        "achievement",
        "conditional",
        "button",
    ]
    wait_for(staff, lambda: "you are on a roll!" in preview_html(staff), "the conditional block")

    # The preview: the tenant's brand, working images served by gamify, the subject.
    html = preview_html(staff)
    assert "Wordsmith" in html
    assert "Acme Fitness" not in html
    assert "#0F766E" in html
    assert f'src="{logo}"' in html
    badge = f"{staff.base_url}/static/notifications/sample/badge.png"
    assert f'src="{badge}"' in html
    for image in (logo, badge):
        assert image_status(staff, image) == [200, "image/png"]
    assert staff.text("#be-preview-subject") == "You earned Ten workouts"
    assert staff.all("#be-preview-error")[0].is_displayed() is False
    if width == 390:  # the panes stack: the preview comes below the blocks
        form_box = staff.find(".be-form").rect
        preview_box = staff.find(".be-preview").rect
        assert preview_box["y"] > form_box["y"] + form_box["height"] - 1
        assert staff.no_horizontal_scroll()
    shot(staff, "written-and-previewed", width)

    # A mistake is named in the preview, and the preview comes back once it is fixed.
    heading_text = blocks(staff)[0].find_element(By.CSS_SELECTOR, "input[data-field=text]")
    type_into(heading_text, "Bravo, {{ user.name() }}")
    wait_for(staff, lambda: staff.find("#be-preview-error").is_displayed(), "the preview's error")
    assert "is not a variable reference" in staff.text("#be-preview-error")
    shot(staff, "a-mistake", width)
    type_into(heading_text, "Bravo, {{ user.name }}")
    wait_for(staff, lambda: not staff.find("#be-preview-error").is_displayed(), "fixed")

    # Saved through the services.
    staff.submit('.be-submit input[type="submit"]')
    assert staff.messages() == ["The email template “Badge unlocked” was added."]
    template = EmailTemplate.objects.get(name="Badge unlocked")
    assert template.mode == TemplateMode.BLOCKS
    assert [b["type"] for b in template.blocks or []][-2:] == ["conditional", "button"]
    assert template.subject == "You earned {{ achievement.name }}"

    # A test to an address typed in; the staff member's own is the default.
    to = staff.find("#be-to")
    assert to.get_attribute("value") == "admin@example.com"
    type_into(to, "qa@wordsmith.example")
    staff.click("#be-send")
    wait_for(
        staff,
        lambda: "Sent a test email to qa@wordsmith.example." in staff.text("#be-send-status"),
        "the test sent",
    )
    [(_mail_from, rcpt_tos, raw)] = smtp_sink.received
    assert rcpt_tos == ["qa@wordsmith.example"]
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert message["Subject"] == "[Test] You earned Ten workouts"
    assert "Wordsmith" in message["From"]
    html_part = message.get_body(("html",)).get_content()
    text_part = message.get_body(("plain",)).get_content()
    assert "Bravo, Jamie" in html_part
    assert "#0F766E" in html_part
    assert "Bravo, Jamie" in text_part
    assert "you are on a roll!" in text_part
    shot(staff, "test-sent", width)

    # The template's preview page shows the same, in the tenant's brand, with a test form.
    staff.go(f"/dashboard/notifications/emailtemplate/{template.pk}/preview/")
    frame = staff.find("iframe").get_attribute("srcdoc") or ""
    assert "Wordsmith" in frame
    assert f'src="{badge}"' in frame
    assert staff.find("#id_to").get_attribute("value") == "admin@example.com"
    if width == 390:
        assert staff.no_horizontal_scroll()
    shot(staff, "preview-page", width)

    driver.set_window_size(WIDTH, HEIGHT)
