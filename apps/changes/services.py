"""Writes of whole configurations (issue 28; README "Configuration you can trust"): applying
a plan (a configuration file, a promote), cloning an environment, reverting one change. Every
object is written through its kind (apps/core/portable.py), so through the admin API's input
serializers and the configuration services, with their validation, and into the change
history (apps/accounts/history.py) as one group.

A plan is applied in one transaction: the first step refused undoes the steps before it, and
the refusal names the step ("achievement writer: ..."). A dry run reads in a transaction that
is rolled back, so not even the built-in templates a first read gives a tenant stay behind.
"""

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import ProtectedError, RestrictedError

from apps.accounts import history
from apps.accounts.models import ConfigChange, Environment, Tenant
from apps.accounts.services import api_key_create_admin, environment_create
from apps.changes import domain
from apps.changes.domain import CHANGE, CREATE, REMOVE, Step
from apps.core import portable
from apps.core.api.naming import wire_namer
from apps.core.errors import ApplicationError, ValidationError
from apps.notifications.configuration import defaults_claimed


def kind_order() -> dict[str, int]:
    """The kinds that configuration files, diffs and promotes carry, and their order."""
    return {kind.name: kind.order for kind in portable.kinds() if kind.portable}


def states(tenant: Tenant) -> dict[tuple[str, str], portable.State]:
    order = kind_order()
    return portable.export(tenant, order)


@contextlib.contextmanager
def rolled_back() -> Iterator[None]:
    """Whatever happens inside is undone (a dry run, a diff: reads that may seed defaults)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


@dataclasses.dataclass(frozen=True)
class Applied:
    steps: list[Step]
    changes: list[ConfigChange]


def _refusal(step: Step, exc: Exception) -> ValidationError:
    label = portable.kind(step.kind).label
    if isinstance(exc, ApplicationError):
        collection = getattr(portable.kind(step.kind), "collection", None)
        serializer = getattr(collection, "update_serializer", None)
        message = exc.worded(wire_namer(serializer))
    elif isinstance(exc, ProtectedError | RestrictedError):
        message = "still in use by other configuration"
    else:
        message = "conflicts with an object written at the same time; retry"
    return ValidationError(f"Cannot {step.action} {label} {step.key!r}: {message}")


def _self_refs(kind: portable.Kind) -> list[str]:
    """The fields of a kind's states that name objects of the same kind (an achievement's
    prerequisites): those objects are created first."""
    refs = getattr(kind, "refs", {})
    return [field for field, target in refs.values() if target == kind.name]


def steps_apply(tenant: Tenant, steps: Sequence[Step], *, source: str, note: str = "") -> Applied:
    """Carry the steps out, all or none, as one group of the history."""
    touched = {step.kind for step in steps}
    self_refs = {kind.name: _self_refs(kind) for kind in portable.kinds()}
    with (
        transaction.atomic(),
        history.how(source, note),
        history.recording(tenant, touched) as recording,
    ):
        if touched & {"email_template", "push_template"}:
            # The templates are the file's (the source's): no built-in default comes after.
            defaults_claimed(tenant)
        ctx = portable.Context(tenant)
        for step in domain.dependencies_first(list(steps), self_refs):
            kind = portable.kind(step.kind)
            try:
                with transaction.atomic():
                    if step.action == CREATE:
                        assert step.wanted is not None  # noqa: S101 - a create has a state
                        kind.create(ctx, step.key, dict(step.wanted))
                    elif step.action == CHANGE:
                        kind.change(ctx, step.key, step.changes())
                    else:
                        kind.remove(ctx, step.key)
            except (ApplicationError, ProtectedError, RestrictedError, IntegrityError) as exc:
                raise _refusal(step, exc) from exc
    return Applied(list(steps), recording.changes)


# --- configuration files ------------------------------------------------------------------------


def config_document(tenant: Tenant) -> dict[str, Any]:
    """The tenant's whole configuration as the configuration file writes it."""
    about = {
        "environment": tenant.environment.key,
        "tenant": tenant.customer_id,
    }
    return domain.document(states(tenant), about)


def config_plan(tenant: Tenant, doc: Any) -> list[Step]:
    """What applying the file would do (nothing written: the reads are rolled back)."""
    from apps.changes.schema import document_check

    document_check(doc)
    wanted, managed = domain.states_of(doc)
    with rolled_back():
        return domain.plan(states(tenant), wanted, kind_order(), managed=managed, partial=True)


def config_apply(tenant: Tenant, doc: Any, *, dry_run: bool = False) -> Applied:
    """Make the tenant's configuration what the file says, for the kinds it has a section for
    (objects of those kinds the file leaves out are archived, or deleted where their kind has
    no archive). Applying the same file again does nothing."""
    if dry_run:
        return Applied(config_plan(tenant, doc), [])
    from apps.changes.schema import document_check

    document_check(doc)
    wanted, managed = domain.states_of(doc)
    with transaction.atomic():
        steps = domain.plan(states(tenant), wanted, kind_order(), managed=managed, partial=True)
        return steps_apply(tenant, steps, source="file")


# --- diff, promote, clone --------------------------------------------------------------------


def diff(source: Tenant, target: Tenant) -> list[Step]:
    """What a promote from `source` would change in `target`."""
    with rolled_back():
        return domain.plan(states(target), states(source), kind_order())


def promote(source: Tenant, target: Tenant, selected: Sequence[str] | None = None) -> Applied:
    """Apply the diff from `source` to `target`: all of it, or the steps named in `selected`
    (their `ref`, "metric:words"). A name that is not a step of the diff is refused."""
    with transaction.atomic():
        steps = domain.plan(states(target), states(source), kind_order())
        if selected is not None:
            known = {step.ref for step in steps}
            unknown = sorted(set(selected) - known)
            if unknown:
                raise ValidationError(
                    "{changes}: not changes of this promote: " + ", ".join(unknown),
                    fields="changes",
                    code="not_found",
                )
            steps = [step for step in steps if step.ref in set(selected)]
        note = f"from {_name(source)}"
        return steps_apply(target, steps, source="promote", note=note)


def _name(tenant: Tenant) -> str:
    where = tenant.customer_id or "default tenant"
    return f"{tenant.environment.key} / {where}"


@dataclasses.dataclass(frozen=True)
class Cloned:
    environment: Environment
    admin_key: str  # shown once
    applied: Applied


def environment_clone(source: Tenant, *, name: str, key: str, priority: int) -> Cloned:
    """A new environment of the source's organization whose default tenant has the source's
    configuration, with an admin key of its own."""
    name, key = name.strip(), key.strip()
    if not name or len(name) > 255:
        raise ValidationError("{name} must be 1 to 255 characters", fields="name")
    if not key or len(key) > 64 or not key.replace("-", "").replace("_", "").isalnum():
        raise ValidationError(
            "{key} must be 1 to 64 letters, digits, - or _", fields="key", code="invalid"
        )
    organization = source.environment.organization
    if organization.environments.filter(key=key).exists():
        raise ValidationError("{key} is already an environment's key", fields="key")
    with transaction.atomic():
        environment = environment_create(organization, name=name, key=key, priority=priority)
        tenant = environment.default_tenant
        assert tenant is not None  # noqa: S101 - environment_create makes it
        _, full_key = api_key_create_admin(environment, name="Admin key (clone)")
        steps = domain.plan(states(tenant), states(source), kind_order())
        applied = steps_apply(tenant, steps, source="clone", note=f"from {_name(source)}")
    return Cloned(environment, full_key, applied)


# --- revert ----------------------------------------------------------------------------------


def change_revert(change: ConfigChange) -> Applied:
    """Undo one change through the services: the object goes back to its state before the
    change. Refused when the object changed since (revert the later change first), when the
    kind cannot be written back (webhook endpoints and push channels: their secrets are gone),
    or when the services refuse (a metric that objects created later depend on)."""
    tenant = change.tenant
    kind = portable.kind(change.kind)
    if change.reverted_by_id is not None:
        raise ValidationError("This change was already reverted", code="conflict")
    with transaction.atomic():
        now = portable.export(tenant, [change.kind]).get((change.kind, change.key))
        if now != change.after:
            later = (
                ConfigChange.objects.filter(
                    tenant=tenant, kind=change.kind, key=change.key, id__gt=change.id
                )
                .order_by("-id")
                .first()
            )
            since = (
                f" by the change of {later.at:%Y-%m-%d %H:%M} UTC ({later.public_id})"
                if later
                else ""
            )
            raise ValidationError(
                f"{kind.label.capitalize()} {change.key!r} changed since{since}: revert that "
                "change first",
                code="conflict",
            )
        if change.before is None:
            step = Step(REMOVE, change.kind, change.key, {}, None)
        elif change.after is None:
            if not kind.portable:
                raise ValidationError(
                    f"A deleted {kind.label} cannot be restored: its secrets are not kept",
                    code="not_allowed_for_kind",
                )
            step = Step(CREATE, change.kind, change.key, {}, change.before)
        else:
            names = change.before.keys() | change.after.keys()
            fields = {
                name: (change.after.get(name), change.before.get(name))
                for name in sorted(names)
                if change.after.get(name) != change.before.get(name)
            }
            step = Step(CHANGE, change.kind, change.key, fields, change.before)
        applied = _revert_apply(tenant, step, change)
        mine = [c for c in applied.changes if (c.kind, c.key) == (change.kind, change.key)]
        if mine:
            ConfigChange.objects.filter(pk=change.pk).update(reverted_by=mine[0])
            change.reverted_by = mine[0]
    return applied


def _list_refs() -> dict[str, dict[str, str]]:
    """kind -> {field of its states: the kind the field's list of keys names}."""
    return {
        kind.name: dict(kind.refs.values())
        for kind in portable.kinds()
        if isinstance(kind, portable.CollectionKind)
    }


def _revert_apply(tenant: Tenant, step: Step, change: ConfigChange) -> Applied:
    note = f"revert of {change.public_id}"
    if step.action != REMOVE:
        return steps_apply(tenant, [step], source="revert", note=note)
    users = domain.dependents(portable.export(tenant), step.kind, step.key, _list_refs())
    if users:
        named = ", ".join(f"{portable.kind(kind).label} {key!r}" for kind, key in users[:5])
        label = portable.kind(step.kind).label
        raise ValidationError(
            f"Cannot remove {label} {step.key!r}: later changes depend on it ({named}); revert "
            "or change those first",
            code="conflict",
        )
    # Reverting a creation deletes the object (an archive would leave it behind).
    kind = portable.kind(step.kind)
    with (
        transaction.atomic(),
        history.how("revert", note),
        history.recording(tenant, [step.kind]) as recording,
    ):
        try:
            kind.delete(portable.Context(tenant), step.key)
        except (ApplicationError, ProtectedError, RestrictedError, IntegrityError) as exc:
            raise _refusal(step, exc) from exc
    return Applied([step], recording.changes)
