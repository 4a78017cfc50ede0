"""Dashboard pages for notifications (imported by the admin's autodiscovery)."""

from apps.notifications.admin import log, push_channels, push_templates, templates

__all__ = ["log", "push_channels", "push_templates", "templates"]
