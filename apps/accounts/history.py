"""The change history of configuration (issue 28 item 1, README "Change history").

Every configuration write is a function of an app's `configuration` module (or a service of
accounts for tenant settings) decorated with `recorded(kind, ...)`: the kinds of objects the
write may change. The outermost recorded call of a transaction reads those kinds' state before
it runs and again after it, in its own transaction, and writes one `ConfigChange` per object
whose state differs: who (the staff member, the admin API key, or the server), when, how
(`source`), and the state before and after. States are the portable ones of
apps/core/portable.py (keys, never database ids), so a change can be reverted through the
services, and the same states make the configuration file and the diff between environments.

Nested recorded calls (a promote that creates a metric, a delete that takes triggers with it)
join the outer recording, which then covers their kinds too. `tenant_config_changed` refuses
to run outside a recording (`CONFIG_HISTORY_STRICT`, on in the test suite) so that a new write
that forgets the decorator fails every test that reaches it.

The states are those of apps/core/portable.py, whose kinds each app registers when Django
starts (its `portable` module).
"""

import contextlib
import contextvars
import dataclasses
import functools
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import ApiKey, ConfigChange, Tenant
from apps.core import portable

logger = logging.getLogger(__name__)

ALL = "*"  # recorded(ALL): a write that may change objects of any kind (a delete's cascade)

# (kind, key) -> the object's portable state
States = dict[tuple[str, str], Any]


def kinds() -> list[str]:
    return [kind.name for kind in portable.kinds()]


def states(tenant: Tenant, of: Iterable[str] | None = None) -> States:
    return portable.export(tenant, of)


# --- who and how --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Actor:
    kind: str  # "staff", "api_key" or "system"
    name: str
    source: str  # "api", "dashboard", "mcp", "command", "job", ...
    staff_id: int | None = None
    api_key_id: int | None = None


SYSTEM = Actor("system", "gamify", "job")

_REQUEST: contextvars.ContextVar[Any] = contextvars.ContextVar("history_request", default=None)
_ACTOR: contextvars.ContextVar[Actor | None] = contextvars.ContextVar("history_actor", default=None)
_HOW: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "history_how", default=None
)


@contextlib.contextmanager
def request_serving(request: Any) -> Iterator[None]:
    """The request whose writes are recorded (HistoryRequestMiddleware)."""
    token = _REQUEST.set(request)
    try:
        yield
    finally:
        _REQUEST.reset(token)


@contextlib.contextmanager
def acting(actor: Actor) -> Iterator[None]:
    """Writes made outside a request (a command, MCP over stdio) are this actor's."""
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        _ACTOR.reset(token)


@contextlib.contextmanager
def how(source: str, note: str = "") -> Iterator[None]:
    """The writes inside are recorded as made by `source` (a promote, a revert, a file)."""
    token = _HOW.set((source, note[:255]))
    try:
        yield
    finally:
        _HOW.reset(token)


def actor_for_key(api_key_id: int, source: str) -> Actor:
    key = ApiKey.objects.filter(pk=api_key_id).only("name", "prefix").first()
    name = (key.name or f"key {key.prefix}") if key else "a deleted key"
    return Actor("api_key", name, source, api_key_id=api_key_id)


def actor_for_staff(user: Any, source: str = "dashboard") -> Actor:
    return Actor("staff", user.get_username(), source, staff_id=user.pk)


def _source_of(path: str) -> str:
    if path.startswith("/admin/ext/v1/mcp"):
        return "mcp"
    if path.startswith("/dashboard/"):
        return "dashboard"
    return "api"


def current_actor() -> Actor:
    actor = _ACTOR.get()
    if actor is not None:
        return actor
    request = _REQUEST.get()
    if request is None:
        return SYSTEM
    source = _source_of(request.path)
    scope = getattr(request, "auth", None)
    key_id = getattr(scope, "key_id", None)
    if key_id is not None:
        return actor_for_key(key_id, source)
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return actor_for_staff(user, source)
    return dataclasses.replace(SYSTEM, source=source)


# --- recording ----------------------------------------------------------------------------------


class Recording:
    """The changes of one outermost recorded write (and of the writes nested in it). A write of
    one object (an update, a delete, a create that returns it) reads that object's state only;
    any other reads its kinds' states whole."""

    def __init__(self, tenant: Tenant) -> None:
        self.tenant = tenant
        self.wide: set[str] = set()
        self.objects: set[tuple[str, Any]] = set()  # (kind, pk) read one by one
        self.keys: dict[tuple[str, Any], str] = {}  # their keys before
        self.before: States = {}
        self.changes: list[ConfigChange] = []

    def cover(self, of: Iterable[str], target: Any = None) -> None:
        wanted = set(kinds()) if ALL in of else set(of)
        if target is not None and len(wanted) == 1:
            (kind,) = wanted
            if kind not in self.wide and (kind, target.pk) not in self.objects:
                self.objects.add((kind, target.pk))
                found = portable.state_of(self.tenant, kind, target.pk)
                if found is not None:
                    self.before.setdefault((kind, found[0]), found[1])
                    self.keys[(kind, target.pk)] = found[0]
            return
        new = wanted - self.wide
        if new:
            for ref, state in states(self.tenant, new).items():
                self.before.setdefault(ref, state)
            self.wide |= new

    def created(self, kind: str, pk: Any) -> None:
        """An object a write of one kind made (nothing of it before)."""
        if kind not in self.wide:
            self.objects.add((kind, pk))

    def finish(self) -> list[ConfigChange]:
        after = states(self.tenant, self.wide) if self.wide else {}
        for kind, pk in self.objects:
            if kind not in self.wide:
                found = portable.state_of(self.tenant, kind, pk)
                if found is not None:
                    after[(kind, found[0])] = found[1]
                    old = self.keys.get((kind, pk))
                    if old is not None and old != found[0] and (kind, old) in self.before:
                        # The same object under a new key (a trigger's threshold, a template's
                        # name): one change, under its new key.
                        self.before[(kind, found[0])] = self.before.pop((kind, old))
        changed = [
            (kind, key)
            for kind, key in sorted(self.before.keys() | after.keys())
            if self.before.get((kind, key)) != after.get((kind, key))
        ]
        if not changed:
            return []
        actor = current_actor()
        source, note = _HOW.get() or (actor.source, "")
        group, now = uuid.uuid4(), timezone.now()
        self.changes = ConfigChange.objects.bulk_create(
            ConfigChange(
                tenant=self.tenant,
                group=group,
                at=now,
                actor_kind=actor.kind,
                actor=actor.name[:255],
                staff_id=actor.staff_id,
                api_key_id=actor.api_key_id,
                source=source,
                note=note,
                kind=kind,
                key=key[:255],
                action=domain_action(self.before.get((kind, key)), after.get((kind, key))),
                before=self.before.get((kind, key)),
                after=after.get((kind, key)),
            )
            for kind, key in changed
        )
        return self.changes


def domain_action(before: Any, after: Any) -> str:
    if before is None:
        return "created"
    if after is None:
        return "deleted"
    return "changed"


_OPEN: contextvars.ContextVar[Mapping[int, Recording] | None] = contextvars.ContextVar(
    "history_open", default=None
)


@contextlib.contextmanager
def recording(tenant: Tenant, of: Iterable[str], target: Any = None) -> Iterator[Recording]:
    """Record what changes inside, as one group (or as part of the recording already open for
    the tenant): objects of the kinds `of`, or only `target` when the write is of that one
    object. The changes are written when the outermost block ends without an error."""
    open_ = _OPEN.get() or {}
    current = open_.get(tenant.pk)
    if current is not None:
        current.cover(of, target)
        yield current
        return
    with transaction.atomic():
        current = Recording(tenant)
        current.cover(of, target)
        token = _OPEN.set({**open_, tenant.pk: current})
        try:
            yield current
        finally:
            _OPEN.reset(token)
        current.finish()


def is_recording(tenant: Tenant) -> bool:
    return tenant.pk in (_OPEN.get() or {})


def unrecorded(tenant: Tenant) -> None:
    """A configuration change outside any recording: a write that forgot `recorded`."""
    message = f"configuration of tenant {tenant.pk} changed outside a recorded write"
    if getattr(settings, "CONFIG_HISTORY_STRICT", False):
        raise AssertionError(message + " (decorate the write with apps.accounts.history.recorded)")
    logger.warning(message)


F = TypeVar("F", bound=Callable[..., Any])


def _tenant_of(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Tenant:
    for value in (*args, *kwargs.values()):
        if isinstance(value, Tenant):
            return value
        tenant = getattr(value, "tenant", None)
        if isinstance(tenant, Tenant):
            return tenant
        # a points level, boost or trigger
        system_tenant = getattr(getattr(value, "system", None), "tenant", None)
        if isinstance(system_tenant, Tenant):
            return system_tenant
    raise TypeError("a recorded write takes the tenant, or an object of the tenant, as argument")


def recorded(*of: str) -> Callable[[F], F]:
    """A configuration write: its changes to objects of these kinds enter the history."""

    def decorate(write: F) -> F:
        @functools.wraps(write)
        def recorded_write(*args: Any, **kwargs: Any) -> Any:
            tenant = _tenant_of(args, kwargs)
            model = portable.model_of(of[0]) if len(of) == 1 and ALL not in of else None
            if model is None:
                with recording(tenant, of):
                    return write(*args, **kwargs)
            # A write of one object: the one it is given (an update, a delete), or the one it
            # returns (a create; a webhook endpoint's comes with its secret).
            target = next((arg for arg in args if isinstance(arg, model)), None)
            with recording(tenant, () if target is None else of, target) as open_recording:
                result = write(*args, **kwargs)
                if target is None:
                    made = result[0] if isinstance(result, tuple) and result else result
                    if not isinstance(made, model):
                        raise TypeError(f"{write.__name__} names no {of[0]} it writes")
                    open_recording.created(of[0], made.pk)
                return result

        recorded_write.records = of  # type: ignore[attr-defined]
        return cast(F, recorded_write)

    return decorate
