"""Dashboard pages for notifications (imported by the admin's autodiscovery)."""

from apps.notifications.admin import log, templates

__all__ = ["log", "templates"]
