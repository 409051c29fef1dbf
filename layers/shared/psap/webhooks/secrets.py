"""A connector's secrets in Secrets Manager: signing secrets and the CAD's bearer credential.

One secret per connector, named `<CONNECTOR_SECRET_PREFIX>/tenants/<t>/connectors/<id>`,
holding JSON. Connector items in DynamoDB keep only the secret's name; no secret value is
ever written to a table, a log line or an attempt record. The dispatcher keeps a read copy
for 30 s per warm container: a rotation's overlap window is far longer, so a copy that is a
few seconds old still signs with a secret the receiver accepts.
"""

import base64
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import botocore.session
from botocore.config import Config

from psap.clock import format_timestamp, parse_timestamp
from psap.config import client_options, connector_secret_key_arn, connector_secret_prefix
from psap.storage.aws_errors import translated
from psap.webhooks.addresses import origin

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

SIGNING_SECRET_BYTES = 32
_CACHE_SECONDS = 30.0
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=2, read_timeout=5)


@dataclass(frozen=True)
class SigningSecret:
    secret_id: str  # names the secret in listings ("sig-1"), never its value
    raw: bytes = field(repr=False)
    created_at: datetime
    retires_at: datetime | None  # end of the overlap window after a rotation
    # When it starts signing: a rotation may give the CAD time to add it to its list first.
    signs_from: datetime | None = None

    def active(self, now: datetime) -> bool:
        """Not yet retired (it may still be waiting for its activation time)."""
        return self.retires_at is None or now < self.retires_at

    def signing(self, now: datetime) -> bool:
        return self.active(now) and (self.signs_from is None or self.signs_from <= now)


@dataclass(frozen=True)
class ConnectorSecrets:
    signing: tuple[SigningSecret, ...]  # newest first
    bearer_credential: str | None = field(default=None, repr=False)
    # The origin (scheme://host:port) the bearer credential was given for, kept in the same
    # secret value so the two can never disagree; None on secrets written before it was kept.
    bearer_origin: str | None = None

    def sends_bearer_to(self, url: str) -> bool:
        """Whether the bearer credential may go to `url`: only to the origin it was given for."""
        return self.bearer_origin is None or self.bearer_origin == origin_text(url)

    def active_signing(self, now: datetime) -> list[bytes]:
        """The secrets that sign now, newest first. The baseline profile uses the first only;
        standard-webhooks sends one entry per secret."""
        return [secret.raw for secret in self.signing if secret.signing(now)]

    def to_json(self) -> str:
        return json.dumps(
            {
                "signingSecrets": [
                    {
                        "id": secret.secret_id,
                        "secret": base64.b64encode(secret.raw).decode("ascii"),
                        "createdAt": format_timestamp(secret.created_at),
                        "retiresAt": format_timestamp(secret.retires_at)
                        if secret.retires_at
                        else None,
                        "signsFrom": format_timestamp(secret.signs_from)
                        if secret.signs_from
                        else None,
                    }
                    for secret in self.signing
                ],
                "bearerCredential": self.bearer_credential,
                "bearerOrigin": self.bearer_origin,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> "ConnectorSecrets":
        document = json.loads(text)
        return cls(
            signing=tuple(
                SigningSecret(
                    secret_id=str(entry["id"]),
                    raw=base64.b64decode(entry["secret"]),
                    created_at=parse_timestamp(str(entry["createdAt"])),
                    retires_at=parse_timestamp(str(entry["retiresAt"]))
                    if entry.get("retiresAt")
                    else None,
                    signs_from=parse_timestamp(str(entry["signsFrom"]))
                    if entry.get("signsFrom")
                    else None,
                )
                for entry in document.get("signingSecrets", [])
            ),
            bearer_credential=document.get("bearerCredential"),
            bearer_origin=document.get("bearerOrigin"),
        )

    def rotated(
        self, now: datetime, overlap: timedelta, lead: timedelta = timedelta(0)
    ) -> tuple["ConnectorSecrets", bytes]:
        """A new newest secret that signs from `now + lead`; the current ones keep signing
        until then and retire `overlap` later (the receiver's window to accept either)."""
        activation = now + lead
        fresh = SigningSecret(
            self._next_id(), secrets.token_bytes(SIGNING_SECRET_BYTES), now, None, activation
        )
        ends = activation + overlap
        kept = tuple(
            SigningSecret(
                secret.secret_id,
                secret.raw,
                secret.created_at,
                min(secret.retires_at, ends) if secret.retires_at else ends,
                secret.signs_from,
            )
            for secret in self.signing
            if secret.active(now)
        )
        return (
            ConnectorSecrets((fresh, *kept), self.bearer_credential, self.bearer_origin),
            fresh.raw,
        )

    def _next_id(self) -> str:
        numbers = [
            int(secret.secret_id[4:])
            for secret in self.signing
            if secret.secret_id.startswith("sig-") and secret.secret_id[4:].isdigit()
        ]
        return f"sig-{max(numbers, default=0) + 1}"


def origin_text(url: str) -> str | None:
    """`scheme://host:port` of a URL (psap.webhooks.addresses.origin), None if it has none."""
    parts = origin(url)
    return f"{parts[0]}://{parts[1]}:{parts[2]}" if parts else None


def new_signing_secret(secret_id: str, now: datetime) -> SigningSecret:
    return SigningSecret(secret_id, secrets.token_bytes(SIGNING_SECRET_BYTES), now, None)


def secret_name(tenant_id: int, connector_id: str) -> str:
    return f"{connector_secret_prefix()}/tenants/{tenant_id}/connectors/{connector_id}"


@cache
def secrets_manager() -> "SecretsManagerClient":
    client = botocore.session.get_session().create_client(
        "secretsmanager", config=_CONFIG, **client_options()
    )
    return cast("SecretsManagerClient", client)


def create_secret(name: str, value: ConnectorSecrets, tenant_id: int) -> None:
    with translated("connector secret could not be created", codes_only=True):
        key = connector_secret_key_arn()
        # Our key, not Secrets Manager's AWS-managed one (docs/security.md).
        encryption: dict[str, Any] = {"KmsKeyId": key} if key else {}
        secrets_manager().create_secret(
            Name=name,
            SecretString=value.to_json(),
            Description="Signing secrets and bearer credential of a CAD webhook connector",
            Tags=[{"Key": "psap:tenant", "Value": str(tenant_id)}],
            **encryption,
        )


def write_secret(name: str, value: ConnectorSecrets) -> None:
    # Error codes only in messages: a message could echo a parameter, which holds secrets.
    with translated("connector secret could not be written", codes_only=True):
        secrets_manager().put_secret_value(SecretId=name, SecretString=value.to_json())
    _forget(name)


def read_secret(name: str, *, fresh: bool = False) -> ConnectorSecrets:
    now = time.monotonic()
    with _cache_lock:
        cached = _cache.get(name)
    if cached is not None and not fresh and now - cached[0] < _CACHE_SECONDS:
        return cached[1]
    with translated("connector secret could not be read", codes_only=True):
        answer = secrets_manager().get_secret_value(SecretId=name)
    value = ConnectorSecrets.from_json(answer["SecretString"])
    with _cache_lock:
        _cache[name] = (now, value)
    return value


def _forget(name: str) -> None:
    with _cache_lock:
        _cache.pop(name, None)


def forget_all() -> None:
    with _cache_lock:
        _cache.clear()


_cache: dict[str, tuple[float, ConnectorSecrets]] = {}
_cache_lock = threading.Lock()
