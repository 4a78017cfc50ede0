"""Email template rendering: the sandbox around tenants' templates, its budgets, variations, the
plain-text twin and the built-in default templates. Pure functions: no database."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings

from apps.notifications.choices import NotificationType
from apps.notifications.errors import TemplateRenderError
from apps.notifications.rendering import (
    RenderedEmail,
    default_email_template,
    email_render,
    html_to_text,
    sample_context,
    template_check,
)
from tests.notifications.conftest import TOO_MUCH_WORK


def render(
    html: str = "", *, subject: str = "Subject", text: str | None = "Text", **context: Any
) -> RenderedEmail:
    return email_render(
        subject=subject, html=html, text=text, context=context or sample_context(), seed="msg-1"
    )


def body(html: str, **context: Any) -> str:
    """The rendered HTML without the document css_inline wraps around a fragment."""
    inlined = render(html, **context).html
    return inlined.removeprefix("<html><head></head><body>").removesuffix("</body></html>")


@contextmanager
def quickly(seconds: float = 1.5) -> Iterator[None]:
    started = time.perf_counter()
    yield
    assert time.perf_counter() - started < seconds


# --- variables ------------------------------------------------------------------------------


def test_variables_are_escaped_in_html_and_literal_in_text_and_subject() -> None:
    user = {"name": "<script>alert(1)</script>"}

    email = render(
        "<p>{{ user.name }}</p>", subject="Hi {{ user.name }}", text="Hi {{ user.name }}", user=user
    )

    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in email.html
    assert "<script>" not in email.html
    assert email.text == "Hi <script>alert(1)</script>"
    assert email.subject == "Hi <script>alert(1)</script>"


def test_subject_header_injection_ends_up_on_one_line() -> None:
    email = render(subject="{{ user.name }}\n", user={"name": "Hi\r\nBcc: x@y\x00\t\u2028!"})

    assert email.subject == "Hi Bcc: x@y !"


def test_subject_is_cut_to_the_longest_header_line() -> None:
    assert len(render(subject="{{ 'ab' * 600 }}").subject) == 998


def test_missing_variables_render_empty() -> None:
    html = "[{{ achievement.name }}][{{ nothing }}][{{ nothing.deep['er'] }}][{{ nothing + 1 }}]"

    assert body(html, user={"name": "Jo"}) == "[][][][]"


def test_comparison_with_a_missing_variable_is_false() -> None:
    html = "{% if streak.length > 3 %}long{% else %}none{% endif %}"

    assert body(html, user={"name": "Jo"}) == "none"


def test_conditions_and_loops_over_dict_items_work() -> None:
    html = (
        "{% if streak.length > 3 %}streak {{ streak.length }};{% endif %}"
        "{% for key, m in metrics.items() %}{{ key }}={{ m.name }}/{{ m.units }};{% endfor %}"
        "{{ user.attributes.get('plan') }}"
    )

    assert body(html) == "streak 12;workouts=Workouts/;distance=Distance/km;pro"


def test_decimals_and_floats_print_without_trailing_zeros() -> None:
    html = "{{ a }} {{ b }} {{ c }} {{ d }}"

    rendered = body(html, a=Decimal("12.500000"), b=Decimal("1E+2"), c=2.50, d=None)

    assert rendered == "12.5 100 2.5 "


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("value|number", "1234567.5"),
        ("value|number(true)", "1,234,567.5"),
        ("value|number(places=0)", "1234568"),
        ("12.35|number(places=1)", "12.4"),
        ("3|number", "3"),
        ("zero|number", "0"),
        ("none|number", ""),
        ("'n/a'|number", "n/a"),
    ],
)
def test_number_filter_formats_decimals(expression: str, expected: str) -> None:
    context: dict[str, Any] = {"value": Decimal("1234567.500000"), "zero": Decimal("-0.00")}

    assert render(subject=f"{{{{ {expression} }}}}", **context).subject == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("items|join('-')", "1-2-3"),
        ("metrics.values()|join(', ', attribute='name')", "Workouts, Distance"),
        ("'a-b-a'|replace('a', 'xy')", "xy-b-xy"),
        ("items|batch(2)|list", "[[1, 2], [3]]"),
        ("items|slice(2)|list", "[[1, 2], [3]]"),
        ("items|sum", "6"),
        ("items|map('string')|join", "123"),
        ("'a' ~ 1 ~ none", "a1None"),
        ("[1] + [2]", "[1, 2]"),
        ("'ab' * 2", "abab"),
        ("7 % 4", "3"),
        ("2 ** 10", "1024"),
    ],
)
def test_budgeted_filters_and_operators_still_work(expression: str, expected: str) -> None:
    context = {**sample_context(), "items": [1, 2, 3]}

    assert render(subject=f"{{{{ {expression} }}}}", **context).subject == expected


def test_loops_keep_their_features() -> None:
    html = (
        "{% for x in items if x %}{{ loop.index }}/{{ loop.length }}{{ ',' if not loop.last }}"
        "{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}|"
        "{% for n in tree recursive %}{{ n.name }}({{ loop(n.children) }}){% endfor %}"
    )
    tree = [{"name": "a", "children": [{"name": "b", "children": []}]}]

    assert body(html, items=[1, 0, 2], tree=tree) == "1/2,2/2|empty|a(b())"


def test_date_filter_formats_iso_dates() -> None:
    subject = "{{ recap.periodStart|date }} / {{ recap.periodEnd|date('%d.%m.%Y') }}"

    assert render(subject=subject).subject == "May 25, 2026 / 31.05.2026"


# --- the sandbox ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "{{ user.__class__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ user['__class__'] }}",
        "{{ user|attr('__class__') }}",
        "{{ metrics.values()|map(attribute='__class__')|list }}",
        '{{ "{0.__class__}".format(user) }}',
        '{{ "{name}".format_map(user) }}',
        "{{ cycler.__init__.__globals__ }}",
        "{{ range.__globals__ }}",
        "{% for x in [1] %}{{ loop.__class__ }}{% endfor %}",
        "{{ self }}",
        "{{ self._TemplateReference__context }}",
        '{% include "/etc/passwd" %}',
        '{% extends "base.html" %}',
        '{% import "x" as y %}',
        '{% from "x" import y %}',
        "{{ lipsum() }}",
        "{{ namespace(a=1) }}",
        "{{ user.attributes.clear() }}",
        '{{ "%s and %s" % (1, 2) }}',
        '{{ "x"|center(80) }}',
        '{{ "x"|format(1) }}',
        "{{ user.name.zfill(10) }}",
    ],
)
def test_sandbox_escapes_fail(source: str) -> None:
    with pytest.raises(TemplateRenderError, match=r"^html: "):
        render(source)


def test_context_cannot_be_modified_by_a_template() -> None:
    context = sample_context()

    with pytest.raises(TemplateRenderError):
        render("{{ user.attributes.pop('plan') }}", **context)

    assert context["user"]["attributes"]["plan"] == "pro"


@pytest.mark.parametrize("name", ["lipsum", "cycler", "joiner", "namespace", "dict"])
def test_default_globals_are_gone(name: str) -> None:
    assert body(f"{{{{ {name} is defined }}}}") == "False"


def test_configuration_and_secrets_are_unreachable() -> None:
    source = "{{ config }}{{ settings.SECRET_KEY }}{{ request }}{{ environ }}{{ os }}"

    email = render(source, subject=source, text=source)

    for part in (email.subject, email.html, email.text):
        assert settings.SECRET_KEY not in part


# --- budgets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "range",
        ),
        ("{% for i in range(5000) %}{% for j in range(5000) %}{% endfor %}{% endfor %}", "range"),
        ("{% for c in user.name * 5000 %}{% for d in user.name %}{% endfor %}{% endfor %}", "loop"),
        ('{{ "x" * 1000000000 }}', "characters"),
        ("{{ 2 ** 100000000 }}", "bits"),
        ("{{ (10 ** 300) * (10 ** 300) }}", "bits"),
        ('{{ ("x" * 90000)|replace("x", "y" * 30) }}', "characters"),
        ('{{ (["x"] * 3000)|join("-" * 1000) }}', "characters"),
        ("{{ [1]|batch(1000000000, 0)|list }}", "characters"),
        (
            "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
            "{{ f(40) }}",
            "function calls",
        ),
        (
            "{% macro d(s, n) %}{{ d(s ~ s, n - 1) if n else s|length }}{% endmacro %}"
            '{{ d("x", 60) }}',
            "characters",
        ),
        ('{% set s = "x" * 100000 %}{% for i in range(20) %}{{ s }}{% endfor %}', "output"),
        ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "too deeply"),
    ],
)
def test_expensive_templates_fail_quickly(source: str, message: str) -> None:
    with quickly(), pytest.raises(TemplateRenderError, match=message):
        render(source)


# A 10,000-item list is within every budget, and so is a loop over it: issue 23's templates
# ran a filter over the list in each iteration, 10**8 items in all (one render took 186 s).
BIG = "{% set big = range(10000)|list %}"


@pytest.mark.parametrize(
    "source",
    [
        BIG + "{% for i in big %}{{ big|max }}{% endfor %}",
        BIG + "{% for i in big %}{{ big|sum }}{% endfor %}",
        BIG + "{% for i in big %}{{ big|select('>', 9998)|first }}{% endfor %}",
        BIG + "{% for i in big %}{{ big|map('string')|sort|first }}{% endfor %}",
        BIG + "{% for i in big %}{{ big|unique|list|length }}{% endfor %}",
        BIG + "{% for i in big %}{{ big|join|length }}{% endfor %}",
        BIG + "{% for i in big %}{{ -1 in big }}{% endfor %}",
        BIG + "{% for i in big %}{{ -1 is in big }}{% endfor %}",
        BIG + "{% for i in big %}{{ big.count(-1) }}{% endfor %}",
        BIG + "{% for i in big %}{{ big[1:]|length }}{% endfor %}",
        '{% set s = "x" * 1000000 %}{% for i in range(10000) %}'
        '{{ s|select("equalto", "y")|first }}{% endfor %}',
    ],
)
def test_filters_going_through_big_values_in_a_loop_fail_quickly(source: str) -> None:
    with quickly(), pytest.raises(TemplateRenderError, match=f"^html: {TOO_MUCH_WORK}"):
        render(source)


def _deep(name: str, levels: int) -> str:
    """`name` holds ten times `name`-one-level-down, `levels` times: 10**levels numbers from a
    few hundred characters (the same objects referred to over and over)."""
    source = "{% set z = 11 %}{% set " + name + "0 = [z, 2, 3, 4, 5, 6, 7, 8, 9, 10] %}"
    for level in range(1, levels + 1):
        inner = ", ".join([f"{name}{level - 1}"] * 10)
        source += f"{{% set {name}{level} = ({inner}) %}}"
    return source


# Each ran in C over 10**8 items (several seconds; one more level, minutes), with nothing
# charged and so no deadline check until it had finished.
@pytest.mark.parametrize(
    "source",
    [
        _deep("t", 8) + "{% set d = {t8: 1} %}",
        _deep("t", 8) + "{% set d = {} %}{{ d[t8] }}",
        _deep("a", 8) + _deep("b", 8) + "{% for x in [a8, b8] %}{{ loop.changed(x) }}{% endfor %}",
    ],
)
def test_hashing_or_comparing_a_deep_value_in_c_is_charged_first(source: str) -> None:
    with quickly(), pytest.raises(TemplateRenderError, match=f"^html: {TOO_MUCH_WORK}"):
        render(source)


# 2,000 references to `big`, built for 2,010 items: as text, twenty million numbers.
NESTED = BIG + "{% set n = [big] * 200 %}{% set m = [n] * 10 %}"


@pytest.mark.parametrize("source", ["{{ m }}", "{{ m ~ '' }}", "{{ m|tojson }}"])
def test_printing_what_holds_big_collections_fails_before_building_the_text(source: str) -> None:
    with quickly(), pytest.raises(TemplateRenderError, match=f"^html: {TOO_MUCH_WORK}"):
        render(NESTED + source)


@pytest.mark.parametrize(
    "source",
    [
        BIG + "{% for x in big recursive %}{% if loop.depth < 3 %}{{ loop(big) }}{% endif %}"
        "{% endfor %}",
        # One recursive call: far from the call budget, past the loop budget.
        BIG + "{% for x in big[:5000] recursive %}{% if loop.depth == 1 and loop.first %}"
        "{{ loop(big) }}{% endif %}{% endfor %}",
    ],
)
def test_recursive_loops_count_every_iteration(source: str) -> None:
    with quickly(), pytest.raises(TemplateRenderError, match="loops may run at most 10,000"):
        render(source)


def test_work_within_the_budget_renders() -> None:
    source = BIG + "{% for i in big[:8] %}{{ big|max }}{% endfor %}"

    assert body(source) == "9999" * 8


def test_a_render_past_its_deadline_stops_with_an_error(settings: Any) -> None:
    source = "{% for i in range(10000) %}{{ i|string }}{% endfor %}"
    assert len(body(source)) == 38_890  # within every budget

    settings.NOTIFICATIONS_TEMPLATE_RENDER_SECONDS = 0.001
    with pytest.raises(TemplateRenderError, match=r"^html: line 1: rendering took longer than"):
        render(source)


@pytest.mark.parametrize(
    ("part", "limit"), [("subject", 1_000), ("html", 200_000), ("text", 100_000)]
)
def test_oversized_sources_are_refused(part: str, limit: int) -> None:
    sources = {"subject": "s", "html": "h", "text": "t", part: "x" * (limit + 1)}

    with quickly(), pytest.raises(TemplateRenderError, match=f"^{part}: .*longer than"):
        render(sources["html"], subject=sources["subject"], text=sources["text"])


def test_sources_at_the_limit_are_accepted() -> None:
    email = render("h" * 200_000, subject="s" * 998, text="t" * 100_000)

    assert len(email.text) == 100_000


def test_css_that_would_take_minutes_to_inline_is_refused() -> None:
    rules = "".join(f"--v{i}: x; " for i in range(3000))
    source = f"<style>* {{ {rules} }}</style>{{% for i in range(3000) %}}<b></b>{{% endfor %}}"

    with quickly(), pytest.raises(TemplateRenderError, match="too much CSS"):
        render(source)


# --- error messages -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ("html", "html: line 3: unexpected '}'"),
        ("text", "text: line 3: unexpected '}'"),
        ("subject", "subject: line 3: unexpected '}'"),
    ],
)
def test_syntax_errors_name_the_part_and_the_line(part: str, expected: str) -> None:
    sources = {"subject": "s", "html": "h", "text": "t", part: "one\ntwo\n{{ user.name }\n"}

    with pytest.raises(TemplateRenderError) as caught:
        render(sources["html"], subject=sources["subject"], text=sources["text"])

    assert caught.value.message == expected


def test_render_errors_name_the_part_and_the_line() -> None:
    with pytest.raises(TemplateRenderError) as caught:
        render("one\n{{ user.name }}\n{{ 1 / 0 }}")

    assert caught.value.message == "html: line 3: ZeroDivisionError: division by zero"


def test_unknown_filters_are_reported_at_compile_time() -> None:
    with pytest.raises(TemplateRenderError, match="html: line 1: No filter named 'nope'"):
        render("{{ user.name|nope }}")


# --- variations -------------------------------------------------------------------------------


def greeting(seed: str, source: str = '{{ variation("a", "b", "c") }}') -> str:
    return email_render(subject=source, html="", text="", context={}, seed=seed).subject


def test_variation_is_the_same_for_the_same_seed() -> None:
    source = '{{ variation("a", "b", "c", "d", "e") }}{{ ["x", "y", "z"]|random }}'

    assert {greeting("msg-42", source) for _ in range(10)} == {greeting("msg-42", source)}


def test_variation_picks_every_option_across_seeds() -> None:
    assert {greeting(f"msg-{n}") for n in range(100)} == {"a", "b", "c"}


def test_two_variations_in_one_template_pick_independently() -> None:
    source = '{{ variation("a", "b") }}{{ variation("a", "b") }}'

    assert {greeting(f"msg-{n}", source) for n in range(100)} == {"aa", "ab", "ba", "bb"}


def test_random_filter_is_deterministic_per_seed() -> None:
    source = '{{ ["Hi", "Hello", "Hey"]|random }}'

    assert greeting("msg-7", source) == greeting("msg-7", source)
    assert {greeting(f"msg-{n}", source) for n in range(100)} == {"Hi", "Hello", "Hey"}


def test_html_and_text_twins_pick_the_same_variation() -> None:
    source = '{{ variation("one", "two", "three", "four") }}'

    for n in range(20):
        email = email_render(subject="s", html=source, text=source, context={}, seed=f"m{n}")
        assert html_to_text(email.html) == email.text


def test_variation_without_options_fails() -> None:
    with pytest.raises(TemplateRenderError, match="at least one option"):
        render("{{ variation() }}")


# --- template_check -----------------------------------------------------------------------------


@pytest.mark.parametrize("type", NotificationType.values)
def test_template_check_accepts_each_default_template(type: str) -> None:
    template = default_email_template(type)

    template_check(subject=template.subject, html=template.html, text=template.text)


@pytest.mark.parametrize(
    ("subject", "html", "text"),
    [
        ("{{ user.name }", "<p>ok</p>", None),
        ("ok", "{% if user.name %}<p>never closed</p>", None),
        ("ok", "<p>ok</p>", "{{ 1 / 0 }}"),
        ("ok", "{{ user.__class__ }}", ""),
    ],
)
def test_template_check_rejects_a_broken_template(
    subject: str, html: str, text: str | None
) -> None:
    with pytest.raises(TemplateRenderError):
        template_check(subject=subject, html=html, text=text)


def test_template_check_renders_against_the_given_context() -> None:
    html = "{% if user.name != 'Custom' %}{{ 1 / 0 }}{% endif %}"

    template_check(subject="s", html=html, text=None, sample_context={"user": {"name": "Custom"}})
    with pytest.raises(TemplateRenderError):
        template_check(subject="s", html=html, text=None)


# --- the default templates -------------------------------------------------------------------


def render_default(type: str, seed: str = "msg-1", **changes: Any) -> RenderedEmail:
    template = default_email_template(type)
    context = {**sample_context(), **changes}
    return email_render(
        subject=template.subject, html=template.html, text=template.text, context=context, seed=seed
    )


@pytest.mark.parametrize("type", NotificationType.values)
def test_default_template_renders_a_complete_email(type: str) -> None:
    context = sample_context()

    email = render_default(type)

    assert email.subject
    assert "\n" not in email.subject
    for part in (email.html, email.text):
        assert context["preferencesUrl"] in part
        assert context["unsubscribeUrl"] in part
    assert "Manage email preferences" in email.html
    assert "Unsubscribe" in email.html
    assert 'style="' in email.html  # CSS inlined
    assert "@media only screen and (max-width: 620px)" in email.html  # and the <style> kept
    assert context["app"]["logoUrl"] in email.html
    assert "#4F46E5" in email.html  # the tenant's brand colour
    assert "{{" not in email.text
    assert "{{" not in email.html


@pytest.mark.parametrize("type", NotificationType.values)
def test_default_template_falls_back_without_logo_or_brand_colour(type: str) -> None:
    app = {"name": "Acme", "url": "https://acme.test", "logoUrl": None, "brandColor": ""}

    email = render_default(type, app=app)

    assert 'alt="Acme"' not in email.html  # no logo: the app's name stands in
    assert html_to_text(email.html).startswith("Acme\n")
    assert "#374151" in email.html
    assert "https://acme.test" in email.text


@pytest.mark.parametrize("type", NotificationType.values)
def test_default_html_alone_gives_a_readable_text_part(type: str) -> None:
    template = default_email_template(type)
    context = sample_context()

    email = email_render(
        subject=template.subject, html=template.html, text=None, context=context, seed="m"
    )

    assert f"Unsubscribe ({context['unsubscribeUrl']})" in email.text
    assert "@media" not in email.text
    assert "<" not in email.text


@pytest.mark.parametrize("type", ["achievement_completed", "streak_reminder", "recap"])
def test_default_template_varies_between_messages(type: str) -> None:
    assert len({render_default(type, seed=f"msg-{n}").text for n in range(20)}) > 1


def test_achievement_email_shows_the_achievement_and_its_rarity() -> None:
    email = render_default("achievement_completed")

    assert "Ten workouts" in email.subject
    assert "Finish ten workouts." in email.text
    assert "Only 12.5% of users have this." in email.text
    # gamify's own sample badge, a static file under PUBLIC_URL (never another site's).
    assert 'src="http://testserver/static/notifications/sample/badge.png"' in email.html


@pytest.mark.parametrize(
    ("frequency", "ends"), [("daily", "today"), ("weekly", "this week"), ("monthly", "this month")]
)
def test_streak_reminder_says_when_the_streak_ends(frequency: str, ends: str) -> None:
    streak = {**sample_context()["streak"], "frequency": frequency, "expires": "2026-06-07"}

    email = render_default("streak_reminder", streak=streak)

    assert f"ends {ends} (June 7, 2026)." in email.text
    assert f"streak</strong> ends {ends}" in email.html


def test_reactivation_copy_changes_with_the_message_number() -> None:
    texts = {
        render_default(
            "reactivation", reactivation={"messageNumber": n, "daysSinceLastActive": 3}
        ).text
        for n in range(1, 6)
    }

    assert len(texts) == 5
    assert all("3 days" in text for text in texts)


def test_recap_lists_metrics_points_and_streak() -> None:
    email = render_default("recap")

    assert "May 25, 2026 to May 31, 2026" in email.text
    assert "- Distance: +21.3 km this period, 1,312.5 km total" in email.text
    assert "- XP: +350 this period, 4,250 total, level Gold" in email.text
    assert "12-day streak" in email.text
    assert "1,312.5 km" in email.html


def test_recap_hides_empty_sections() -> None:
    streak = {**sample_context()["streak"], "length": 0}

    email = render_default("recap", metrics={}, points={}, streak=streak)

    for heading in ("Your activity", "Your points", "streak"):
        assert heading not in email.text
        assert heading not in html_to_text(email.html)


def test_unknown_notification_type_has_no_default() -> None:
    with pytest.raises(ValueError, match="unknown notification type"):
        default_email_template("../../settings")


# --- html_to_text ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<a href="https://x.test/a">Open</a>', "Open (https://x.test/a)"),
        ('<a href="https://x.test/a"> https://x.test/a </a>', "https://x.test/a"),
        ('<a href="mailto:hi@x.test">hi@x.test</a>', "hi@x.test"),
        ('<a href="https://x.test/a"><img src="b.png"></a>', "https://x.test/a"),
        ("<p>One</p><p>Two<br>Three</p>", "One\n\nTwo\nThree"),
        ("<h1>Title</h1>Body text", "Title\n\nBody text"),
        ("<p>Items:</p><ul>\n<li>A</li>\n<li>B</li>\n</ul><p>End</p>", "Items:\n\n- A\n- B\n\nEnd"),
        ("<p>Tom &amp; Jerry &lt;3 caf&eacute;&nbsp;&#8212; ok</p>", "Tom & Jerry <3 café — ok"),
        ("<p>  lots   of\n\n   space  </p>", "lots of space"),
        ("<head><title>T</title><style>p { color: red }</style></head><p>Hi</p>", "Hi"),
        ("<script>alert(1)</script><p>Hi</p>", "Hi"),
        ('<div style="display: none">preheader</div><p>Hi</p>', "Hi"),
        ("<!--[if mso]><table><tr><td>Outlook</td></tr></table><![endif]--><p>Hi</p>", "Hi"),
        (
            '<a href="https://a.test">A<a href="https://b.test">B</a>',
            "A (https://a.test)B (https://b.test)",
        ),
        (
            "<table><tr><td>Steps</td><td>+4</td></tr><tr><td>XP</td><td>9</td></tr></table>",
            "Steps +4\nXP 9",
        ),
    ],
)
def test_html_to_text(html: str, expected: str) -> None:
    assert html_to_text(html) == expected


@pytest.mark.parametrize(
    "html",
    [
        "<a " * 30_000,
        "<!-- a>" * 30_000,
        "<a b='x>" * 30_000,
        "<![a>" * 30_000,
        '<a href="https://x.test">' * 30_000 + "x" + "</a>" * 30_000,
    ],
)
def test_html_to_text_of_unclosed_markup_is_quick(html: str) -> None:
    with quickly():
        html_to_text(html)
