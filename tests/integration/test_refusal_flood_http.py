"""A flood of bad tokens over real HTTP: the API gateway emulator calls the real authorizer
in a Lambda worker process, which reads the embedded AWS under its own role; the reads are
counted where they are served. docs/design.md, "The cheap refusal path"."""

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from local import iam, iam_enforcement
from local.aws import apigateway_client, create_usage_plans, operator_client_options
from local.concurrency import DEFAULT_CONCURRENCY_SCALE, scale_concurrency
from local.gateway.api_gateway import ApiGateway
from local.gateway.server import GatewayServer
from local.gateway.throttling import UsagePlanDirectory
from local.runtime import LambdaRuntime
from local.template import load_template
from psap.auth import store
from psap.auth.credentials import OPERATOR, CredentialKind
from psap.auth.permissions import Permission
from psap.auth.tokens import new_token
from psap.clock import utc_now
from psap.config import auth_table
from tools.tenant_limits import UsagePlanTarget, ensure_usage_key

# The functions this test calls; a worker each (one container: its memory is per container).
FUNCTIONS = ("PartnerAuthorizerFunction", "KnowledgeListFunction")


@pytest.fixture
def api(aws_server: str) -> Iterator[tuple[str, UsagePlanTarget]]:
    """The gateway's URL, and where its tenants' usage plan keys go (as psap-local has both)."""
    template = scale_concurrency(load_template(), DEFAULT_CONCURRENCY_SCALE)
    roles = iam.default_function_roles()
    with iam_enforcement.paused():
        credentials = {
            function_id: iam.create_role(roles[function_id], aws_server).environment()
            for function_id in FUNCTIONS
        }
        plans = create_usage_plans(template, aws_server)
    service_api = template.apis["ServiceApi"]
    target = UsagePlanTarget(
        api_id=service_api.api_id,
        stage=service_api.stage_name,
        default_plan_id=plans["TenantUsagePlan"],
        client_options=operator_client_options(aws_server),
    )
    runtime = LambdaRuntime(
        template,
        aws_server,
        log=lambda line: None,
        reload_on_change=False,
        credentials=credentials,
    )
    server = GatewayServer("127.0.0.1", 0)
    directory = UsagePlanDirectory(lambda: apigateway_client(aws_server))
    server.start(ApiGateway(template, runtime.invoke, log=lambda line: None, usage_plans=directory))
    try:
        yield server.url, target
    finally:
        server.stop()
        runtime.shutdown()


@pytest.fixture
def authorizer_reads(aws_server: str) -> Iterator[list[str]]:
    reads: list[str] = []

    def record(caller: str, action: str, resource: str, allowed: bool) -> None:
        if "PartnerAuthorizerFunction" in caller and action == "dynamodb:GetItem":
            assert resource.endswith(auth_table())
            reads.append(caller)

    stop = iam_enforcement.listen(record)
    yield reads
    stop()


def knowledge(api: str, token: str) -> httpx.Response:
    return httpx.get(
        f"{api}/api/v1/external/knowledge",
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


def test_a_flood_over_http_costs_one_read_and_a_valid_token_still_works(
    api: tuple[str, UsagePlanTarget], authorizer_reads: list[str]
) -> None:
    # Given a tenant with a valid token
    url, plans = api
    tenant = store.create_tenant("Riverside County 911").tenant_id
    ensure_usage_key(plans, tenant)
    valid = store.issue_credential(
        tenant,
        CredentialKind.PARTNER,
        frozenset({Permission.VIEW_KNOWLEDGE}),
        label="t",
        expires_at=utc_now() + timedelta(days=30),
        issued_by=OPERATOR,
    ).token
    unknown = new_token("partner")
    typo = valid[:-1] + ("A" if valid[-1] != "A" else "B")
    # When one unknown token, a mistyped one and malformed ones flood in
    answers: list[Any] = []
    for number in range(25):
        for token in (unknown, typo, f"psap_partner_{number}"):
            answers.append(knowledge(url, token))
    # Then all are 401 ErrorInfo, and only the first unknown token was read
    assert {answer.status_code for answer in answers} == {401}
    assert answers[0].json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
    assert len(authorizer_reads) == 1
    # And the valid token still works during the flood (one credential read, and one of the
    # tenant's limits, which a warm container then keeps for 10 s)
    assert knowledge(url, valid).status_code == 200
    assert len(authorizer_reads) == 3
