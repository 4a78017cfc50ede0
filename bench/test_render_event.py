"""How long rendering one metric event's response body takes (issue 24: "rendering the event
response must not get slower"), for the full-feature event of
tests/pipeline/test_full_pipeline_query_count.py: a streak, two points systems with awards and
a level change, a completed achievement and two leaderboards.

Run with `make bench-render` (pytest on SQLite, a few seconds). It captures the `EventAnswer`
the pipeline built for one event, then times the render of that answer alone: no database, no
JSON encoding, no HTTP. It prints the median of 7 rounds in microseconds."""

import statistics
import timeit
from typing import Any

import pytest

from apps.pipeline import services, wire
from tests.conftest import *  # noqa: F403 - the suite's fixtures (api_client, metric, ...)
from tests.pipeline.test_full_pipeline_query_count import configured  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

ROUNDS = 7
LOOPS = 5_000


def event_render() -> Any:
    """The function that renders an EventAnswer, whatever the wire layer calls it."""
    render = getattr(wire, "event_response_render", None)
    return render if render is not None else wire.EventResponse.render


def test_event_response_render_time(configured, monkeypatch):  # noqa: F811 - fixture
    answers: list[Any] = []

    class Captured(wire.EventAnswer):
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            answer = super().__new__(cls, *args, **kwargs)
            answers.append(answer)
            return answer

    monkeypatch.setattr(services, "EventAnswer", Captured)
    for value in (5, 5):
        response = configured.post("/v1/metrics/words/event", {"user": {"id": "u"}, "value": value})
        assert response.status_code == 201, response.content
    # The second event (10 words): streak extended, awards in both systems, the first
    # achievement completed, both boards moved.
    answer = answers[-1]
    render = event_render()
    body = render(answer)
    assert body["achievements"], body
    assert body["points"], body
    assert body["leaderboards"], body
    times = timeit.repeat(lambda: render(answer), number=LOOPS, repeat=ROUNDS)
    median = statistics.median(times) / LOOPS * 1e6
    print(f"\nevent response render: {median:.1f} µs (median of {ROUNDS} x {LOOPS})")
