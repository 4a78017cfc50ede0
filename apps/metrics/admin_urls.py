from apps.core.bulk import collection_urls
from apps.metrics import views

urlpatterns = collection_urls("metrics", views.MetricCollection(), "metrics")
