from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        from celery.signals import task_prerun

        from apps.core import outbox  # noqa: F401 - registers the outbox sweep
        from apps.core.replicas import task_begins

        # A Celery task begins having written nothing (apps/core/replicas.py, rule 2).
        task_prerun.connect(task_begins, weak=False)
