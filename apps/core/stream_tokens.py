"""Stream tokens: short-lived signed tokens that open one live stream of one tenant (README,
"Live streams"). Here, below every app, because the apps below the streams mint them too (the
dashboard's live rankings open their board's stream); apps/streams reads them."""

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.core import signing

from apps.core.cells import DEFAULT_CELL, cells, current_cell

# The signing salt of stream tokens (a namespace, not a secret: SECRET_KEY signs them).
TOKEN_SALT = "gamify.streams.token"  # noqa: S105
TOKEN_DEFAULT_SECONDS = 3600
TOKEN_MAX_SECONDS = 86400
KINDS = ("user", "board", "tenant")


@dataclass(frozen=True)
class Claims:
    """What a stream token allows: the stream of `kind` named `name` (a user's id, a board's
    key; None for the tenant's) of one tenant, until `expires` (epoch seconds)."""

    tenant_pk: int
    kind: str
    name: str | None
    expires: int

    def allows(self, tenant_pk: int, kind: str, name: str | None) -> bool:
        return tenant_pk == self.tenant_pk and kind == self.kind and name == self.name


def streams_enabled() -> bool:
    """Whether live streams are on (they need Redis)."""
    return bool(settings.STREAMS_REDIS_URL)


def stream_token_mint(
    tenant_pk: int, kind: str, name: str | None, seconds: int, now: dt.datetime
) -> tuple[str, dt.datetime]:
    """A signed token that opens one stream of the tenant until it expires: what a browser's
    EventSource (which cannot send headers) puts in the URL instead of an API key."""
    expires = now + dt.timedelta(seconds=seconds)
    claims: dict[str, object] = {
        "t": tenant_pk,
        "k": kind,
        "n": name,
        "e": int(expires.timestamp()),
    }
    cell = current_cell()
    if cell != DEFAULT_CELL:
        claims["c"] = cell  # the cell the stream's reads run in (apps/cells/middleware.py)
    return signing.dumps(claims, salt=TOKEN_SALT, compress=True), expires


def stream_token_cell(token: str) -> str | None:
    """The cell a validly signed token was minted in (None: "default"). After its organization
    moves, the token opens nothing (its tenant is gone from that cell) and a new one is minted
    where the organization now is."""
    try:
        raw = signing.loads(token, salt=TOKEN_SALT)
    except signing.BadSignature:
        return None
    cell = raw.get("c") if isinstance(raw, dict) else None
    return cell if isinstance(cell, str) and cell in cells() else None


def stream_token_read(token: str, now: dt.datetime) -> Claims | None:
    """The claims of a valid, unexpired token; None otherwise."""
    try:
        raw = signing.loads(token, salt=TOKEN_SALT)
        claims = Claims(int(raw["t"]), str(raw["k"]), raw["n"], int(raw["e"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        return None
    if claims.expires <= now.timestamp() or claims.kind not in KINDS:
        return None
    return claims
