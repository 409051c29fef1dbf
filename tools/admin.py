"""Admin CLI (`psap-admin`, installed into .venv/bin by `make`): tenants, credentials,
knowledge entries, connectors, imports and the resource-center catalog.

Works against the running local stack (the default: its state file, .local/stack.json or
$PSAP_LOCAL_STATE_FILE), a deployed stack (`--stack-name NAME`, table names from its
outputs) or explicit tables (`--auth-table`, `--knowledge-table`).

    psap-admin tenant create --name "Riverside County 911"
    psap-admin tenant limits show --tenant 1
    psap-admin tenant limits set --tenant 1 --budget search --rate 50 --burst 100
    psap-admin credential issue --tenant 1 --kind partner \\
        --permissions VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE --label "CAD vendor sync" \\
        --expires-in-days 365
    psap-admin credential list --tenant 1
    psap-admin credential revoke --tenant 1 --credential cred-0123456789abcdef
    psap-admin import --tenant 1 users.jsonl enrollments.jsonl evaluations.jsonl
    psap-admin knowledge edit --tenant 1 --id 12 --section spokenInstructions \\
        --file instructions.json --note "local wording"   # a service-owned section only
    psap-admin knowledge edits --tenant 1 --id 12
    psap-admin knowledge redigest --tenant 1 --id 12
    psap-admin audit verify audit-export.ndjson       # exit 0: intact; 1: names the bad line

Every command that changes something leaves an audit record (tools/admin_audit.py).
"""

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from psap.auth import issuing, store
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.budgets import Budget, LimitsError, check_limit
from psap.clock import format_timestamp, utc_now
from psap.config import AwsTarget, Settings, configure, settings
from psap.errors import DomainError, StoreUnavailable
from psap.knowledge.authoring import edit_service_section
from psap.knowledge.card import redigest
from psap.knowledge.content import Section
from psap.knowledge.models import KnowledgeSource, KnowledgeType
from psap.knowledge.reading import service_edits
from psap.knowledge.store import NewEntry, create_entry
from psap.offboarding.archive import ArchiveTampered
from psap.storage.aws_errors import translated
from tools import (
    admin_audit,
    admin_cad,
    admin_console,
    admin_offboard,
    admin_resource_center,
    tenant_import,
    tenant_limits,
)

ROOT = Path(__file__).resolve().parent.parent
STATE_FILE = ROOT / ".local" / "stack.json"
# The local stack's own name for the same choice (local.stack.STATE_FILE_VARIABLE).
STATE_FILE_VARIABLE = "PSAP_LOCAL_STATE_FILE"


class UsageError(Exception):
    """A wrong or missing argument the user can fix; printed without a traceback."""


def configure_target(arguments: argparse.Namespace) -> None:
    """Points the data-access layer at the chosen stack's tables: the settings of this
    process, built over the environment's (psap.config.configure)."""
    configure(target_settings(arguments, settings()))


def target_settings(arguments: argparse.Namespace, base: Settings) -> Settings:
    """`base` with the tables, buckets and queues (and, for the local stack, the endpoint
    and operator key) of the target the arguments choose."""
    if arguments.stack_name:
        try:
            with translated(f"cannot read stack {arguments.stack_name}"):
                stacks = boto3.client("cloudformation").describe_stacks(
                    StackName=arguments.stack_name
                )
        except StoreUnavailable as error:
            raise UsageError(
                f"cannot read stack {arguments.stack_name}: {error.__cause__}"
            ) from error
        outputs = {
            output["OutputKey"]: output["OutputValue"]
            for output in stacks["Stacks"][0].get("Outputs", [])
        }
        chosen = replace(
            base,
            auth_table=outputs["AuthTableName"],
            knowledge_table=outputs["KnowledgeTableName"],
            knowledge_content_bucket=outputs.get("KnowledgeContentBucketName") or None,
            knowledge_digest_queue_url=outputs.get("KnowledgeDigestQueueUrl") or None,
            resource_center_table=outputs.get("ResourceCenterTableName") or None,
            search_index_queue_url=outputs.get("SearchIndexQueueUrl") or None,
            audit_queue_url=outputs.get("AuditQueueUrl") or None,
            # The buckets a tenant's offboarding empties of the tenant's objects.
            media_bucket=outputs.get("MediaBucketName") or base.media_bucket,
            incident_upload_bucket=outputs.get("IncidentUploadBucketName")
            or base.incident_upload_bucket,
            audit_export_bucket=outputs.get("AuditExportBucketName") or base.audit_export_bucket,
        )
        chosen = admin_cad.settings_from_outputs(chosen, outputs)
        return tenant_import.settings_from_outputs(chosen, outputs)
    if arguments.auth_table or arguments.knowledge_table:
        return replace(
            base,
            auth_table=arguments.auth_table or None,
            knowledge_table=arguments.knowledge_table or None,
        )
    state_file = Path(arguments.state_file)
    if not state_file.exists():
        raise UsageError(
            f"no target: start the local stack (`make run`, which writes {state_file}), "
            "or pass --stack-name or --auth-table/--knowledge-table"
        )
    state = json.loads(state_file.read_text(encoding="utf-8"))
    resources = state["resources"]
    chosen = replace(
        base,
        # The local stack enforces IAM: act as its operator, never as a caller's own profile.
        aws_target=AwsTarget(
            endpoint_url=state["awsEndpointUrl"],
            region=state.get("region", "us-east-1"),
            access_key_id=state["awsAccessKeyId"],
            secret_access_key=state["awsSecretAccessKey"],
        ),
        auth_table=resources["AuthTable"],
        knowledge_table=resources["KnowledgeTable"],
        knowledge_content_bucket=resources.get("KnowledgeContentBucket") or None,
        knowledge_digest_queue_url=resources.get("KnowledgeDigestQueue") or None,
        resource_center_table=resources.get("ResourceCenterTable") or None,
        search_index_queue_url=resources.get("SearchIndexQueue") or None,
        audit_queue_url=resources.get("AuditQueue") or None,
        media_bucket=resources.get("MediaBucket") or base.media_bucket,
        incident_upload_bucket=resources.get("IncidentUploadBucket") or base.incident_upload_bucket,
        audit_export_bucket=resources.get("AuditExportBucket") or base.audit_export_bucket,
    )
    chosen = admin_cad.settings_from_state(chosen, state)
    return tenant_import.settings_from_state(chosen, state)


def usage_plan_target(arguments: argparse.Namespace) -> tenant_limits.UsagePlanTarget | None:
    """Where the tenants' API keys and usage plans are, for the chosen target; None for a
    bare --auth-table target, which names no API."""
    if arguments.stack_name:
        with translated(f"cannot read stack {arguments.stack_name}"):
            stacks = boto3.client("cloudformation").describe_stacks(StackName=arguments.stack_name)
        outputs = {
            output["OutputKey"]: output["OutputValue"]
            for output in stacks["Stacks"][0].get("Outputs", [])
        }
        return tenant_limits.target_from_outputs(outputs)
    state_file = Path(arguments.state_file)
    if arguments.auth_table or not state_file.exists():
        return None
    return tenant_limits.target_from_state(json.loads(state_file.read_text(encoding="utf-8")))


def _required_target(arguments: argparse.Namespace) -> tenant_limits.UsagePlanTarget:
    target = usage_plan_target(arguments)
    if target is None:
        raise UsageError("the target names no API usage plans: use the local stack or --stack-name")
    return target


def tenant_create(arguments: argparse.Namespace) -> None:
    tenant = store.create_tenant(arguments.name)
    print(f"created tenant {tenant.tenant_id} ({tenant.name})")
    target = usage_plan_target(arguments)
    if target is None:
        print(
            "note: no API target, so no usage plan key yet: run `tenant limits sync` against"
            " the stack (docs/limits.md)",
            file=sys.stderr,
        )
        return
    tenant_limits.ensure_usage_key(target, tenant.tenant_id)


def limits_show(arguments: argparse.Namespace) -> None:
    store.get_tenant(arguments.tenant)
    try:
        shown = tenant_limits.show(_required_target(arguments), arguments.tenant)
    except LimitsError as error:
        raise UsageError(str(error)) from error
    print(tenant_limits.render(shown))


def limits_set(arguments: argparse.Namespace) -> None:
    store.get_tenant(arguments.tenant)
    try:
        limit = check_limit(arguments.budget, arguments.rate, arguments.burst)
        shown = tenant_limits.set_limit(
            _required_target(arguments), arguments.tenant, arguments.budget, limit=limit
        )
    except LimitsError as error:
        raise UsageError(str(error)) from error
    print(tenant_limits.render(shown))


def limits_sync(arguments: argparse.Namespace) -> None:
    tenants = [tenant.tenant_id for tenant in store.list_tenants()]
    added = tenant_limits.sync(_required_target(arguments), tenants)
    print(f"{len(tenants)} tenants, {len(added)} given a usage plan key: {added or 'none'}")


def tenant_offboard(arguments: argparse.Namespace) -> None:
    try:
        admin_offboard.run_offboard(arguments, usage_plan_target(arguments))
    except admin_offboard.MissingKey as error:
        raise UsageError(str(error)) from error


def tenant_list(arguments: argparse.Namespace) -> None:
    for tenant in store.list_tenants():
        print(f"{tenant.tenant_id}\t{tenant.name}\tcreated {tenant.created_at}")


def credential_issue(arguments: argparse.Namespace) -> None:
    # The operator's tool: no grant check and no rate limit (psap.auth.issuing says why);
    # the expiry rules are the API's.
    issued = issuing.issue(
        arguments.tenant,
        issuing.CredentialRequest(
            kind=CredentialKind(arguments.kind),
            permissions=issuing.parse_permissions((arguments.permissions or "").split(",")),
            label=arguments.label,
            expires_in_days=arguments.expires_in_days,
        ),
        utc_now(),
        issued_by=OPERATOR,
    )
    credential = issued.credential
    print(
        f"issued {credential.credential_id} ({credential.kind}) for tenant {credential.tenant_id}"
    )
    print("token (shown once, store it now):")
    print(issued.token)


def credential_list(arguments: argparse.Namespace) -> None:
    store.get_tenant(arguments.tenant)
    for credential in store.list_credentials(arguments.tenant):
        state = "revoked" if credential.revoked else "active"
        expiry = format_timestamp(credential.expires_at) if credential.expires_at else "never"
        permissions = ",".join(sorted(credential.permissions)) or "-"
        print(
            f"{credential.credential_id}\t{credential.kind}\t{state}\texpires {expiry}\t"
            f"{permissions}\t{credential.label}\tissued by {credential.issued_by or '?'}"
        )


def credential_revoke(arguments: argparse.Namespace) -> None:
    revocation = issuing.revoke(arguments.tenant, arguments.credential)
    print(issuing.revocation_notice(revocation))


def credential_admin_expiry(arguments: argparse.Namespace) -> None:
    if arguments.max_days is not None:
        store.set_admin_expiry_days(
            arguments.tenant, issuing.check_admin_expiry_setting(arguments.max_days)
        )
    days = store.admin_expiry_days(arguments.tenant, issuing.ADMIN_EXPIRY_DEFAULT_DAYS)
    print(f"tenant {arguments.tenant}: a credential holding ADMIN lives at most {days} days")


def knowledge_add(arguments: argparse.Namespace) -> None:
    try:
        knowledge_type = KnowledgeType(arguments.type)
        source = KnowledgeSource(arguments.source)
    except ValueError as error:
        raise UsageError(str(error)) from error
    entry = create_entry(
        arguments.tenant,
        NewEntry(
            name=arguments.name,
            provider=arguments.provider,
            knowledge_type=knowledge_type,
            description=arguments.description,
            external_id=arguments.external_id,
            source=source,
        ),
        utc_now(),
    )
    print(f"created knowledge entry {entry.id} ({entry.name}) in tenant {arguments.tenant}")


def knowledge_edit(arguments: argparse.Namespace) -> None:
    try:
        section = Section(arguments.section)
    except ValueError as error:
        known = ", ".join(section.value for section in Section)
        raise UsageError(f"unknown section {arguments.section!r}; known: {known}") from error
    try:
        document = json.loads(Path(arguments.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read {arguments.file}: {error}") from error
    items = document.get("items") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise UsageError('the file must hold a JSON list of items, or {"items": [...]}')
    result = edit_service_section(
        arguments.tenant,
        arguments.id,
        section,
        items=items,
        editor=arguments.editor,
        note=arguments.note,
    )
    print(
        f"edited {section.value} of knowledge {result.knowledge_id} (on version "
        f"{result.based_on_version}): {result.item_count} items {', '.join(result.reference_ids)}"
    )


def knowledge_edits(arguments: argparse.Namespace) -> None:
    for found in service_edits(arguments.tenant, arguments.id):
        print(
            f"{found.section.value}\t{len(found.items)} items\tedited "
            f"{format_timestamp(found.edited_at)} by {found.edited_by}\t{found.note or ''}"
        )


def knowledge_redigest(arguments: argparse.Namespace) -> None:
    redigest(arguments.tenant, arguments.id)
    print(f"asked for a new card digest of knowledge {arguments.id}")


def add_service_edit_commands(knowledge: Any) -> None:
    """Service-side edits of service-owned sections, and the card digest."""
    edit = knowledge.add_parser(
        "edit", help="service-side edit of a service-owned section (the card prefers it)"
    )
    edit.add_argument("--tenant", type=int, required=True)
    edit.add_argument("--id", type=int, required=True, help="knowledge id")
    edit.add_argument("--section", required=True, help="e.g. spokenInstructions, links, media")
    edit.add_argument("--file", required=True, help="JSON: the section's items (or {items})")
    edit.add_argument("--editor", default=os.environ.get("USER", "operator"), help="who edits")
    edit.add_argument("--note")
    edit.set_defaults(run=knowledge_edit)
    edits = knowledge.add_parser("edits", help="list an entry's service-side edits")
    edits.add_argument("--tenant", type=int, required=True)
    edits.add_argument("--id", type=int, required=True, help="knowledge id")
    edits.set_defaults(run=knowledge_edits)
    again = knowledge.add_parser("redigest", help="ask the digest worker for the card again")
    again.add_argument("--tenant", type=int, required=True)
    again.add_argument("--id", type=int, required=True, help="knowledge id")
    again.set_defaults(run=knowledge_redigest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="psap-admin",
        description="Manage tenants, credentials, knowledge, connectors and imports.",
    )
    target = parser.add_argument_group("target (default: the running local stack)")
    target.add_argument(
        "--state-file",
        default=os.environ.get(STATE_FILE_VARIABLE) or str(STATE_FILE),
        help=f"local stack state file (default ${STATE_FILE_VARIABLE} or .local/stack.json)",
    )
    target.add_argument("--stack-name", help="a deployed CloudFormation stack")
    target.add_argument("--auth-table", help="auth table name")
    target.add_argument("--knowledge-table", help="knowledge table name")
    areas = parser.add_subparsers(dest="area", required=True)

    tenant = areas.add_parser("tenant", help="tenants").add_subparsers(dest="action", required=True)
    create = tenant.add_parser("create", help="create a tenant")
    create.add_argument("--name", required=True)
    create.set_defaults(run=tenant_create)
    tenant.add_parser("list", help="list tenants").set_defaults(run=tenant_list)
    _add_limits_commands(tenant)
    admin_offboard.add_commands(tenant, tenant_offboard, admin_offboard.run_verify)

    credential = areas.add_parser("credential", help="credentials").add_subparsers(
        dest="action", required=True
    )
    issue = credential.add_parser("issue", help="issue a credential (prints the token once)")
    issue.add_argument("--tenant", type=int, required=True)
    issue.add_argument("--kind", choices=["partner", "cad"], required=True)
    issue.add_argument("--permissions", default="", help="comma-separated, e.g. VIEW_KNOWLEDGE")
    issue.add_argument("--label", required=True, help="who or what uses it")
    issue.add_argument(
        "--expires-in-days",
        type=int,
        help=f"required: at most {issuing.MAX_EXPIRY_DAYS}, or the tenant's admin-expiry "
        "for a credential holding ADMIN",
    )
    issue.set_defaults(run=credential_issue)
    listing = credential.add_parser("list", help="list a tenant's credentials (never tokens)")
    listing.add_argument("--tenant", type=int, required=True)
    listing.set_defaults(run=credential_list)
    revoke = credential.add_parser(
        "revoke", help="revoke a credential and every credential it issued, transitively"
    )
    revoke.add_argument("--tenant", type=int, required=True)
    revoke.add_argument("--credential", required=True, help="credential id (cred-...)")
    revoke.set_defaults(run=credential_revoke)
    admin_expiry = credential.add_parser(
        "admin-expiry", help="show or set the longest life of a credential holding ADMIN"
    )
    admin_expiry.add_argument("--tenant", type=int, required=True)
    admin_expiry.add_argument(
        "--max-days",
        type=int,
        help=f"1 to {issuing.ADMIN_EXPIRY_CEILING_DAYS} "
        f"(default {issuing.ADMIN_EXPIRY_DEFAULT_DAYS})",
    )
    admin_expiry.set_defaults(run=credential_admin_expiry)

    knowledge = areas.add_parser("knowledge", help="knowledge entries").add_subparsers(
        dest="action", required=True
    )
    add = knowledge.add_parser("add", help="add an entry's metadata (no content yet)")
    add.add_argument("--tenant", type=int, required=True)
    add.add_argument("--name", required=True)
    add.add_argument("--provider", required=True)
    add.add_argument("--type", required=True, help="e.g. GUIDE_CARD")
    add.add_argument("--external-id")
    add.add_argument("--description")
    add.add_argument("--source", default="API_IMPORT", help="API_IMPORT (listed) or SERVICE")
    add.set_defaults(run=knowledge_add)
    add_service_edit_commands(knowledge)
    admin_resource_center.add_subcommands(areas)
    admin_cad.add_subcommands(areas)
    tenant_import.add_commands(areas)
    admin_audit.add_subcommands(areas)
    admin_console.add_subcommands(areas)
    return parser


def _add_limits_commands(tenant: Any) -> None:
    limits = tenant.add_parser(
        "limits", help="a tenant's request limits (requests per second and burst per budget)"
    ).add_subparsers(dest="limits_action", required=True)
    show = limits.add_parser("show", help="the tenant's budgets as API Gateway enforces them")
    show.add_argument("--tenant", type=int, required=True)
    show.set_defaults(run=limits_show)
    change = limits.add_parser("set", help="give one budget of a tenant its own limit")
    change.add_argument("--tenant", type=int, required=True)
    change.add_argument("--budget", required=True, choices=[budget.value for budget in Budget])
    change.add_argument("--rate", type=int, required=True, help="requests per second")
    change.add_argument("--burst", type=int, required=True, help="bucket size (requests)")
    change.set_defaults(run=limits_set)
    limits.add_parser(
        "sync", help="give every tenant without one its usage plan key (after an upgrade)"
    ).set_defaults(run=limits_sync)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    if getattr(arguments, "offline", False):
        return _offline(arguments)
    started = utc_now()
    code = _run(arguments)
    if admin_audit.changes_something(arguments):
        status = {0: 200, 2: 400}.get(code, 503)
        admin_audit.send_operator_record(
            admin_audit.operator_record(arguments, status, started, finished=utc_now())
        )
    return code


def _offline(arguments: argparse.Namespace) -> int:
    """A command that needs no stack (audit verify)."""
    try:
        arguments.run(arguments)
    except (admin_audit.ExportTampered, ArchiveTampered) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _run(arguments: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], None] = arguments.run
    try:
        configure_target(arguments)
        run(arguments)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except DomainError as error:
        print(f"error: {error.info}", file=sys.stderr)
        return 2
    except (StoreUnavailable, ClientError, BotoCoreError) as error:
        print(f"error: the tables could not be reached: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
