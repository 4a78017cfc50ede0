"""Configuration as code: export, apply (and its dry run), the JSON Schema, the command."""

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from apps.accounts.models import ConfigChange
from apps.achievements.models import Achievement
from apps.changes import files, services
from apps.changes.schema import document_schema
from apps.core import portable
from apps.core.errors import ValidationError
from apps.metrics.models import Metric
from tests.changes.support import admin_client, configure, created

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "gamify-config.schema.json"


def _sections(doc: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in doc.items() if name not in ("environment", "tenant")}


def test_export_apply_to_an_empty_tenant_export_again_is_identical(
    org: Any, tenant: Any, other_tenant: Any
) -> None:
    configure(admin_client(org))
    text = files.dumps(services.config_document(tenant))
    assert "id:" not in text.replace("Id:", "")  # keys, never database ids
    applied = services.config_apply(other_tenant, files.loads(text))
    assert {step.action for step in applied.steps} <= {"create", "change"}
    again = files.dumps(services.config_document(other_tenant))
    assert _sections(files.loads(again)) == _sections(files.loads(text))
    # The text too, but for where it came from.
    assert again.split("\n", 3)[3] == text.split("\n", 3)[3]


def test_applying_the_same_file_twice_does_nothing_the_second_time(
    org: Any, tenant: Any, other_tenant: Any
) -> None:
    configure(admin_client(org))
    doc = services.config_document(tenant)
    services.config_apply(other_tenant, doc)
    count = ConfigChange.objects.filter(tenant=other_tenant).count()
    assert services.config_apply(other_tenant, doc).steps == []
    assert ConfigChange.objects.filter(tenant=other_tenant).count() == count


def test_the_file_is_stable_and_readable(org: Any, tenant: Any) -> None:
    configure(admin_client(org))
    first = files.dumps(services.config_document(tenant))
    assert first == files.dumps(services.config_document(tenant))
    doc = files.loads(first)
    assert list(doc)[:3] == ["gamify", "environment", "tenant"]
    assert doc["achievements"]["Writer"]["metric"] == "words"
    assert doc["achievements"]["Writer"]["userAttributes"] == [
        {"attribute": "plan", "attributeValue": "pro"}
    ]
    assert doc["pointsSystems"]["xp"]["levels"]["gold"]["points"] == 100
    assert set(doc["pointsSystems"]["xp"]["triggers"]) == {
        "metric:words:10",
        "achievement:finisher",
    }
    assert doc["leaderboards"]["top"]["breakdownAttributes"] == ["plan"]
    assert doc["leaderboards"]["top"]["start"] == "2026-01-01"  # text, not a YAML date
    assert "|" in first  # templates' HTML as blocks of lines


def test_dry_run_prints_the_plan_and_changes_nothing(
    org: Any, tenant: Any, other_tenant: Any
) -> None:
    configure(admin_client(org))
    doc = services.config_document(tenant)
    doc["metrics"]["words"]["name"] = "Words written"
    history = ConfigChange.objects.count()
    with portable_untouched(other_tenant):
        applied = services.config_apply(other_tenant, doc, dry_run=True)
    assert ConfigChange.objects.count() == history
    assert not Metric.objects.filter(tenant=other_tenant).exists()
    text = files.plan_text(applied.steps)
    assert "+ create metric words" in text
    assert "+ create points level xp/gold" in text
    # Not even the built-in templates a first read seeds stay behind.
    from apps.notifications.models import EmailTemplate

    assert not EmailTemplate.objects.filter(tenant=other_tenant).exists()


class portable_untouched:
    def __init__(self, tenant: Any) -> None:
        self.tenant = tenant

    def __enter__(self) -> None:
        self.before = portable.export(self.tenant, ["metric", "achievement", "leaderboard"])

    def __exit__(self, *exc: Any) -> None:
        assert portable.export(self.tenant, ["metric", "achievement", "leaderboard"]) == (
            self.before
        )


def test_a_changed_field_is_planned_field_by_field(org: Any, tenant: Any) -> None:
    configure(admin_client(org))
    doc = services.config_document(tenant)
    doc["achievements"]["Writer"]["metricValue"] = 250
    (step,) = services.config_apply(tenant, doc, dry_run=True).steps
    assert (step.action, step.kind, step.key) == ("change", "achievement", "Writer")
    assert dict(step.fields) == {"metricValue": (100, 250)}
    services.config_apply(tenant, doc)
    assert Achievement.objects.get(tenant=tenant, name="Writer").metric_value == 250


def test_objects_left_out_of_a_section_are_archived_and_sections_left_out_kept(
    org: Any, tenant: Any
) -> None:
    configure(admin_client(org))
    doc = {"gamify": 1, "achievements": dict(services.config_document(tenant)["achievements"])}
    del doc["achievements"]["Writer"]
    steps = services.config_apply(tenant, doc).steps
    assert [(s.action, s.kind, s.key) for s in steps] == [("remove", "achievement", "Writer")]
    assert Achievement.objects.get(tenant=tenant, name="Writer").status == "inactive"
    assert Metric.objects.filter(tenant=tenant, key="words").exists()  # no metrics section


def test_a_file_the_schema_refuses_writes_nothing(org: Any, tenant: Any) -> None:
    configure(admin_client(org))
    doc = services.config_document(tenant)
    doc["metrics"]["new"] = {"name": "New", "key": "new", "unitTyp": "number"}
    doc["leaderboards"]["top"]["maxParticipants"] = "many"
    with pytest.raises(ValidationError) as raised:
        services.config_apply(tenant, doc)
    message = raised.value.message
    assert "metrics/new" in message
    assert "unitTyp" in message
    assert "leaderboards/top/maxParticipants" in message
    assert not Metric.objects.filter(tenant=tenant, key="new").exists()


def test_a_refused_object_undoes_the_whole_apply(org: Any, tenant: Any) -> None:
    configure(admin_client(org))
    doc = services.config_document(tenant)
    doc["metrics"]["pages"] = {"name": "Pages", "key": "pages"}
    doc["achievements"]["Reader"] = {
        "name": "Reader",
        "trigger": "metric",
        "metric": "nowhere",
        "metricValue": 5,
    }
    history = ConfigChange.objects.count()
    with pytest.raises(ValidationError, match=r"achievement 'Reader'.*nowhere"):
        services.config_apply(tenant, doc)
    assert not Metric.objects.filter(tenant=tenant, key="pages").exists()
    assert ConfigChange.objects.count() == history


def test_the_shipped_schema_is_the_generated_one() -> None:
    """`manage.py config schema > schemas/gamify-config.schema.json` after a change of shapes."""
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(json.dumps(document_schema()))


def test_the_command_exports_and_applies(
    org: Any, tenant: Any, other_tenant: Any, tmp_path: Path
) -> None:
    configure(admin_client(org))
    out = io.StringIO()
    call_command("config", "export", "--tenant", str(tenant.public_id), stdout=out)
    path = tmp_path / "gamify.yaml"
    path.write_text(out.getvalue())
    dry = io.StringIO()
    call_command(
        "config",
        "apply",
        str(path),
        "--tenant",
        str(other_tenant.public_id),
        "--dry-run",
        stdout=dry,
    )
    assert "+ create metric words" in dry.getvalue()
    assert "Dry run: nothing was written." in dry.getvalue()
    assert not Metric.objects.filter(tenant=other_tenant).exists()
    done = io.StringIO()
    call_command("config", "apply", str(path), "--tenant", str(other_tenant.public_id), stdout=done)
    assert "Applied:" in done.getvalue()
    change = ConfigChange.objects.filter(tenant=other_tenant, kind="metric").get()
    assert (change.source, change.actor_kind) == ("file", "command")
    with pytest.raises(CommandError, match="No tenant"):
        call_command("config", "export", "--tenant", "nope")
    path.write_text("metrics: [unclosed")
    with pytest.raises(CommandError, match="not valid YAML"):
        call_command("config", "apply", str(path), "--tenant", str(other_tenant.public_id))


def _rich(client: Any) -> None:
    """Beyond configure(): an achievement needing two others, a streak with freezes, a boost,
    triggers of every kind, a league paying rewards, a blocks-mode email template, a push
    template with filters, a leaderboard with runs, mutual friends, tenant settings."""
    ids = configure(client)
    assert (
        client.patch(
            "/admin/v1/streaks/settings",
            {
                "freezes": {
                    "startCount": 1,
                    "maxCount": 3,
                    "autoEarnInterval": 7,
                    "autoEarnAmount": 1,
                }
            },
        ).status_code
        == 200
    )
    created(
        client.post(
            "/admin/v1/achievements",
            [
                {
                    "name": "Both",
                    "trigger": "achievement",
                    "achievementIds": [ids["writer"], ids["finisher"]],
                    "status": "active",
                },
                {"name": "Week", "trigger": "streak", "streakLength": 7, "status": "active"},
            ],
        )
    )
    for item in (
        {"type": "streak", "streakLength": 3, "points": 15},
        {"type": "time", "timeUnit": "days", "timeInterval": 1, "points": 1},
    ):
        created(client.post(f"/admin/v1/points/{ids['xp']}/triggers", [item]))
    created(
        client.post(
            f"/admin/v1/points/{ids['xp']}/boosts",
            [
                {
                    "name": "Launch week",
                    "start": "2026-12-01",
                    "end": "2026-12-07",
                    "multiplier": 2,
                    "userAttributes": [{"attributeId": ids["plan"], "attributeValue": "pro"}],
                }
            ],
        )
    )
    created(
        client.post(
            "/admin/v1/leaderboards",
            [
                {
                    "name": "Daily",
                    "key": "daily",
                    "rankBy": "metric",
                    "metricId": ids["words"],
                    "start": "2026-01-01",
                    "runUnit": "day",
                    "runInterval": 1,
                }
            ],
        )
    )
    created(
        client.post(
            "/admin/ext/v1/leagues",
            [
                {
                    "name": "Weekly",
                    "key": "weekly",
                    "scoreBy": "points",
                    "pointsSystemId": ids["xp"],
                    "rewards": [
                        {"fromPlace": 1, "toPlace": 3, "points": 20, "pointsSystemId": ids["xp"]},
                        {"fromPlace": 1, "toPlace": 1, "achievementId": ids["finisher"]},
                    ],
                }
            ],
        )
    )
    created(
        client.post(
            "/admin/v1/email-templates",
            [
                {
                    "type": "streak_reminder",
                    "name": "Blocks",
                    "subject": "Keep it going",
                    "mode": "blocks",
                    "blocks": [
                        {"type": "heading", "text": "Hi {{ user.name }}"},
                        {"type": "points", "system": "xp"},
                    ],
                }
            ],
        )
    )
    created(
        client.post(
            "/admin/v1/push-templates",
            [
                {
                    "type": "recap",
                    "name": "Pro recap",
                    "title": "Your week",
                    "body": "Well done",
                    "data": {"screen": "recap"},
                    "userAttributes": [{"attributeId": ids["plan"], "attributeValue": "pro"}],
                }
            ],
        )
    )
    assert client.patch("/admin/ext/v1/friends/settings", {"mutual": True}).status_code == 200
    assert (
        client.patch(
            "/admin/v1/settings",
            {"experimentation": {"controlRatio": 10}, "branding": {"brandColor": "#112233"}},
        ).status_code
        == 200
    )


def test_every_kind_of_object_survives_the_round_trip(
    org: Any, tenant: Any, other_tenant: Any
) -> None:
    _rich(admin_client(org))
    text = files.dumps(services.config_document(tenant))
    doc = files.loads(text)
    assert doc["achievements"]["Both"]["achievements"] == ["Writer", "finisher"]
    assert doc["leagues"]["weekly"]["rewards"][0]["pointsSystem"] == "xp"
    assert doc["friends"]["mutual"] is True
    assert "html" not in doc["emailTemplates"]["streak_reminder/Blocks"]  # made from blocks
    services.config_apply(other_tenant, doc)
    again = files.dumps(services.config_document(other_tenant))
    assert _sections(files.loads(again)) == _sections(doc)
    # And back: nothing to do.
    assert services.config_apply(other_tenant, doc).steps == []
    assert services.diff(tenant, other_tenant) == []
