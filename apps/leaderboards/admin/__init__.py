"""Dashboard pages for leaderboards: the boards with their live rankings (boards.py, the
rankings in rankings.py), and their entries and daily snapshots, read-only (records.py)."""

from apps.leaderboards.admin import boards, records

__all__ = ["boards", "records"]
