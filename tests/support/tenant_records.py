"""A tenant with records of every kind an archive carries: the builder the offboarding and
tenant-export tests share."""

import argparse
import json
import tarfile
from pathlib import Path
from typing import Any

from local.demo_tenant_data import TenantDataset, generate, write_jsonl
from psap import clock
from psap.audit import store as audit_store
from psap.audit.recording import AuditRecord
from psap.knowledge.models import KnowledgeType
from psap.knowledge.store import NewEntry, create_entry
from tools import admin_audit
from tools.tenant_import import import_files


def imported_tenant(
    tenant: int, base: int, folder: Path, *, users: int, evaluations: int
) -> tuple[TenantDataset, int]:
    """Users, evaluations, two incidents and their events imported as an operator would (ids
    from `base`), and one knowledge entry: the dataset and the entry's id."""
    dataset = generate(
        3, tenant, base, user_count=users, evaluation_count=evaluations, incident_count=2
    )
    import_files(write_jsonl(dataset, folder / str(tenant)), tenant)
    entry = create_entry(
        tenant,
        NewEntry(
            name=f"Chest pain {tenant}",
            provider="APCO",
            knowledge_type=KnowledgeType.GUIDE_CARD,
            external_id=f"x-{tenant}",
        ),
        clock.utc_now(),
    )
    return dataset, entry.id


def archive_members(archive: Path) -> dict[str, list[dict[str, Any]]]:
    """The JSON Lines files of a tenant archive, each as its list of records."""
    with tarfile.open(archive, "r:gz") as opened:
        found = {}
        for member in opened.getmembers():
            data = opened.extractfile(member)
            assert data is not None
            if member.name.endswith(".jsonl"):
                found[member.name] = [json.loads(line) for line in data.read().splitlines()]
    return found


def audited_operator_action(tenant: int) -> None:
    """One audit record of the tenant: an operator's credential revocation."""
    record = admin_audit.operator_record(
        argparse.Namespace(area="credential", action="revoke", tenant=tenant),
        200,
        clock.utc_now(),
        finished=clock.utc_now(),
    )
    audit_store.append_records([AuditRecord.model_validate(record)], retention_days=365)
