"""The anniversary job on PostgreSQL, where row locks are real: it takes each due user's lock
for its own transaction (user_job_lock), skips a user an event holds rather than wait, and
completes them (with their points) on the next run. It used to hold a batch of users' locks
until the batch committed, which deadlocked against an event waiting on a points board's run
lock the job held."""

import datetime as dt
import threading

import pytest
from django.db import connections, transaction
from rest_framework.test import APIClient

from apps.achievements.models import AchievementCompletion
from apps.pipeline.jobs import achievements_anniversaries_job
from apps.points.models import PointsTotal
from apps.users.models import EndUser
from apps.users.services import user_lock_pk
from tests.concurrency import POSTGRES_ONLY
from tests.factories import OrganizationWithKey, bump

pytestmark = [*POSTGRES_ONLY]


def _created(client: APIClient, path: str, **item: object) -> dict:
    response = client.post(path, [item], format="json")
    assert response.status_code == 201, response.content
    return response.json()["created"][0]


@pytest.mark.django_db(transaction=True)
def test_a_busy_user_is_skipped_without_waiting_and_completed_on_the_next_run(settings):
    settings.LEADERBOARD_RANKS_REDIS_URL = ""
    org = OrganizationWithKey("Anniversaries")
    bump(org.tenant)
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=org.admin_key)
    system = _created(client, "/admin/v1/points", name="XP", key="xp")
    achievement = _created(
        client,
        "/admin/v1/achievements",
        name="One year",
        status="active",
        trigger="anniversary",
        anniversaryYears=1,
    )
    _created(
        client,
        f"/admin/v1/points/{system['id']}/triggers",
        status="active",
        type="achievement",
        points=100,
        achievementId=achievement["id"],
    )
    signed_up = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=400)).isoformat()
    for user in ("free", "busy"):
        response = client.put(
            f"/v1/users/{user}", {"tz": "UTC", "signUpDate": signed_up}, format="json"
        )
        assert response.status_code == 200, response.content
    busy = EndUser.objects.get(external_id="busy")
    locked, release = threading.Event(), threading.Event()

    def event_in_flight() -> None:
        try:
            with transaction.atomic():
                user_lock_pk(busy.pk)  # what an event of theirs holds until it commits
                locked.set()
                release.wait(timeout=30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=event_in_flight)
    holder.start()
    assert locked.wait(timeout=30)
    try:
        completed = achievements_anniversaries_job(dt.datetime.now(dt.UTC))
    finally:
        release.set()
        holder.join(timeout=30)

    def state() -> dict[str, tuple[int, int]]:
        return {
            user.external_id: (
                AchievementCompletion.objects.filter(user=user).count(),
                sum(PointsTotal.objects.filter(user=user).values_list("total", flat=True)),
            )
            for user in EndUser.objects.order_by("external_id")
        }

    assert completed == 1
    assert state() == {"busy": (0, 0), "free": (1, 100)}
    assert achievements_anniversaries_job(dt.datetime.now(dt.UTC)) == 1
    assert state() == {"busy": (1, 100), "free": (1, 100)}
