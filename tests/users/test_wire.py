"""apps/users/wire.py: the wire's user fields mapped to the services' UserFields."""

import datetime as dt

from apps.core.arguments import UNSET
from apps.users.domain import UserFields
from apps.users.wire import (
    UpsertedUserSerializer,
    user_fields,
    user_fields_restored,
    user_fields_stored,
)


def validated(data: dict) -> dict:
    serializer = UpsertedUserSerializer(data=data)
    assert serializer.is_valid(), serializer.errors
    return dict(serializer.validated_data)


def test_only_the_supplied_fields_are_set_and_null_is_a_value():
    fields = user_fields(validated({"id": "u1", "name": None, "subscribeToEmails": False}))

    assert fields == UserFields(name=None, subscribe_to_emails=False)
    assert fields.email is UNSET
    assert not fields.email


def test_every_wire_field_has_its_python_name():
    fields = user_fields(
        validated(
            {
                "id": "u1",
                "email": "a@example.com",
                "name": "Ada",
                "tz": "Europe/Paris",
                "signUpDate": "2024-01-02",
                "deviceTokens": ["t1"],
                "subscribeToEmails": True,
                "attributes": {"plan": "pro", "old": None},
            }
        )
    )

    assert fields == UserFields(
        email="a@example.com",
        name="Ada",
        tz="Europe/Paris",
        sign_up_date=dt.date(2024, 1, 2),
        device_tokens=("t1",),
        subscribe_to_emails=True,
        attributes={"plan": "pro", "old": None},
    )


def test_stored_fields_are_json_under_wire_names_and_read_back_equal():
    fields = UserFields(
        email=None, sign_up_date=dt.date(2024, 1, 2), device_tokens=("t1",), attributes={}
    )

    stored = user_fields_stored(fields)

    assert stored == {
        "email": None,
        "signUpDate": "2024-01-02",
        "deviceTokens": ["t1"],
        "attributes": {},
    }
    assert user_fields_restored(stored) == fields
    assert user_fields_restored(user_fields_stored(UserFields())) == UserFields()
