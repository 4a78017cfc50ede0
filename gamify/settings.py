"""Settings for gamify. Every deployment knob comes from the environment (see README)."""

import datetime as dt
from pathlib import Path
from typing import Any

import dj_database_url
from corsheaders.defaults import default_headers as corsheaders_default_headers
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from gamify.env import env_bool, env_int, env_list, env_origins, env_required, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)

if DEBUG:
    # Local development only: a fixed key keeps sessions valid across restarts.
    SECRET_KEY = env_str("SECRET_KEY", "django-insecure-local-development-only")
else:
    SECRET_KEY = env_required("SECRET_KEY")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Cross-origin requests (README, "Widgets"): pages of these origins may call the application
# APIs (/v1/, /api/, /ext/v1/: reads with an application key, streams with a stream token)
# from the browser. Never the admin APIs, whose keys stay on servers, nor the dashboard. No
# cookies are involved (keys travel in headers, tokens in stream URLs), so no credentials mode.
CORS_ALLOWED_ORIGINS = env_origins("CORS_ALLOWED_ORIGINS")
CORS_ALLOW_ALL_ORIGINS = CORS_ALLOWED_ORIGINS == ["*"]
if CORS_ALLOW_ALL_ORIGINS:
    CORS_ALLOWED_ORIGINS = []
CORS_URLS_REGEX = r"^/(?:v1|api|ext/v1)/"
CORS_ALLOW_HEADERS = (
    *corsheaders_default_headers,
    "x-api-key",
    "tenant-id",
    "idempotency-key",
    "last-event-id",
)
CORS_ALLOW_CREDENTIALS = False

INSTALLED_APPS = [
    # The dashboard's theme (django-unfold): its templates and static files come before the
    # admin's, which it restyles (README, "The dashboard").
    "unfold.apps.BasicAppConfig",  # the templates and static files; the site is ours
    "gamify.admin_config.DashboardAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "apps.core",
    "apps.cells",
    "apps.accounts",
    "apps.users",
    "apps.metrics",
    "apps.streaks",
    "apps.achievements",
    "apps.points",
    "apps.leaderboards",
    "apps.leagues",
    "apps.quests",
    "apps.notifications",
    "apps.webhooks",
    "apps.streams",
    "apps.pipeline",
    "apps.analytics",
    "apps.changes",
    "apps.social",  # after pipeline: its end-user card follows the others
    "apps.fairplay",
    "apps.mcp",
]

MIDDLEWARE = [
    "apps.core.middleware.RequestLogMiddleware",
    "apps.core.middleware.NulByteMiddleware",
    # Cross-origin reads of the application APIs by the origins CORS_ALLOWED_ORIGINS names (the
    # widgets, README "Widgets"); before anything that may answer, as django-cors-headers asks,
    # so that a refusal (401, 429) carries the headers that let the page read it.
    "corsheaders.middleware.CorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (the dashboard's and /v1/docs' assets) come from the application itself, so
    # they work behind any proxy or none; right after SecurityMiddleware, as WhiteNoise asks, so
    # that its redirect and headers still apply to them.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Sessions, the logged-in user and messages serve the dashboard (and its login) only: these
    # subclasses let requests to the APIs' paths (/v1/, /api/, /admin/v1/), which authenticate
    # with X-API-KEY, go past them (apps/core/middleware.py). CSRF stays Django's own, named as
    # `check --deploy` looks for it; API views are CSRF-exempt, so it only reads the cookie.
    "apps.core.middleware.DashboardSessionMiddleware",
    # Everything after runs in the organization's cell, found from the API key or the
    # dashboard's selected organization (apps/cells/middleware.py; nothing with one cell).
    "apps.cells.middleware.CellMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "apps.core.middleware.DashboardAuthenticationMiddleware",
    # Each request starts having written nothing; a dashboard session that wrote reads the
    # primary for a few seconds (apps/core/replicas.py).
    "apps.core.middleware.ReplicaWorkMiddleware",
    "apps.core.middleware.DashboardMessageMiddleware",
    # Who made a configuration change: the dashboard's staff member or the API's key
    # (apps/accounts/history.py).
    "apps.accounts.middleware.HistoryRequestMiddleware",
    # The dashboard writes dates and times in the formats of the staff member's browser locale
    # (Accept-Language), its words staying English (apps/core/shown_time.py).
    "apps.core.middleware.DashboardLocaleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: turns a locked-out login into its lockout page.
    "axes.middleware.AxesMiddleware",
]

# Dashboard login: after LOGIN_FAILURE_LIMIT wrong passwords for one username from one address,
# or from one address whatever the usernames, attempts from that address are refused for
# LOGIN_LOCKOUT_MINUTES (README, "Dashboard login"; `manage.py axes_reset_username NAME` unlocks
# at once). Never by username alone: anyone could keep any staff member locked out.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = max(1, env_int("LOGIN_FAILURE_LIMIT", 5))
AXES_COOLOFF_TIME = dt.timedelta(minutes=max(1, env_int("LOGIN_LOCKOUT_MINUTES", 15)))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "apps.core.middleware.client_ip"
AXES_LOCKOUT_CALLABLE = "gamify.dashboard.login_locked_out"
# Failed attempts are logged by axes; successful logins need no extra table rows.
AXES_DISABLE_ACCESS_LOG = True

ROOT_URLCONF = "gamify.urls"
WSGI_APPLICATION = "gamify.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Behind PgBouncer in transaction mode (deploy/pgbouncer.ini, README "Production"): a server
# connection serves one transaction and then another client, so nothing may outlive a
# transaction on it: no prepared statements (PgBouncer before 1.21 cannot carry them; 1.21+ with
# max_prepared_statements can, then DATABASE_PREPARED_STATEMENTS=true turns them back on) and no
# server-side cursors (`.iterator()` holds a cursor open across fetches: Django reads the rows
# at once instead). The code keeps no other session state (advisory locks are the _xact_ kind,
# no LISTEN, temporary tables, WITH HOLD cursors or session SETs; docs/architecture.md §1).
DATABASE_TRANSACTION_POOLING = env_bool("DATABASE_TRANSACTION_POOLING", default=False)
DATABASE_PREPARED_STATEMENTS = env_bool(
    "DATABASE_PREPARED_STATEMENTS", default=not DATABASE_TRANSACTION_POOLING
)


def _database(url: str) -> dict[str, Any]:
    """One database alias from a URL: the default's options, for the primary and replicas."""
    database: dict[str, Any] = dict(
        dj_database_url.parse(
            url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True
        )
    )
    if database["ENGINE"] == "django.db.backends.postgresql":
        if DATABASE_PREPARED_STATEMENTS:
            # Parameters bound by the server, and each statement a connection runs a fifth time
            # prepared (psycopg's default threshold; Django's own default prepares none):
            # PostgreSQL then skips parsing and planning the hot path's fixed statements, about
            # half of its CPU for an event or a one-row read (bench/README.md, "Serving and the
            # request path"). Off for a pooler that cannot keep prepared statements (above).
            database.setdefault("OPTIONS", {}).update(server_side_binding=True, prepare_threshold=5)
        if DATABASE_TRANSACTION_POOLING:
            database["DISABLE_SERVER_SIDE_CURSORS"] = True
    if database["ENGINE"] == "django.db.backends.sqlite3":
        # IMMEDIATE takes the write lock at BEGIN, so two writers queue on the busy timeout
        # instead of one failing with "database is locked" when it upgrades a read lock.
        database["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}
    return database


DATABASES = {"default": _database(env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"))}

# Read replicas (apps/core/replicas.py, README "Read replicas"): PostgreSQL streaming replicas of
# the default database, as aliases replica1, replica2, ... Reads that tolerate a short lag go to
# them by the router's rule; everything else reads the primary. In the test suite they mirror
# the default (Django's TEST MIRROR): no database of their own to create.
DATABASE_REPLICAS: dict[str, list[str]] = {"default": []}
for _n, _url in enumerate(env_list("DATABASE_REPLICA_URLS", []), start=1):
    _replica = _database(_url)
    if _replica["ENGINE"] == "django.db.backends.postgresql":
        # A replica host that does not answer costs its check this long, then its reads go to
        # the primary (checked again every few seconds).
        _replica.setdefault("OPTIONS", {})["connect_timeout"] = max(
            1, env_int("DATABASE_REPLICA_CONNECT_TIMEOUT", 2)
        )
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES[f"replica{_n}"] = _replica
    DATABASE_REPLICAS["default"].append(f"replica{_n}")
# A user written (an event, an identify, a job's change) is read from the primary for this long
# after the commit, and a dashboard session that wrote as well; a replica lagging more than
# DATABASE_REPLICA_MAX_LAG_SECONDS is not read. The window covers the lag a replica may have
# when read, plus the second between two checks of it.
DATABASE_REPLICA_STICKY_SECONDS = env_int("DATABASE_REPLICA_STICKY_SECONDS", 5)
DATABASE_REPLICA_MAX_LAG_SECONDS = env_int("DATABASE_REPLICA_MAX_LAG_SECONDS", 3)
if DATABASE_REPLICA_MAX_LAG_SECONDS < 0 or (
    DATABASE_REPLICA_MAX_LAG_SECONDS + 1 > DATABASE_REPLICA_STICKY_SECONDS
):
    raise ImproperlyConfigured(
        "DATABASE_REPLICA_MAX_LAG_SECONDS must be at least 0 and at most "
        "DATABASE_REPLICA_STICKY_SECONDS - 1 (a user written is read from the primary until "
        "any replica still read has their write)"
    )
# Tenant cells (docs/architecture.md §8): each organization's data lives on one PostgreSQL
# primary. DATABASE_URL is the cell "default", which is also the control database (the cell
# directory, staff users, sessions); CELL_DATABASE_URLS names the others,
# "cell2=postgres://...,cell3=postgres://...", each an alias of its own with the full schema
# (`manage.py cells migrate`). "control" is the control database under its own name, which the
# control router (apps/cells/routers.py) sends the global tables to while a request or task
# works in another cell.
CELL_DATABASES: dict[str, str] = {}
for _pair in env_list("CELL_DATABASE_URLS", []):
    _name, _sep, _url = _pair.partition("=")
    _name, _url = _name.strip(), _url.strip()
    if not _sep or not _name.isidentifier() or not _url or _name in ("default", "control"):
        raise ImproperlyConfigured(f"CELL_DATABASE_URLS: {_pair!r} is not name=url")
    CELL_DATABASES[_name] = _url
    DATABASES[_name] = _database(_url)
DATABASES["control"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}
# The control router first: it names the control database for the global tables and says
# nothing of the rest, which the replica router decides.
DATABASE_ROUTERS = ["apps.cells.routers.ControlRouter", "apps.core.replicas.ReplicaRouter"]
# How long a process believes the directory (which cell an API key's organization is in, and
# whether it is read-only for a move): a move waits this long after marking an organization
# read-only before its last catch-up.
CELL_DIRECTORY_CACHE_SECONDS = max(0, env_int("CELL_DIRECTORY_CACHE_SECONDS", 5))
# And this long more, for the writes of requests that passed the check just before (a request
# that takes longer may write in the source after the catch-up: see `manage.py cells move`).
CELL_MOVE_GRACE_SECONDS = max(0.0, float(env_str("CELL_MOVE_GRACE_SECONDS", "2")))
# The cell new organizations are placed in (`manage.py cells` and the dashboard may say another).
CELL_FOR_NEW_ORGANIZATIONS = env_str("CELL_FOR_NEW_ORGANIZATIONS", "default")
# With a broker, whether tasks published in a cell other than "default" go to queues of that
# cell (`celery.cell2`, `webhooks.cell2`, ...), consumed by that cell's workers.
CELERY_QUEUES_PER_CELL = env_bool("CELERY_QUEUES_PER_CELL", default=False)


DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# After logging in without a page to go back to, the dashboard's home page (the theme's login form
# does not carry the admin's own "next" to it).
LOGIN_REDIRECT_URL = "admin:index"

LANGUAGE_CODE = "en-us"
# The dashboard (django-unfold's theme): the sidebar's sections come from the site itself
# (gamify/dashboard.py: the features first, then a "System" section for superusers only).
UNFOLD = {
    "SITE_TITLE": "gamify",
    "SITE_HEADER": "gamify dashboard",
    "SITE_SYMBOL": "emoji_events",
    "SITE_URL": None,
    "SHOW_VIEW_ON_SITE": False,
    "BORDER_RADIUS": "6px",
    # The pages' own styles (dashboard.css) are drawn for the light theme only.
    "THEME": "light",
    "SIDEBAR": {"show_search": False, "navigation": "gamify.dashboard.sidebar_navigation"},
}
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The widgets (widgets/, README "Widgets"): their ES modules served as they are in the
# repository, at /static/gamify-widgets/. WhiteNoise lets every origin load them
# (WHITENOISE_ALLOW_ALL_ORIGINS), as a page elsewhere must to import a module script.
STATICFILES_DIRS = [("gamify-widgets", BASE_DIR / "widgets" / "src")]
# `manage.py collectstatic` gathers the assets here, compressed (gzip) and with a hash of their
# content in their names; WhiteNoise serves them with a far-future cache lifetime, which the
# hash makes safe. Without collectstatic, a page that names an asset fails (DEBUG off).
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Request bodies: the batch endpoint takes up to 1,000 events; 5 MiB leaves room for attributes.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BYTES", 5 * 1024 * 1024)

REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # Rate limits ask Redis on every request: a Redis that takes connections and never
            # answers must cost a request a second at most (apps/core/api/ratelimit.py).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if DATABASE_REPLICAS["default"] and not REDIS_URL and not DEBUG:
    # Which users were just written must be known to every process (apps/core/replicas.py).
    raise ImproperlyConfigured(
        "DATABASE_REPLICA_URLS needs REDIS_URL (a cache all processes share)"
    )

# Leaderboard ranks (apps/leaderboards/ranks.py): a Redis sorted set per board, run and group
# answers ranks without counting the board; PostgreSQL stays the source of truth. Without a URL
# (development) PostgreSQL counts. The prefix keeps two databases' sets apart in one Redis (no
# braces in it: they would break the keys' hash tags). The URL may name a Redis Cluster:
# redis+cluster://host:port[,host:port...] (rediss+cluster:// for TLS). SUBBOARDS: each ranking
# split into this many sorted sets, each in its own cluster slot, for boards larger than a node;
# changing it makes every set be built again from PostgreSQL.
LEADERBOARD_RANKS_REDIS_URL = env_str("LEADERBOARD_RANKS_REDIS_URL", REDIS_URL)
LEADERBOARD_RANKS_PREFIX = env_str(
    "LEADERBOARD_RANKS_PREFIX", f"gamify:{DATABASES['default'].get('NAME') or 'default'}:"
)
LEADERBOARD_RANKS_SUBBOARDS = max(1, env_int("LEADERBOARD_RANKS_SUBBOARDS", 1))
# Live streams (README, "Live streams"): Redis streams and pub/sub; off without a Redis URL.
STREAMS_REDIS_URL = env_str("STREAMS_REDIS_URL", REDIS_URL)
STREAMS_PREFIX = env_str(
    "STREAMS_PREFIX", f"gamify:{DATABASES['default'].get('NAME') or 'default'}:"
)
# How long a stream keeps its messages for clients that reconnect (Last-Event-ID), and how
# long a topic stays watched after its last client left.
STREAMS_RETENTION_SECONDS = max(10, env_int("STREAMS_RETENTION_SECONDS", 600))
STREAMS_HEARTBEAT_SECONDS = max(1, env_int("STREAMS_HEARTBEAT_SECONDS", 15))
# The most participants a board may take (maxParticipants' upper bound). Trophy's, and the
# default, is 1,000; an operator may raise it (tested up to 1,000,000).
LEADERBOARD_MAX_PARTICIPANTS = env_int("LEADERBOARD_MAX_PARTICIPANTS", 1000)
if not 1000 <= LEADERBOARD_MAX_PARTICIPANTS <= 10_000_000:
    raise ImproperlyConfigured("LEADERBOARD_MAX_PARTICIPANTS must be from 1000 to 10000000")

# Application keys (held by end-users' devices) may set their own user's attributes unless
# this is off; attributes then come only from the customer's backend (README "API keys").
APPLICATION_KEYS_CHANGE_ATTRIBUTES = env_bool("APPLICATION_KEYS_CHANGE_ATTRIBUTES", default=True)

# Requests per second per organization (apps/core/api/ratelimit.py, README "Rate limits"):
# tier 1 = events, achievement completions and the admin API; tier 2 = the rest. 0: no limit.
RATE_LIMIT_TIER1 = max(0, env_int("RATE_LIMIT_TIER1", 1000))
RATE_LIMIT_TIER2 = max(0, env_int("RATE_LIMIT_TIER2", 5000))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.accounts.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_PARSER_CLASSES": ["apps.core.api.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["apps.core.api.renderers.FastJSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "apps.core.api.negotiation.JSONNegotiation",
    "EXCEPTION_HANDLER": "apps.core.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "gamify API",
    "DESCRIPTION": "Self-hosted gamification API, wire-compatible with the Trophy API.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # PATCH serializers already make every field but `id` optional; no "Patched" copies.
    "COMPONENT_SPLIT_PATCH": False,
    "ENUM_NAME_OVERRIDES": {
        "AttributeTypeEnum": "apps.users.choices.AttributeType",
        "TenantStatusEnum": "apps.accounts.choices.TenantStatus",
        "FontFamilyEnum": "apps.accounts.choices.FontFamily",
        "AggregationPeriodEnum": "apps.accounts.choices.AggregationPeriod",
        "UnitTypeEnum": "apps.metrics.choices.UnitType",
        "AdminIssueSeverityEnum": "apps.core.openapi.ISSUE_SEVERITIES",
        "AchievementTriggerEnum": "apps.achievements.wire.ACHIEVEMENT_TRIGGERS",
        "AdminAchievementTriggerEnum": "apps.achievements.choices.Trigger",
        "AdminAchievementStatusEnum": "apps.achievements.choices.Status",
        "StreakFrequencyEnum": "apps.streaks.choices.Frequency",
        "NotificationChannelEnum": "apps.notifications.choices.Channel",
        "PointsTriggerTypeEnum": "apps.points.wire.POINTS_TRIGGER_TYPES",
        "PointsTriggerStatusEnum": "apps.points.wire.POINTS_TRIGGER_STATUSES",
        "PointsTriggerTimeUnitEnum": "apps.points.wire.POINTS_TRIGGER_TIME_UNITS",
        "PointsBoostStatusEnum": "apps.points.wire.POINTS_BOOST_STATUSES",
        "PointsBoostRoundingEnum": "apps.points.wire.POINTS_BOOST_ROUNDINGS",
        "AdminPointsSystemStatusEnum": "apps.points.serializers.ADMIN_POINTS_SYSTEM_STATUSES",
        "AdminPointsTriggerTypeEnum": "apps.points.choices.TriggerType",
        "AdminPointsTriggerStatusEnum": "apps.points.choices.TriggerStatus",
        "AdminPointsTriggerTimeUnitEnum": "apps.points.choices.TimeUnit",
        "AdminPointsBoostStatusEnum": "apps.points.choices.BoostStatus",
        "AdminPointsBoostRoundingEnum": "apps.points.choices.Rounding",
        "AnomalyRuleKindEnum": "apps.fairplay.choices.RuleKind",
        "LeaderboardRankByEnum": "apps.leaderboards.wire.LEADERBOARD_RANK_BY",
        "LeaderboardRunUnitEnum": "apps.leaderboards.wire.LEADERBOARD_RUN_UNITS",
        "LeaderboardStatusEnum": "apps.leaderboards.wire.LEADERBOARD_STATUSES",
        "AdminLeaderboardRankByEnum": "apps.leaderboards.choices.RankBy",
        "AdminLeaderboardStatusEnum": "apps.leaderboards.choices.Status",
        "AdminLeaderboardRunUnitEnum": "apps.leaderboards.choices.RunUnit",
        "NotificationTypeEnum": "apps.notifications.choices.NotificationType",
        "PushKindEnum": "apps.notifications.choices.PushKind",
        "WebhookEventTypeEnum": "apps.webhooks.choices.EventType",
        "WebhookEndpointStatusEnum": "apps.webhooks.choices.EndpointStatus",
        "WebhookDeliveryStatusEnum": "apps.webhooks.choices.DeliveryStatus",
        # The leagues extension (its own documents, /ext/v1/openapi and /admin/ext/v1/openapi).
        "LeagueStatusEnum": "apps.leagues.serializers.LEAGUE_STATUSES",
        "AdminLeagueStatusEnum": "apps.leagues.choices.Status",
        "LeagueScoreByEnum": "apps.leagues.choices.ScoreBy",
        "LeagueWeekdayEnum": "apps.leagues.choices.Weekday",
        "LeagueZoneUnitEnum": "apps.leagues.choices.ZoneUnit",
        "LeagueIdleEnum": "apps.leagues.choices.Idle",
        "LeagueAbsentEnum": "apps.leagues.choices.Absent",
        "LeagueZoneEnum": "apps.leagues.choices.Zone",
        # The quests extension.
        "QuestStatusEnum": "apps.quests.choices.Status",
        "QuestCadenceEnum": "apps.quests.choices.Cadence",
        "QuestPoolCadenceEnum": "apps.quests.choices.PoolCadence",
        "QuestPoolStatusEnum": "apps.quests.choices.PoolStatus",
        "QuestGoalKindEnum": "apps.quests.choices.GoalKind",
    },
    # Drops the legacy /api/ mount (a second copy of the application API) from root-urlconf
    # schemas, such as the one `manage.py check --deploy` generates.
    "PREPROCESSING_HOOKS": ["apps.core.openapi.exclude_api_alias"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # Documents the optional Tenant-ID header on every X-API-KEY operation.
        "apps.accounts.openapi.tenant_id_header",
        # Unknown fields and control characters are refused: the documents say so.
        "apps.core.openapi.request_limits",
        # The year in review goes up to the current year: said when the document is made.
        "apps.analytics.openapi.wrapped_year_maximum",
    ],
}

# Celery: with no broker configured, tasks run inline (in the web process, after commit), which
# keeps local development and the unit tests free of a worker.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "")
# Processed rows of batch events (POST /admin/v1/metrics/events) hold user fields: purged after.
QUEUED_EVENTS_RETENTION_DAYS = max(1, env_int("QUEUED_EVENTS_RETENTION_DAYS", 7))
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
# Where work handed to workers runs: "celery" (the broker); without one "thread", the
# in-process background worker (apps/core/background.py), after the response; "inline" runs it
# at commit, in the request (the test suite, for determinism).
BACKGROUND_TASKS = env_str("BACKGROUND_TASKS", "celery" if CELERY_BROKER_URL else "thread")
if BACKGROUND_TASKS not in ("celery", "thread", "inline"):
    raise ImproperlyConfigured("BACKGROUND_TASKS must be celery, thread or inline")
# A broker that takes connections but never answers (a stopped Redis, a half-open connection)
# must not hold whoever publishes: connecting, and every command, give up after 2 seconds
# (Redis answers in well under a millisecond; a worker's BRPOP waits 1 s). The web's sends after
# commit then fail fast and leave the work to the outbox sweep (apps/core/outbox.py).
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 2}
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# A plain `celery worker` consumes every queue listed here; `-Q` splits them across workers
# (notification emails are I/O-bound: a worker of their own can run many more threads).
CELERY_TASK_QUEUES = [
    Queue("celery"),
    Queue("notifications"),  # achievement emails: transactional, never behind a bulk run
    Queue("notifications-bulk"),  # reminders, reactivation, recaps
    Queue("webhooks"),  # I/O-bound deliveries: a worker with many threads suits them
]
CELERY_TASK_DEFAULT_QUEUE = "celery"
if CELERY_QUEUES_PER_CELL:
    # Each cell's queues (apps/core/cells.cell_queue), consumed by that cell's workers.
    CELERY_TASK_QUEUES += [
        Queue(f"{queue.name}.{cell}") for cell in CELL_DATABASES for queue in CELERY_TASK_QUEUES
    ]

# Email (apps.notifications). With EMAIL_HOST set, SMTP; without, messages are printed to the
# console. EMAIL_BACKEND selects any other Django backend (django-anymail for an API provider).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "gamify <notifications@localhost>")
# Where end-users reach this server: links in emails (manage preferences, unsubscribe).
PUBLIC_URL = env_str(
    "PUBLIC_URL",
    "http://127.0.0.1:8000" if DEBUG else (f"https://{ALLOWED_HOSTS[0]}" if ALLOWED_HOSTS else ""),
).rstrip("/")
# Delivery-log retention: messages older than this are purged (at least 2 days, so that no
# late job run can schedule again what the purged rows stood for).
NOTIFICATIONS_RETENTION_DAYS = max(2, env_int("NOTIFICATIONS_RETENTION_DAYS", 30))
# The wall-clock deadline of rendering one email or push message from a tenant's template (on
# save, preview and every send); a backstop to the sandbox's budgets, which keep any template
# within about a second (apps/notifications/rendering/sandbox.py).
NOTIFICATIONS_TEMPLATE_RENDER_SECONDS = max(1, env_int("NOTIFICATIONS_TEMPLATE_RENDER_SECONDS", 2))

# Push (apps.notifications.push). Provider base URLs are settings so that tests and staging can
# point them at local fakes; PUSH_BACKEND=console logs payloads instead of sending them. As with
# EMAIL_HOST, naming a provider's URL means "send there": the console is the default only in
# DEBUG with no provider URL set (a `make serve` pointed at a fake Expo used to log its pushes).
_PUSH_URLS = ("PUSH_APNS_URL", "PUSH_APNS_SANDBOX_URL", "PUSH_FCM_URL", "PUSH_EXPO_URL")
PUSH_BACKEND = env_str(
    "PUSH_BACKEND", "console" if DEBUG and not any(map(env_str, _PUSH_URLS)) else "providers"
)
PUSH_APNS_URL = env_str("PUSH_APNS_URL", "https://api.push.apple.com").rstrip("/")
PUSH_APNS_SANDBOX_URL = env_str(
    "PUSH_APNS_SANDBOX_URL", "https://api.sandbox.push.apple.com"
).rstrip("/")
PUSH_FCM_URL = env_str("PUSH_FCM_URL", "https://fcm.googleapis.com").rstrip("/")
# The OAuth2 token endpoints a service account may name: the credential is tenant input, and
# gamify posts a signed grant to its token_uri (no request to an address a tenant chose).
PUSH_FCM_TOKEN_URIS = env_list("PUSH_FCM_TOKEN_URIS", ["https://oauth2.googleapis.com/token"])
PUSH_EXPO_URL = env_str("PUSH_EXPO_URL", "https://exp.host").rstrip("/")
# Notifications per second per channel, shared by all workers through REDIS_URL's cache.
PUSH_RATE_LIMITS = {"expo": env_int("PUSH_EXPO_RATE_LIMIT", 600)}
# Push credentials are encrypted at rest with a key derived from ENCRYPTION_KEY (SECRET_KEY
# when unset); keys in ENCRYPTION_KEY_FALLBACKS still decrypt during a rotation.
ENCRYPTION_KEY = env_str("ENCRYPTION_KEY", "")
ENCRYPTION_KEY_FALLBACKS = env_list("ENCRYPTION_KEY_FALLBACKS", [])

# Webhooks (apps.webhooks). Endpoint URLs must be https unless WEBHOOK_ALLOW_HTTP; resolved
# addresses must be public unless inside WEBHOOK_ALLOWED_NETWORKS (CIDRs, for internal
# receivers and tests). Deliveries time out after WEBHOOK_TIMEOUT seconds (at most Trophy's 60)
# and their log is kept WEBHOOK_LOG_RETENTION_DAYS.
WEBHOOK_ALLOW_HTTP = env_bool("WEBHOOK_ALLOW_HTTP", default=False)
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS", [])
WEBHOOK_TIMEOUT = min(60, max(1, env_int("WEBHOOK_TIMEOUT", 30)))
WEBHOOK_LOG_RETENTION_DAYS = max(1, env_int("WEBHOOK_LOG_RETENTION_DAYS", 7))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"line": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "line"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.server": {"level": "WARNING"}},
}

# X-Forwarded-Proto says whether the client's connection was HTTPS, but any client can send it:
# only a reverse proxy that sets it (and strips the client's) may be believed.
# The same for X-Forwarded-For (the client address of login lockouts and rate limits).
TRUST_PROXY_HEADERS = env_bool("TRUST_PROXY_HEADERS", default=False)
if TRUST_PROXY_HEADERS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=False)
    SECURE_CONTENT_TYPE_NOSNIFF = True
