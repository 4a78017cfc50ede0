"""The award ledger: every change of a points total is an append-only award row, written with
the total in the same transaction, under the user's lock. Each award carries a dedupe key that
is unique per user and system, so a retried job or a replayed event can never pay twice."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from apps.accounts.models import Tenant
from apps.points import domain, sql, wire
from apps.points.errors import PointsBlockedError
from apps.points.models import PointsAward, PointsTotal, PointsTriggerMark
from apps.points.selectors import BoostDef, SystemDef, TriggerDef, user_boosts, user_totals
from apps.users.domain import local_date
from apps.users.models import EndUser

# The snapshot of each trigger as its awards record it, made once per trigger definition
# (definitions are cached per configuration version): {pk: (definition, snapshot)}.
_SNAPSHOTS: dict[int, tuple[TriggerDef, dict[str, object]]] = {}


def _snapshot(trigger: TriggerDef) -> dict[str, object]:
    """wire.trigger_render(trigger), shared by the awards of one definition (never changed)."""
    cached = _SNAPSHOTS.get(trigger.pk)
    if cached is None or cached[0] is not trigger:
        cached = _SNAPSHOTS[trigger.pk] = (trigger, wire.trigger_render(trigger))
    return cached[1]


@dataclass
class _Change:
    system: SystemDef
    total: PointsTotal
    created: bool
    previous_level_pk: int | None
    base: int  # the balance before this ledger's awards
    awards: list[PointsAward] = field(default_factory=list)


class Ledger:
    """Awards for one user in one transaction; `flush` writes them and describes them."""

    def __init__(self, tenant: Tenant, user: EndUser, now: dt.datetime) -> None:
        self.tenant, self.user, self.now = tenant, user, now
        self.day = local_date(now, user.tz)
        self._totals: dict[int, PointsTotal] | None = None
        self._changes: dict[int, _Change] = {}
        self._boosts: dict[int, list[BoostDef]] = {}
        self._blocking: set[int] = set()

    def load(self, systems: list[SystemDef], loaded: list[PointsTotal] | None = None) -> None:
        """Every balance this event may touch: one query, or none when the caller read the
        user's totals (`loaded`)."""
        self._totals = user_totals(self.user, [s.pk for s in systems], loaded)

    def balance(self, system: SystemDef) -> int:
        change = self._changes.get(system.pk)
        if change is not None:
            return change.total.total
        assert self._totals is not None  # noqa: S101 - load() comes first
        row = self._totals.get(system.pk)
        return row.total if row is not None else 0

    def has_history(self, system: SystemDef) -> bool:
        assert self._totals is not None  # noqa: S101
        return system.pk in self._totals

    def award(
        self,
        system: SystemDef,
        trigger: TriggerDef | None,
        points: int,
        dedupe_key: str,
        source: dict[str, object] | None = None,
    ) -> PointsAward | None:
        """Add an award (None when it comes to nothing). `trigger` is None for points a
        league's placement pays (apps/pipeline/leagues.py): the award keeps no trigger; or for
        a quest's reward, whose `source` is kept as the trigger snapshot (its type one of
        ExtensionTriggerType)."""
        change = self._change(system)
        applied: list[BoostDef] = []
        if points > 0:
            if system.pk not in self._boosts:
                self._boosts[system.pk] = [
                    b for b in user_boosts(self.user, system) if b.running_on(self.day)
                ]
            applied = self._boosts[system.pk]
            points = domain.boosted(
                points, [domain.Boost(b.public_id, b.multiplier, b.rounding) for b in applied]
            )
            points = domain.capped(points, change.total.total, system.max_points)
        elif trigger is not None and trigger.block_if_out_of_points:
            # Judged on the event's net result at flush, not on the order of the triggers.
            self._blocking.add(system.pk)
        if points == 0:
            return None
        change.total.total += points
        award = PointsAward(
            # Ids, not the objects: nothing reads them from an award, and setting a related
            # object costs more than the rest of the award (a batch makes thousands).
            tenant_id=self.tenant.pk,
            user_id=self.user.pk,
            system_id=system.pk,
            trigger_id=trigger.pk if trigger is not None else None,
            trigger_snapshot=_snapshot(trigger) if trigger is not None else (source or {}),
            awarded=points,
            total_after=change.total.total,
            boosts=[wire.boost_render(b, self.day) for b in applied],
            dedupe_key=dedupe_key,
            created=self.now,
            local_date=self.day,
        )
        change.awards.append(award)
        return award

    def reverse(self, system: SystemDef, original: PointsAward, dedupe_key: str) -> PointsAward:
        """An award that takes `original` back exactly, keeping its trigger (undoing events,
        apps/pipeline/undo.py): no boost, cap or block applies to it. It counts on this
        ledger's day, as any award made now."""
        change = self._change(system)
        change.total.total -= original.awarded
        award = PointsAward(
            tenant_id=self.tenant.pk,
            user_id=self.user.pk,
            system_id=system.pk,
            trigger_id=original.trigger_id,
            trigger_snapshot=original.trigger_snapshot,
            awarded=-original.awarded,
            total_after=change.total.total,
            boosts=[],
            dedupe_key=dedupe_key,
            created=self.now,
            local_date=self.day,
        )
        change.awards.append(award)
        return award

    def _change(self, system: SystemDef) -> _Change:
        if system.pk not in self._changes:
            assert self._totals is not None  # noqa: S101
            row = self._totals.get(system.pk)
            created = row is None
            if row is None:
                row = PointsTotal(
                    tenant_id=self.tenant.pk,
                    user_id=self.user.pk,
                    system_id=system.pk,
                    total=0,
                    first_activity_at=self.now,
                )
            self._changes[system.pk] = _Change(system, row, created, row.level_id, row.total)
        return self._changes[system.pk]

    def _keep_inserted(self, changed: list[_Change], inserted: set[tuple[int, str]]) -> None:
        """Exactly once: the awards written assumed none was paid before. Drop those the
        ledger already held (their insert did nothing), recompute the running totals of what
        remains, and set right the rows written with the assumption: the totals and daily
        changes added only what was inserted, so only the levels and the awards' running
        totals can be wrong. Rare: a retried job, or a mark lost with a rolled back write."""
        for change in changed:
            kept = [a for a in change.awards if (change.system.pk, a.dedupe_key) in inserted]
            if len(kept) == len(change.awards):
                continue
            running = change.base
            for award in kept:
                running += award.awarded
                if award.total_after != running:
                    award.total_after = running
                    PointsAward.objects.filter(public_id=award.public_id).update(
                        total_after=running
                    )
            change.awards, change.total.total = kept, running
            level = domain.level_for(running, change.system.level_points)
            if kept and (level.pk if level else None) != change.total.level_id:
                change.total.level_id = level.pk if level else None
                PointsTotal.objects.filter(user=self.user, system_id=change.system.pk).update(
                    level_id=change.total.level_id
                )

    def _check_blocking(self, changed: list[_Change]) -> None:
        for change in changed:
            if change.system.pk in self._blocking and change.total.total < 0:
                raise PointsBlockedError(change.system.key)

    def flush(self, marks: Sequence[PointsTriggerMark] = ()) -> list["SystemChange"]:
        """Write awards, totals, levels, daily changes and the trigger `marks` that moved
        (apps/points/sql.py: one statement on PostgreSQL); return what changed in each system
        (`points_render` in apps/points/wire.py makes the responses' `points` map of it).
        Raises PointsBlockedError, having possibly written, for the caller's transaction to
        roll back."""
        changed = self._settled()
        inserted = sql.ledger_write(
            sql.LedgerWrite(
                tenant_pk=self.tenant.pk,
                user_pk=self.user.pk,
                now=self.now,
                day=self.day,
                awards=[a for c in changed for a in c.awards],
                totals=[sql.TotalWrite(c.system.pk, c.total.level_id) for c in changed],
                marks=marks,
            )
        )
        if len(inserted) < sum(len(c.awards) for c in changed):
            self._keep_inserted(changed, inserted)
            changed = [c for c in changed if c.awards]
            self._check_blocking(changed)
        return self._described(changed)

    def _settled(self) -> list[_Change]:
        changed = [c for c in self._changes.values() if c.awards]
        self._check_blocking(changed)
        for change in changed:
            level = domain.level_for(change.total.total, change.system.level_points)
            change.total.level_id = level.pk if level else None
        return changed

    def settle(self) -> list["SystemChange"]:
        """What `flush` would write and return, assuming every award is new, without writing:
        a batch (apps/pipeline/bulk.py) writes the awards of all its events together, and
        checks that every one was inserted. The totals carry the levels set."""
        return self._described(self._settled())

    def totals(self) -> list[PointsTotal]:
        """The total rows of the systems this ledger awards in (made for a first award), as
        `settle` or `flush` left them."""
        return [c.total for c in self._changes.values() if c.awards]

    def _described(self, changed: list[_Change]) -> list["SystemChange"]:
        return [
            SystemChange(
                system=c.system,
                total=c.total.total,
                added=sum(a.awarded for a in c.awards),
                awards=tuple(c.awards),
                level_changed=c.total.level_id != c.previous_level_pk,
                level_pk=c.total.level_id,
            )
            for c in changed
        ]


@dataclass(frozen=True)
class SystemChange:
    """What a ledger's flush did to one system: facts, rendered once (`points_render` in
    apps/points/wire.py)."""

    system: SystemDef
    total: int
    added: int
    awards: tuple[PointsAward, ...]
    level_changed: bool
    level_pk: int | None
