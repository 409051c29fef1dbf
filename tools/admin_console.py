"""`psap-admin console link --tenant ID` and `console settings`: the administrators' console.

`link` prints a single-use sign-in link (the URL alone on its last line). Without
`--credential` it issues the tenant a short-lived Admin credential for it (label "console
sign-in (operator)", one day, its token discarded), so the session acts, and is audited, as a
credential the tenant can see and revoke, like every other console session.
"""

import argparse
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3

from psap.auth import issuing
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.clock import format_timestamp, utc_now
from psap.console.links import sign_in_url
from psap.console.sessions import (
    MAX_ABSOLUTE_HOURS,
    MAX_IDLE_MINUTES,
    SessionLimits,
    create_link,
    require_tenant_admin,
    session_limits,
    set_session_limits,
)

OPERATOR_CONSOLE_LABEL = "console sign-in (operator)"
# Covers the longest session (24 h at most) started from a link made now.
OPERATOR_CONSOLE_DAYS = 2


def add_subcommands(areas: Any) -> None:
    console = areas.add_parser("console", help="the administrators' console").add_subparsers(
        dest="action", required=True
    )
    link = console.add_parser("link", help="print a single-use sign-in link (last line: the URL)")
    link.add_argument("--tenant", type=int, required=True)
    link.add_argument(
        "--credential",
        help="an Admin credential of the tenant to act as (default: issue one for the console)",
    )
    link.add_argument(
        "--base-url", help="the API's base URL (default: the local stack's or the stack's ApiUrl)"
    )
    link.set_defaults(run=console_link)
    limits = console.add_parser("settings", help="show or set a tenant's console session limits")
    limits.add_argument("--tenant", type=int, required=True)
    limits.add_argument("--idle-minutes", type=int, help=f"1 to {MAX_IDLE_MINUTES} (default 30)")
    limits.add_argument("--max-hours", type=int, help=f"1 to {MAX_ABSOLUTE_HOURS} (default 12)")
    limits.set_defaults(run=console_settings)


def base_url(arguments: argparse.Namespace) -> str:
    if arguments.base_url:
        return str(arguments.base_url)
    if arguments.stack_name:
        stacks = boto3.client("cloudformation").describe_stacks(StackName=arguments.stack_name)
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks["Stacks"][0]["Outputs"]}
        return str(outputs["ApiUrl"])
    state = json.loads(Path(arguments.state_file).read_text(encoding="utf-8"))
    return str(state["baseUrl"])


def console_link(arguments: argparse.Namespace) -> None:
    now = utc_now()
    if arguments.credential:
        credential_id = require_tenant_admin(arguments.tenant, arguments.credential, now)
        acting = credential_id.credential_id
    else:
        issued = issuing.issue(
            arguments.tenant,
            issuing.CredentialRequest(
                kind=CredentialKind.PARTNER,
                permissions=frozenset({Permission.ADMIN, Permission.MANAGE_EVENTS}),
                label=OPERATOR_CONSOLE_LABEL,
                expires_in_days=OPERATOR_CONSOLE_DAYS,
            ),
            now,
            issued_by=OPERATOR,
        )
        acting = issued.credential.credential_id
        print(
            f"acting as {acting} ({OPERATOR_CONSOLE_LABEL},"
            f" expires in {OPERATOR_CONSOLE_DAYS} days)"
        )
    link = create_link(arguments.tenant, acting, now)
    print(f"single use, valid until {format_timestamp(link.expires_at)}:")
    print(sign_in_url(base_url(arguments), link.code))


def console_settings(arguments: argparse.Namespace) -> None:
    current = session_limits(arguments.tenant)
    if arguments.idle_minutes is not None or arguments.max_hours is not None:
        idle = arguments.idle_minutes or int(current.idle / timedelta(minutes=1))
        hours = arguments.max_hours or int(current.absolute / timedelta(hours=1))
        current = SessionLimits.of(idle, hours)
        set_session_limits(arguments.tenant, current)
    print(
        f"tenant {arguments.tenant}: console sessions end after "
        f"{int(current.idle / timedelta(minutes=1))} minutes idle and "
        f"{int(current.absolute / timedelta(hours=1))} hours in all"
    )
