"""The event's input serializer builds its fields once per class (apps/core/api/fields.py,
FieldsBuiltOnce) and validates exactly as one with fields of its own."""

import threading
from decimal import Decimal
from typing import Any

from apps.pipeline.serializers import AchievementCompleteSerializer, MetricEventSerializer

# Valid and invalid bodies, errors nested in the user and at the top.
BODIES: list[Any] = [
    {"user": {"id": "u1"}, "value": 1},
    {"user": {"id": "u1", "email": "a@example.com", "tz": "Europe/Paris"}, "value": "2.5"},
    {"user": {"id": "x" * 256}, "value": 1},
    {"user": {"id": "u1", "nope": 1}, "value": 1},
    {"user": {"id": "u1", "subscribeToEmails": "yes"}, "value": 1},
    {"user": {"id": "u1", "tz": "Mars/Olympus"}, "value": 1},
    {"user": {"id": "u1"}, "value": -3},
    {"user": {"id": "u1"}, "value": 0},
    {"user": {"id": "u1"}, "value": 1, "attributes": {"plan": 3}},
    {"user": {"id": "u1"}, "value": 1, "attributes": {"plan": "pro"}},
    {"user": {"id": "u\x00"}, "value": 1},
    {"value": 1},
    {"user": {"id": "u1"}, "value": 1, "extra": True},
    {"user": "u1", "value": 1},
    {"user": {"id": "u1", "signUpDate": "2026-13-01"}, "value": Decimal("1.5")},
]


def outcome(serializer: Any) -> Any:
    if serializer.is_valid():
        return ("valid", dict(serializer.validated_data))
    return ("invalid", serializer.errors)


def own_fields(body: Any) -> Any:
    # A context makes the serializer build its own fields, as DRF always does.
    return outcome(MetricEventSerializer(data=body, context={"own": True}))


def test_serializers_made_with_data_share_one_set_of_fields() -> None:
    first = MetricEventSerializer(data=BODIES[0])
    second = MetricEventSerializer(data=BODIES[1])
    assert first.fields is second.fields
    assert first.fields["user"].fields is second.fields["user"].fields
    other = AchievementCompleteSerializer(data={})
    assert other.fields is not first.fields


def test_a_serializer_with_a_context_or_an_update_builds_its_own() -> None:
    shared = MetricEventSerializer(data=BODIES[0]).fields
    with_context = MetricEventSerializer(data=BODIES[0], context={"tenant": "t"})
    assert with_context.fields is not shared
    assert with_context.fields["user"].context == {"tenant": "t"}
    partial = MetricEventSerializer(data=BODIES[0], partial=True)
    assert partial.fields is not shared
    assert partial.fields["value"].root is partial


def test_shared_fields_validate_as_fields_of_its_own_whatever_came_before() -> None:
    expected = [own_fields(body) for body in BODIES]
    assert {e[0] for e in expected} == {"valid", "invalid"}  # both kinds are exercised
    for _ in range(2):  # errors of one body never leak into the next
        for body, wanted in zip(BODIES, expected, strict=True):
            assert outcome(MetricEventSerializer(data=body)) == wanted


def test_threads_share_the_fields_safely() -> None:
    expected = [own_fields(body) for body in BODIES]
    failures: list[Any] = []

    def work(offset: int) -> None:
        for n in range(300):
            i = (n + offset) % len(BODIES)
            got = outcome(MetricEventSerializer(data=BODIES[i]))
            if got != expected[i]:
                failures.append((i, got))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
