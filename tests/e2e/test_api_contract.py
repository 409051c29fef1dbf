"""The OpenAPI document is the contract, checked against the running local stack:

- schemathesis (pinned in requirements-dev.txt) runs every operation of the served document
  with every check, two fixed seeds and twenty examples per operation, and must find 0 failures;
- a Python client generated from the served document by openapi-python-client (pinned)
  creates a knowledge entry with media, appends a version and reads it back.

The run uses a tenant of its own, made with the operator's CLI against the running stack: its
stateful phase issues and revokes credentials and changes connectors, which must never touch
the demo tenants every other e2e test reads (a revoked demo key would make them 401).

Semantic rules that JSON Schema cannot state (a range's two ends, a link target that must
exist, a file's content) answer 400 ErrorInfo; for the operations that have such rules the
positive-data check also accepts 400, each listed below with its rule. Every other check
applies unchanged to every operation.
"""

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from psap.auth.permissions import Permission
from tests.support.stack import psap_admin

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
MAX_EXAMPLES = 20  # per operation and phase
# Two seeds: the first runs every phase; the second only the phases a seed changes (fuzzing
# and stateful: the examples and coverage phases are derived from the document alone).
RUNS = {1: "examples,coverage,fuzzing,stateful", 14: "fuzzing,stateful"}
# operationId -> the rule that makes some schema-valid requests a 400 (see the docstring).
SEMANTIC_RULES = {
    "createKnowledge": "link targets must exist; referenceMedia must name the request's media",
    "appendKnowledgeVersion": "apiControl must equal the create's; referenceIds must exist",
    "createAuditExport": "`from` < `to` <= `from` + 31 days",
    "listEvaluations": "`from` <= `to`",
    "uploadRadioTraffic": "eventId xor incidentNumber; the body must be an SRT file",
    "uploadRadioTrafficJson": "eventId xor incidentNumber; contentBase64 must be an SRT file",
    "uploadIncidents": "the file must be CSV or JSON Lines incidents",
    "submitCadIncident": "`data` must be an incident document (EIDO or flat)",
    "recoverDeliveries": "`since` must not be in the future",
    "createConnector": "the URL's port must be 443 or 8443 (any, on loopback, in local-dev only)",
    "updateConnector": "the same port rule; moving the URL needs the bearer credential again",
}


def _issued_token(output: str) -> str:
    lines = output.splitlines()
    return lines[lines.index("token (shown once, store it now):") + 1].strip()


def _contract_credentials(state_file: Path) -> dict[str, str]:
    """A tenant of the contract run's own, with an admin credential holding every permission
    (as the demo admin does) and a CAD key: {"admin": token, "cad": token}."""
    created = psap_admin(state_file, "tenant", "create", "--name", "API contract run")
    found = re.search(r"created tenant (\d+) ", created)
    assert found, created
    tenant = found.group(1)
    every = ",".join(sorted(permission.value for permission in Permission))
    admin = psap_admin(
        state_file,
        *("credential", "issue", "--tenant", tenant, "--kind", "partner"),
        *("--permissions", every, "--label", "API contract run (admin)"),
        *("--expires-in-days", "30"),
    )
    cad = psap_admin(
        state_file,
        *("credential", "issue", "--tenant", tenant, "--kind", "cad"),
        *("--label", "API contract run (CAD)", "--expires-in-days", "30"),
    )
    # The run sends far more than a tenant's default budgets allow (docs/limits.md): the
    # operator gives this tenant its own, as it would a partner's load test; what a spent
    # budget answers is tests/e2e/test_request_limits.py's subject.
    for budget in ("reads", "writes", "search", "bulk", "admin", "cad"):
        psap_admin(
            state_file,
            *("tenant", "limits", "set", "--tenant", tenant, "--budget", budget),
            *("--rate", "5000", "--burst", "5000"),
        )
    # The run may revoke only this one: a revoked admin credential would turn every later case
    # into a 401 that tests nothing (and revoke, transitively, all the run issued).
    revocable = psap_admin(
        state_file,
        *("credential", "issue", "--tenant", tenant, "--kind", "partner"),
        *("--permissions", "VIEW_KNOWLEDGE", "--label", "API contract run (revocable)"),
        *("--expires-in-days", "30"),
    )
    found_id = re.search(r"\b(cred-[0-9a-f]+)\b", revocable)
    assert found_id, revocable
    return {
        "admin": _issued_token(admin),
        "cad": _issued_token(cad),
        "revocable": found_id.group(1),
    }


def _config(credentials: dict[str, str], folder: Path, seed: int) -> Path:
    lines = [
        f"seed = {seed}",
        "workers = 2",
        f'hooks = "{Path(__file__).with_name("contract_hooks.py")}"',
        # API Gateway gives an integration 29 s, so an answer within it is an answer; the
        # 10 s defaults measure how busy this machine is (a cold worker on loaded cores),
        # not the service. What is slow is the benches' subject (make bench).
        "request-timeout = 30",
        f'headers = {{ Authorization = "Bearer {credentials["admin"]}" }}',
        "[checks]",
        "enabled = true",
        "max_response_time = 29",
        "[generation]",
        f"max-examples = {MAX_EXAMPLES}",
        # Links come from Location headers only: field-name analysis chained a delivery's
        # CloudEvents id (then `eventId`, now `cloudEventId`) into the events resource's
        # integer `eventId`; the rename is checked by tests/unit/test_openapi.py.
        "[phases.stateful.inference]",
        'algorithms = ["location-headers"]',
        "[[operations]]",
        'include-operation-id = "submitCadIncident"',
        f'headers = {{ Authorization = "Bearer {credentials["cad"]}" }}',
        "[[operations]]",
        'include-operation-id = "revokeCredential"',
        f'parameters = {{ credentialId = "{credentials["revocable"]}" }}',
    ]
    for operation_id in SEMANTIC_RULES:
        lines += [
            "[[operations]]",
            f'include-operation-id = "{operation_id}"',
            "[operations.checks.positive_data_acceptance]",
            'expected-statuses = ["2xx", "400", "401", "403", "404", "409"]',
        ]
    path = folder / "schemathesis.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# Twenty examples of each of 40 operations over HTTP: minutes on a busy 2-core machine.
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("seed", "phases"), RUNS.items(), ids=[f"seed{seed}" for seed in RUNS])
def test_schemathesis_finds_no_failure_in_any_operation(
    stack: dict[str, Any],
    stack_state_file: Path,
    tmp_path: Path,
    seed: int,
    phases: str,
) -> None:
    # Given the served document and the credentials of a tenant of the run's own
    # (each run its own: the first run's stateful phase changes connectors and credentials)
    credentials = _contract_credentials(stack_state_file)
    document = f"{stack['baseUrl']}/api/v1/external/openapi.json"
    junit = tmp_path / "schemathesis.xml"
    # When schemathesis runs every operation with every check
    run = subprocess.run(
        [
            str(BIN / "schemathesis"),
            "--config-file",
            str(_config(credentials, tmp_path, seed)),
            "run",
            document,
            "--phases",
            phases,
            "--url",
            stack["baseUrl"],
            "--checks",
            "all",
            "--no-color",
            "--report",
            "junit",
            "--report-junit-path",
            str(junit),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=tmp_path,  # its example cache (.schemathesis/) stays out of the repository
    )
    summary = run.stdout[-6000:]
    sys.stdout.write(run.stdout)  # the case count and every failure, for the CI log
    # Then every operation was tested and no case failed
    tested = re.search(r"Tested: (\d+)", run.stdout)
    selected = re.search(r"Selected: (\d+)/(\d+)", run.stdout)
    assert tested and selected, summary
    assert int(tested.group(1)) == int(selected.group(2)), summary
    assert run.returncode == 0, summary
    assert re.search(r"(\d+) generated", run.stdout), summary


def _generated_client(document: str, folder: Path) -> Any:
    (folder / "openapi.json").write_text(document, encoding="utf-8")
    subprocess.run(
        [
            str(BIN / "openapi-python-client"),
            "generate",
            "--path",
            str(folder / "openapi.json"),
            "--meta",
            "none",
            "--output-path",
            str(folder / "psap_contract_client"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=folder,
        env={"PATH": str(BIN)},
    )
    sys.path.insert(0, str(folder))
    return importlib.import_module("psap_contract_client")


def test_a_client_generated_from_the_document_creates_appends_and_reads_knowledge(
    stack: dict[str, Any], stack_state_file: Path, tmp_path: Path
) -> None:
    # Given a client generated from the served document
    document = httpx.get(f"{stack['baseUrl']}/api/v1/external/openapi.json", timeout=30).text
    client_package = _generated_client(document, tmp_path)
    try:
        client_module = importlib.import_module("psap_contract_client.client")
        models = importlib.import_module("psap_contract_client.models")
        create = importlib.import_module("psap_contract_client.api.knowledge.create_knowledge")
        append = importlib.import_module(
            "psap_contract_client.api.knowledge.append_knowledge_version"
        )
        read = importlib.import_module("psap_contract_client.api.knowledge.get_knowledge")
        # (a tenant of its own: the demo tenants' knowledge lists are other tests' facts)
        client = client_module.AuthenticatedClient(
            base_url=stack["baseUrl"], token=_contract_credentials(stack_state_file)["admin"]
        )
        control = models.ApiControl()
        # When it creates a card with a media item named by a client id, and a question
        # showing that media
        created = create.sync_detailed(
            client=client,
            body=models.KnowledgeCreateRequest(
                name="Generated Client Card",
                provider="contract-test",
                knowledge_type=models.KnowledgeType.GUIDE_CARD,
                external_id="gc-generated-client",
                api_control=control,
                media=[
                    models.MediaInput(
                        media_type=models.MediaType.IMAGE,
                        url="https://cdn.example.org/diagram.png",
                        client_id="diagram",
                        caption="Hand placement",
                    )
                ],
                question_list=[
                    models.RootQuestionInput(
                        question_text="Is the patient breathing?", reference_media=["diagram"]
                    )
                ],
            ),
        )
        assert created.status_code == 201, created.content
        entry = created.parsed
        media_id = entry.media[0].reference_id
        assert re.fullmatch(r"md-[0-9a-f]{8}", media_id)
        assert entry.question_list[0].reference_media == [media_id]
        # And appends a version that keeps the media and adds a spoken instruction
        appended = append.sync_detailed(
            knowledge_id=entry.id,
            client=client,
            body=models.KnowledgeAppendRequest(
                api_control=control,
                media=[
                    models.MediaInput(
                        reference_id=media_id,
                        media_type=models.MediaType.IMAGE,
                        url="https://cdn.example.org/diagram-v2.png",
                    )
                ],
                question_list=[
                    models.RootQuestionInput(
                        reference_id=entry.question_list[0].reference_id,
                        question_text="Is the patient breathing normally?",
                        reference_media=[media_id],
                    )
                ],
                spoken_instructions=[
                    models.SpokenInstructionInput(instruction_text="Stay on the line.")
                ],
            ),
        )
        assert appended.status_code == 201, appended.content
        # Then reading it back through the client gives version 2 with both
        got = read.sync_detailed(knowledge_id=entry.id, client=client)
        assert got.status_code == 200, got.content
        card = got.parsed
        assert (card.version, card.latest_version) == (2, 2)
        assert card.media[0].reference_id == media_id
        assert card.media[0].url == "https://cdn.example.org/diagram-v2.png"
        assert card.question_list[0].question_text == "Is the patient breathing normally?"
        assert [item.instruction_text for item in card.spoken_instructions] == ["Stay on the line."]
        assert json.loads(json.dumps(got.parsed.to_dict()))["id"] == entry.id
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith(client_package.__name__)]:
            del sys.modules[name]


def test_the_docs_page_forbids_framing_and_sniffing(stack: dict[str, Any]) -> None:
    page = httpx.get(f"{stack['baseUrl']}/api/v1/external/docs", timeout=30)
    assert page.status_code == 200
    policy = page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    assert page.headers["X-Content-Type-Options"] == "nosniff"
