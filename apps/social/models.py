"""Friends (README, "Neighbours and friends"): each user's list of friends, and the tenant's
one setting, whether a friendship is mutual. Neighbours need no table: they are read from the
leaderboards' rank store."""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from apps.accounts.models import Tenant
from apps.users.models import EndUser


class FriendSettings(models.Model):
    """A tenant's friends settings; a tenant without a row has the defaults (one-way)."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="+")
    mutual = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.tenant_id}: {'mutual' if self.mutual else 'one-way'}"


class Friendship(models.Model):
    """`friend` is on `user`'s list. A mutual friendship is two rows, one each way, written
    and removed together (apps/social/services.py)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    friend = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+")
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # Its index serves a user's list (and the friends rankings' subquery).
            models.UniqueConstraint(fields=["user", "friend"], name="friendship_unique"),
            models.CheckConstraint(condition=~Q(user=F("friend")), name="friendship_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} -> {self.friend_id}"
