"""`psap-admin connector ...`: a tenant's CAD connectors and their deliveries.

    connector create --tenant 1 --name "Riverside CAD" --url https://cad.example/psap \\
        --bearer-env CAD_TOKEN [--profile baseline] [--event-types incident.accepted,...]
        [--local-dev]   # http on loopback, where the stack allows it (the local stack does)
    connector list --tenant 1
    connector update --tenant 1 --connector con-... [--url ...] [--profile ...] ...
    connector disable|enable --tenant 1 --connector con-...
    connector rotate-secret --tenant 1 --connector con-... [--activate-in-hours 24]
        [--overlap-hours 24]                                 # docs/webhooks.md, rotation
    connector test --tenant 1 --connector con-...          # sends a connector.test update
    connector deliveries --tenant 1 --connector con-... [--dead] [--limit 20] \\
        [--status FAILED] [--event-type incident.accepted] [--since <ts>] [--cursor ...]
    connector delivery --tenant 1 --delivery dlv-...         # with every attempt
    connector replay --tenant 1 --delivery dlv-...           # same id, same body
    connector recover --tenant 1 --connector con-... --since 2026-11-23T00:00:00Z

The bearer credential the CAD issued is read from an environment variable, a file or
standard input, never from the command line (where shell history and `ps` would keep it).
A signing secret is printed once, when it is made; nothing else ever shows it.
"""

import argparse
import json
import os
import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from psap.clock import format_timestamp, utc_now
from psap.config import Settings
from psap.errors import InvalidInput
from psap.webhooks import administration, store
from psap.webhooks.connectors import (
    DEFAULT_OVERLAP,
    ConnectorChanges,
    ConnectorWithSecret,
    NewConnector,
    RotationSchedule,
    create_connector,
    rotate_secret,
    update_connector,
)
from psap.webhooks.deliveries import recover, replay
from psap.webhooks.jobs import latest_job
from psap.webhooks.models import (
    Connector,
    ConnectorStatus,
    Delivery,
    DeliveryJobState,
    DeliveryStatus,
)
from psap.webhooks.signing import SigningProfile


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _bearer(arguments: argparse.Namespace) -> str | None:
    if getattr(arguments, "bearer_env", None):
        value = os.environ.get(arguments.bearer_env, "")
        if not value:
            raise InvalidInput(f"environment variable {arguments.bearer_env} is empty")
        return value.strip()
    if getattr(arguments, "bearer_file", None):
        return Path(arguments.bearer_file).read_text(encoding="utf-8").strip()
    if getattr(arguments, "bearer_stdin", False):
        return sys.stdin.readline().strip()
    return None


def _event_types(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def _show_connector(connector: Connector) -> None:
    _print_json(connector.model_dump(mode="json", by_alias=True))


def _show_secret(result: ConnectorWithSecret) -> None:
    print(f"signing secret for {result.connector.connector_id} (shown once, give it to the CAD):")
    print(result.signing_secret)


def _local_dev_hint(error: InvalidInput, url: str | None, local_dev: bool | None) -> InvalidInput:
    """An http URL refused without --local-dev: say which option the local stack needs."""
    if local_dev or not (url or "").strip().lower().startswith("http://"):
        return error
    return InvalidInput(
        f"{error.info}; for a receiver on this machine (the local stack's sample CAD receiver)"
        " add --local-dev, which allows http on loopback where the stack permits it"
        " (WebhookLocalDev=true: the local stack, never a deployed one)"
    )


def connector_create(arguments: argparse.Namespace) -> None:
    try:
        created = create_connector(
            arguments.tenant,
            NewConnector(
                name=arguments.name,
                url=arguments.url,
                profile=SigningProfile(arguments.profile),
                event_types=_event_types(arguments.event_types),
                bearer_credential=_bearer(arguments),
                local_dev=arguments.local_dev,
            ),
            now=utc_now(),
        )
    except InvalidInput as error:
        raise _local_dev_hint(error, arguments.url, arguments.local_dev) from error
    _show_connector(created.connector)
    _show_secret(created)


def connector_list(arguments: argparse.Namespace) -> None:
    for connector in store.list_connectors(arguments.tenant):
        types = ",".join(connector.event_types) if connector.event_types is not None else "all"
        print(
            f"{connector.connector_id}\t{connector.status}\t{connector.profile}\t{types}\t"
            f"{connector.url}\t{connector.name}"
        )


def connector_update(arguments: argparse.Namespace) -> None:
    try:
        result = update_connector(
            arguments.tenant,
            arguments.connector,
            ConnectorChanges(
                name=arguments.name,
                url=arguments.url,
                profile=SigningProfile(arguments.profile) if arguments.profile else None,
                event_types=_event_types(arguments.event_types),
                all_event_types=arguments.all_event_types,
                bearer_credential=_bearer(arguments),
                local_dev=arguments.local_dev,
            ),
            now=utc_now(),
        )
    except InvalidInput as error:
        raise _local_dev_hint(error, arguments.url, arguments.local_dev) from error
    if isinstance(result, ConnectorWithSecret):
        _show_connector(result.connector)
        _show_secret(result)
    else:
        _show_connector(result)


def _set_status(arguments: argparse.Namespace, status: ConnectorStatus) -> None:
    updated = update_connector(
        arguments.tenant, arguments.connector, ConnectorChanges(status=status), now=utc_now()
    )
    connector = updated.connector if isinstance(updated, ConnectorWithSecret) else updated
    print(f"{connector.connector_id} is {connector.status}")


def connector_disable(arguments: argparse.Namespace) -> None:
    _set_status(arguments, ConnectorStatus.DISABLED)


def connector_enable(arguments: argparse.Namespace) -> None:
    _set_status(arguments, ConnectorStatus.ACTIVE)
    job = latest_job(arguments.tenant, arguments.connector)
    if job is not None and job.state is DeliveryJobState.RUNNING:
        print(f"its held deliveries are being sent, oldest first, by {job.job_id}")


def connector_rotate(arguments: argparse.Namespace) -> None:
    now = utc_now()
    lead = timedelta(hours=arguments.activate_in_hours)
    overlap = timedelta(hours=arguments.overlap_hours)
    rotated = rotate_secret(
        arguments.tenant, arguments.connector, RotationSchedule(overlap, lead), now=now
    )
    activation = now + lead
    print(
        f"the new secret signs from {format_timestamp(activation)} (the previous one until "
        f"then); the CAD should accept both until {format_timestamp(activation + overlap)}"
    )
    _show_secret(rotated)


def connector_test(arguments: argparse.Namespace) -> None:
    delivery_id = administration.send_test(arguments.tenant, arguments.connector, utc_now())
    print(
        f"queued {delivery_id}; see it with: psap-admin connector delivery"
        f" --tenant {arguments.tenant} --delivery {delivery_id}"
    )


def _delivery_line(delivery: Delivery) -> str:
    when = delivery.next_attempt_at.isoformat() if delivery.next_attempt_at else "-"
    return (
        f"{delivery.delivery_id}\t{delivery.event_type}\t{delivery.status}\t"
        f"attempts {delivery.attempt_count}\tlast {delivery.last_status_code or '-'}\t"
        f"next {when}\tcreated {delivery.created_at.isoformat()}"
    )


def connector_deliveries(arguments: argparse.Namespace) -> None:
    if arguments.dead:
        deliveries, before = store.list_dead(
            arguments.tenant, arguments.connector, arguments.limit, before=arguments.before
        )
        more = f"--dead --before '{before}'" if before else None
    else:
        deliveries, cursor = administration.delivery_log(
            arguments.tenant,
            arguments.connector,
            limit=arguments.limit,
            cursor=arguments.cursor,
            filters=administration.DeliveryFilters(
                status=DeliveryStatus(arguments.status) if arguments.status else None,
                event_type=arguments.event_type,
                since=administration.parse_since(arguments.since) if arguments.since else None,
            ),
        )
        more = f"--cursor {cursor}" if cursor else None
    for delivery in deliveries:
        print(_delivery_line(delivery))
    if more:
        print(f"more: {more}")


def connector_delivery(arguments: argparse.Namespace) -> None:
    delivery, attempts = administration.delivery_detail(arguments.tenant, arguments.delivery)
    _print_json(
        {
            **delivery.model_dump(mode="json", by_alias=True),
            "body": delivery.body.decode("utf-8", errors="replace"),
            "attempts": [attempt.model_dump(mode="json", by_alias=True) for attempt in attempts],
        }
    )


def connector_replay(arguments: argparse.Namespace) -> None:
    delivery = replay(arguments.tenant, arguments.delivery, utc_now())
    print(f"{delivery.delivery_id} queued again (same id, same body)")


def connector_recover(arguments: argparse.Namespace) -> None:
    since = administration.parse_since(arguments.since)
    recovered = recover(arguments.tenant, arguments.connector, since, now=utc_now())
    for delivery_id in recovered:
        print(delivery_id)
    print(f"{len(recovered)} dead-letter or held deliveries queued again, oldest first")


def _tenant(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", type=int, required=True)


def _connector(parser: argparse.ArgumentParser) -> None:
    _tenant(parser)
    parser.add_argument("--connector", required=True, help="connector id (con-...)")


def _bearer_options(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--bearer-env", help="read the CAD's bearer credential from this variable")
    source.add_argument("--bearer-file", help="read the CAD's bearer credential from this file")
    source.add_argument("--bearer-stdin", action="store_true", help="read it from stdin")


def add_subcommands(areas: Any) -> None:
    connector = areas.add_parser("connector", help="CAD connectors and webhook deliveries")
    actions = connector.add_subparsers(dest="action", required=True)
    profiles = [profile.value for profile in SigningProfile]

    create = actions.add_parser("create", help="create a connector (prints its secret once)")
    _tenant(create)
    create.add_argument("--name", required=True)
    create.add_argument(
        "--url", required=True, help="https URL of the CAD's endpoint (http with --local-dev)"
    )
    create.add_argument("--profile", choices=profiles, default=SigningProfile.BASELINE.value)
    create.add_argument("--event-types", help="comma-separated; default: every kind")
    create.add_argument(
        "--local-dev",
        action="store_true",
        help="allow http on loopback (the local stack's sample receiver; refused when deployed)",
    )
    _bearer_options(create)
    create.set_defaults(run=connector_create)

    listing = actions.add_parser("list", help="list a tenant's connectors")
    _tenant(listing)
    listing.set_defaults(run=connector_list)

    update = actions.add_parser("update", help="change a connector")
    _connector(update)
    update.add_argument("--name")
    update.add_argument("--url")
    update.add_argument("--profile", choices=profiles, help="a new profile issues a new secret")
    kinds = update.add_mutually_exclusive_group()
    kinds.add_argument("--event-types", help="comma-separated")
    kinds.add_argument("--all-event-types", action="store_true")
    dev = update.add_mutually_exclusive_group()
    dev.add_argument("--local-dev", dest="local_dev", action="store_true", default=None)
    dev.add_argument("--no-local-dev", dest="local_dev", action="store_false")
    _bearer_options(update)
    update.set_defaults(run=connector_update)

    for name, run, text in (
        ("disable", connector_disable, "stop sending: updates are held, not lost"),
        ("enable", connector_enable, "send again, held deliveries first (clears a 410 flag)"),
    ):
        command = actions.add_parser(name, help=text)
        _connector(command)
        command.set_defaults(run=run)

    rotate = actions.add_parser("rotate-secret", help="new signing secret, old one overlaps")
    _connector(rotate)
    rotate.add_argument(
        "--activate-in-hours",
        type=float,
        default=0.0,
        help="the old secret keeps signing this long, while the CAD adds the new one",
    )
    rotate.add_argument(
        "--overlap-hours",
        type=float,
        default=DEFAULT_OVERLAP.total_seconds() / 3600,
        help="after activation, how long the old secret stays valid (CAD accepts either)",
    )
    rotate.set_defaults(run=connector_rotate)

    _add_delivery_commands(actions)


def _add_delivery_commands(actions: Any) -> None:
    test = actions.add_parser("test", help="send a connector.test update")
    _connector(test)
    test.set_defaults(run=connector_test)

    deliveries = actions.add_parser("deliveries", help="a connector's deliveries, newest first")
    _connector(deliveries)
    deliveries.add_argument("--dead", action="store_true", help="dead-letter deliveries only")
    deliveries.add_argument("--limit", type=int, default=20)
    deliveries.add_argument("--before", help="with --dead: the position a previous page printed")
    deliveries.add_argument("--cursor", help="the cursor a previous page printed")
    deliveries.add_argument("--status", choices=[status.value for status in DeliveryStatus])
    deliveries.add_argument("--event-type", help="e.g. incident.accepted")
    deliveries.add_argument("--since", help="created at or after, ISO 8601")
    deliveries.set_defaults(run=connector_deliveries)

    delivery = actions.add_parser("delivery", help="one delivery with every attempt")
    _tenant(delivery)
    delivery.add_argument("--delivery", required=True, help="delivery id (dlv-...)")
    delivery.set_defaults(run=connector_delivery)

    again = actions.add_parser("replay", help="send one delivery again (same id and body)")
    _tenant(again)
    again.add_argument("--delivery", required=True, help="delivery id (dlv-...)")
    again.set_defaults(run=connector_replay)

    rescue = actions.add_parser(
        "recover", help="re-send dead-letter and held deliveries since a time, in order"
    )
    _connector(rescue)
    rescue.add_argument("--since", required=True, help="ISO 8601, e.g. 2026-11-23T00:00:00Z")
    rescue.set_defaults(run=connector_recover)


def settings_from_outputs(base: Settings, outputs: dict[str, str]) -> Settings:
    """The CAD part of a deployed stack's target (tools.admin --stack-name)."""
    return replace(
        base,
        cad_table=outputs.get("CadTableName") or None,
        webhook_queue_url=outputs.get("WebhookQueueUrl") or None,
        delivery_job_queue_url=outputs.get("DeliveryJobQueueUrl") or None,
        connector_secret_prefix=outputs.get("ConnectorSecretPrefix") or None,
    )


def settings_from_state(base: Settings, state: dict[str, Any]) -> Settings:
    """The CAD part of the local stack's target (.local/stack.json)."""
    resources = state.get("resources", {})
    return replace(
        base,
        cad_table=resources.get("CadTable") or None,
        webhook_queue_url=resources.get("WebhookQueue") or None,
        delivery_job_queue_url=resources.get("DeliveryJobQueue") or None,
        connector_secret_prefix=f"{state.get('stackName', 'psap-local')}/cad-connectors",
    )
