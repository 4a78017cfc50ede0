"""Dashboard pages for leagues: the league's page with its tiers and rewards as rows and its
weeks in numbers (pages.py, forms.py, rows.py), and one week's cohorts with their standings
(standings.py). Cohorts and entries have no list of their own: the pipeline writes them."""

from apps.leagues.admin import pages

__all__ = ["pages"]
