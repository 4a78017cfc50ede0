"""The dashboard's one way of writing moments and dates (apps/core/shown_time.py)."""

import datetime as dt

from django.template import Context, Template

from apps.core.shown_time import date_shown, moment_shown

MOMENT = dt.datetime(2026, 11, 28, 23, 40, tzinfo=dt.UTC)


def test_a_moment_is_written_in_the_zone_it_is_read_in_with_the_zone_named() -> None:
    assert moment_shown(MOMENT, "UTC") == "Nov. 28, 2026, 11:40 p.m. UTC"
    assert moment_shown(MOMENT, "Pacific/Kiritimati") == "Nov. 29, 2026, 1:40 p.m. +14"
    assert moment_shown(MOMENT, "America/Los_Angeles") == "Nov. 28, 2026, 3:40 p.m. PST"
    assert moment_shown(MOMENT, "America/Los_Angeles".replace("Los", "Lost")).endswith(" UTC")
    assert moment_shown(MOMENT, None) == "Nov. 28, 2026, 11:40 p.m. UTC"


def test_dates_and_the_template_filters_agree() -> None:
    assert date_shown(dt.date(2026, 3, 3)) == "March 3, 2026"
    rendered = Template(
        "{% load shown_time %}{{ moment|moment_shown:'Pacific/Kiritimati' }} | "
        "{{ day|date_shown }} | {{ iso|date_shown }}"
    ).render(Context({"moment": MOMENT, "day": dt.date(2026, 11, 28), "iso": "2026-11-29"}))
    assert rendered == "Nov. 29, 2026, 1:40 p.m. +14 | Nov. 28, 2026 | Nov. 29, 2026"
