"""The Celery application. Tasks run inline when CELERY_BROKER_URL is unset (see settings)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gamify.settings")

app = Celery("gamify")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_finalize.connect
def _install_beat_schedule(sender: Celery, **_: object) -> None:
    # The periodic-job registry is the single list of jobs; beat runs the same entry point as
    # `manage.py run_periodic_jobs`, once a minute, and each job decides whether it is due.
    sender.conf.beat_schedule = {
        "run-due-periodic-jobs": {
            "task": "apps.core.tasks.periodic_jobs_run_due_task",
            "schedule": 60.0,
        },
    }
