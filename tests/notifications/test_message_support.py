"""What support does to one message (services.message_cancel, message_send_now): only a message
that still waits is changed, and the database decides between staff and a worker claiming it."""

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.core.models import OutboxTask
from apps.notifications import delivery
from apps.notifications.choices import MessageStatus, NotificationType
from apps.notifications.errors import MessageNotFoundError, MessageNotWaitingError
from apps.notifications.models import Message
from apps.notifications.services import message_cancel, message_send_now
from apps.users.models import EndUser
from tests.notifications.conftest import committed

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(tenant: Tenant) -> Message:
    user = EndUser.objects.create(tenant=tenant, external_id="alice", email="a@example.com")
    return Message.objects.create(
        tenant=tenant,
        user=user,
        type=NotificationType.REACTIVATION,
        dedupe_key="reactivation:1",
        send_at=timezone.now() + dt.timedelta(hours=3),
        recipient=user.email,
    )


def test_a_cancelled_message_is_never_claimed_by_a_worker(tenant: Tenant, queued: Message) -> None:
    message_cancel(tenant, queued, reason="the user asked")
    assert (queued.status, queued.error) == (MessageStatus.SKIPPED, "the user asked")
    later = timezone.now() + dt.timedelta(days=1)
    assert delivery.messages_send([queued.pk], now=later) == {}
    queued.refresh_from_db()
    assert queued.status == MessageStatus.SKIPPED


def test_a_message_a_worker_claimed_first_is_not_cancelled(tenant: Tenant, queued: Message) -> None:
    Message.objects.filter(pk=queued.pk).update(send_at=timezone.now())
    claimed = delivery._claim([queued.pk], timezone.now())
    assert [m.pk for m in claimed] == [queued.pk]
    with pytest.raises(MessageNotWaitingError, match="The message is sending"):
        message_cancel(tenant, queued, reason="too late")
    with pytest.raises(MessageNotWaitingError):
        message_send_now(tenant, queued)
    assert Message.objects.get(pk=queued.pk).status == MessageStatus.SENDING


def test_another_tenants_message_is_not_found(
    other_tenant: Tenant, queued: Message, tenant: Tenant
) -> None:
    with pytest.raises(MessageNotFoundError):
        message_cancel(other_tenant, queued, reason="no")
    with pytest.raises(MessageNotFoundError):
        message_send_now(other_tenant, queued)
    assert Message.objects.get(pk=queued.pk).status == MessageStatus.QUEUED


def test_send_now_enqueues_the_dispatch_after_commit(tenant: Tenant, queued: Message) -> None:
    now = timezone.now()
    with committed():
        message_send_now(tenant, queued, now=now)
        assert OutboxTask.objects.count() == 1  # recorded in the write's transaction
        assert Message.objects.get(pk=queued.pk).send_at == now
    # Once committed, delivery took it at once (and skipped it: no template is active).
    queued.refresh_from_db()
    assert (queued.status, queued.error) == (
        MessageStatus.SKIPPED,
        "no active template matches the user",
    )


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501])
def test_a_cancel_needs_a_short_reason(tenant: Tenant, queued: Message, reason: Any) -> None:
    with pytest.raises(Exception, match="reason"):
        message_cancel(tenant, queued, reason=reason)
    assert Message.objects.get(pk=queued.pk).status == MessageStatus.QUEUED
