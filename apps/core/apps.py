from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from celery.signals import task_postrun, task_prerun

        from apps.core import outbox  # noqa: F401 - registers the outbox sweep
        from apps.core.replicas import task_begins, task_ends

        # A Celery task begins having written nothing, and marks again at its end the users it
        # wrote (apps/core/replicas.py, rules 2 and 4).
        task_prerun.connect(task_begins, weak=False)
        task_postrun.connect(task_ends, weak=False)
