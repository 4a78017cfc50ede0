"""Per-channel rate limits: fixed one-second windows in the shared cache."""

import pytest

from apps.notifications.push import ratelimit


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0
        self.slept: list[float] = []

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    from django.core.cache import cache

    cache.clear()
    clock = Clock()
    monkeypatch.setattr(ratelimit.time, "time", clock.time)
    monkeypatch.setattr(ratelimit.time, "monotonic", clock.monotonic)
    monkeypatch.setattr(ratelimit.time, "sleep", clock.sleep)
    return clock


def test_sends_within_the_limit_do_not_wait(clock):
    for _ in range(6):
        ratelimit.rate_limit_take("c1", 100, per_second=600)
    assert clock.slept == []


def test_a_send_past_the_limit_waits_for_the_next_second(clock):
    ratelimit.rate_limit_take("c1", 500, per_second=600)
    ratelimit.rate_limit_take("c1", 200, per_second=600)
    assert clock.slept == [1.0]
    assert clock.now == 1_001.0


def test_channels_have_their_own_windows(clock):
    ratelimit.rate_limit_take("c1", 600, per_second=600)
    ratelimit.rate_limit_take("c2", 600, per_second=600)
    assert clock.slept == []


def test_no_limit_means_no_cache_access(clock, monkeypatch):
    from django.core.cache import cache

    monkeypatch.setattr(cache, "incr", lambda *a, **k: pytest.fail("counted"))
    ratelimit.rate_limit_take("c1", 10_000, per_second=0)


def test_expo_is_limited_to_600_per_second_by_default(settings):
    settings.PUSH_RATE_LIMITS = {}
    assert ratelimit.limit_for("expo") == 600
    settings.PUSH_RATE_LIMITS = {"expo": 100}
    assert ratelimit.limit_for("expo") == 100
    assert ratelimit.limit_for("apns") == 0
