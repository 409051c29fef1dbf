"""Connectors (admin side) on moto: secrets in Secrets Manager only, shown once, rotation with
an optional lead time and an overlap window during which receivers accept either secret."""

import json
from datetime import timedelta

import pytest

from psap import clock
from psap.errors import InvalidInput, NotFound
from psap.webhooks import secrets as vault
from psap.webhooks import store
from psap.webhooks.connectors import (
    ConnectorChanges,
    ConnectorWithSecret,
    NewConnector,
    RotationSchedule,
    create_connector,
    list_connectors,
    rotate_secret,
    update_connector,
)
from psap.webhooks.models import ConnectorStatus
from psap.webhooks.signing import SignedMessage, SigningProfile, signature_headers
from receiver_kit.psap_webhooks import VerificationError, verify_delivery
from tests.support.cad import OTHER_TENANT, TENANT, table_items
from tests.support.clock import Clock
from tests.support.webhooks import BEARER, add_connector

URL = "https://cad.riverside.example/webhooks/psap"


def create(url: str = URL, **options: object) -> ConnectorWithSecret:
    arguments: dict[str, object] = {
        "name": "Riverside CAD",
        "url": url,
        "profile": SigningProfile.BASELINE,
        "event_types": None,
        "bearer_credential": BEARER,
        "local_dev": False,
    }
    arguments.update(options)
    return create_connector(TENANT, NewConnector(**arguments), now=clock.utc_now())  # type: ignore[arg-type]


def signs_for(connector_id: str, secret: str | list[str], at_seconds_from_now: float = 0) -> bool:
    """Whether a delivery signed now (plus an offset) verifies with `secret` (or a list)."""
    connector = store.get_connector(TENANT, connector_id)
    moment = clock.utc_now() + timedelta(seconds=at_seconds_from_now)
    secrets = vault.read_secret(connector.secret_name, fresh=True)
    stamp = int(moment.timestamp())
    headers = signature_headers(
        connector.profile,
        secrets.active_signing(moment),
        SignedMessage("dlv-1", timestamp=stamp, body=b"{}", event_type="x"),
    )
    try:
        verify_delivery(secret, headers, b"{}", now=stamp)
    except VerificationError:
        return False
    return True


def test_create_shows_a_32_byte_secret_once_and_keeps_it_only_in_secrets_manager(
    cad_aws: None,
) -> None:
    created = create()
    assert created.signing_secret.startswith("psapsec_")
    assert len(created.signing_secret) >= len("psapsec_") + 43  # 32 bytes, base64url
    secrets = vault.read_secret(created.connector.secret_name, fresh=True)
    assert len(secrets.signing[0].raw) == 32
    assert secrets.bearer_credential == BEARER
    everything = json.dumps(table_items(), default=str)
    assert created.signing_secret not in everything
    assert BEARER not in everything
    assert created.connector.secret_name.endswith(
        f"/tenants/{TENANT}/connectors/{created.connector.connector_id}"
    )


def test_the_connector_json_never_shows_a_secret(cad_aws: None) -> None:
    created = create()
    shown = created.connector.model_dump_json(by_alias=True)
    assert created.signing_secret not in shown
    assert BEARER not in shown
    assert "secretName" in shown


def test_list_shows_the_tenants_connectors_only(cad_aws: None) -> None:
    mine = create()
    create_connector(
        OTHER_TENANT,
        NewConnector(
            name="Other",
            url=URL,
            profile=SigningProfile.BASELINE,
            event_types=None,
            bearer_credential=BEARER,
            local_dev=False,
        ),
        now=clock.utc_now(),
    )
    assert [c.connector_id for c in list_connectors(TENANT)] == [mine.connector.connector_id]


@pytest.mark.parametrize(
    "url",
    [
        "http://cad.example.com/hook",
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://2130706433/",
        "https://user:pass@cad.example.com/",
    ],
)
def test_unsafe_urls_are_refused(cad_aws: None, url: str) -> None:
    with pytest.raises(InvalidInput):
        create(url)


def test_local_dev_mode_allows_http_on_loopback_only(cad_aws: None) -> None:
    assert create("http://127.0.0.1:8099/hook", local_dev=True).connector.local_dev
    with pytest.raises(InvalidInput):
        create("http://10.0.0.5/hook", local_dev=True)


@pytest.mark.spec("webhook-profile-rule-1", "auth-credential-per-direction")
def test_baseline_needs_the_bearer_credential_the_cad_issued(cad_aws: None) -> None:
    with pytest.raises(InvalidInput):
        create(bearer_credential=None)
    assert create(profile=SigningProfile.STANDARD_WEBHOOKS, bearer_credential=None)


def test_unknown_event_types_are_refused(cad_aws: None) -> None:
    with pytest.raises(InvalidInput):
        create(event_types=["incident.exploded"])


def test_rotation_signs_with_the_new_secret_only_and_a_receiver_holding_both_accepts(
    cad_aws: None, fake_clock: Clock
) -> None:
    created = create()
    connector_id = created.connector.connector_id
    rotated = rotate_secret(
        TENANT, connector_id, RotationSchedule(timedelta(hours=24)), now=clock.utc_now()
    )
    assert rotated.signing_secret != created.signing_secret
    both = [rotated.signing_secret, created.signing_secret]
    # During the overlap the service signs with the new secret only (one digest) ...
    assert signs_for(connector_id, rotated.signing_secret)
    assert not signs_for(connector_id, created.signing_secret)
    # ... which the receiver that holds both accepts, during the overlap and after it
    assert signs_for(connector_id, both)
    fake_clock.advance(24 * 3600 + 1)
    assert signs_for(connector_id, both)
    assert signs_for(connector_id, rotated.signing_secret)
    secrets_after = vault.read_secret(
        store.get_connector(TENANT, connector_id).secret_name, fresh=True
    )
    assert len(secrets_after.active_signing(clock.utc_now())) == 1


def test_a_rotation_with_a_lead_time_keeps_the_old_secret_signing_until_activation(
    cad_aws: None, fake_clock: Clock
) -> None:
    # Given a rotation whose new secret signs from one hour on (the CAD adds it meanwhile)
    created = create()
    connector_id = created.connector.connector_id
    rotated = rotate_secret(
        TENANT,
        connector_id,
        RotationSchedule(timedelta(hours=24), lead=timedelta(hours=1)),
        now=clock.utc_now(),
    )
    # Then a receiver that has not switched yet keeps accepting until the activation time
    assert signs_for(connector_id, created.signing_secret)
    assert not signs_for(connector_id, rotated.signing_secret)
    fake_clock.advance(3600)
    assert signs_for(connector_id, rotated.signing_secret)
    assert not signs_for(connector_id, created.signing_secret)
    # And one that holds both never misses a delivery
    assert signs_for(connector_id, [rotated.signing_secret, created.signing_secret])


def test_rotation_refuses_a_lead_time_or_overlap_out_of_range(cad_aws: None) -> None:
    connector_id = create().connector.connector_id
    for overlap, lead in ((timedelta(days=31), timedelta(0)), (timedelta(0), timedelta(days=-1))):
        with pytest.raises(InvalidInput):
            rotate_secret(
                TENANT, connector_id, RotationSchedule(overlap, lead), now=clock.utc_now()
            )


def test_rotation_without_overlap_retires_the_old_secret_at_once(
    cad_aws: None, fake_clock: Clock
) -> None:
    created = create()
    connector_id = created.connector.connector_id
    rotated = rotate_secret(
        TENANT, connector_id, RotationSchedule(timedelta(0)), now=clock.utc_now()
    )
    assert not signs_for(connector_id, created.signing_secret)
    assert signs_for(connector_id, rotated.signing_secret)


def test_changing_the_profile_issues_a_secret_in_the_new_form(cad_aws: None) -> None:
    created = create()
    changed = update_connector(
        TENANT,
        created.connector.connector_id,
        ConnectorChanges(profile=SigningProfile.STANDARD_WEBHOOKS),
        now=clock.utc_now(),
    )
    assert isinstance(changed, ConnectorWithSecret)
    assert changed.signing_secret.startswith("whsec_")
    assert changed.connector.profile is SigningProfile.STANDARD_WEBHOOKS


def test_update_changes_url_and_filter_and_keeps_the_secret(cad_aws: None) -> None:
    created = create()
    updated = update_connector(
        TENANT,
        created.connector.connector_id,
        ConnectorChanges(
            url="https://cad2.riverside.example/hook",
            event_types=["incident.rejected"],
            bearer_credential="cad2-issued-token",
        ),
        now=clock.utc_now(),
    )
    assert not isinstance(updated, ConnectorWithSecret)
    stored = store.get_connector(TENANT, created.connector.connector_id)
    assert stored.url == "https://cad2.riverside.example/hook"
    assert stored.event_types == ["incident.rejected"]
    assert signs_for(stored.connector_id, created.signing_secret)


def test_disable_and_enable(cad_aws: None) -> None:
    created = create()
    connector_id = created.connector.connector_id
    update_connector(
        TENANT, connector_id, ConnectorChanges(status=ConnectorStatus.DISABLED), now=clock.utc_now()
    )
    assert not store.get_connector(TENANT, connector_id).active
    update_connector(
        TENANT, connector_id, ConnectorChanges(status=ConnectorStatus.ACTIVE), now=clock.utc_now()
    )
    assert store.get_connector(TENANT, connector_id).active


@pytest.mark.spec("service-tenant-from-credential")
def test_another_tenants_connector_is_not_found(cad_aws: None) -> None:
    created = add_connector("http://127.0.0.1:9/")
    with pytest.raises(NotFound):
        store.get_connector(OTHER_TENANT, created.connector.connector_id)


def test_the_admin_cli_creates_lists_rotates_and_tests_a_connector(
    cad_aws: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from psap.config import auth_table, knowledge_table
    from tools import admin

    target = ["--auth-table", auth_table(), "--knowledge-table", knowledge_table()]
    monkeypatch.setenv("CAD_TOKEN", BEARER)
    # Create: the bearer credential comes from a variable, the secret is printed once
    create = ["connector", "create", "--tenant", str(TENANT), "--name", "CLI CAD", "--url", URL]
    assert admin.main([*target, *create, "--bearer-env", "CAD_TOKEN"]) == 0
    created = capsys.readouterr().out
    assert BEARER not in created
    secret = created.strip().splitlines()[-1]
    assert secret.startswith("psapsec_")
    (connector,) = list_connectors(TENANT)
    connector_id = connector.connector_id
    # List never shows a secret
    assert admin.main([*target, "connector", "list", "--tenant", str(TENANT)]) == 0
    listed = capsys.readouterr().out
    assert connector_id in listed
    assert secret not in listed
    # Rotate prints the new secret; test queues a connector.test delivery
    rotate = ["connector", "rotate-secret", "--tenant", str(TENANT), "--connector", connector_id]
    assert admin.main([*target, *rotate]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] != secret
    test = ["connector", "test", "--tenant", str(TENANT), "--connector", connector_id]
    assert admin.main([*target, *test]) == 0
    deliveries = ["connector", "deliveries", "--tenant", str(TENANT), "--connector", connector_id]
    assert admin.main([*target, *deliveries]) == 0
    assert "connector.test" in capsys.readouterr().out
    # A refused URL is a clean error
    bad = [
        "connector",
        "create",
        "--tenant",
        str(TENANT),
        "--name",
        "x",
        "--url",
        "https://10.0.0.1/",
    ]
    assert admin.main([*target, *bad, "--bearer-env", "CAD_TOKEN"]) == 2
