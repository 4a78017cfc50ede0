from django.urls import path

from apps.notifications import pages

urlpatterns = [
    path("preferences/<str:token>", pages.preferences_page, name="notification-preferences"),
    path("unsubscribe/<str:token>", pages.unsubscribe_page, name="notification-unsubscribe"),
]
