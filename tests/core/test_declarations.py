"""Each configurable resource is declared once (apps/core/declarations.py): its admin API input
serializers and its response shape must agree with the declaration (apps/core/api/declared.py),
and every declaration in the apps is held to its interfaces here."""

import dataclasses
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from apps.achievements import serializers as achievement_serializers
from apps.achievements.domain import AchievementSettings
from apps.core.api.declared import serializer_problems, shape_problems
from apps.core.declarations import settings_of
from apps.fairplay import serializers as fairplay_serializers
from apps.fairplay.domain import AnomalyRuleSettings
from apps.leaderboards import serializers as leaderboard_serializers
from apps.leaderboards.domain import LeaderboardSettings
from apps.leagues import serializers as league_serializers
from apps.leagues.domain import LeagueSettings
from apps.metrics import serializers as metric_serializers
from apps.metrics.domain import MetricSettings
from apps.notifications import serializers as notification_serializers
from apps.notifications.domain import (
    EmailTemplateSettings,
    PushChannelSettings,
    PushTemplateSettings,
)
from apps.points import serializers as points_serializers
from apps.points.domain import (
    PointsBoostSettings,
    PointsLevelSettings,
    PointsSystemSettings,
    PointsTriggerSettings,
)
from apps.quests import serializers as quest_serializers
from apps.quests.domain import QuestPoolSettings, QuestSettings
from apps.social import serializers as social_serializers
from apps.social.domain import TenantFriendSettings
from apps.streaks import serializers as streak_serializers
from apps.streaks.domain import TenantStreakSettings
from apps.users import serializers as attribute_serializers
from apps.users.domain import AttributeSettings
from apps.webhooks import serializers as webhook_serializers
from apps.webhooks.domain import WebhookEndpointSettings


@dataclasses.dataclass(frozen=True)
class Interfaces:
    """A declaration's admin API: what reads a create, what reads an update (None: the same
    serializer with nothing required, or no update), the body it answers with. `unchecked`:
    wire names whose form differs from the declaration on purpose, with the reason beside."""

    declaration: type
    create: Any
    update: Any
    shape: Any
    unchecked: tuple[str, ...] = ()


RESOURCES = [
    Interfaces(
        QuestSettings,
        quest_serializers.QuestCreateSerializer,
        quest_serializers.QuestUpdateSerializer,
        quest_serializers.AdminQuest,
    ),
    Interfaces(
        QuestPoolSettings,
        quest_serializers.PoolCreateSerializer,
        quest_serializers.PoolUpdateSerializer,
        quest_serializers.AdminQuestPool,
    ),
    Interfaces(
        AnomalyRuleSettings,
        fairplay_serializers.AnomalyRuleCreateSerializer,
        fairplay_serializers.AnomalyRuleUpdateSerializer,
        fairplay_serializers.AdminAnomalyRule,
    ),
    Interfaces(
        LeagueSettings,
        league_serializers.LeagueCreateSerializer,
        league_serializers.LeagueUpdateSerializer,
        league_serializers.AdminLeague,
    ),
    Interfaces(
        LeaderboardSettings,
        leaderboard_serializers.LeaderboardCreateSerializer,
        leaderboard_serializers.LeaderboardUpdateSerializer,
        leaderboard_serializers.AdminLeaderboard,
    ),
    Interfaces(
        PointsSystemSettings,
        points_serializers.SystemCreateSerializer,
        points_serializers.SystemUpdateSerializer,
        points_serializers.AdminPointsSystem,
        unchecked=(
            "badge",  # the badge URL, as a {"url"} object (or null) on the wire
            # Created along with the system, each item held to its own declaration below.
            "levels",
            "boosts",
            "triggers",
        ),
    ),
    Interfaces(
        PointsLevelSettings,
        points_serializers.LevelCreateSerializer,
        points_serializers.LevelUpdateSerializer,
        points_serializers.AdminPointsLevel,
        unchecked=(
            "badge",  # the badge URL, as a {"url"} object (or null) on the wire
        ),
    ),
    Interfaces(
        PointsBoostSettings,
        points_serializers.BoostCreateSerializer,
        points_serializers.BoostUpdateSerializer,
        points_serializers.AdminPointsBoost,
    ),
    Interfaces(
        PointsTriggerSettings,
        points_serializers.TriggerCreateSerializer,
        points_serializers.TriggerUpdateSerializer,
        points_serializers.AdminPointsTrigger,
    ),
    # A tenant's streak settings are one set, never created apart from an update (the first
    # PATCH makes them, with the model's defaults for what it leaves out): the PATCH's
    # serializer is the only input, checked as the create, which holds it to "nothing is
    # required" (no setting of the declaration is) and leaves no separate update to check.
    Interfaces(
        TenantStreakSettings,
        streak_serializers.StreakSettingsUpdateSerializer,
        None,
        streak_serializers.StreakSettings,
        # The API spells weekdays as integers 0 (Sunday) to 6, bounded, not as an enum of
        # Weekday's values: the same values, documented as the SDKs were generated from.
        unchecked=("daysOff",),
    ),
    # The friends settings are one set per tenant too, made by their first PATCH.
    Interfaces(
        TenantFriendSettings,
        social_serializers.FriendSettingsUpdateSerializer,
        None,
        social_serializers.FriendSettings,
    ),
    Interfaces(
        EmailTemplateSettings,
        notification_serializers.EmailTemplateCreateSerializer,
        notification_serializers.EmailTemplateUpdateSerializer,
        notification_serializers.EmailTemplateSerializer,
    ),
    Interfaces(
        PushTemplateSettings,
        notification_serializers.PushTemplateCreateSerializer,
        notification_serializers.PushTemplateUpdateSerializer,
        notification_serializers.PushTemplateSerializer,
    ),
    Interfaces(
        PushChannelSettings,
        notification_serializers.PushChannelCreateSerializer,
        notification_serializers.PushChannelUpdateSerializer,
        notification_serializers.PushChannelSerializer,
        unchecked=(
            "flagged",  # only ever cleared, by an update (flagged: false): a create has none
        ),
    ),
    Interfaces(
        AchievementSettings,
        achievement_serializers.AchievementCreateSerializer,
        achievement_serializers.AchievementUpdateSerializer,
        achievement_serializers.AdminAchievement,
        unchecked=(
            # An object on the wire, {"url"} or null, read into badge_url.
            "badge",
        ),
    ),
    Interfaces(
        MetricSettings,
        metric_serializers.MetricCreateSerializer,
        metric_serializers.MetricUpdateSerializer,
        metric_serializers.CreatedMetric,
    ),
    Interfaces(
        AttributeSettings,
        attribute_serializers.AttributeCreateSerializer,
        attribute_serializers.AttributeUpdateSerializer,
        attribute_serializers.AdminAttribute,
    ),
    Interfaces(
        WebhookEndpointSettings,
        webhook_serializers.EndpointCreateSerializer,
        webhook_serializers.EndpointUpdateSerializer,
        webhook_serializers.WebhookEndpointSerializer,
    ),
]


def _declarations() -> Iterator[type]:
    """Every declaration of the apps: the dataclasses of their domain modules made of
    settings."""
    for path in sorted(Path("apps").glob("*/domain.py")):
        module = importlib.import_module(".".join(path.with_suffix("").parts))
        for _, cls in inspect.getmembers(module, dataclasses.is_dataclass):
            # A private base (what two declarations share) is held through them.
            if cls.__module__ == module.__name__ and settings_of(cls) and cls.__name__[0] != "_":
                yield cls


def _id(resource: Interfaces) -> str:
    return resource.declaration.__name__


@pytest.mark.parametrize("resource", RESOURCES, ids=_id)
def test_the_create_input_agrees_with_the_declaration(resource: Interfaces) -> None:
    assert (
        serializer_problems(
            resource.declaration, resource.create, creates=True, unchecked=resource.unchecked
        )
        == []
    )


@pytest.mark.parametrize("resource", [r for r in RESOURCES if r.update], ids=_id)
def test_the_update_input_agrees_with_the_declaration(resource: Interfaces) -> None:
    assert (
        serializer_problems(
            resource.declaration, resource.update, creates=False, unchecked=resource.unchecked
        )
        == []
    )


@pytest.mark.parametrize("resource", RESOURCES, ids=_id)
def test_the_response_shape_agrees_with_the_declaration(resource: Interfaces) -> None:
    assert shape_problems(resource.declaration, resource.shape, unchecked=resource.unchecked) == []


def test_every_declaration_is_held_to_its_interfaces() -> None:
    held = {resource.declaration for resource in RESOURCES}
    assert [cls.__name__ for cls in _declarations() if cls not in held] == []
