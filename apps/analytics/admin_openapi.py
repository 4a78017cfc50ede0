"""OpenAPI documentation of the analytics admin API that its shapes cannot give: the range
parameters and their errors. The response shapes are apps.analytics.admin_serializers."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from apps.analytics.selectors import IMPACT_WEEKS, MAX_IMPACT_WEEKS, MAX_RANGE_DAYS

RANGE = OpenApiParameter(
    "range",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    enum=["7d", "30d", "90d", "all"],
    description="The days ending today (the tenant's reporting-zone date, as on the dashboard): "
    "7, 30 (the default) or 90 days, or all since the tenant's first day (at most the last "
    f"{MAX_RANGE_DAYS} days). Days are users' local dates; achievement completions' are the "
    "reporting zone's. Not with start.",
)
START = OpenApiParameter(
    "start",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    description="First local date of an explicit range (YYYY-MM-DD); instead of range.",
)
END = OpenApiParameter(
    "end",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    description=f"Last local date of an explicit range, included (default today, the tenant's "
    "reporting-zone date); needs start. "
    f"The range spans at most {MAX_RANGE_DAYS} days.",
)
RANGE_PARAMETERS = [RANGE, START, END]
RANGE_ERRORS = (
    "range is not one of 7d, 30d, 90d, all; a date is malformed; end without start; range "
    "together with start; start after end; or a span over the limit."
)

# The Impact Score's parameters (GET /admin/ext/v1/analytics/impact).
IMPACT_PARAMETERS = [
    OpenApiParameter(
        "fromWeek",
        OpenApiTypes.DATE,
        OpenApiParameter.QUERY,
        description="A date (YYYY-MM-DD) of the first cohort week: the users who started in "
        "the Sunday-to-Saturday week holding it, and later. Default: "
        f"{IMPACT_WEEKS} weeks before toWeek.",
    ),
    OpenApiParameter(
        "toWeek",
        OpenApiTypes.DATE,
        OpenApiParameter.QUERY,
        description="A date of the last cohort week, included. Default: the week of the "
        "latest start whose day 14 is over (15 days before today, the tenant's reporting-zone "
        f"date), or fromWeek's week if later. At most {MAX_IMPACT_WEEKS} weeks in all.",
    ),
    OpenApiParameter(
        "metric",
        OpenApiTypes.STR,
        OpenApiParameter.QUERY,
        description="A metric key: active then means an event of this metric (overall and "
        "per week). Default: an event of any metric. `metrics` lists every metric either way.",
    ),
]
IMPACT_MALFORMED = "fromWeek or toWeek is not a date (YYYY-MM-DD)."
IMPACT_ERRORS = f"fromWeek is after toWeek, or the weeks span more than {MAX_IMPACT_WEEKS}."
