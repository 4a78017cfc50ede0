"""Leagues seen through the official SDK, which knows nothing of them: the events that score
in a league answer as before, and the points a placement pays (an award without a trigger)
parse in the points reads, the event responses and the summaries."""

import datetime as dt

import pytest
from trophy import TrophyApi
from trophy.types import CreatedAdminPointsSystem, CreatedMetric

from apps.leagues.configuration import league_create
from apps.leagues.domain import LeagueSettings
from apps.leagues.models import LeagueEntry
from apps.pipeline.leagues import leagues_week_end
from tests.contract.helpers import CONTRACT_DB
from tests.contract.test_points import event, metric_trigger, xp  # noqa: F401 - xp: a fixture
from tests.factories import OrganizationWithKey

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def test_reward_points_parse_in_every_sdk_read(
    client: TrophyApi,
    org: OrganizationWithKey,
    words: CreatedMetric,
    xp: CreatedAdminPointsSystem,  # noqa: F811 - the fixture imported above
) -> None:
    metric_trigger(client, xp, words, 10, 5)
    league_create(
        org.tenant,
        LeagueSettings(
            name="Weekly",
            key="weekly",
            score_by="metric",
            metric_id=words.id,
            status="active",
            rewards=[{"from_place": 1, "to_place": 1, "points": 100, "points_system_id": xp.id}],
        ),
    )
    scored = event(client, "ada", 5)
    assert scored.points["xp"].total == 10
    event(client, "bob", 1)
    week_end = LeagueEntry.objects.get(user__external_id="ada").cohort.week_end

    assert leagues_week_end(week_end) == (1, 1)

    points = client.users.points("ada", "xp")
    assert points.total == 110
    reward, paid = points.awards
    assert (reward.awarded, reward.total, reward.trigger) == (100, 110, None)
    assert paid.trigger is not None
    summary = client.users.points_event_summary(
        "ada",
        "xp",
        aggregation="daily",
        start_date=week_end.date().isoformat(),
        end_date=(week_end + dt.timedelta(days=1)).date().isoformat(),
    )
    assert sum(day.change for day in summary) == 100
