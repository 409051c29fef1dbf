"""Tenant offboarding: export everything a tenant owns to a signed archive, then purge it.

The job runs in bounded steps (a page of ids, pointers or registry entries, a day of audit
chains, 25 partitions to delete) and writes a checkpoint item after each (auth table,
TENANT#{t} / OFFBOARDING), so a crash resumes where it stopped: the kind files in the work
directory are cut back to their checkpointed sizes and the step runs again. Every read is a
Query of one of the tenant's partitions: the users' and deliveries' listings, and the
tenant's partition registry (psap.storage.partitions) for what no listing reaches (records
whose ids come from shared sequences, deleted evaluations, CAD submissions, jobs). Nothing
scans a table, nothing walks a shared sequence.

Exported partitions are recorded in `partitions.jsonl` beside the kind files; the purge
walks that list after the archive is sealed, so nothing is deleted before it is archived.
Audit records are exported and kept (retention); credentials are revoked, never deleted.

The job is here; what a step collects is in psap.offboarding.pages and .collectors, what the
purge deletes in .purge, the archive's format in .archive.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from psap.auth import issuing
from psap.auth import store as tenants
from psap.auth.credentials import tenant_limits_key
from psap.clock import format_timestamp, utc_now
from psap.config import auth_table
from psap.errors import Conflict
from psap.offboarding.archive import ArchiveFile, write_archive
from psap.offboarding.collectors import DEFAULT_AUDIT_DAYS, ORDER, STEPS
from psap.offboarding.pages import PROBE, Kind, Page
from psap.offboarding.purge import purge_target
from psap.storage.aws_errors import translated
from psap.storage.dynamodb import dynamodb, read_item

__all__ = [
    "DEFAULT_AUDIT_DAYS",
    "ORDER",
    "PROBE",
    "PURGE_STEP",
    "STEPS",
    "Kind",
    "Page",
    "Refused",
    "Report",
    "active_credentials",
    "archive_key_from",
    "offboard",
    "read_checkpoint",
    "revoke_all",
]

PURGE_STEP: Final = 25  # partitions deleted per step
_CHECKPOINT_SK: Final = "OFFBOARDING"
_PARTITIONS: Final = "partitions.jsonl"


class Refused(Conflict):
    """The tenant still has credentials in force: nothing was changed."""


@dataclass
class Report:
    tenant_id: int
    archive: Path
    exported: dict[str, int]
    deleted: dict[str, int]
    revoked: list[str]


def _checkpoint_key(tenant_id: int) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": _CHECKPOINT_SK}}


def read_checkpoint(tenant_id: int) -> dict[str, Any] | None:
    item = read_item(auth_table(), _checkpoint_key(tenant_id), "offboarding checkpoint")
    return json.loads(str(item["state"])) if item else None


def _save(tenant_id: int, state: Mapping[str, Any]) -> None:
    with translated("offboarding checkpoint"):
        dynamodb().put_item(
            TableName=auth_table(),
            Item={**_checkpoint_key(tenant_id), "state": {"S": json.dumps(state)}},
        )


def active_credentials(tenant_id: int) -> list[str]:
    now = utc_now()
    return [
        credential.credential_id
        for credential in tenants.list_credentials(tenant_id)
        if not credential.revoked and (credential.expires_at is None or now < credential.expires_at)
    ]


def revoke_all(tenant_id: int) -> list[str]:
    """Revokes every credential in force (the cascade takes what each issued)."""
    revoked: list[str] = []
    for credential_id in active_credentials(tenant_id):
        if credential_id in revoked:
            continue
        revocation = issuing.revoke(tenant_id, credential_id)
        revoked.extend(
            credential.credential_id for credential in [revocation.credential, *revocation.cascaded]
        )
    return revoked


def _file(work: Path, kind: str) -> Path:
    return work / f"{kind}.jsonl"


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as file:
        for line in lines:
            file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def _sizes(work: Path) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in work.glob("*.jsonl")}


def _cut_back(work: Path, sizes: Mapping[str, int]) -> None:
    """A crash after an append and before its checkpoint: forget the unrecorded lines."""
    for path in work.glob("*.jsonl"):
        with path.open("r+b") as file:
            file.truncate(sizes.get(path.name, 0))


def offboard(
    tenant_id: int,
    out: Path,
    key: bytes,
    *,
    force: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> Report:
    """Runs (or resumes) the tenant's offboarding to its end. `on_step` is called after
    each checkpoint with the step's name (a test injects its crash there)."""
    tenants.get_tenant(tenant_id)  # NotFound names the tenant
    state = read_checkpoint(tenant_id)
    revoked: list[str] = []
    if state is None:
        active = active_credentials(tenant_id)
        if active and not force:
            raise Refused(
                f"Tenant {tenant_id} still has {len(active)} active credential(s) "
                f"({', '.join(active)}): revoke them, or offboard with --force"
            )
        revoked = revoke_all(tenant_id)
        state = {
            "phase": "export",
            "kind": 0,
            "cursor": None,
            "sizes": {},
            "purgeLine": 0,
            "deleted": {},
            "revoked": revoked,
            "startedAt": format_timestamp(utc_now()),
            "archive": str(out),
        }
        if (work := _work(out)).exists():
            for stale in work.glob("*.jsonl"):
                stale.unlink()
        _save(tenant_id, state)
    work = _work(Path(state["archive"]))
    work.mkdir(parents=True, exist_ok=True)
    step = _stepper(tenant_id, state, work, on_step)
    while state["phase"] == "export":
        _export_step(tenant_id, state, work)
        step("export")
    if state["phase"] == "seal":
        files = [ArchiveFile(f"{kind.value}.jsonl", _file(work, kind.value)) for kind in ORDER]
        for file in files:
            file.path.touch()
        write_archive(
            Path(state["archive"]), tenant_id, files, key=key, created_at=state["startedAt"]
        )
        state["phase"] = "purge"
        step("seal")
    while state["phase"] == "purge":
        _purge_step(state, work)
        step("purge")
    if state["phase"] == "finish":
        state["revoked"] = [*state["revoked"], *revoke_all(tenant_id)]
        with translated("tenant limits"):
            dynamodb().delete_item(TableName=auth_table(), Key=tenant_limits_key(tenant_id))
        state["phase"] = "done"
        state["finishedAt"] = format_timestamp(utc_now())
        step("finish")
    exported = {kind.value: _lines(_file(work, kind.value)) for kind in ORDER if work.exists()}
    return Report(
        tenant_id=tenant_id,
        archive=Path(state["archive"]),
        exported=exported,
        deleted=dict(state["deleted"]),
        revoked=list(state["revoked"]),
    )


def _work(out: Path) -> Path:
    return out.with_name(out.name + ".work")


def _lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as file:
        return sum(1 for _ in file)


def _stepper(
    tenant_id: int, state: dict[str, Any], work: Path, on_step: Callable[[str], None] | None
) -> Callable[[str], None]:
    def step(name: str) -> None:
        state["sizes"] = _sizes(work)
        _save(tenant_id, state)
        if on_step is not None:
            on_step(name)

    return step


def _export_step(tenant_id: int, state: dict[str, Any], work: Path) -> None:
    _cut_back(work, state["sizes"])
    own, collector = STEPS[state["kind"]]
    page = collector(tenant_id, state["cursor"])
    if own is not None:
        page.add(own, page.lines)
    for kind, lines in page.elsewhere.items():
        _append(_file(work, kind.value), lines)
    _append(work / _PARTITIONS, page.purge)
    if page.cursor is None:
        state["kind"] += 1
        state["cursor"] = None
        if state["kind"] == len(STEPS):
            state["phase"] = "seal"
    else:
        state["cursor"] = page.cursor


def _purge_step(state: dict[str, Any], work: Path) -> None:
    path = work / _PARTITIONS
    targets = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    first = int(state["purgeLine"])
    seen: set[str] = set()
    for text in targets[first : first + PURGE_STEP]:
        if text in seen:
            continue
        seen.add(text)
        target = json.loads(text)
        deleted = purge_target(target)
        state["deleted"][target["kind"]] = state["deleted"].get(target["kind"], 0) + deleted
    state["purgeLine"] = first + PURGE_STEP
    if state["purgeLine"] >= len(targets):
        state["phase"] = "finish"


def archive_key_from(environment: Mapping[str, str], key_file: str | None) -> bytes | None:
    """The archive key: a key file's bytes, else $PSAP_ARCHIVE_KEY; None when neither."""
    if key_file:
        return Path(key_file).read_bytes().strip()
    value = environment.get("PSAP_ARCHIVE_KEY", "").strip()
    return value.encode() if value else None
