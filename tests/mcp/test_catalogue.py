"""The tools' catalogue (apps/mcp/catalogue.py): every tool is an operation of a served
document, none deletes, every admin operation is a tool or left out with a reason, and the
input schemas are the admin API's input serializers, as JSON Schema."""

import jsonschema
import pytest

from apps.achievements.serializers import AchievementCreateSerializer
from apps.leaderboards.serializers import LeaderboardCreateSerializer
from apps.mcp.catalogue import (
    TENANT_ARGUMENT,
    TOOLS,
    TOOLS_BY_NAME,
    Kind,
    document,
    left_out,
    operation,
)
from apps.mcp.dispatch import api_call
from apps.metrics.serializers import MetricCreateSerializer, MetricUpdateSerializer
from apps.points.serializers import TriggerCreateSerializer
from apps.streaks.serializers import StreakSettingsUpdateSerializer

pytestmark = pytest.mark.django_db


def test_tool_names_are_unique_and_every_tool_is_a_documented_operation():
    assert len(TOOLS_BY_NAME) == len(TOOLS)
    for tool in TOOLS:
        op = operation(tool)
        assert op.method in ("GET", "POST", "PATCH"), tool.name
        assert (op.method == "GET") == (tool.kind is Kind.READ and "preview" not in tool.name)


def test_no_tool_deletes_and_the_dispatcher_builds_no_delete():
    assert not [tool.name for tool in TOOLS if operation(tool).method == "DELETE"]
    assert not [t.name for t in TOOLS if any(w in t.name for w in ("delete", "remove", "reset"))]
    with pytest.raises(ValueError, match="DELETE is not an operation"):
        api_call("any", None, "DELETE", "/admin/v1/metrics", query={"ids": ["x"]})


@pytest.mark.parametrize("name", ["admin", "ext-admin"])
def test_every_admin_operation_is_a_tool_or_left_out_with_a_reason(name):
    tools = {tool.operation for tool in TOOLS if tool.document == name}
    for methods in document(name)["paths"].values():
        for method, op in methods.items():
            if not isinstance(op, dict) or "operationId" not in op:
                continue
            operation_id = op["operationId"]
            reason = left_out(operation_id, method.upper())
            if operation_id in tools:
                assert reason is None, f"{operation_id} is a tool and left out ({reason})"
            else:
                assert reason, f"{operation_id}: make it a tool or say in LEFT_OUT why not"


def test_input_schemas_are_valid_json_schema_with_a_tenant_argument():
    for tool in TOOLS:
        schema = operation(tool).input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert TENANT_ARGUMENT in schema["properties"], tool.name
        assert TENANT_ARGUMENT not in schema.get("required", [])


@pytest.mark.parametrize(
    ("tool", "serializer"),
    [
        ("create_metric", MetricCreateSerializer),
        ("update_metric", MetricUpdateSerializer),
        ("create_achievement", AchievementCreateSerializer),
        ("create_leaderboard", LeaderboardCreateSerializer),
        ("update_streak_settings", StreakSettingsUpdateSerializer),
    ],
)
def test_a_write_tool_takes_the_fields_of_the_admin_apis_input_serializer(tool, serializer):
    schema = operation(TOOLS_BY_NAME[tool]).input_schema
    fields = {name for name, field in serializer().fields.items() if not field.read_only}
    assert set(schema["properties"]) - {TENANT_ARGUMENT} == fields
    required = {name for name, field in serializer().fields.items() if field.required}
    assert set(schema.get("required", [])) == required


def test_a_points_trigger_tool_takes_its_system_from_the_path():
    schema = operation(TOOLS_BY_NAME["create_points_trigger"]).input_schema
    fields = set(TriggerCreateSerializer().fields)
    assert set(schema["properties"]) == fields | {TENANT_ARGUMENT, "systemId"}
    assert "systemId" in schema["required"]


def test_schemas_say_what_the_api_takes_null_included():
    settings = operation(TOOLS_BY_NAME["update_streak_settings"]).input_schema
    validator = jsonschema.Draft202012Validator(settings)
    assert validator.is_valid({"freezes": None})  # null disables freezes (OpenAPI nullable)
    assert validator.is_valid({"freezes": {"startCount": 1, "maxCount": 2}})
    assert not validator.is_valid({"frequency": "hourly"})
    metric = jsonschema.Draft202012Validator(operation(TOOLS_BY_NAME["create_metric"]).input_schema)
    assert metric.is_valid({"key": "words", "name": "Words", "tenant": "eu"})
    assert not metric.is_valid({"key": "words"})
    assert not metric.is_valid({"key": "words", "name": "Words", "colour": "red"})


def test_a_view_that_fails_is_a_tool_error_not_a_crash(monkeypatch):
    from apps.mcp.calls import tool_call
    from apps.metrics import selectors
    from tests.factories import OrganizationWithKey

    org = OrganizationWithKey("Failing")

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(selectors, "metrics_list", broken)
    result = tool_call(org.admin_key, TOOLS_BY_NAME["list_metrics"], {})
    assert result.error
    assert result.body == {"error": "Internal server error"}  # nothing of the exception
