"""The environment a function runs in, read once at cold start into one frozen Settings.

A frozen dataclass, not a pydantic model: pydantic on every function's cold path would cost
about 60 ms and break the authorizer's cold-start target.

Each function's environment names only the tables, buckets and queues it uses (template.yaml),
so a missing name is refused where it is asked for, with the variable in the message. The
admin CLI builds its own Settings (`configure`) instead of writing os.environ; tests start
each test from the environment again (`reset_settings`).
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class ConfigurationError(RuntimeError):
    """A required environment variable is missing or malformed: a deployment mistake, not bad
    input."""


@dataclass(frozen=True)
class AwsTarget:
    """Where the admin CLI sends its AWS calls when the environment does not say: the local
    stack's endpoint, as its operator (the stack enforces IAM; never a caller's profile)."""

    endpoint_url: str
    region: str
    access_key_id: str
    secret_access_key: str

    def client_options(self) -> dict[str, Any]:
        return {
            "endpoint_url": self.endpoint_url,
            "region_name": self.region,
            "aws_access_key_id": self.access_key_id,
            "aws_secret_access_key": self.secret_access_key,
        }


@dataclass(frozen=True)
class Settings:
    """Every variable the code reads, by the variable's name in lower case. A table, bucket,
    queue or prefix is None when the environment does not name it."""

    auth_table: str | None = None
    knowledge_table: str | None = None
    tenant_data_table: str | None = None
    cad_table: str | None = None
    resource_center_table: str | None = None
    audit_table: str | None = None
    audit_seal_table: str | None = None
    knowledge_content_bucket: str | None = None
    search_index_bucket: str | None = None
    audit_export_bucket: str | None = None
    incident_upload_bucket: str | None = None
    media_bucket: str | None = None
    cad_intake_queue_url: str | None = None
    webhook_queue_url: str | None = None
    webhook_slow_queue_url: str | None = None
    delivery_job_queue_url: str | None = None
    knowledge_digest_queue_url: str | None = None
    search_index_queue_url: str | None = None
    audit_export_queue_url: str | None = None
    audit_queue_url: str | None = None
    incident_upload_queue_url: str | None = None
    connector_secret_prefix: str | None = None
    # The customer-managed key that encrypts connector secrets (None: Secrets Manager's own).
    connector_secret_key_arn: str | None = None
    audit_retention_days: int | None = None
    audit_seal_key: str | None = None  # the KMS key that signs the audit digests
    audit_archive_bucket: str | None = None
    audit_archive_queue_url: str | None = None
    audit_export_max_receives: int | None = None
    cad_intake_max_receives: int = 5
    index_refresh_seconds: float = 30.0  # how long a warm container serves a search index
    # A grant or revoke shows in search results within this many seconds (docs/search.md).
    license_cache_seconds: float = 10.0
    webhook_local_dev: bool = False  # http and loopback connectors: never in AWS
    powertools_trace_disabled: bool = False
    credential_kind: str = "partner"  # the authorizer's direction
    # Tokens issued before the checksum (docs/design.md, "The cheap refusal path").
    legacy_tokens_accepted: bool = True
    aws_endpoint_url: str | None = None
    aws_target: AwsTarget | None = None  # only the admin CLI sets one

    @classmethod
    def from_environment(cls, environment: Mapping[str, str]) -> "Settings":
        """Reads and checks every variable; ConfigurationError names a malformed one."""
        read = _Reader(environment)
        return cls(
            auth_table=read.name("AUTH_TABLE"),
            knowledge_table=read.name("KNOWLEDGE_TABLE"),
            tenant_data_table=read.name("TENANT_DATA_TABLE"),
            cad_table=read.name("CAD_TABLE"),
            resource_center_table=read.name("RESOURCE_CENTER_TABLE"),
            audit_table=read.name("AUDIT_TABLE"),
            audit_seal_table=read.name("AUDIT_SEAL_TABLE"),
            knowledge_content_bucket=read.name("KNOWLEDGE_CONTENT_BUCKET"),
            search_index_bucket=read.name("SEARCH_INDEX_BUCKET"),
            audit_export_bucket=read.name("AUDIT_EXPORT_BUCKET"),
            incident_upload_bucket=read.name("INCIDENT_UPLOAD_BUCKET"),
            media_bucket=read.name("MEDIA_BUCKET"),
            cad_intake_queue_url=read.name("CAD_INTAKE_QUEUE_URL"),
            webhook_queue_url=read.name("WEBHOOK_QUEUE_URL"),
            webhook_slow_queue_url=read.name("WEBHOOK_SLOW_QUEUE_URL"),
            delivery_job_queue_url=read.name("DELIVERY_JOB_QUEUE_URL"),
            knowledge_digest_queue_url=read.name("KNOWLEDGE_DIGEST_QUEUE_URL"),
            search_index_queue_url=read.name("SEARCH_INDEX_QUEUE_URL"),
            audit_export_queue_url=read.name("AUDIT_EXPORT_QUEUE_URL"),
            audit_queue_url=read.name("AUDIT_QUEUE_URL"),
            incident_upload_queue_url=read.name("INCIDENT_UPLOAD_QUEUE_URL"),
            connector_secret_prefix=read.name("CONNECTOR_SECRET_PREFIX"),
            connector_secret_key_arn=read.name("CONNECTOR_SECRET_KEY_ARN"),
            audit_retention_days=read.whole_number("AUDIT_RETENTION_DAYS"),
            audit_seal_key=read.name("AUDIT_SEAL_KEY"),
            audit_archive_bucket=read.name("AUDIT_ARCHIVE_BUCKET"),
            audit_archive_queue_url=read.name("AUDIT_ARCHIVE_QUEUE_URL"),
            audit_export_max_receives=read.whole_number("AUDIT_EXPORT_MAX_RECEIVES"),
            cad_intake_max_receives=read.count(
                "CAD_INTAKE_MAX_RECEIVES", cls.cad_intake_max_receives
            ),
            index_refresh_seconds=read.seconds("INDEX_REFRESH_SECONDS", cls.index_refresh_seconds),
            license_cache_seconds=read.seconds("LICENSE_CACHE_SECONDS", cls.license_cache_seconds),
            webhook_local_dev=read.text("WEBHOOK_LOCAL_DEV").lower() == "true",
            powertools_trace_disabled=read.text("POWERTOOLS_TRACE_DISABLED").lower()
            in {"true", "1"},
            credential_kind=environment.get("CREDENTIAL_KIND", "partner"),
            legacy_tokens_accepted=read.text("LEGACY_TOKENS").lower() != "refused",
            aws_endpoint_url=read.name("AWS_ENDPOINT_URL"),
        )

    @property
    def local_aws(self) -> bool:
        """Whether AWS calls go to an endpoint of our own (the local stack), not to AWS."""
        return self.aws_target is not None or self.aws_endpoint_url is not None


class _Reader:
    def __init__(self, environment: Mapping[str, str]) -> None:
        self.environment = environment

    def text(self, variable: str) -> str:
        return self.environment.get(variable, "").strip()

    def name(self, variable: str) -> str | None:
        return self.text(variable) or None

    def count(self, variable: str, default: int) -> int:
        found = self.whole_number(variable)
        return default if found is None else found

    def whole_number(self, variable: str) -> int | None:
        text = self.text(variable)
        try:
            return int(text) if text else None
        except ValueError:
            raise ConfigurationError(
                f"environment variable {variable} is not a whole number: {text!r}"
            ) from None

    def seconds(self, variable: str, default: float) -> float:
        text = self.text(variable)
        try:
            return float(text) if text else default
        except ValueError:
            raise ConfigurationError(
                f"environment variable {variable} is not a number of seconds: {text!r}"
            ) from None


_settings: Settings | None = None


def settings() -> Settings:
    """This process's settings: read from the environment on first use (a function's cold
    start), unless `configure` gave others."""
    global _settings  # noqa: PLW0603 - one settings object per process, by design
    if _settings is None:
        _settings = Settings.from_environment(os.environ)
    return _settings


def configure(chosen: Settings) -> None:
    """Makes `chosen` this process's settings (the admin CLI's target). Before any AWS client
    is created: clients are made once, with the settings of that moment."""
    global _settings  # noqa: PLW0603 - see settings()
    _settings = chosen


def reset_settings() -> None:
    """Forgets the settings, so the next use reads the environment again: for tests, which
    change the environment between (and within) tests; a function never needs it."""
    global _settings  # noqa: PLW0603 - see settings()
    _settings = None


def client_options() -> dict[str, Any]:
    """Arguments for botocore's create_client: none in a function (botocore reads the
    environment itself), the endpoint and operator key of the admin CLI's target."""
    target = settings().aws_target
    return target.client_options() if target is not None else {}


def _required[T](value: T | None, variable: str) -> T:
    if value is None:
        raise ConfigurationError(f"environment variable {variable} is not set")
    return value


def auth_table() -> str:
    return _required(settings().auth_table, "AUTH_TABLE")


def knowledge_table() -> str:
    return _required(settings().knowledge_table, "KNOWLEDGE_TABLE")


def tenant_data_table() -> str:
    return _required(settings().tenant_data_table, "TENANT_DATA_TABLE")


def cad_table() -> str:
    return _required(settings().cad_table, "CAD_TABLE")


def cad_intake_queue_url() -> str:
    return _required(settings().cad_intake_queue_url, "CAD_INTAKE_QUEUE_URL")


def cad_intake_max_receives() -> int:
    """The intake queue's maxReceiveCount (template.yaml): the last try tells the CAD."""
    return settings().cad_intake_max_receives


def webhook_queue_url() -> str:
    return _required(settings().webhook_queue_url, "WEBHOOK_QUEUE_URL")


def webhook_slow_queue_url() -> str:
    """The slow lane's queue; only the dispatcher sends to it."""
    return _required(settings().webhook_slow_queue_url, "WEBHOOK_SLOW_QUEUE_URL")


def delivery_job_queue_url() -> str:
    """The steps of releases and recoveries of a connector's deliveries (psap.webhooks.jobs)."""
    return _required(settings().delivery_job_queue_url, "DELIVERY_JOB_QUEUE_URL")


def webhook_local_dev_allowed() -> bool:
    """Whether this deployment lets local-dev connectors use http and loopback (never in AWS)."""
    return settings().webhook_local_dev


def connector_secret_prefix() -> str:
    """Where connector secrets are named in Secrets Manager (psap.webhooks.secrets)."""
    return _required(settings().connector_secret_prefix, "CONNECTOR_SECRET_PREFIX")


def connector_secret_key_arn() -> str | None:
    """The key new connector secrets are encrypted with (template.yaml's SecretsKey)."""
    return settings().connector_secret_key_arn


def knowledge_content_bucket() -> str:
    """Where knowledge versions too large for one DynamoDB item are kept."""
    return _required(settings().knowledge_content_bucket, "KNOWLEDGE_CONTENT_BUCKET")


def knowledge_digest_queue_url() -> str:
    """The queue of the knowledge-card digest worker."""
    return _required(settings().knowledge_digest_queue_url, "KNOWLEDGE_DIGEST_QUEUE_URL")


def resource_center_table() -> str:
    """The resource-center catalog, index pointer and tenant licenses/imports."""
    return _required(settings().resource_center_table, "RESOURCE_CENTER_TABLE")


def search_index_bucket() -> str:
    """Where the indexer writes the resource-center search index artifacts."""
    return _required(settings().search_index_bucket, "SEARCH_INDEX_BUCKET")


def search_index_queue_url() -> str:
    """The indexer's queue: catalog changes ask for a rebuild here (admin CLI)."""
    return _required(settings().search_index_queue_url, "SEARCH_INDEX_QUEUE_URL")


def audit_table() -> str:
    """The audit records (append-only; written by the audit writer only)."""
    return _required(settings().audit_table, "AUDIT_TABLE")


def audit_seal_table() -> str:
    """The sealer's digests, seals and sealed positions (written by the sealer only), apart
    from the audit records so that no role but the writer may put into AuditTable."""
    return _required(settings().audit_seal_table, "AUDIT_SEAL_TABLE")


def audit_retention_days() -> int:
    """How long an audit record is kept (its TTL); the template's AuditRetentionDays."""
    return _required(settings().audit_retention_days, "AUDIT_RETENTION_DAYS")


def audit_seal_key() -> str:
    """The asymmetric KMS key whose signature seals the audit digests (psap.audit.sealing)."""
    return _required(settings().audit_seal_key, "AUDIT_SEAL_KEY")


def audit_archive_bucket() -> str:
    """The write-once archive of sealed audit records (Object Lock, kept on stack deletion)."""
    return _required(settings().audit_archive_bucket, "AUDIT_ARCHIVE_BUCKET")


def audit_archive_queue_url() -> str:
    """The archiver's queue: one message per tenant's seal of a period."""
    return _required(settings().audit_archive_queue_url, "AUDIT_ARCHIVE_QUEUE_URL")


def audit_export_bucket() -> str:
    """Where audit export files are written; they expire after a few days (lifecycle)."""
    return _required(settings().audit_export_bucket, "AUDIT_EXPORT_BUCKET")


def audit_queue_url() -> str:
    """The audit queue: the writer's only input (psap.audit.sending)."""
    return _required(settings().audit_queue_url, "AUDIT_QUEUE_URL")


def audit_export_queue_url() -> str:
    """The audit export worker's queue."""
    return _required(settings().audit_export_queue_url, "AUDIT_EXPORT_QUEUE_URL")


def audit_export_max_receives() -> int:
    """The export queue's maxReceiveCount (template.yaml)."""
    return _required(settings().audit_export_max_receives, "AUDIT_EXPORT_MAX_RECEIVES")


def incident_upload_bucket() -> str:
    """Incident upload files: inline bodies too large to apply at once, and presigned uploads."""
    return _required(settings().incident_upload_bucket, "INCIDENT_UPLOAD_BUCKET")


def incident_upload_queue_url() -> str:
    """The queue of the incident upload worker."""
    return _required(settings().incident_upload_queue_url, "INCIDENT_UPLOAD_QUEUE_URL")


def media_bucket() -> str:
    """Uploaded media: SRT originals and large transcript segments (psap.media.store)."""
    return _required(settings().media_bucket, "MEDIA_BUCKET")
