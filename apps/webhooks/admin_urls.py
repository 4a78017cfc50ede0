from django.urls import path

from apps.core.bulk import collection_urls
from apps.webhooks import views

urlpatterns = [
    path(
        "webhooks/<str:object_id>/rotate-secret",
        views.WebhookRotateSecretApi.as_view(),
        name="admin-webhook-rotate-secret",
    ),
    path(
        "webhooks/<str:object_id>/test", views.WebhookTestApi.as_view(), name="admin-webhook-test"
    ),
    path(
        "webhooks/<str:object_id>/deliveries",
        views.WebhookDeliveriesApi.as_view(),
        name="admin-webhook-deliveries",
    ),
    path(
        "webhooks/<str:object_id>/deliveries/<str:delivery_id>/redeliver",
        views.WebhookDeliveryRedeliverApi.as_view(),
        name="admin-webhook-delivery-redeliver",
    ),
    path(
        "webhooks/<str:object_id>/redeliver",
        views.WebhookRedeliverApi.as_view(),
        name="admin-webhook-redeliver",
    ),
    *collection_urls("webhooks", views.WebhookCollection(), "webhooks"),
]
