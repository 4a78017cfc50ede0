"""The analytics page's charts as CSV: `?format=csv&chart=<name>` with the page's range.

Each chart's rows are written from the same JSON the page draws it from (dashboard.charts_data,
the admin analytics API's bodies), so a spreadsheet and the chart never disagree. Dates are
ISO dates (a spreadsheet reads them as dates), on the series' own dates: users' local dates,
except achievement completions (the reporting zone's)."""

import csv
import io
from collections.abc import Callable, Iterator
from typing import Any

Rows = Iterator[list[Any]]


def _active_users(data: dict[str, Any]) -> Rows:
    yield ["date", "dau", "mau"]
    for day in data["activeUsers"]["days"]:
        yield [day["date"], day["dau"], day["mau"]]


def _new_users(data: dict[str, Any]) -> Rows:
    yield ["date", "new_users"]
    for day in data["newUsers"]["days"]:
        yield [day["date"], day["newUsers"]]


def _events(data: dict[str, Any]) -> Rows:
    """One row per date and metric: events and the sum of values (the events chart and the
    sum-of-values chart share it)."""
    yield ["date", "metric_key", "metric_name", "events", "sum_of_values"]
    for metric in data["events"]["metrics"]:
        for day in metric["days"]:
            yield [day["date"], metric["key"], metric["name"], day["events"], day["change"]]


def _retention(data: dict[str, Any]) -> Rows:
    yield ["cohort_week", "group", "users", "week_offset", "active_users", "percent"]
    for cohort in data["retention"]["cohorts"]:
        for group in ("treatment", "control"):
            for week in cohort[group]["weeks"]:
                yield [
                    cohort["week"],
                    "control" if group == "control" else "everyone else",
                    cohort[group]["users"],
                    week["week"],
                    week["activeUsers"],
                    week["percent"],
                ]


def _impact(data: dict[str, Any]) -> Rows:
    """The Impact Score card: one row per cohort week, one for all the weeks, one per metric."""
    yield [
        "cohort_week",
        "metric_key",
        "treated_users",
        "treated_retained",
        "treated_percent",
        "control_users",
        "control_retained",
        "control_percent",
        "difference_points",
        "low",
        "high",
        "status",
    ]
    impact = data["impact"]
    rows = [(week["week"], impact["metric"], week["score"]) for week in impact["weeks"]]
    rows.append(("all", impact["metric"], impact["overall"]))
    rows += [("all", metric["key"], metric["score"]) for metric in impact["metrics"]]
    for week, metric, score in rows:
        treated, control = score["treated"], score["control"]
        yield [
            week,
            metric or "",
            treated["users"],
            treated["retained"],
            treated["percent"],
            control["users"],
            control["retained"],
            control["percent"],
            score["difference"],
            score["low"],
            score["high"],
            score["status"],
        ]


def _streak_lengths(data: dict[str, Any]) -> Rows:
    yield ["length", "min", "max", "users"]
    for bucket in data["streaks"]["lengths"]:
        yield [bucket["bucket"], bucket["min"], bucket["max"], bucket["users"]]


def _streak_activity(data: dict[str, Any]) -> Rows:
    yield ["period_start", "period_end", "active_streaks"]
    for period in data["streaks"]["periods"]:
        yield [period["periodStart"], period["periodEnd"], period["activeStreaks"]]


def _points(data: dict[str, Any]) -> Rows:
    yield ["date", "system_key", "system_name", "trigger_type", "points"]
    for system in data["points"]["systems"]:
        for day in system["days"]:
            for kind, points in day["byTriggerType"].items():
                yield [day["date"], system["key"], system["name"], kind, points]


def _levels(data: dict[str, Any]) -> Rows:
    yield ["system_key", "level_key", "level_name", "from_points", "users"]
    for system in data["points"]["systems"]:
        for level in system["levels"]:
            yield [
                system["key"],
                level["key"] or "",
                level["name"],
                level["points"],
                level["users"],
            ]


def _achievements(data: dict[str, Any]) -> Rows:
    yield ["date", "completions", "backdated"]
    for day in data["achievements"]["days"]:
        yield [day["date"], day["completions"], day["backdated"]]


def _rarity(data: dict[str, Any]) -> Rows:
    yield ["key", "name", "status", "completions_in_range", "completions", "rarity_percent"]
    for item in data["achievements"]["achievements"]:
        yield [
            item["key"],
            item["name"],
            item["status"],
            item["completionsInRange"],
            item["completions"],
            item["rarity"],
        ]


def _leaderboards(data: dict[str, Any]) -> Rows:
    yield ["leaderboard_key", "leaderboard_name", "status", "run_start", "run_end", "participants"]
    for board in data["leaderboards"]["leaderboards"]:
        for run in board["runs"]:
            yield [
                board["key"],
                board["name"],
                board["status"],
                run["start"],
                run["end"] or "",
                run["participants"],
            ]


# The charts by the name `chart=` takes, in the page's order.
CHARTS: dict[str, Callable[[dict[str, Any]], Rows]] = {
    "active-users": _active_users,
    "new-users": _new_users,
    "events": _events,
    "retention": _retention,
    "impact": _impact,
    "streak-lengths": _streak_lengths,
    "streak-activity": _streak_activity,
    "points": _points,
    "levels": _levels,
    "achievements": _achievements,
    "rarity": _rarity,
    "leaderboards": _leaderboards,
}


def chart_csv(data: dict[str, Any], chart: str) -> str:
    """The chart's rows as CSV text (a KeyError for a chart not in CHARTS)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in CHARTS[chart](data):
        writer.writerow([_cell(value) for value in row])
    return out.getvalue()


def _cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (=, +, -, @) is quoted with a leading
    apostrophe: metric and achievement names are typed by staff and customers' imports."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
