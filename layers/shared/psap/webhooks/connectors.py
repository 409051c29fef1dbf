"""Connectors, the admin side: create, list, update, disable/enable, rotate the secret.

A signing secret is 32 random bytes generated here and shown once, in the form the
connector's profile verifies with. Rotation adds a new secret that starts signing after an
optional lead time (the CAD adds it to its list first); from then on the baseline profile
signs with the new secret only, and the old one is kept for the overlap window (the
standard-webhooks profile signs with both until it ends). See docs/webhooks.md.
"""

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from psap.config import cad_table
from psap.errors import InvalidField, StoreUnavailable
from psap.storage.rate_limits import RateLimit, consume
from psap.webhooks import secrets as vault
from psap.webhooks import store
from psap.webhooks.addresses import UnsafeDestination, origin, parse_destination
from psap.webhooks.catalogue import UpdateKind
from psap.webhooks.jobs import start_release
from psap.webhooks.models import Connector, ConnectorStatus
from psap.webhooks.signing import SigningProfile, presented_secret

DEFAULT_OVERLAP = timedelta(hours=24)
MAX_OVERLAP = timedelta(days=30)
MAX_LEAD = timedelta(days=30)
_MAX_NAME = 200
_MAX_URL = 2048
MAX_NAME = _MAX_NAME
MAX_URL = _MAX_URL
MAX_BEARER = 4096  # characters of the CAD-issued bearer credential


@dataclass(frozen=True)
class ConnectorWithSecret:
    connector: Connector
    signing_secret: str  # shown once: only Secrets Manager keeps it


def _check_url(url: str, local_dev: bool) -> str:
    url = url.strip()
    if len(url) > _MAX_URL:
        raise InvalidField("url", f"longer than {_MAX_URL} characters")
    try:
        parse_destination(url, local_dev=local_dev)
    except UnsafeDestination as error:
        raise InvalidField("url", f"the connector URL is refused: {error}") from error
    return url


def _check_event_types(event_types: list[str] | None) -> list[str] | None:
    if event_types is None:
        return None
    known = {kind.value for kind in UpdateKind}
    unknown = sorted(set(event_types) - known)
    if unknown:
        raise InvalidField(
            "eventTypes",
            f"unknown event type(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}",
        )
    return sorted(set(event_types))


class BearerCredentialMissing(InvalidField):
    """The baseline profile needs a bearer credential and there is none."""


def _check_bearer(profile: SigningProfile, bearer: str | None) -> None:
    if profile is SigningProfile.BASELINE and not bearer:
        raise BearerCredentialMissing(
            "bearerCredential", "the baseline profile needs the bearer credential the CAD issued"
        )
    if bearer is not None and (not bearer.strip() or any(c in bearer for c in "\r\n")):
        raise InvalidField("bearerCredential", "must be one line of text")
    if bearer is not None and len(bearer) > MAX_BEARER:
        raise InvalidField("bearerCredential", f"longer than {MAX_BEARER} characters")


@dataclass(frozen=True)
class NewConnector:
    """What a tenant says about a connector it creates."""

    name: str
    url: str
    profile: SigningProfile
    event_types: list[str] | None  # None: every kind of update
    bearer_credential: str | None
    local_dev: bool


@dataclass(frozen=True)
class ConnectorChanges:
    """What a tenant changes of a connector; None leaves a setting as it is."""

    name: str | None = None
    url: str | None = None
    profile: SigningProfile | None = None
    event_types: list[str] | None = None
    all_event_types: bool = False  # back to every kind of update
    bearer_credential: str | None = None
    local_dev: bool | None = None
    status: ConnectorStatus | None = None


def create_connector(
    tenant_id: int, settings: NewConnector, *, now: datetime
) -> ConnectorWithSecret:
    profile, event_types = settings.profile, settings.event_types
    bearer_credential, local_dev = settings.bearer_credential, settings.local_dev
    name = settings.name.strip()
    if not name or len(name) > _MAX_NAME:
        raise InvalidField("name", f"a connector needs a name of 1 to {_MAX_NAME} characters")
    url = _check_url(settings.url, local_dev)
    _check_bearer(profile, bearer_credential)
    connector_id = f"con-{secrets.token_hex(6)}"
    signing = vault.new_signing_secret("sig-1", now)
    secret_name = vault.secret_name(tenant_id, connector_id)
    connector = Connector(
        connector_id=connector_id,
        tenant_id=tenant_id,
        name=name,
        url=url,
        profile=profile,
        event_types=_check_event_types(event_types),
        status=ConnectorStatus.ACTIVE,
        local_dev=local_dev,
        secret_name=secret_name,
        created_at=now,
        updated_at=now,
    )
    # The secret first: a connector item never points at a secret that does not exist.
    bound = vault.origin_text(url) if bearer_credential else None
    vault.create_secret(
        secret_name, vault.ConnectorSecrets((signing,), bearer_credential, bound), tenant_id
    )
    store.put_new_connector(connector)
    return ConnectorWithSecret(connector, presented_secret(signing.raw, profile))


def list_connectors(tenant_id: int) -> list[Connector]:
    return store.list_connectors(tenant_id)


def update_connector(
    tenant_id: int, connector_id: str, changed: ConnectorChanges, *, now: datetime
) -> ConnectorWithSecret | Connector:
    """Changes what is given. A new profile needs a secret in its own form, so it comes with
    a new signing secret (returned, shown once) and no overlap: the old form cannot verify."""
    name, url, profile = changed.name, changed.url, changed.profile
    event_types, all_event_types = changed.event_types, changed.all_event_types
    bearer_credential, local_dev, status = (
        changed.bearer_credential,
        changed.local_dev,
        changed.status,
    )
    current = store.get_connector(tenant_id, connector_id)
    changes: dict[str, object] = {"updated_at": now}
    if name is not None:
        if not name.strip() or len(name.strip()) > _MAX_NAME:
            raise InvalidField("name", f"a connector needs a name of 1 to {_MAX_NAME} characters")
        changes["name"] = name.strip()
    dev = current.local_dev if local_dev is None else local_dev
    changes["local_dev"] = dev
    changes["url"] = _check_url(url if url is not None else current.url, dev)
    if all_event_types:
        changes["event_types"] = None
    elif event_types is not None:
        changes["event_types"] = _check_event_types(event_types)
    if status is not None:
        changes["status"] = status
        if status is ConnectorStatus.ACTIVE:
            changes.update(flagged_at=None, flag_reason=None)
    new_profile = profile or current.profile
    changes["profile"] = new_profile
    secrets_now = vault.read_secret(current.secret_name, fresh=True)
    if (
        bearer_credential is None
        and secrets_now.bearer_credential
        and origin(str(changes["url"])) != origin(current.url)
    ):
        # The CAD gave its credential for one server: a new scheme, host or port must not
        # receive it unless whoever moves the URL gives it again (docs/admin-api.md).
        raise InvalidField(
            "bearerCredential",
            "the URL moves to another origin (scheme, host or port): give the CAD's bearer "
            "credential again in the same request",
        )
    bearer = secrets_now.bearer_credential if bearer_credential is None else bearer_credential
    _check_bearer(new_profile, bearer)
    # The bearer credential is bound to the origin it was given for (the dispatcher sends it
    # nowhere else, whatever its caches hold); a credential from before the binding is bound
    # to the origin it has been going to.
    bound = vault.origin_text(str(changes["url"])) if bearer else None
    shown: str | None = None
    updated_secrets = vault.ConnectorSecrets(secrets_now.signing, bearer, bound)
    if new_profile is not current.profile:
        fresh = vault.new_signing_secret(f"sig-{len(secrets_now.signing) + 1}", now)
        updated_secrets = vault.ConnectorSecrets((fresh,), bearer, bound)
        shown = presented_secret(fresh.raw, new_profile)
    if updated_secrets != secrets_now:
        vault.write_secret(current.secret_name, updated_secrets)
    updated = current.model_copy(update=changes)
    store.replace_connector(updated, _stamp(current.updated_at))
    if updated.active and not current.active:
        # After the status write: a delivery held from now on fails its "not active" check
        # and is sent instead, so none can be left behind. The held ones go in a job (there
        # may be hundreds of thousands): this request answers at once.
        start_release(tenant_id, connector_id, now)
    return ConnectorWithSecret(updated, shown) if shown else updated


@dataclass(frozen=True)
class RotationSchedule:
    """When a new signing secret starts signing (`lead` from now) and how long the old one
    is still accepted after that (`overlap`)."""

    overlap: timedelta
    lead: timedelta = timedelta(0)


def rotate_secret(
    tenant_id: int,
    connector_id: str,
    schedule: RotationSchedule,
    *,
    now: datetime,
    rate: RateLimit | None = None,
) -> ConnectorWithSecret:
    """A new signing secret, signing from `now + lead`; the old one retires `overlap` later.
    With `rate` (the admin API's), each rotation counts against the tenant's limit."""
    overlap, lead = schedule.overlap, schedule.lead
    connector = store.get_connector(tenant_id, connector_id)  # 404 before a unit is spent
    if rate is not None:
        consume(cad_table(), f"T#{tenant_id}#RATE", "rotate-secret", rate=rate, now=now)
    if overlap < timedelta(0) or overlap > MAX_OVERLAP:
        raise InvalidField("overlapHours", f"between 0 and {MAX_OVERLAP.days * 24} hours")
    if lead < timedelta(0) or lead > MAX_LEAD:
        raise InvalidField("activateInHours", f"between 0 and {MAX_LEAD.days * 24} hours")
    current = vault.read_secret(connector.secret_name, fresh=True)
    rotated, raw = current.rotated(now, overlap, lead)
    try:
        vault.write_secret(connector.secret_name, rotated)
    except StoreUnavailable:
        raise
    return ConnectorWithSecret(connector, presented_secret(raw, connector.profile))


def _stamp(moment: datetime) -> str:
    from psap.clock import format_timestamp  # noqa: PLC0415 - keeps the import list short

    return format_timestamp(moment)
