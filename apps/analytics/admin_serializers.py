"""Wire shapes of the analytics admin API, also the data of the dashboard's charts. Renders
what apps.analytics.selectors computed; no queries. Decimal sums leave as JSON numbers."""

from typing import Any

from apps.analytics.selectors import (
    AchievementsSummary,
    ActiveUsersDay,
    BoardParticipation,
    CohortGroup,
    DateRange,
    DayCount,
    MetricSeries,
    Overview,
    Retention,
    Run,
    StreakActivity,
    StreakLengths,
    SystemPoints,
)


def _range(period: DateRange) -> dict[str, Any]:
    return {"start": period.start.isoformat(), "end": period.end.isoformat()}


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def active_users_render(period: DateRange, days: list[ActiveUsersDay]) -> dict[str, Any]:
    return {
        **_range(period),
        "days": [{"date": d.date.isoformat(), "dau": d.dau, "mau": d.mau} for d in days],
    }


def new_users_render(period: DateRange, days: list[DayCount]) -> dict[str, Any]:
    return {
        **_range(period),
        "total": sum(d.count for d in days),
        "days": [{"date": d.date.isoformat(), "newUsers": d.count} for d in days],
    }


def events_render(period: DateRange, series: list[MetricSeries]) -> dict[str, Any]:
    dates = [day.isoformat() for day in period.days()]
    return {
        **_range(period),
        "days": [
            {"date": date, "events": sum(s.days[index].events for s in series)}
            for index, date in enumerate(dates)
        ],
        "metrics": [
            {
                "id": s.metric.public_id,
                "key": s.metric.key,
                "name": s.metric.name,
                "units": s.metric.units or None,
                "events": s.events,
                "change": float(s.change),
                "days": [
                    {"date": date, "events": day.events, "change": float(day.change)}
                    for date, day in zip(dates, s.days, strict=True)
                ],
            }
            for s in series
        ],
    }


def _cohort_group(group: CohortGroup) -> dict[str, Any]:
    return {
        "users": group.users,
        "weeks": [
            {"week": offset, "activeUsers": active, "percent": _percent(active, group.users)}
            for offset, active in enumerate(group.active)
        ],
    }


def _average(sums: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [
        {"week": offset, "activeUsers": active, "users": users, "percent": _percent(active, users)}
        for offset, (active, users) in enumerate(sums)
    ]


def retention_render(period: DateRange, report: Retention) -> dict[str, Any]:
    return {
        **_range(period),
        "weeks": report.weeks,
        "average": {
            "control": _average(report.average(control=True)),
            "treatment": _average(report.average(control=False)),
        },
        "cohorts": [
            {
                "week": cohort.week.isoformat(),
                "control": _cohort_group(cohort.control),
                "treatment": _cohort_group(cohort.treatment),
            }
            for cohort in report.cohorts
        ],
    }


def streaks_render(
    period: DateRange, lengths: StreakLengths, activity: StreakActivity
) -> dict[str, Any]:
    return {
        **_range(period),
        "frequency": lengths.frequency,
        "users": lengths.users,
        "usersWithStreak": lengths.with_streak,
        "lengths": [
            {"bucket": b.label, "min": b.low, "max": b.high, "users": b.users}
            for b in lengths.buckets
        ],
        "periods": [
            {
                "periodStart": p.start.isoformat(),
                "periodEnd": p.end.isoformat(),
                "activeStreaks": p.streaks,
            }
            for p in activity.periods
        ],
    }


def points_render(period: DateRange, systems: list[SystemPoints]) -> dict[str, Any]:
    return {
        **_range(period),
        "systems": [
            {
                "id": s.system.public_id,
                "key": s.system.key,
                "name": s.system.name,
                "points": sum(day.points for day in s.days),
                "triggerTypes": s.trigger_types,
                "days": [
                    {
                        "date": day.date.isoformat(),
                        "points": day.points,
                        "byTriggerType": day.by_trigger_type,
                    }
                    for day in s.days
                ],
                "levels": [
                    {"key": lv.key, "name": lv.name, "points": lv.points, "users": lv.users}
                    for lv in s.levels
                ],
            }
            for s in systems
        ],
    }


def achievements_render(period: DateRange, summary: AchievementsSummary) -> dict[str, Any]:
    return {
        **_range(period),
        "users": summary.users,
        "days": [
            {"date": d.date.isoformat(), "completions": d.completions, "backdated": d.backdated}
            for d in summary.days
        ],
        "achievements": [
            {
                "id": a.achievement.public_id,
                "key": a.achievement.key,
                "name": a.achievement.name,
                "status": a.achievement.status,
                "trigger": a.achievement.trigger,
                "completions": a.completions,
                "completionsInRange": a.in_range,
                "rarity": a.rarity,
            }
            for a in summary.achievements
        ],
    }


def _run(run: Run) -> dict[str, Any]:
    return {
        "start": run.start.isoformat(),
        "end": run.end.isoformat() if run.end else None,
        "participants": run.participants,
    }


def leaderboards_render(period: DateRange, boards: list[BoardParticipation]) -> dict[str, Any]:
    return {
        **_range(period),
        "leaderboards": [
            {
                "id": b.board.public_id,
                "key": b.board.key,
                "name": b.board.name,
                "status": b.board.status,
                "rankBy": b.board.rank_by,
                "currentRun": _run(b.current) if b.current else None,
                "runs": [_run(run) for run in b.runs],
            }
            for b in boards
        ],
    }


def overview_render(report: Overview) -> dict[str, Any]:
    return {
        "date": report.date.isoformat(),
        "users": report.users,
        "dau": report.dau,
        "mau": report.mau,
        "days": [{"date": d.date.isoformat(), "events": d.count} for d in report.events],
    }
