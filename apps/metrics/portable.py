"""The metrics as portable configuration (apps/core/portable.py)."""

from apps.core.portable import CollectionKind, register
from apps.metrics.models import Metric
from apps.metrics.views import MetricCollection

register(CollectionKind("metric", "metric", 20, MetricCollection(), model=Metric))
