import datetime as dt
import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from apps.accounts.keys import key_hash
from apps.accounts.models import ApiKey, Environment, Tenant
from apps.core import periodic
from apps.core.models import PeriodicJobRun

ROOT = Path(__file__).resolve().parents[2]


def test_create_organization_json_prints_a_working_key(db, anon_client):
    out = StringIO()
    call_command("create_organization", "Globex", "--json", stdout=out)
    created = json.loads(out.getvalue())
    assert created["organization"]["name"] == "Globex"
    assert created["environment"]["key"] == "production"
    key = created["apiKey"]
    prefix, secret = key.split(".")
    stored = ApiKey.objects.get(prefix=prefix)
    # Only a hash is stored; the secret appears nowhere in the row.
    assert stored.secret_hash == key_hash(secret)
    assert secret not in stored.secret_hash
    assert Tenant.objects.filter(environment__key="production", is_default=True).count() == 1
    assert Environment.objects.get().priority == 1
    anon_client.credentials(HTTP_X_API_KEY=key)
    assert anon_client.get("/admin/v1/environments").json() == [
        {"name": "Production", "key": "production", "priority": 1}
    ]


def test_create_organization_text_output(db):
    out = StringIO()
    call_command("create_organization", "Initech", stdout=out)
    assert "Admin API key" in out.getvalue()


@pytest.fixture
def job_registry(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(periodic, "_REGISTRY", {})

    @periodic.periodic_job("every-hour", every=dt.timedelta(hours=1))
    def hourly(now):
        calls.append("hourly")

    @periodic.periodic_job("broken", every=dt.timedelta(minutes=1))
    def broken(now):
        calls.append("broken")
        raise RuntimeError("boom")

    return calls


def test_run_periodic_jobs_runs_due_jobs_once(db, job_registry):
    now = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
    assert periodic.periodic_jobs_run_due(now) == ["broken", "every-hour"]
    # Run again at once: nothing is due.
    assert periodic.periodic_jobs_run_due(now + dt.timedelta(seconds=30)) == []
    assert periodic.periodic_jobs_run_due(now + dt.timedelta(minutes=2)) == ["broken"]
    assert job_registry == ["broken", "hourly", "broken"]
    # A failing job is recorded and does not stop the others.
    assert PeriodicJobRun.objects.get(name="broken").last_error == "RuntimeError: boom"
    assert PeriodicJobRun.objects.get(name="every-hour").last_error == ""


def test_run_periodic_jobs_command(db, job_registry):
    out = StringIO()
    call_command("run_periodic_jobs", stdout=out)
    assert "ran 2 jobs" in out.getvalue()
    out = StringIO()
    call_command("run_periodic_jobs", "--list", stdout=out)
    assert "every-hour" in out.getvalue()


def test_registered_jobs_include_the_batch_recovery_job():
    assert "outbox-sweep" in {job.name for job in periodic.periodic_jobs_registered()}


def _manage(*args, **env):
    environment = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "DEBUG",
            "SECRET_KEY",
            "DJANGO_SETTINGS_MODULE",
            "SECURE_SSL_REDIRECT",
            "DATABASE_URL",
        }
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_production_refuses_to_start_without_a_secret():
    result = _manage("check", DEBUG="false")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_check_deploy_is_clean_with_production_settings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="false",
        SECRET_KEY="x" * 60 + "-production-secret-for-the-check",
        ALLOWED_HOSTS="gamify.example.com",
        SECURE_HSTS_PRELOAD="true",
    )
    assert result.returncode == 0, result.stderr + result.stdout


def _proxy_header(**env):
    result = _manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)",
        DEBUG="false",
        SECRET_KEY="x" * 60,
        ALLOWED_HOSTS="gamify.example.com",
        **env,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_proxy_headers_are_trusted_only_when_the_operator_says_so():
    assert _proxy_header() == "None"
    assert _proxy_header(TRUST_PROXY_HEADERS="true") == "('HTTP_X_FORWARDED_PROTO', 'https')"


def _push_backend(**env):
    result = _manage(
        "shell", "-c", "from django.conf import settings; print(settings.PUSH_BACKEND)", **env
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_a_debug_server_pointed_at_a_push_provider_sends_to_it():
    # `make serve` (DEBUG) with PUSH_EXPO_URL at a local fake used to log its streak reminders
    # to the console, while the same server sent its emails to EMAIL_HOST (issue 23, item 1).
    assert _push_backend(DEBUG="true") == "console"
    assert _push_backend(DEBUG="true", PUSH_EXPO_URL="http://127.0.0.1:9000") == "providers"
    assert _push_backend(DEBUG="true", PUSH_FCM_URL="http://127.0.0.1:9001") == "providers"
    assert _push_backend(DEBUG="true", PUSH_BACKEND="console", PUSH_EXPO_URL="x") == "console"
    assert _push_backend(DEBUG="false", SECRET_KEY="x" * 60, ALLOWED_HOSTS="h") == "providers"
