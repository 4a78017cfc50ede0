"""Inputs and response shapes of the configuration routes (/admin/ext/v1/history, config, diff,
promote, environments)."""

from typing import Any

from rest_framework import serializers

from apps.accounts.models import ConfigChange, Environment, Tenant
from apps.changes import files
from apps.changes.domain import REMOVE, Step
from apps.core.api.fields import StrictSerializer
from apps.core.api.shapes import Shape, renders

ANY = serializers.JSONField


# --- history ----------------------------------------------------------------------------------


class ChangeActor(Shape):
    kind = serializers.ChoiceField(
        choices=["staff", "api_key", "command", "system"],
        help_text="staff: a dashboard user; api_key: an admin API key (MCP included); command: "
        "manage.py; system: the server itself (a schedule, built-in templates).",
    )
    name = serializers.CharField(help_text="The staff member's username or the key's name.")


class ConfigChangeShape(Shape):
    id = serializers.UUIDField()
    at = serializers.DateTimeField()
    group = serializers.UUIDField(
        help_text="The changes one write made together (a delete that took others along, a "
        "promote) share it."
    )
    kind = serializers.CharField(help_text="metric, achievement, points_trigger, settings, ...")
    key = serializers.CharField(
        help_text="The object's key (a level, boost or trigger within its points system: "
        "xp/gold; a template: type/name)."
    )
    action = serializers.ChoiceField(choices=["created", "changed", "deleted"])
    actor = ChangeActor()
    source_ = serializers.CharField(
        help_text="api, dashboard, mcp, file, promote, clone, revert, schedule, seed, job."
    )
    note = serializers.CharField(allow_blank=True)
    before = ANY(allow_null=True, help_text="The object's state before (null: created).")
    after = ANY(allow_null=True, help_text="Its state after (null: deleted).")
    revertedBy = serializers.UUIDField(
        allow_null=True, help_text="The change that reverted this one."
    )


@renders(ChangeActor)
def change_actor_render(change: ConfigChange) -> dict[str, Any]:
    return {"kind": change.actor_kind, "name": change.actor}


@renders(ConfigChangeShape)
def config_change_render(change: ConfigChange) -> dict[str, Any]:
    reverter = change.reverted_by
    return {
        "id": str(change.public_id),
        "at": change.at,
        "group": str(change.group),
        "kind": change.kind,
        "key": change.key,
        "action": change.action,
        "actor": change_actor_render(change),
        "source": change.source,
        "note": change.note,
        "before": change.before,
        "after": change.after,
        "revertedBy": str(reverter.public_id) if reverter is not None else None,
    }


class RevertResult(Shape):
    reverted = ConfigChangeShape(help_text="The change reverted, now with revertedBy.")
    changes = ConfigChangeShape(many=True, help_text="What the revert changed.")


@renders(RevertResult)
def revert_result_render(reverted: ConfigChange, changes: list[ConfigChange]) -> dict[str, Any]:
    return {
        "reverted": config_change_render(reverted),
        "changes": [config_change_render(change) for change in changes],
    }


# --- plans ------------------------------------------------------------------------------------


class StepField(Shape):
    name = serializers.CharField()
    from_ = ANY(allow_null=True, help_text="Its value now (null: none).")
    to = ANY(allow_null=True, help_text="Its value after the step.")


class PlanStep(Shape):
    action = serializers.ChoiceField(choices=["create", "change", "remove"])
    kind = serializers.CharField()
    key = serializers.CharField()
    ref = serializers.CharField(
        help_text="kind:key, how a promote's `changes` names the step (metric:words)."
    )
    removal = serializers.ChoiceField(
        choices=["archive", "delete"],
        allow_null=True,
        help_text="remove only: whether the object is archived or deleted.",
    )
    fields_ = StepField(many=True, help_text="create: every setting; change: those that differ.")


# A setting's value: any JSON.
Value = str | int | float | bool | list[object] | dict[str, object] | None


@renders(StepField)
def step_field_render(name: str, now: Value, then: Value) -> dict[str, Any]:
    return {"name": name, "from": now, "to": then}


@renders(PlanStep)
def plan_step_render(step: Step) -> dict[str, Any]:
    return {
        "action": step.action,
        "kind": step.kind,
        "key": step.key,
        "ref": step.ref,
        "removal": files.removal(step) if step.action == REMOVE else None,
        "fields": [step_field_render(name, now, then) for name, (now, then) in step.fields.items()],
    }


class TenantRef(Shape):
    environment = serializers.CharField(help_text="The environment's key.")
    tenant = serializers.CharField(
        allow_null=True, help_text="The tenant's customer id (null: the default tenant)."
    )


@renders(TenantRef)
def tenant_ref_render(tenant: Tenant) -> dict[str, Any]:
    return {"environment": tenant.environment.key, "tenant": tenant.customer_id}


class DiffResult(Shape):
    from_ = TenantRef()
    to = TenantRef()
    steps = PlanStep(many=True, help_text="What a promote would do to `to`, in its order.")


@renders(DiffResult)
def diff_result_render(source: Tenant, target: Tenant, steps: list[Step]) -> dict[str, Any]:
    return {
        "from": tenant_ref_render(source),
        "to": tenant_ref_render(target),
        "steps": [plan_step_render(step) for step in steps],
    }


class ApplyResult(Shape):
    dryRun = serializers.BooleanField()
    steps = PlanStep(many=True)
    changes = ConfigChangeShape(many=True, help_text="What was written (none in a dry run).")


@renders(ApplyResult)
def apply_result_render(
    dry_run: bool, steps: list[Step], changes: list[ConfigChange]
) -> dict[str, Any]:
    return {
        "dryRun": dry_run,
        "steps": [plan_step_render(step) for step in steps],
        "changes": [config_change_render(change) for change in changes],
    }


# --- inputs ------------------------------------------------------------------------------------


class _Source(StrictSerializer):
    fromEnvironment = serializers.CharField(
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="The key of an environment of your organization (default, or empty: the "
        "key's own).",
    )
    fromTenant = serializers.CharField(
        max_length=255,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="A tenant's customer id in it (default, or empty: its default tenant).",
    )


class PromoteSerializer(_Source):
    changes = serializers.ListField(
        child=serializers.CharField(max_length=400),
        required=False,
        max_length=10_000,
        help_text="The steps of the diff to apply, by their ref (default: all of them).",
    )


class CloneSerializer(StrictSerializer):
    name = serializers.CharField(max_length=255)
    key = serializers.RegexField(r"^[A-Za-z0-9_-]{1,64}$", max_length=64)
    priority = serializers.IntegerField(min_value=1, max_value=1000, required=False, default=2)
    fromEnvironment = serializers.CharField(
        max_length=64,
        required=False,
        allow_blank=True,
        help_text="Whose configuration to copy: an environment's key (default: the key's own).",
    )
    fromTenant = serializers.CharField(
        max_length=255, required=False, allow_null=True, allow_blank=True
    )


class EnvironmentShape(Shape):
    id = serializers.UUIDField()
    key = serializers.CharField()
    name = serializers.CharField()
    priority = serializers.IntegerField(help_text="Lower first; production is 1.")
    production = serializers.BooleanField(help_text="Priority 1; the others are for trying.")


@renders(EnvironmentShape)
def environment_render(environment: Environment) -> dict[str, Any]:
    return {
        "id": str(environment.public_id),
        "key": environment.key,
        "name": environment.name,
        "priority": environment.priority,
        "production": environment.is_production,
    }


class CloneResult(Shape):
    environment = EnvironmentShape()
    apiKey = serializers.CharField(help_text="The new environment's admin key, shown once.")
    changes = serializers.IntegerField(help_text="How many objects were copied.")


@renders(CloneResult)
def clone_result_render(environment: Environment, api_key: str, changes: int) -> dict[str, Any]:
    return {
        "environment": environment_render(environment),
        "apiKey": api_key,
        "changes": changes,
    }
