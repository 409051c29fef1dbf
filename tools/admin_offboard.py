"""`psap-admin tenant offboard` and `tenant verify-archive` (docs/security.md, "Tenant
offboarding").

    PSAP_ARCHIVE_KEY=... psap-admin tenant offboard --tenant 7 --out tenant-7.tar.gz [--force]
    PSAP_ARCHIVE_KEY=... psap-admin tenant verify-archive tenant-7.tar.gz

Offboard exports everything the tenant owns to one signed archive, then purges it; it is
refused while the tenant holds credentials in force, unless --force revokes them first. Run
it again after a crash: it resumes from its checkpoint.
"""

import argparse
import os
from pathlib import Path
from typing import Any

from psap.offboarding.archive import ArchiveTampered, verify_archive
from psap.offboarding.job import archive_key_from, offboard
from tools import tenant_limits


class MissingKey(Exception):
    """No archive key: printed as a usage error."""


def _key(arguments: argparse.Namespace) -> bytes:
    key = archive_key_from(os.environ, arguments.key_file)
    if not key:
        raise MissingKey("no archive key: set PSAP_ARCHIVE_KEY or pass --key-file")
    return key


def add_commands(tenant: Any, offboard_command: Any, verify_command: Any) -> None:
    leave = tenant.add_parser(
        "offboard", help="export everything a tenant owns to a signed archive, then purge it"
    )
    leave.add_argument("--tenant", type=int, required=True)
    leave.add_argument("--force", action="store_true", help="revoke its credentials first")
    leave.add_argument("--out", help="the archive (default tenant-<id>-offboarding.tar.gz)")
    leave.add_argument("--key-file", help="the archive key (default $PSAP_ARCHIVE_KEY)")
    leave.set_defaults(run=offboard_command)
    verify = tenant.add_parser("verify-archive", help="check an offboarding archive's signature")
    verify.add_argument("file")
    verify.add_argument("--key-file", help="the archive key (default $PSAP_ARCHIVE_KEY)")
    verify.set_defaults(run=verify_command, offline=True)


def run_offboard(
    arguments: argparse.Namespace, target: tenant_limits.UsagePlanTarget | None
) -> None:
    out = Path(arguments.out or f"tenant-{arguments.tenant}-offboarding.tar.gz")
    report = offboard(arguments.tenant, out, _key(arguments), force=arguments.force)
    removed = target is not None and tenant_limits.remove_usage_key(target, arguments.tenant)
    print(f"tenant {report.tenant_id} offboarded; archive {report.archive}")
    print("kind\texported\tdeleted")
    for kind, count in report.exported.items():
        deleted = "kept (retention)" if kind == "audit" else str(report.deleted.get(kind, 0))
        print(f"{kind}\t{count}\t{deleted}")
    print(f"credentials revoked: {len(report.revoked)} {' '.join(report.revoked)}".rstrip())
    print(f"usage plan key removed: {'yes' if removed else 'no (none, or no API target)'}")


def run_verify(arguments: argparse.Namespace) -> None:
    path = Path(arguments.file)
    try:
        manifest = verify_archive(path, _key(arguments))
    except MissingKey as error:
        raise ArchiveTampered(str(error)) from error
    counts = ", ".join(f"{name} {entry['records']}" for name, entry in manifest["files"].items())
    print(f"{path}: intact: tenant {manifest['tenantId']}: {counts}")
