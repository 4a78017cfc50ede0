from celery import shared_task

from apps.achievements.services import achievement_backdate


@shared_task(name="apps.achievements.tasks.achievement_backdate_task")
def achievement_backdate_task(achievement_pk: int) -> int:
    return achievement_backdate(achievement_pk)
