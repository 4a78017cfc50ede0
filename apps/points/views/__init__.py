"""Application API: points systems, boosts, levels, summaries and a user's points.
Admin API: systems and their levels, boosts and triggers.

`systems` serves a points system, `users` a user's points in one, `admin_api` the admin
collections and their renders; the URL modules reach every view through this package."""

from apps.points.views.admin_api import (
    BoostCollection,
    LevelCollection,
    SystemCollection,
    TriggerCollection,
    boost_admin_render,
    level_admin_render,
    system_admin_render,
    trigger_admin_render,
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
    "boost_admin_render",
    "level_admin_render",
    "system_admin_render",
    "trigger_admin_render",
]
