"""Authentication through the SDK: missing, malformed and foreign keys."""

import pytest
from trophy import TrophyApi
from trophy.errors import NotFoundError, UnauthorizedError
from trophy.types import CreatedMetric

from tests.contract.helpers import CONTRACT_DB, MakeClient, error_message
from tests.factories import OrganizationWithKey

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def _calls(sdk: TrophyApi) -> list:
    return [
        lambda: sdk.users.get("user-1"),
        lambda: sdk.users.create(id="user-1"),
        lambda: sdk.metrics.event("words", user={"id": "user-1"}, value=1),
        lambda: sdk.users.single_metric("user-1", "words"),
        lambda: sdk.admin.metrics.list(),
        lambda: sdk.admin.metrics.batch_events(request=[]),
        lambda: sdk.admin.attributes.list(),
        lambda: sdk.admin.tenants.list(),
        lambda: sdk.admin.environments.list(),
        lambda: sdk.admin.settings.get(),
        lambda: sdk.admin.application_api_keys.delete(ids=["x"]),
    ]


@pytest.mark.parametrize(
    "api_key",
    [
        pytest.param("", id="missing"),
        pytest.param("garbage", id="malformed"),
        pytest.param("abcdefgh.not-the-secret", id="unknown"),
    ],
)
def test_a_missing_or_invalid_key_raises_unauthorized(
    make_client: MakeClient, words: CreatedMetric, api_key: str
) -> None:
    sdk = make_client(api_key)

    for call in _calls(sdk):
        with pytest.raises(UnauthorizedError) as caught:
            call()
        error_message(caught.value)


def test_a_right_prefix_with_a_wrong_secret_raises_unauthorized(
    make_client: MakeClient, org: OrganizationWithKey, words: CreatedMetric
) -> None:
    prefix = org.admin_key.split(".")[0]
    sdk = make_client(f"{prefix}.wrong-secret")

    for call in _calls(sdk):
        with pytest.raises(UnauthorizedError):
            call()


def test_any_admin_key_of_the_environment_works(
    client: TrophyApi, make_client: MakeClient, org: OrganizationWithKey, words: CreatedMetric
) -> None:
    second = make_client(org.new_admin_key())

    assert [m.id for m in second.admin.metrics.list()] == [words.id]


def test_another_organizations_key_sees_none_of_this_ones_data(
    client: TrophyApi, make_client: MakeClient, words: CreatedMetric
) -> None:
    client.metrics.event("words", user={"id": "user-1"}, value=1)
    globex = make_client(OrganizationWithKey("Globex").admin_key)

    assert globex.admin.metrics.list() == []
    with pytest.raises(NotFoundError):
        globex.admin.metrics.get(words.id)
    with pytest.raises(NotFoundError):
        globex.users.single_metric("user-1", "words")
