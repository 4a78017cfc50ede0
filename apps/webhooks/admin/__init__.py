"""Dashboard pages for webhooks (imported by the admin's autodiscovery): endpoints, written by
the endpoint services, with their one-time secret page and actions; the delivery log, read-only
but for redelivery."""

from apps.webhooks.admin import deliveries, endpoints

__all__ = ["deliveries", "endpoints"]
