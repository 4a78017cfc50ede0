"""Friends lists under concurrency, on PostgreSQL where row locks are real: concurrent
requests never pass a list's bound, and mutual requests crossing each other (A adds B while B
adds A) neither deadlock nor lose a direction."""

from typing import Any

import pytest

from apps.social import domain
from apps.social.models import FriendSettings, Friendship
from apps.social.services import friends_add
from apps.users.models import EndUser
from tests.concurrency import POSTGRES_ONLY, run_all
from tests.factories import OrganizationWithKey, bump

pytestmark = [*POSTGRES_ONLY]


@pytest.mark.django_db(transaction=True)
def test_concurrent_adds_never_pass_the_bound(monkeypatch: Any) -> None:
    monkeypatch.setattr(domain, "MAX_FRIENDS", 5)
    tenant = OrganizationWithKey("Race").tenant
    for n in range(21):
        EndUser.objects.create(tenant=tenant, external_id=f"u{n}")

    def job(n: int) -> Any:
        return lambda: friends_add(tenant, "u0", [f"u{2 * n + 1}", f"u{2 * n + 2}"])

    results = run_all([job(n) for n in range(10)])
    done = [r for r in results if not isinstance(r, Exception)]
    assert len(done) == 2  # two lists of two fit in five; a third would make six
    assert Friendship.objects.filter(user__external_id="u0").count() == 4


@pytest.mark.django_db(transaction=True)
def test_mutual_adds_crossing_each_other_write_both_directions_once() -> None:
    tenant = OrganizationWithKey("Cross").tenant
    FriendSettings.objects.create(tenant=tenant, mutual=True)
    bump(tenant)  # made without the service: the snapshot is told
    for n in range(10):
        EndUser.objects.create(tenant=tenant, external_id=f"u{n}")
    jobs = []
    for a in range(10):
        others = [f"u{b}" for b in range(10) if b != a]
        jobs.append(lambda a=a, others=others: friends_add(tenant, f"u{a}", others))
    results = run_all(jobs)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert Friendship.objects.count() == 90  # every ordered pair, once
