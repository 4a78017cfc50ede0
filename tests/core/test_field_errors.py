"""A refusal names Python fields and a code (apps/core/errors.py); the admin API spells each
field as the input serializer that read the request does (apps/core/api/naming.py), so its
error bodies and bulk issues read exactly as they did when services wrote wire names."""

from typing import Any

import pytest

from apps.core.api.naming import wire_name
from apps.core.errors import ValidationError
from apps.notifications.serializers import PreferencesUpdateSerializer
from apps.points.serializers import TriggerCreateSerializer
from apps.streaks.configuration import streak_settings_update
from apps.streaks.domain import TenantStreakSettings
from apps.streaks.serializers import StreakSettingsUpdateSerializer
from tests.factories import EndUserFactory


def test_a_field_is_spelt_as_the_serializer_names_it() -> None:
    assert wire_name(TriggerCreateSerializer, "metric_threshold") == "metricThreshold"
    # A field read under another name (`source`) is spelt as the body spells it.
    assert wire_name(StreakSettingsUpdateSerializer, "conditions") == "metrics"
    # A dotted name follows nested serializers.
    assert wire_name(PreferencesUpdateSerializer, "streak.days_off") == "streak.daysOff"
    assert wire_name(PreferencesUpdateSerializer, "streak.conditions") == "streak.metrics"
    # No serializer, or a name it does not give back: the API's convention.
    assert wire_name(None, "start_count") == "startCount"


def test_only_the_placeholders_of_its_fields_are_replaced() -> None:
    error = ValidationError(
        "{html}: line 1: unexpected '}' in {{ x }", fields="html", code="invalid"
    )
    assert error.message == "html: line 1: unexpected '}' in {{ x }"
    assert error.worded(str.upper) == "HTML: line 1: unexpected '}' in {{ x }"
    assert (error.fields, error.code) == (("html",), "invalid")


@pytest.fixture
def system(api_client: Any) -> dict[str, Any]:
    response = api_client.post("/admin/v1/points", [{"key": "xp", "name": "XP"}])
    return response.json()["created"][0]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"type": "metric", "points": 5}, "metric triggers need metricId and metricThreshold"),
        (
            {"type": "streak", "points": 5, "streakLength": 3, "metricThreshold": 2},
            "metricThreshold only applies to metric triggers",
        ),
        ({"type": "user_creation", "points": 0}, "points: must not be 0"),
    ],
)
def test_trigger_issues_name_the_fields_as_the_body_does(
    api_client: Any, system: dict[str, Any], item: dict[str, Any], message: str
) -> None:
    response = api_client.post(f"/admin/v1/points/{system['id']}/triggers", [item])

    assert [issue["message"] for issue in response.json()["issues"]] == [message]


def test_a_boost_for_a_user_and_filters_is_refused_in_the_bodys_words(
    api_client: Any, system: dict[str, Any]
) -> None:
    item = {
        "name": "Double",
        "start": "2026-01-01",
        "multiplier": 2,
        "userId": "u1",
        "userAttributes": [
            {"attributeId": "00000000-0000-0000-0000-000000000001", "attributeValue": "x"}
        ],
    }
    response = api_client.post(f"/admin/v1/points/{system['id']}/boosts", [item])

    assert [issue["message"] for issue in response.json()["issues"]] == [
        "userId and userAttributes are mutually exclusive"
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"frequency": "weekly", "daysOff": [0]}, "daysOff is only allowed with daily frequency"),
        ({"metrics": [{"key": "nope", "threshold": 1}]}, "metrics: unknown metric keys: nope"),
        (
            {"freezes": {"startCount": 3, "maxCount": 2}},
            "freezes: maxCount must be at least startCount",
        ),
    ],
)
def test_streak_settings_refusals_name_the_fields_as_the_body_does(
    api_client: Any, body: dict[str, Any], message: str
) -> None:
    response = api_client.patch("/admin/v1/streaks/settings", body)

    assert (response.status_code, response.json()) == (422, {"error": message})


@pytest.mark.parametrize(
    ("streak", "message"),
    [
        ({"daysOff": [0]}, "streak.daysOff: only allowed with daily streaks"),
        (
            {"metrics": [{"key": "nope", "threshold": 1}]},
            "streak.metrics: unknown metric keys: nope",
        ),
    ],
)
def test_preference_refusals_name_the_streak_part_as_the_body_does(
    api_client: Any, tenant: Any, streak: dict[str, Any], message: str
) -> None:
    streak_settings_update(
        tenant, TenantStreakSettings(frequency="weekly", customization_enabled=True)
    )
    EndUserFactory(tenant=tenant, external_id="u1")

    response = api_client.patch("/v1/users/u1/preferences", {"streak": streak})

    assert (response.status_code, response.json()) == (422, {"error": message})
