"""Settings: read once, typed, frozen; a missing or malformed variable is named."""

import argparse
import dataclasses
import json
import os
from pathlib import Path

import pytest

from psap import config
from psap.config import AwsTarget, ConfigurationError, Settings
from tools.admin import target_settings


def test_a_missing_table_name_is_refused_naming_the_variable() -> None:
    config.configure(Settings.from_environment({"AUTH_TABLE": "  "}))
    with pytest.raises(ConfigurationError, match=r"^environment variable AUTH_TABLE is not set$"):
        config.auth_table()
    with pytest.raises(ConfigurationError, match="TENANT_DATA_TABLE"):
        config.tenant_data_table()


@pytest.mark.parametrize(
    ("variable", "text"),
    [
        ("AUDIT_RETENTION_DAYS", "ten"),
        ("CAD_INTAKE_MAX_RECEIVES", "5.5"),
        ("LICENSE_CACHE_SECONDS", "soon"),
    ],
)
def test_a_malformed_number_is_refused_naming_the_variable(variable: str, text: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^environment variable {variable} is not"):
        Settings.from_environment({variable: text})


def test_values_are_typed_with_the_template_defaults() -> None:
    read = Settings.from_environment(
        {
            "AUTH_TABLE": " psap-auth ",
            "AUDIT_RETENTION_DAYS": "400",
            "WEBHOOK_LOCAL_DEV": "TRUE",
            "POWERTOOLS_TRACE_DISABLED": "1",
        }
    )
    assert read.auth_table == "psap-auth"
    assert read.audit_retention_days == 400
    assert read.webhook_local_dev and read.powertools_trace_disabled
    assert read.cad_intake_max_receives == 5
    assert (read.index_refresh_seconds, read.license_cache_seconds) == (30.0, 10.0)
    assert read.credential_kind == "partner"
    assert not read.local_aws
    # Only "true" allows local-dev connectors, as before.
    assert not Settings.from_environment({"WEBHOOK_LOCAL_DEV": "1"}).webhook_local_dev


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().auth_table = "other"  # type: ignore[misc]


def test_the_environment_is_read_once_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_TABLE", "first")
    assert config.auth_table() == "first"
    os.environ["AUTH_TABLE"] = "second"  # not through monkeypatch: no reset
    assert config.auth_table() == "first"
    config.reset_settings()
    assert config.auth_table() == "second"


def test_only_a_configured_target_changes_how_clients_are_made() -> None:
    config.configure(Settings())
    assert config.client_options() == {}
    target = AwsTarget("http://127.0.0.1:4566", "us-east-1", "operator", "secret")
    config.configure(Settings(aws_target=target))
    assert config.client_options() == {
        "endpoint_url": "http://127.0.0.1:4566",
        "region_name": "us-east-1",
        "aws_access_key_id": "operator",
        "aws_secret_access_key": "secret",
    }


def test_the_admin_cli_targets_the_local_stack_without_writing_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    state = {
        "awsEndpointUrl": "http://127.0.0.1:4566",
        "awsAccessKeyId": "operator",
        "awsSecretAccessKey": "secret",
        "stackName": "psap-local",
        "resources": {
            "AuthTable": "local-auth",
            "KnowledgeTable": "local-knowledge",
            "TenantDataTable": "local-tenant-data",
            "CadTable": "local-cad",
        },
    }
    state_file = tmp_path / "stack.json"
    state_file.write_text(json.dumps(state), encoding="utf-8")
    arguments = argparse.Namespace(
        stack_name=None, auth_table=None, knowledge_table=None, state_file=str(state_file)
    )
    before = dict(os.environ)
    chosen = target_settings(arguments, Settings(media_bucket="kept"))
    assert dict(os.environ) == before
    assert chosen.aws_target == AwsTarget(
        "http://127.0.0.1:4566", "us-east-1", "operator", "secret"
    )
    assert (chosen.auth_table, chosen.tenant_data_table, chosen.cad_table) == (
        "local-auth",
        "local-tenant-data",
        "local-cad",
    )
    assert chosen.connector_secret_prefix == "psap-local/cad-connectors"
    assert chosen.knowledge_content_bucket is None  # not in this state: refused when used
    assert chosen.media_bucket == "kept" and chosen.local_aws
