"""The environment a function runs in, read once at cold start."""

import os


class ConfigurationError(RuntimeError):
    """A required environment variable is missing: a deployment mistake, not bad input."""


def required_env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {name} is not set")
    return value


def auth_table() -> str:
    return required_env("AUTH_TABLE")


def knowledge_table() -> str:
    return required_env("KNOWLEDGE_TABLE")


def tenant_data_table() -> str:
    return required_env("TENANT_DATA_TABLE")


def cad_table() -> str:
    return required_env("CAD_TABLE")


def cad_intake_queue_url() -> str:
    return required_env("CAD_INTAKE_QUEUE_URL")


def webhook_queue_url() -> str:
    return required_env("WEBHOOK_QUEUE_URL")


def webhook_local_dev_allowed() -> bool:
    """Whether this deployment lets local-dev connectors use http and loopback (never in AWS)."""
    return os.environ.get("WEBHOOK_LOCAL_DEV", "").strip().lower() == "true"


def knowledge_content_bucket() -> str:
    """Where knowledge versions too large for one DynamoDB item are kept."""
    return required_env("KNOWLEDGE_CONTENT_BUCKET")


def knowledge_digest_queue_url() -> str:
    """The queue of the knowledge-card digest worker."""
    return required_env("KNOWLEDGE_DIGEST_QUEUE_URL")


def resource_center_table() -> str:
    """The resource-center catalog, index pointer and tenant licenses/imports."""
    return required_env("RESOURCE_CENTER_TABLE")


def search_index_bucket() -> str:
    """Where the indexer writes the resource-center search index artifacts."""
    return required_env("SEARCH_INDEX_BUCKET")


def search_index_queue_url() -> str:
    """The indexer's queue: catalog changes ask for a rebuild here (admin CLI)."""
    return required_env("SEARCH_INDEX_QUEUE_URL")


def audit_table() -> str:
    """The audit records (append-only; written by the audit writer only)."""
    return required_env("AUDIT_TABLE")


def audit_retention_days() -> int:
    """How long an audit record is kept (its TTL); the template's AuditRetentionDays."""
    return int(required_env("AUDIT_RETENTION_DAYS"))


def audit_export_bucket() -> str:
    """Where audit export files are written; they expire after a few days (lifecycle)."""
    return required_env("AUDIT_EXPORT_BUCKET")


def audit_export_queue_url() -> str:
    """The audit export worker's queue."""
    return required_env("AUDIT_EXPORT_QUEUE_URL")


def incident_upload_bucket() -> str:
    """Incident upload files: inline bodies too large to apply at once, and presigned PUTs."""
    return required_env("INCIDENT_UPLOAD_BUCKET")


def incident_upload_queue_url() -> str:
    """The queue of the incident upload worker."""
    return required_env("INCIDENT_UPLOAD_QUEUE_URL")


def media_bucket() -> str:
    """Uploaded media: SRT originals and large transcript segments (psap.media.store)."""
    return required_env("MEDIA_BUCKET")
