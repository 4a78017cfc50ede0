"""Dashboard pages for push channels, whose credentials are write-only; written by the push
services, with the admin API's validation.

`form` is the channel form (provider fields, write-only secrets), `pages` the list and change
pages, registered with the admin when this package is imported."""

from apps.notifications.admin.push_channels.form import (
    KIND_FIELDS,
    KIND_HELP,
    MAX_KEY_FILE,
    SECRET_FIELDS,
    PushChannelForm,
    SecretTextarea,
)
from apps.notifications.admin.push_channels.pages import FlaggedFilter, PushChannelAdmin, clear_flag

__all__ = [
    "KIND_FIELDS",
    "KIND_HELP",
    "MAX_KEY_FILE",
    "SECRET_FIELDS",
    "FlaggedFilter",
    "PushChannelAdmin",
    "PushChannelForm",
    "SecretTextarea",
    "clear_flag",
]
