"""Registry of periodic jobs, run by Celery beat, `manage.py run_periodic_jobs` (cron) or the
in-process scheduler of `manage.py serve`: one list, three drivers.

Apps register jobs in their `jobs.py` (imported by AppConfig.ready):

    @periodic_job("queued-events-purge", every=timedelta(hours=6))
    def queued_events_purge(now): ...

Every job must be idempotent: a late or repeated run changes nothing that a single on-time run
would not have changed.

With tenant cells (apps/core/cells.py), each job runs once per cell, inside it: its claim row
(`PeriodicJobRun`) is the cell's, so each cell's schedule is its own, and a job that walks
tenants walks those of the cell it runs in.
"""

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from apps.core.cells import DEFAULT_CELL, cells, using_cell
from apps.core.models import PeriodicJobRun

logger = logging.getLogger("gamify.jobs")

JobFunc = Callable[[dt.datetime], object]


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    every: dt.timedelta
    func: JobFunc


_REGISTRY: dict[str, PeriodicJob] = {}


def periodic_job(name: str, every: dt.timedelta) -> Callable[[JobFunc], JobFunc]:
    def register(func: JobFunc) -> JobFunc:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"periodic job {name!r} registered twice")
        _REGISTRY[name] = PeriodicJob(name=name, every=every, func=func)
        return func

    return register


def periodic_jobs_registered() -> list[PeriodicJob]:
    return sorted(_REGISTRY.values(), key=lambda job: job.name)


def _claim(job: PeriodicJob, now: dt.datetime) -> bool:
    PeriodicJobRun.objects.get_or_create(name=job.name)
    due = Q(last_started_at__isnull=True) | Q(last_started_at__lte=now - job.every)
    # The conditional update is the claim: of two concurrent schedulers only one matches.
    return PeriodicJobRun.objects.filter(due, name=job.name).update(last_started_at=now) == 1


def periodic_jobs_run_due(now: dt.datetime | None = None, force: bool = False) -> list[str]:
    """In every cell, one after the other, run each job that is due (or every job with
    force=True); returns the names run, `name@cell` for those of a cell other than "default"."""
    ran: list[str] = []
    for cell in cells():
        with using_cell(cell):
            for name in periodic_jobs_run_due_here(now, force):
                ran.append(name if cell == DEFAULT_CELL else f"{name}@{cell}")
    return ran


def periodic_jobs_run_due_here(now: dt.datetime | None = None, force: bool = False) -> list[str]:
    """Run each job that is due (or every job with force=True) in the current cell; returns
    the names run."""
    now = now or timezone.now()
    ran: list[str] = []
    for job in periodic_jobs_registered():
        if not force and not _claim(job, now):
            continue
        started = time.monotonic()
        error = ""
        try:
            job.func(now)
        except Exception as exc:  # one failing job must not stop the others
            error = f"{type(exc).__name__}: {exc}"
            logger.exception("job=%s failed", job.name)
        PeriodicJobRun.objects.update_or_create(
            name=job.name,
            defaults={
                "last_finished_at": timezone.now(),
                "last_error": error,
                **({"last_started_at": now} if force else {}),
            },
        )
        logger.info("job=%s ok=%s ms=%d", job.name, not error, (time.monotonic() - started) * 1000)
        ran.append(job.name)
    return ran
