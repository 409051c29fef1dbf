"""`psap-admin audit verify FILE`, and the audit records of the operator's own changes.

Verify checks an NDJSON audit export alone, without a stack or a key (psap.audit.chain):
exit 0 when every chain links and ends at its head, 1 naming the first bad line otherwise.

Every psap-admin command that can change something (all but the READ_ONLY ones) leaves one
audit record when it ends, successful or not: the command (`operation` "psap-admin credential
revoke"), the identifiers it was given (never a secret: no file, URL or bearer option), the
caller's AWS identity, what the shared logic noted as changed, and an HTTP-like status. It
goes to the stack's audit queue, as the API's records do; the tenant is the command's
`--tenant`, or the platform's chains (tenant 0) for commands without one.
"""

import argparse
import os
import sys
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import boto3

from psap.audit.chain import BrokenChain, verify_lines
from psap.audit.changes import take_changes
from psap.audit.lines import AuditCaller, AuditedCall, audit_record, audit_text
from psap.audit.refusals import PLATFORM_TENANT
from psap.config import audit_queue_url, client_options
from psap.storage.sqs import send_message

# The (area, action) pairs that only read: every other command is audited.
READ_ONLY: Final = frozenset(
    {
        ("tenant", "list"),
        ("credential", "list"),
        ("knowledge", "edits"),
        ("connector", "list"),
        ("connector", "deliveries"),
        ("connector", "delivery"),
        ("audit", "verify"),
    }
)
# Arguments that identify what a command acted on; anything else (files, URLs, bearer
# sources, labels) stays out of the record.
_IDENTIFIERS: Final = (
    "tenant",
    "credential",
    "id",
    "connector",
    "delivery",
    "item",
    "license",
    "kind",
    "section",
)


class ExportTampered(Exception):
    """An export that does not verify; the message names the first bad line."""


def add_subcommands(areas: Any) -> None:
    audit = areas.add_parser("audit", help="audit trail").add_subparsers(
        dest="action", required=True
    )
    verify = audit.add_parser("verify", help="check an NDJSON audit export's hash chains")
    verify.add_argument("file", help="the export file (.ndjson)")
    verify.set_defaults(run=audit_verify, offline=True)


def audit_verify(arguments: argparse.Namespace) -> None:
    path = Path(arguments.file)
    try:
        with path.open(encoding="utf-8") as lines:
            verified = verify_lines(lines)
    except OSError as error:
        raise ExportTampered(f"cannot read {path}: {error}") from error
    except BrokenChain as broken:
        raise ExportTampered(f"{path}: {broken}") from broken
    print(
        f"{path}: intact: {verified.records} records and {verified.omitted} others linked in "
        f"{len(verified.chains)} chains"
    )


def command_of(arguments: argparse.Namespace) -> tuple[str, ...]:
    names = ("area", "action", "license_action")
    return tuple(str(word) for word in (getattr(arguments, name, None) for name in names) if word)


def changes_something(arguments: argparse.Namespace) -> bool:
    return command_of(arguments)[:2] not in READ_ONLY


def operator_record(
    arguments: argparse.Namespace, status: int, started: datetime, *, finished: datetime
) -> dict[str, Any]:
    command = " ".join(("psap-admin", *command_of(arguments)))
    tenant = getattr(arguments, "tenant", None)
    identifiers = {
        name: str(getattr(arguments, name))
        for name in _IDENTIFIERS
        if getattr(arguments, name, None) is not None
    }
    event = {
        "httpMethod": "CLI",
        "path": command,
        "pathParameters": identifiers,
        "requestContext": {"requestId": str(uuid.uuid4()), "identity": {}},
        "headers": {"user-agent": "psap-admin"},
    }
    return audit_record(
        event,
        AuditCaller(
            tenant_id=tenant if isinstance(tenant, int) else PLATFORM_TENANT,
            credential_id=_caller_identity(),
            principal=os.environ.get("USER", "operator"),
            credential_kind="operator",
        ),
        AuditedCall(
            operation=command,
            status=status,
            started=started,
            finished=finished,
            changes=take_changes(),
        ),
    )


def send_operator_record(entry: dict[str, Any]) -> None:
    """Sends it; a record that cannot be sent is printed to stderr whole, for the operator
    to keep, and the command's own outcome stands."""
    try:
        send_message(audit_queue_url(), audit_text(entry))
    except Exception as error:
        print(
            f"warning: the audit record of this command could not be sent ({error}):\n"
            f"{audit_text(entry)}",
            file=sys.stderr,
        )


def _caller_identity() -> str:
    """The operator's AWS identity (an ARN), as the store saw the caller."""
    try:
        return str(boto3.client("sts", **client_options()).get_caller_identity()["Arn"])
    except Exception:
        return "unknown"


def verify_main(argv: Sequence[str]) -> int:
    """For tests and scripts: the verify command's exit code."""
    from tools.admin import main  # noqa: PLC0415 - the CLI imports this module

    return main(["audit", "verify", *argv])
