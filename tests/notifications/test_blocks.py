"""Email templates built from blocks: what blocks_check accepts and refuses, and what the blocks
compile to (responsive HTML through MJML, a text part from the same blocks), rendered by the
same sandboxed path as every template."""

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.core.errors import ValidationError
from apps.notifications.rendering import email_render, sample_context, template_check
from apps.notifications.rendering.blocks import (
    BLOCK_TYPES,
    MAX_BLOCKS,
    blocks_check,
    blocks_compile,
    starter_blocks,
    variables_for,
)


def render(blocks: list[dict[str, Any]], **context_changes: Any) -> Any:
    compiled = blocks_compile(blocks_check(blocks))
    context = {**sample_context(), **context_changes}
    return email_render(
        subject="Hi", html=compiled.html, text=compiled.text, context=context, seed="m1"
    )


def body_of(html: str) -> str:
    return html.split("<body", 1)[1]


EVERY_BLOCK = [
    {"type": "heading", "text": "Well done, {{ user.name }}"},
    {"type": "text", "text": "First paragraph.\n\nSecond, {{ app.name }}."},
    {"type": "button", "label": "Open the app", "url": "https://app.example.com/?u={{ user.id }}"},
    {"type": "image", "url": "{{ achievement.badgeUrl }}", "alt": "Badge", "width": 120},
    {"type": "achievement"},
    {"type": "streak"},
    {"type": "points", "system": "xp"},
    {"type": "leaderboard", "leaderboard": "weekly-words"},
    {
        "type": "conditional",
        "variable": "user.attributes.plan",
        "operator": "is",
        "value": "pro",
        "blocks": [{"type": "text", "text": "Thanks for being a pro."}],
    },
    {"type": "divider"},
]


def test_every_block_type_is_covered_here() -> None:
    assert {block["type"] for block in EVERY_BLOCK} == set(BLOCK_TYPES)


def test_the_html_is_mjmls_responsive_html_with_the_content() -> None:
    email = render(EVERY_BLOCK)
    html = email.html

    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "@media only screen and (min-width:480px)" in html  # columns stack on phones
    body = body_of(html)
    for shown in (
        "Well done, Jamie",
        "First paragraph.",
        "Second, Acme Fitness.",
        'href="https://app.example.com/?u=user-123"',
        "Open the app",
        'alt="Badge"',
        "Ten workouts",  # the achievement card
        "Finish ten workouts.",
        "Earned by 12.5% of users",
        "12-day streak",
        "4,250 XP",
        "Level: Gold",
        "#4",  # the leaderboard rank
        "on Weekly words",
        "Thanks for being a pro.",
    ):
        assert shown in body, shown
    # The brand: the context's colour on the header and the buttons, its logo on top.
    assert "background-color:#4F46E5" in html.replace(" ", "")
    assert 'src="http://testserver/static/notifications/sample/logo.png"' in html


def test_the_text_part_comes_from_the_same_blocks() -> None:
    text = render(EVERY_BLOCK).text

    assert text.splitlines()[0] == "Acme Fitness"
    for shown in (
        "Well done, Jamie",
        "First paragraph.\n\nSecond, Acme Fitness.",
        "Open the app: https://app.example.com/?u=user-123",
        "[Badge]",
        "Ten workouts\nFinish ten workouts.\nEarned by 12.5% of users",
        "12-day streak",
        "4,250 XP (level: Gold)",
        "#4 on Weekly words",
        "Thanks for being a pro.",
        "----------",
        "Manage email preferences: https://gamify.example.com/notifications/preferences/sample",
    ):
        assert shown in text, shown
    assert "<" not in text
    assert "{{" not in text
    assert "{%" not in text
    assert "\n\n\n" not in text


def test_without_a_logo_the_header_shows_the_app_name() -> None:
    app = {"name": "Wordsmith", "url": "", "logoUrl": None, "brandColor": "#0F766E"}
    email = render([{"type": "text", "text": "Hi"}], app=app)

    assert "<img" not in body_of(email.html)
    assert "Wordsmith" in body_of(email.html)
    assert "background-color:#0F766E" in email.html.replace(" ", "")


@pytest.mark.parametrize(
    ("operator", "value", "plan", "shown"),
    [
        ("is", "pro", "pro", True),
        ("is", "PRO", "pro", True),  # ignoring case
        ("is", "pro", "free", False),
        ("isNot", "pro", "free", True),
        ("isSet", None, "pro", True),
        ("isSet", None, "", False),
        ("isNotSet", None, "", True),
    ],
)
def test_a_conditional_block_on_a_user_attribute(
    operator: str, value: str | None, plan: str, shown: bool
) -> None:
    block: dict[str, Any] = {
        "type": "conditional",
        "variable": "user.attributes.plan",
        "operator": operator,
        "blocks": [{"type": "text", "text": "Only for some"}],
    }
    if value is not None:
        block["value"] = value
    user = {**sample_context()["user"], "attributes": {"plan": plan}}
    email = render([block], user=user)

    assert ("Only for some" in email.html) is shown
    assert ("Only for some" in email.text) is shown


@pytest.mark.parametrize(
    ("operator", "value", "length", "shown"),
    [
        ("atLeast", "10", 12, True),
        ("atLeast", "10", 10, True),
        ("atLeast", "10", 9, False),
        ("below", "7", 3, True),
        ("below", "7", 7, False),
        ("is", "12", Decimal("12.000"), True),  # numbers compare as printed
    ],
)
def test_a_conditional_block_on_a_fact(operator: str, value: str, length: Any, shown: bool) -> None:
    block = {
        "type": "conditional",
        "variable": "streak.length",
        "operator": operator,
        "value": value,
        "blocks": [{"type": "heading", "text": "On fire"}],
    }
    streak = {**sample_context()["streak"], "length": length}

    assert ("On fire" in render([block], streak=streak).html) is shown


def test_conditional_blocks_nest() -> None:
    inner = {
        "type": "conditional",
        "variable": "streak.length",
        "operator": "atLeast",
        "value": "5",
        "blocks": [{"type": "text", "text": "Pro with a streak"}],
    }
    outer = {
        "type": "conditional",
        "variable": 'user.attributes["plan"]',
        "operator": "is",
        "value": "pro",
        "blocks": [inner],
    }
    assert "Pro with a streak" in render([outer]).text


def test_what_staff_type_is_text_never_markup_nor_template_code() -> None:
    typed = (
        "<script>alert(1)</script> <b>bold</b> {% for x in range(10) %}loop{% endfor %} "
        "{# note #} {x} \" ' &amp;"
    )
    email = render(
        [
            {"type": "heading", "text": "<i>{{ user.name }}</i>"},
            {"type": "text", "text": typed},
            {"type": "button", "label": '"><script>x</script>', "url": "https://a.test/?a=1&b=2"},
        ]
    )
    body = body_of(email.html)

    assert "<script>" not in body
    assert "<b>" not in body
    assert "<i>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;i&gt;Jamie&lt;/i&gt;" in body
    assert "{% for x in range(10) %}loop{% endfor %}" in body  # shown as typed, not run
    assert "looploop" not in body
    assert 'href="https://a.test/?a=1&amp;b=2"' in body
    # The text part shows the same text as typed.
    assert typed in email.text


def test_a_variables_value_is_escaped_in_the_html() -> None:
    user = {**sample_context()["user"], "name": "<b>Ada & Co</b>"}
    email = render([{"type": "text", "text": "Hello {{ user.name }}"}], user=user)

    assert "Hello &lt;b&gt;Ada &amp; Co&lt;/b&gt;" in body_of(email.html)
    assert "Hello <b>Ada & Co</b>" in email.text


def test_a_conditional_value_stays_a_value() -> None:
    block = {
        "type": "conditional",
        "variable": "user.attributes.plan",
        "operator": "is",
        "value": '" or true or "%} {{ 7*7 }}',
        "blocks": [{"type": "text", "text": "Hidden"}],
    }
    email = render([block])

    assert "Hidden" not in email.html
    assert "49" not in email.text


def test_the_same_variable_references_as_the_advanced_mode() -> None:
    # The picker's references, a metric key with a dash among them, print what the advanced
    # mode's {{ ... }} prints.
    metrics = {"daily-steps": {"name": "Steps", "total": Decimal("1200.50")}}
    variables = variables_for(
        "achievement_completed", metric_keys=["daily-steps"], attribute_keys=["plan"]
    )
    paths = [v["path"] for v in variables]
    assert 'metrics["daily-steps"].total' in paths
    assert "user.attributes.plan" in paths
    text = " ".join("{{ " + path + " }}" for path in paths)

    email = render([{"type": "text", "text": text}], metrics=metrics)

    assert "1200.5" in email.text
    assert "Ten workouts" in email.text
    assert "pro" in email.text


def test_each_types_starter_blocks_render_against_the_sample() -> None:
    for type in ("achievement_completed", "recap", "reactivation", "streak_reminder"):
        compiled = blocks_compile(blocks_check(starter_blocks(type)))
        template_check(subject="s", html=compiled.html, text=compiled.text)
    for type in ("league_result", "league_at_risk"):
        compiled = blocks_compile(blocks_check(starter_blocks(type)))
        template_check(subject="s", html=compiled.html, text=compiled.text)


@pytest.mark.parametrize(
    ("blocks", "problem"),
    [
        ("text", "blocks must be a list of blocks"),
        ([{"text": "x"}], "block 1: type must be one of"),
        ([{"type": "video"}], "block 1: type must be one of"),
        ([{"type": ["heading"]}], "block 1: type must be one of"),
        ([{"type": "heading", "text": {"a": 1}}], "block 1 (heading): text must be a string"),
        ([{"type": "image", "url": "https://a.test/x.png", "width": True}], "width must be"),
        ([{"type": "conditional", "variable": 5, "operator": "isSet"}], "variable must be"),
        ([{"type": "conditional", "variable": "streak.length", "operator": []}], "operator"),
        (
            [
                {
                    "type": "conditional",
                    "variable": "streak.length",
                    "operator": "isSet",
                    "blocks": {},
                }
            ],
            "blocks must be a list of blocks",
        ),
        ([{"type": "heading"}], "block 1 (heading): text is required"),
        ([{"type": "heading", "text": "a", "colour": "red"}], "unknown field colour"),
        ([{"type": "heading", "text": "one\ntwo"}], "text must be one line"),
        ([{"type": "text", "text": "{{ user.name() }}"}], "is not a variable reference"),
        ([{"type": "text", "text": "{{ secrets.key }}"}], "“secrets.key” is not a template"),
        ([{"type": "text", "text": "{{ user.name|safe }}"}], "“|safe” is not allowed"),
        (
            [{"type": "button", "label": "Go", "url": "javascript:alert(1)"}],
            "block 1 (button): url must start with https://",
        ),
        (
            [{"type": "image", "url": "{{ user.name }}"}],
            "url must start with https://",
        ),
        (
            [{"type": "image", "url": "https://a.test/x.png", "width": 5000}],
            "width must be a whole number of pixels from 40 to 600",
        ),
        ([{"type": "points", "system": "x y"}], "system must be a key"),
        (
            [{"type": "conditional", "variable": "os.system", "operator": "isSet", "blocks": []}],
            "variable must be a template variable",
        ),
        (
            [
                {
                    "type": "conditional",
                    "variable": "streak.length",
                    "operator": "atLeast",
                    "value": "ten",
                    "blocks": [],
                }
            ],
            "value must be a number with atLeast",
        ),
        (
            [
                {
                    "type": "conditional",
                    "variable": "streak.length",
                    "operator": "is",
                    "blocks": [],
                }
            ],
            "value is required with is",
        ),
        (
            [{"type": "conditional", "variable": "streak.length", "operator": "like"}],
            "operator must be one of",
        ),
        (
            [{"type": "text", "text": "x"}] * (MAX_BLOCKS + 1),
            f"at most {MAX_BLOCKS} blocks",
        ),
    ],
)
def test_blocks_check_refuses_with_a_clear_error(blocks: Any, problem: str) -> None:
    with pytest.raises(ValidationError) as raised:
        blocks_check(blocks)

    assert raised.value.fields == ("blocks",)
    assert problem in raised.value.message


def test_nested_blocks_are_named_by_their_place() -> None:
    blocks = [
        {"type": "divider"},
        {
            "type": "conditional",
            "variable": "streak.length",
            "operator": "isSet",
            "blocks": [{"type": "text", "text": "ok"}, {"type": "button", "label": "x"}],
        },
    ]
    with pytest.raises(ValidationError, match=r"block 2\.2 \(button\): url is required"):
        blocks_check(blocks)


def test_conditionals_nest_at_most_three_deep() -> None:
    block: dict[str, Any] = {"type": "text", "text": "deep"}
    for _ in range(4):
        block = {
            "type": "conditional",
            "variable": "streak.length",
            "operator": "isSet",
            "blocks": [block],
        }
    with pytest.raises(ValidationError, match="nest at most 3 deep"):
        blocks_check([block])


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["type", "text", "url", "label", "blocks", "operator", "variable", "x"]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@given(_JSON)
def test_any_json_is_either_checked_blocks_or_a_validation_error(value: Any) -> None:
    try:
        checked = blocks_check(value)
    except ValidationError:
        return
    compiled = blocks_compile(checked)  # what is accepted compiles and renders
    template_check(subject="s", html=compiled.html, text=compiled.text)


def test_a_layout_mjml_cannot_build_is_a_validation_error(monkeypatch: Any) -> None:
    def broken(source: str) -> str:
        raise ValueError("unexpected element")

    monkeypatch.setattr("apps.notifications.rendering.blocks.mjml2html", broken)
    with pytest.raises(ValidationError, match="layout could not be built: unexpected element"):
        blocks_compile(blocks_check([{"type": "divider"}]))


def test_text_that_looks_like_a_placeholder_stays_text() -> None:
    email = render([{"type": "text", "text": "gmfyjinja0x and gmfyjinja1x"}])

    # Shown as typed (not replaced by the snippets the placeholders stand for).
    assert "gmfyjinja0x and gmfyjinja1x" in body_of(email.html)
    assert "gmfyjinja0x and gmfyjinja1x" in email.text


def test_sample_images_have_an_address_before_collectstatic(settings):
    """Without a collected manifest (DEBUG off before `collectstatic`), a template check still
    renders: the sample image's address is its plain static name, not a 500."""
    from apps.notifications.rendering.defaults import sample_image_url

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
    }
    settings.STATIC_ROOT = "/nonexistent-static-root"
    url = sample_image_url("logo", "https://gamify.example.com")
    assert url == "https://gamify.example.com/static/notifications/sample/logo.png"
