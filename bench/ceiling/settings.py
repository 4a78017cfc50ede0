"""Settings of the ceiling: nothing but the database, configured as gamify's (bench/run.py sets
DATABASE_URL and the same DATABASE_CONN_MAX_AGE; DATABASE_PREPARED_STATEMENTS as in
gamify/settings.py)."""

import os

import dj_database_url

SECRET_KEY = os.environ["SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "ceiling.urls"
USE_TZ = True
DATABASES = {
    "default": dj_database_url.parse(
        os.environ["DATABASE_URL"],
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
# gamify/env.py's env_bool, whose false spellings are these.
PREPARED = os.environ.get("DATABASE_PREPARED_STATEMENTS", "true").strip().lower()
if PREPARED not in {"0", "false", "no", "off", ""}:
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )
