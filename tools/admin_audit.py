"""`psap-admin audit verify FILE`, and the audit records of the operator's own changes.

Verify checks an NDJSON audit export (psap.audit.chain, psap.audit.seals): every chain links
and ends at its head; the digests' signatures verify with the sealing key's public key
(`--public-key FILE`, offline, or fetched from KMS) and each names the one before; every
seal leads to its digest; every sealed position is in the file with the hash sealed. Exit 0
when all holds (records after the last seal are reported as not yet sealed), 1 with one
line naming the first thing that does not.

Every psap-admin command that can change something (all but the READ_ONLY ones) leaves one
audit record when it ends, successful or not: the command (`operation` "psap-admin credential
revoke"), the identifiers it was given (never a secret: no file, URL or bearer option), the
caller's AWS identity, what the shared logic noted as changed, and an HTTP-like status. It
goes to the stack's audit queue, as the API's records do; the tenant is the command's
`--tenant`, or the platform's chains (tenant 0) for commands without one.
"""

import argparse
import contextlib
import json
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import boto3

from psap.audit.chain import BrokenChain, verify_lines
from psap.audit.changes import take_changes
from psap.audit.lines import AuditCaller, AuditedCall, audit_record, audit_text
from psap.audit.refusals import PLATFORM_TENANT
from psap.audit.seals import SealBroken, SealCheck, check_seals
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
    verify = audit.add_parser(
        "verify", help="check an NDJSON audit export's hash chains and signed digests"
    )
    verify.add_argument("file", help="the export file (.ndjson)")
    verify.add_argument(
        "--public-key",
        help="the sealing key's public key (PEM or DER), to verify offline; otherwise it is "
        "fetched from KMS (kms:GetPublicKey)",
    )
    verify.add_argument(
        "--key-id",
        help="the sealing key every digest must name (the stack's AuditSealKeyArn output); "
        "without it, the key the digests name",
    )
    verify.add_argument(
        "--require-sealed",
        action="store_true",
        help="fail when any record is not yet sealed (an export of a range that has ended)",
    )
    verify.set_defaults(run=audit_verify, offline=True)


def audit_verify(arguments: argparse.Namespace) -> None:
    path = Path(arguments.file)
    try:
        digests, seals = _seal_lines(path)
        key_id = arguments.key_id or (str(digests[0].get("keyId")) if digests else None)
        sealed = SealCheck()
        if digests or seals:
            check = _signature_check(arguments, key_id)
            sealed = check_seals(digests, seals, signature_valid=check, key_id=key_id)
        with path.open(encoding="utf-8") as lines:
            verified = verify_lines(lines, sealed=sealed.positions())
    except OSError as error:
        raise ExportTampered(f"cannot read {path}: {error}") from error
    except (BrokenChain, SealBroken) as broken:
        raise ExportTampered(f"{path}: {broken}") from broken
    unsealed = sum(verified.unsealed.values())
    if unsealed and arguments.require_sealed:
        raise ExportTampered(f"{path}: {unsealed} records are not sealed by a signed digest")
    print(
        f"{path}: intact: {verified.records} records and {verified.omitted} others linked in "
        f"{len(verified.chains)} chains"
    )
    if sealed.digests:
        print(
            f"sealed: {sealed.seals} seals in {sealed.digests} signed digests "
            f"(key {key_id}), the last of {sealed.last_period}"
        )
    if unsealed:
        print(f"not yet sealed: {unsealed} records after the last seal of their chain")


def _seal_lines(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The file's digest and seal lines (the first pass; the chains are the second)."""
    digests: list[dict[str, Any]] = []
    seals: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as lines:
        for text in lines:
            if text.startswith(('{"digest"', '{"seal"')):
                line = json.loads(text)
                if isinstance(line.get("digest"), dict):
                    digests.append(line["digest"])
                elif isinstance(line.get("seal"), dict):
                    seals.append(line["seal"])
    return digests, seals


def _public_key(arguments: argparse.Namespace, key_id: str) -> bytes:
    """The key's public key (DER) from KMS: from the stack the CLI names (`--stack-name`, or
    the local stack's state file by $PSAP_LOCAL_STATE_FILE), else as this process reaches
    AWS, and failing that from the local stack's default state file."""
    from tools.admin import STATE_FILE_VARIABLE, UsageError, configure_target  # noqa: PLC0415

    def fetch() -> bytes:
        kms = boto3.client("kms", **client_options())
        return bytes(kms.get_public_key(KeyId=key_id)["PublicKey"])

    if getattr(arguments, "stack_name", None) or os.environ.get(STATE_FILE_VARIABLE):
        configure_target(arguments)
        return fetch()
    try:
        return fetch()
    except Exception:
        with contextlib.suppress(UsageError):
            configure_target(arguments)
        return fetch()


def _signature_check(
    arguments: argparse.Namespace, key_id: str | None
) -> Callable[[bytes, bytes], bool]:
    """An ECDSA P-256 / SHA-256 check with the sealing key's public key."""
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415 - verify only
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415

    if arguments.public_key is not None:
        raw = Path(arguments.public_key).read_bytes()
        loaded = (
            serialization.load_pem_public_key(raw)
            if raw.lstrip().startswith(b"-----")
            else serialization.load_der_public_key(raw)
        )
    else:
        if key_id is None:
            raise ExportTampered("no key id to fetch the public key of: pass --public-key")
        try:
            der = _public_key(arguments, key_id)
        except Exception as error:
            raise ExportTampered(
                f"cannot get the public key of {key_id} ({error}): pass --public-key"
            ) from error
        loaded = serialization.load_der_public_key(der)
    if not isinstance(loaded, ec.EllipticCurvePublicKey):
        raise ExportTampered("the public key is not an elliptic-curve key (ECC_NIST_P256)")
    public_key = loaded

    def valid(message: bytes, signature: bytes) -> bool:
        try:
            public_key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return False
        return True

    return valid


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
