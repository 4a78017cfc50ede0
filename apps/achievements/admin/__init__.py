"""Dashboard pages of the achievements app. Django's autodiscovery imports this package;
importing the page module registers the pages."""

from apps.achievements.admin import pages

__all__ = ["pages"]
