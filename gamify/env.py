"""Reading settings from the process environment.

Local development needs no configuration at all; production (DEBUG off) refuses to start when a
setting that has no safe default is missing, instead of running with a guessable secret.
"""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_origins(name: str) -> list[str]:
    """A comma-separated list of web origins (`https://app.example.com`, `http://localhost:3000`),
    or `*` alone for every origin. An origin is a scheme, a host and maybe a port: a path, even
    a trailing slash, would never match what a browser sends in its Origin header."""
    origins = env_list(name, [])
    if origins == ["*"]:
        return origins
    for origin in origins:
        scheme, _, rest = origin.partition("://")
        host = rest.rsplit(":", 1)[0] if rest.rsplit(":", 1)[-1].isdigit() else rest
        if scheme not in ("http", "https") or not host or any(c in rest for c in "/?#*@ "):
            raise ImproperlyConfigured(
                f"{name}: {origin!r} is not an origin such as https://app.example.com "
                "(a scheme and a host, maybe a port; no path), or * alone"
            )
    return origins


def env_required(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise ImproperlyConfigured(f"{name} must be set when DEBUG is off")
    return value
