"""OpenAPI documentation of the analytics admin API that its shapes cannot give: the range
parameters and their errors. The response shapes are apps.analytics.admin_serializers."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from apps.analytics.selectors import MAX_RANGE_DAYS

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
