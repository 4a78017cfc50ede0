"""OpenAPI documentation of the year in review that its shapes cannot give: the `year`
parameter and its maximum. The response shapes are apps.analytics.serializers."""

import datetime as dt
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter


def wrapped_year_maximum(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: `year` goes up to the current year, the user's (on 1 January in
    Tokyo it is already the new one). The document, made now, gives the year of the zone that
    is furthest behind (UTC-12), which no user's current year is behind."""
    year = (timezone.now() - dt.timedelta(hours=12)).year
    operation = result.get("paths", {}).get("/users/{user_id}/wrapped", {}).get("get", {})
    for parameter in operation.get("parameters", []):
        if parameter.get("name") == "year":
            parameter["schema"]["maximum"] = year
    return result


YEAR = OpenApiParameter(
    "year",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.QUERY,
    description=(
        "The calendar year, in the user's time zone: an integer from 1 to the current year "
        "(the default)."
    ),
)
