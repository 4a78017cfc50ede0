"""Settings for the test suite: SQLite in memory unless DATABASE_URL names another database."""

import os

os.environ["DEBUG"] = "false"  # tests run as production does
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-used-anywhere-else")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("CELERY_BROKER_URL", "")
os.environ.setdefault("DATABASE_URL", "sqlite://:memory:")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("PUBLIC_URL", "http://testserver")

from gamify.settings import *  # noqa: F403

ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
BACKGROUND_TASKS = "inline"  # tests run handed-off work at commit, deterministically
# The suite renders pages without running collectstatic: assets keep their plain names and are
# found where the apps keep them (WhiteNoise's development mode). What production serves, the
# collected and hashed files, is tested against gunicorn in tests/core/test_production_recipe.py.
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Ranks in Redis when REDIS_URL is set (CI's PostgreSQL run), apart per test process (removed
# at its end); each test starts with every set stale (tests/conftest.py), as test databases
# reuse primary keys.
LEADERBOARD_RANKS_PREFIX = f"gamify-test-{os.getpid()}:"
STREAMS_PREFIX = LEADERBOARD_RANKS_PREFIX
CONFIG_HISTORY_STRICT = (
    True  # a configuration write outside a recording fails the test (apps/accounts/history.py)
)
# The work budget, not the clock, is what must stop the costly templates the tests render, even
# on a machine busy with other work; the deadline's own test sets a tiny one.
NOTIFICATIONS_TEMPLATE_RENDER_SECONDS = 10
