from django.urls import path

from apps.core.bulk import collection_urls
from apps.notifications import views

urlpatterns = [
    path(
        "email-templates/<str:object_id>/preview",
        views.EmailTemplatePreviewApi.as_view(),
        name="admin-email-template-preview",
    ),
    *collection_urls("email-templates", views.EmailTemplateCollection(), "email-templates"),
    path(
        "push-templates/<str:object_id>/preview",
        views.PushTemplatePreviewApi.as_view(),
        name="admin-push-template-preview",
    ),
    *collection_urls("push-templates", views.PushTemplateCollection(), "push-templates"),
    *collection_urls("push-channels", views.PushChannelCollection(), "push-channels"),
]
