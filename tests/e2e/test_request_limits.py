"""Per-tenant request budgets over real HTTP on the local stack (docs/limits.md): the usage
plans of template.yaml enforced by the local gateway as API Gateway enforces them, a
tenant's own limits set by the operator without a restart, and one tenant's flood never in
another tenant's answers.

Each test makes tenants of its own (psap-admin, as an operator would) so that the shared
stack's demo tenants keep their default limits for the other e2e tests.
"""

import concurrent.futures
import json
import re
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.stack import run_psap_admin

pytestmark = pytest.mark.e2e


def psap_admin(
    state_file: Path, *arguments: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = run_psap_admin(state_file, *arguments)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


@dataclass(frozen=True)
class Tenant:
    tenant_id: str
    partner: str  # a token with every permission
    cad: str


def new_tenant(state_file: Path, name: str) -> Tenant:
    created = psap_admin(state_file, "tenant", "create", "--name", name).stdout
    found = re.search(r"created tenant (\d+) ", created)
    assert found, created
    tenant = found.group(1)

    def issue(kind: str, permissions: str) -> str:
        output = psap_admin(
            state_file,
            *("credential", "issue", "--tenant", tenant, "--kind", kind),
            *("--permissions", permissions, "--label", f"limits {kind}"),
            *("--expires-in-days", "30"),
        ).stdout.splitlines()
        return output[output.index("token (shown once, store it now):") + 1].strip()

    partner = issue("partner", "VIEW_KNOWLEDGE,MANAGE_KNOWLEDGE,ADMIN,BROWSE_EVENTS")
    return Tenant(tenant, partner, issue("cad", ""))


def set_limit(state_file: Path, tenant: Tenant, budget: str, rate: int, burst: int) -> None:
    psap_admin(
        state_file,
        *("tenant", "limits", "set", "--tenant", tenant.tenant_id, "--budget", budget),
        *("--rate", str(rate), "--burst", str(burst)),
    )


def knowledge(client: httpx.Client, base_url: str, token: str) -> httpx.Response:
    return client.get(
        f"{base_url}/api/v1/external/knowledge",
        params={"size": 1},
        headers={"Authorization": f"Bearer {token}"},
    )


def until(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.25)
    return False


def test_every_answer_of_a_limited_operation_names_its_budgets_policy(
    stack: dict[str, Any],
) -> None:
    token = stack["tenants"][0]["credentials"]["admin"]
    with httpx.Client(timeout=30) as client:
        answer = knowledge(client, stack["baseUrl"], token)
        search = client.get(
            f"{stack['baseUrl']}/api/v1/external/mcp/resources/resource-center/search",
            params={"q": "cardiac"},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert answer.status_code == 200
    assert answer.headers["RateLimit-Policy"] == '"reads";q=100;w=1;burst=200'
    assert search.headers["RateLimit-Policy"] == '"search";q=10;w=1;burst=20'


def test_past_its_budget_a_tenant_gets_429_with_retry_after_and_the_ratelimit_fields(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    # Given a tenant whose reads budget the operator set to 2/s with a burst of 3
    tenant = new_tenant(stack_state_file, "Limits: a small reads budget")
    other = new_tenant(stack_state_file, "Limits: a neighbour")
    set_limit(stack_state_file, tenant, "reads", 2, 3)
    base_url = stack["baseUrl"]
    with httpx.Client(timeout=30) as client:
        # The change takes effect within 10 s (the gateway re-reads the plans)
        assert until(
            lambda: any(
                knowledge(client, base_url, tenant.partner).status_code == 429 for _ in range(5)
            ),
            10,
        ), "the tenant's own limit did not take effect within 10 s"
        refused = next(
            answer
            for answer in (knowledge(client, base_url, tenant.partner) for _ in range(10))
            if answer.status_code == 429
        )
        neighbour = [knowledge(client, base_url, other.partner).status_code for _ in range(10)]
        # Its CAD intake has a budget of its own: the spent reads budget does not touch it
        cad_answer = client.post(
            f"{base_url}/cad/v1/incidents",
            headers={"Authorization": f"Bearer {tenant.cad}"},
            json={"not": "an incident"},
        )
    assert refused.headers["Retry-After"] == "1"
    assert refused.headers["RateLimit"] == '"reads";r=0;t=1'
    assert refused.headers["RateLimit-Policy"].startswith('"reads";q=')
    body = refused.json()
    assert body["reason"] == "RATE_LIMITED_READS"
    assert "reads budget" in body["info"]
    # The same refusal reads as a JSON-RPC error for MCP clients
    assert body["jsonrpc"] == "2.0" and body["error"]["data"]["reason"] == "RATE_LIMITED_READS"
    # And the other tenant was never refused
    assert neighbour == [200] * 10
    assert cad_answer.status_code != 429


def test_the_mcp_endpoint_answers_a_spent_search_budget_as_a_json_rpc_error(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    tenant = new_tenant(stack_state_file, "Limits: MCP")
    set_limit(stack_state_file, tenant, "search", 1, 1)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "Authorization": f"Bearer {tenant.partner}",
        "Accept": "application/json, text/event-stream",
    }
    refusals: list[httpx.Response] = []
    with httpx.Client(timeout=30) as client:

        def spent() -> bool:
            for _ in range(3):
                answer = client.post(f"{stack['baseUrl']}/mcp", json=message, headers=headers)
                if answer.status_code == 429:
                    refusals.append(answer)
            return bool(refusals)

        assert until(spent, 10)
    # The refusal itself, whichever request met the spent bucket, is checked
    answer = refusals[0].json()
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] is None
    assert answer["error"]["data"] == {"reason": "RATE_LIMITED_SEARCH", "retryAfter": 1}


def test_the_operator_sees_a_tenants_limits_and_a_bad_limit_is_refused_naming_it(
    stack_state_file: Path,
) -> None:
    tenant = new_tenant(stack_state_file, "Limits: operator")
    shown = json.loads(
        psap_admin(
            stack_state_file, "tenant", "limits", "show", "--tenant", tenant.tenant_id
        ).stdout
    )
    assert shown["ownLimits"] is False
    assert shown["budgets"]["cad"] == {"rate": 200, "burst": 400}
    set_limit(stack_state_file, tenant, "bulk", 1, 2)
    shown = json.loads(
        psap_admin(
            stack_state_file, "tenant", "limits", "show", "--tenant", tenant.tenant_id
        ).stdout
    )
    assert shown["ownLimits"] is True
    assert shown["budgets"]["bulk"] == {"rate": 1, "burst": 2}
    assert shown["budgets"]["reads"] == {"rate": 100, "burst": 200}
    for rate, problem in (("0", "rate must be 1 to 10000"), ("-3", "rate must be 1 to 10000")):
        refused = psap_admin(
            stack_state_file,
            *("tenant", "limits", "set", "--tenant", tenant.tenant_id, "--budget", "reads"),
            *("--rate", rate, "--burst", "5"),
            check=False,
        )
        assert refused.returncode == 2
        assert problem in refused.stderr
        assert "Traceback" not in refused.stderr


def test_a_flood_from_one_tenant_is_refused_while_another_is_served(
    stack: dict[str, Any], stack_state_file: Path
) -> None:
    """The fairness rule, correctness half (the latency half is `make bench --only fairness`):
    tenant A floods searches and exports far past its budgets; tenant B's reads, searches and
    CAD submissions at a normal rate are never refused and never fail."""
    flooder = new_tenant(stack_state_file, "Fairness: the flood")
    steady = new_tenant(stack_state_file, "Fairness: the steady one")
    set_limit(stack_state_file, flooder, "search", 2, 2)
    set_limit(stack_state_file, flooder, "bulk", 1, 1)
    time.sleep(3)  # the gateway re-reads the plans within 2 s
    base_url = stack["baseUrl"]
    search_url = f"{base_url}/api/v1/external/mcp/resources/resource-center/search"
    today = time.strftime("%Y-%m-%dT00:00:00Z", time.gmtime())

    def flood(index: int) -> int:
        with httpx.Client(timeout=60) as client:
            if index % 4 == 0:
                answer = client.post(
                    f"{base_url}/api/v1/external/audit-log/exports",
                    headers={"Authorization": f"Bearer {flooder.partner}"},
                    json={"from": today, "to": today.replace("T00:00:00Z", "T23:59:59Z")},
                )
            else:
                answer = client.get(
                    search_url,
                    params={"q": "cardiac arrest"},
                    headers={"Authorization": f"Bearer {flooder.partner}"},
                )
            return answer.status_code

    def steady_calls() -> list[int]:
        statuses: list[int] = []
        headers = {"Authorization": f"Bearer {steady.partner}"}
        with httpx.Client(timeout=60) as client:
            for number in range(6):
                statuses.append(knowledge(client, base_url, steady.partner).status_code)
                statuses.append(
                    client.get(search_url, params={"q": "stroke"}, headers=headers).status_code
                )
                statuses.append(
                    client.post(
                        f"{base_url}/cad/v1/incidents",
                        headers={"Authorization": f"Bearer {steady.cad}"},
                        json=cad_event(steady.tenant_id, number),
                    ).status_code
                )
                time.sleep(0.3)
        return statuses

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        flooding = [pool.submit(flood, index) for index in range(60)]
        served = pool.submit(steady_calls).result(timeout=300)
        flooded = [future.result(timeout=300) for future in flooding]
    # Tenant A is refused with 429, never a 5xx
    assert flooded.count(429) >= 30, flooded
    assert all(status < 500 for status in flooded), flooded
    # Tenant B: no 429, no 5xx, every CAD submission accepted
    assert all(status in (200, 202) for status in served), served
    assert served[2::3] == [202] * 6


def cad_event(tenant_id: str, number: int) -> dict[str, Any]:
    """A flat CAD submission (the shape tests/e2e/test_cad_connection.py sends)."""
    return {
        "specversion": "1.0",
        "id": f"fairness-{uuid.uuid4().hex}",
        "source": "urn:cad:fairness",
        "type": "incident.created",
        "time": "2026-11-23T02:32:15.123Z",
        "tenantId": int(tenant_id),
        "data": {
            "number": f"FAIR-{uuid.uuid4().hex[:8]}-{number}",
            "incidentType": "Medical",
            "location": "Main St at 5th",
        },
    }
