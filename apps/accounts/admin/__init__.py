"""Dashboard pages of the accounts app; `base` holds the plumbing every app's admin uses.

Django's autodiscovery imports this package; importing the page modules registers them.
"""

from apps.accounts.admin import api_keys, framework, organizations, tenants

__all__ = ["api_keys", "framework", "organizations", "tenants"]
