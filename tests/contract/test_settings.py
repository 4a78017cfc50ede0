"""Admin settings and environments through the SDK."""

import pytest
from trophy import (
    TrophyApi,
    UpdateAdminSettingsBranding,
    UpdateAdminSettingsBrandingAppIcon,
    UpdateAdminSettingsBrandingLogo,
    UpdateAdminSettingsExperimentation,
)
from trophy.errors import UnprocessableEntityError
from trophy.types import AdminEnvironment, AdminSettings

from tests.contract.helpers import CONTRACT_DB, error_message

pytestmark = [pytest.mark.contract, CONTRACT_DB]


def test_environments_lists_the_keys_environment(client: TrophyApi) -> None:
    environments = client.admin.environments.list()

    assert environments == [AdminEnvironment(name="Production", key="production", priority=1)]


def test_settings_have_complete_defaults(client: TrophyApi) -> None:
    settings = client.admin.settings.get()

    assert isinstance(settings, AdminSettings)
    assert settings.branding.app_name
    assert settings.branding.app_url == ""
    assert settings.branding.brand_color.startswith("#")
    assert settings.branding.font == "MODERN_SANS"
    assert settings.branding.logo is None
    assert settings.branding.app_icon is None
    assert settings.experimentation.control_ratio == 0
    assert settings.experimentation.user_activation_window == 14
    assert settings.aggregation_period in ("weekly", "monthly")


def test_update_changes_every_supplied_setting(client: TrophyApi) -> None:
    settings = client.admin.settings.update(
        branding=UpdateAdminSettingsBranding(
            app_name="Lexicon",
            app_url="https://lexicon.example.com",
            brand_color="rgba(10, 20, 30, 0.5)",
            font="BOOK_SERIF",
            logo=UpdateAdminSettingsBrandingLogo(url="https://cdn.example.com/logo.png"),
            app_icon=UpdateAdminSettingsBrandingAppIcon(url="https://cdn.example.com/icon.png"),
        ),
        experimentation=UpdateAdminSettingsExperimentation(
            control_ratio=25, user_activation_window=30
        ),
        aggregation_period="monthly",
    )

    branding = settings.branding
    assert (branding.app_name, branding.app_url, branding.brand_color, branding.font) == (
        "Lexicon",
        "https://lexicon.example.com",
        "rgba(10, 20, 30, 0.5)",
        "BOOK_SERIF",
    )
    assert branding.logo is not None
    assert branding.logo.url == "https://cdn.example.com/logo.png"
    assert branding.app_icon is not None
    assert branding.app_icon.url == "https://cdn.example.com/icon.png"
    assert settings.experimentation.control_ratio == 25
    assert settings.experimentation.user_activation_window == 30
    assert settings.aggregation_period == "monthly"
    assert client.admin.settings.get() == settings


def test_update_leaves_unsupplied_settings_alone_and_null_clears_images(
    client: TrophyApi,
) -> None:
    client.admin.settings.update(
        branding=UpdateAdminSettingsBranding(
            app_name="Lexicon",
            brand_color="#abc",
            logo=UpdateAdminSettingsBrandingLogo(url="https://cdn.example.com/logo.png"),
        ),
        experimentation=UpdateAdminSettingsExperimentation(control_ratio=10),
        aggregation_period="weekly",
    )

    settings = client.admin.settings.update(
        branding=UpdateAdminSettingsBranding(font="MONOSPACE", logo=None),
        experimentation=UpdateAdminSettingsExperimentation(user_activation_window=7),
    )

    assert settings.branding.app_name == "Lexicon"
    assert settings.branding.brand_color == "#abc"
    assert settings.branding.font == "MONOSPACE"
    assert settings.branding.logo is None
    assert settings.experimentation.control_ratio == 10
    assert settings.experimentation.user_activation_window == 7
    assert settings.aggregation_period == "weekly"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"branding": UpdateAdminSettingsBranding(brand_color="blue")}, "brandColor"),
        ({"branding": UpdateAdminSettingsBranding(font="COMIC_SANS")}, "font"),
        ({"branding": UpdateAdminSettingsBranding(app_url="not a url")}, "appUrl"),
        (
            {"experimentation": UpdateAdminSettingsExperimentation(control_ratio=101)},
            "controlRatio",
        ),
        ({"aggregation_period": "daily"}, "aggregationPeriod"),
    ],
)
def test_invalid_settings_are_rejected_with_422_and_change_nothing(
    client: TrophyApi, kwargs: dict[str, object], field: str
) -> None:
    before = client.admin.settings.get()

    with pytest.raises(UnprocessableEntityError) as caught:
        client.admin.settings.update(**kwargs)  # type: ignore[arg-type]

    assert field in error_message(caught.value)
    assert client.admin.settings.get() == before
