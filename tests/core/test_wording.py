"""The builders of generated messages read well for one thing and for several: a count and its
noun, a list of names and the verb that agrees with it (apps/core/wording.py), and the messages
built from them (`kind_problem`, the attribute filters' and push channels' refusals)."""

from functools import partial

import pytest

from apps.achievements.domain import REQUIRED_FIELDS, TRIGGER_FIELDS
from apps.achievements.serializers import AchievementCreateSerializer
from apps.core.api.naming import wire_name
from apps.core.arguments import kind_problem
from apps.core.errors import ValidationError
from apps.core.wording import agreeing, counted, listed
from apps.notifications.domain import PushChannelSettings
from apps.notifications.push.configuration import push_channel_create
from apps.notifications.push.credentials import credentials_check
from apps.users.configuration import attribute_refs_check


@pytest.mark.parametrize(
    ("number", "one", "many", "words"),
    [
        (0, "user", None, "0 users"),
        (1, "user", None, "1 user"),
        (2, "API key", None, "2 API keys"),
        (1, "failed delivery", "failed deliveries", "1 failed delivery"),
        (3, "failed delivery", "failed deliveries", "3 failed deliveries"),
        (1200, "ranking entry", "ranking entries", "1,200 ranking entries"),
    ],
)
def test_a_count_agrees_with_its_noun(number, one, many, words):
    assert counted(number, one, many) == words


@pytest.mark.parametrize(
    ("names", "conjunction", "words"),
    [
        ([], "and", ""),
        (["key"], "and", "key"),
        (["metricId", "metricValue"], "and", "metricId and metricValue"),
        (["a", "b", "c"], "and", "a, b and c"),
        (["teamId", "keyId"], "or", "teamId or keyId"),
    ],
)
def test_a_list_of_names_reads_as_a_sentence(names, conjunction, words):
    assert listed(names, conjunction) == words


def test_the_word_agrees_with_one_or_several():
    assert [agreeing(n, "applies", "apply") for n in (0, 1, 2)] == ["apply", "applies", "apply"]


def _problem(kind, new=True, **values):
    problem = kind_problem(
        kind, values, TRIGGER_FIELDS, REQUIRED_FIELDS, noun="achievements", new=new
    )
    return None if problem is None else problem.message


def test_kind_problem_with_one_setting_of_another_kind():
    assert _problem("metric", metric_id="m", metric_value=1, key="k") == (
        "key only applies to api achievements"
    )
    assert _problem("api", new=False, streak_length=3) == (
        "streak_length only applies to streak achievements"
    )


def test_kind_problem_with_several_settings_of_another_kind():
    assert _problem("api", key="k", metric_id="m", metric_value=1, event_attributes=[]) == (
        "metric_id, metric_value and event_attributes only apply to metric achievements"
    )


def test_kind_problem_with_one_or_several_settings_missing():
    assert _problem("streak") == "streak achievements need streak_length"
    assert _problem("metric") == "metric achievements need metric_id and metric_value"
    assert _problem("metric", new=False) is None


def test_kind_problem_names_its_fields_and_code_for_each_interface_to_spell():
    problem = kind_problem(
        "api",
        {"metric_id": "m", "metric_value": 1},
        TRIGGER_FIELDS,
        REQUIRED_FIELDS,
        noun="achievements",
        new=True,
    )
    assert problem is not None
    assert (problem.fields, problem.code) == (("metric_id", "metric_value"), "not_allowed_for_kind")
    # The admin API spells them as the input serializer does, the dashboard with its labels.
    assert problem.worded(partial(wire_name, AchievementCreateSerializer)) == (
        "metricId and metricValue only apply to metric achievements"
    )
    assert problem.worded(lambda field: field.upper()) == (
        "METRIC_ID and METRIC_VALUE only apply to metric achievements"
    )


@pytest.mark.django_db
def test_missing_attributes_agree_with_their_number(tenant):
    ids = ["00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"]
    with pytest.raises(ValidationError) as one:
        attribute_refs_check(tenant, [{"attributeId": ids[0], "attributeValue": "x"}], "user")
    assert one.value.message == f"user attribute not found: {ids[0]}"
    refs = [{"attributeId": i, "attributeValue": "x"} for i in ids]
    with pytest.raises(ValidationError) as several:
        attribute_refs_check(tenant, refs, "user")
    assert several.value.message == f"user attributes not found: {ids[0]}, {ids[1]}"


def test_push_channel_refusals_list_the_settings_in_words():
    with pytest.raises(ValidationError) as missing:
        credentials_check("apns", {}, {})
    assert missing.value.message == "apns channels need team_id, key_id, bundle_id and signing_key"
    assert missing.value.worded(partial(wire_name, None)) == (
        "apns channels need teamId, keyId, bundleId and signingKey"
    )


@pytest.mark.django_db
def test_push_channel_settings_of_another_kind_are_listed_as_alternatives(tenant):
    with pytest.raises(ValidationError) as unknown:
        push_channel_create(tenant, PushChannelSettings(kind="expo", team_id="T", key_id="K"))
    assert unknown.value.message == "expo channels take no key_id or team_id"
    assert unknown.value.fields == ("key_id", "team_id")
