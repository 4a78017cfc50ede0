"""Application API: points systems, boosts, levels, summaries and a user's points.
Admin API: systems and their levels, boosts and triggers.

`systems` serves a points system, `users` a user's points in one, `admin_api` the admin
collections; the URL modules reach every view through this package."""

from apps.points.views.admin_api import (
    BoostCollection,
    LevelCollection,
    SystemCollection,
    TriggerCollection,
)
from apps.points.views.systems import (
    PointsBoostsApi,
    PointsLevelsApi,
    PointsLevelSummaryApi,
    PointsSummaryApi,
    PointsSystemApi,
)
from apps.points.views.users import UserPointsApi, UserPointsBoostsApi, UserPointsEventSummaryApi

__all__ = [
    "BoostCollection",
    "LevelCollection",
    "PointsBoostsApi",
    "PointsLevelSummaryApi",
    "PointsLevelsApi",
    "PointsSummaryApi",
    "PointsSystemApi",
    "SystemCollection",
    "TriggerCollection",
    "UserPointsApi",
    "UserPointsBoostsApi",
    "UserPointsEventSummaryApi",
]
