import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from apps.users.domain import attributes_match, control_assign, local_date, tz_is_valid


def test_time_zone_validation():
    assert tz_is_valid("Europe/Paris")
    assert tz_is_valid("UTC")
    assert not tz_is_valid("Europe/Atlantis")
    assert not tz_is_valid("europe/paris")


def test_local_date_across_the_date_line():
    moment = dt.datetime(2026, 6, 1, 11, 30, tzinfo=dt.UTC)
    assert local_date(moment, "Pacific/Kiritimati") == dt.date(2026, 6, 2)  # UTC+14
    assert local_date(moment, "Pacific/Pago_Pago") == dt.date(2026, 6, 1)  # UTC-11
    assert local_date(moment, None) == dt.date(2026, 6, 1)


def test_local_date_on_dst_change_day():
    # New York springs forward on 8 March 2026: 06:59 UTC is 01:59 EST, 07:00 UTC is 03:00 EDT.
    assert local_date(dt.datetime(2026, 3, 8, 4, 59, tzinfo=dt.UTC), "America/New_York") == dt.date(
        2026, 3, 7
    )
    assert local_date(dt.datetime(2026, 3, 8, 5, 0, tzinfo=dt.UTC), "America/New_York") == dt.date(
        2026, 3, 8
    )


def test_control_ratio_extremes():
    assert not any(control_assign("t", f"u{i}", 0) for i in range(200))
    assert all(control_assign("t", f"u{i}", 100) for i in range(200))


def test_control_ratio_is_roughly_respected():
    share = sum(control_assign("tenant", f"user-{i}", 30) for i in range(5000)) / 5000
    assert 0.27 < share < 0.33


@given(st.text(min_size=1, max_size=50), st.integers(0, 100))
def test_control_assignment_is_deterministic(user_id, ratio):
    assert control_assign("t", user_id, ratio) == control_assign("t", user_id, ratio)


class TestAttributesMatch:
    def test_no_filters_match_everyone(self):
        assert attributes_match({}, {})
        assert attributes_match({}, {"plan": "pro"})

    def test_every_filter_must_match(self):
        filters = {"plan": "pro", "country": "fr"}
        assert attributes_match(filters, {"plan": "pro", "country": "fr", "extra": "x"})
        assert not attributes_match(filters, {"plan": "pro", "country": "de"})
        assert not attributes_match(filters, {"plan": "pro"})

    def test_values_compare_exactly(self):
        assert not attributes_match({"plan": "pro"}, {"plan": "Pro"})
        assert not attributes_match({"plan": "pro"}, {"plan": "pro "})
        assert not attributes_match({"plan": ""}, {})
        assert attributes_match({"plan": ""}, {"plan": ""})

    def test_unresolvable_filters_match_nobody(self):
        # A filter naming a deleted attribute resolves to None.
        assert not attributes_match(None, {})
        assert not attributes_match(None, {"plan": "pro"})

    @given(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=5))
    def test_a_users_own_attributes_always_match(self, values):
        assert attributes_match(values, values)
        assert attributes_match({}, values)
