"""The metrics wire vocabulary that other apps' routes share: the {key} path parameter of a
metric, and the event-summary parameters (documented and parsed) and buckets (rendered and
documented), which points summaries take and return in the same shape (docs/style.md, "One
app from another")."""

import datetime as dt
from typing import Any

from django.http import QueryDict
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from apps.core.api.params import query_date
from apps.core.api.shapes import Shape, renders
from apps.core.errors import ValidationError
from apps.metrics.choices import Aggregation
from apps.metrics.domain import SummaryBucket

METRIC_KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="The metric's key.")
AGGREGATION = OpenApiParameter(
    "aggregation",
    str,
    OpenApiParameter.QUERY,
    required=True,
    enum=Aggregation.values,
    description="Bucket size. Weeks start on Sunday; buckets follow the user's time zone.",
)
START_DATE = OpenApiParameter(
    "startDate",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    required=True,
    description="First day (YYYY-MM-DD).",
)
END_DATE = OpenApiParameter(
    "endDate",
    OpenApiTypes.DATE,
    OpenApiParameter.QUERY,
    required=True,
    description="Last day (YYYY-MM-DD), not before startDate, at most 400 days after it.",
)


class UsersMetricEventSummaryResponseItem(Shape):
    # A SummaryBucket.

    date = serializers.DateField(help_text="First day of the bucket.")
    total = serializers.FloatField(help_text="The user's total at the end of the bucket.")
    change = serializers.FloatField(help_text="The change within the bucket.")


@renders(UsersMetricEventSummaryResponseItem)
def users_metric_event_summary_response_item_render(bucket: SummaryBucket) -> dict[str, Any]:
    return {"date": bucket.date.isoformat(), "total": bucket.total, "change": bucket.change}


def summary_query(params: QueryDict) -> tuple[str, dt.date, dt.date]:
    """AGGREGATION, START_DATE and END_DATE from a query string, in that order; the range rules
    are the selectors' (summary_range_check)."""
    aggregation = params.get("aggregation")
    if aggregation not in Aggregation.values:
        raise ValidationError("aggregation must be one of daily, weekly, monthly")
    return aggregation, query_date(params, "startDate"), query_date(params, "endDate")


def summary_render(buckets: list[SummaryBucket]) -> list[dict[str, Any]]:
    """The buckets of a summary (a metric's, or a points system's: the same fields)."""
    render = users_metric_event_summary_response_item_render
    return [render(bucket) for bucket in buckets]
