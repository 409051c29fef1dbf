"""A flood of bad tokens over real HTTP: the API gateway emulator calls the real authorizer
in a Lambda worker process, which reads the embedded AWS under its own role; the reads are
counted where they are served. docs/design.md, "The cheap refusal path"."""

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from local import iam, iam_enforcement
from local.gateway.api_gateway import ApiGateway
from local.gateway.server import GatewayServer
from local.runtime import LambdaRuntime
from local.template import load_template
from psap.auth import store
from psap.auth.credentials import CredentialKind
from psap.auth.permissions import Permission
from psap.auth.tokens import new_token
from psap.config import auth_table

# The functions this test calls; a worker each (one container: its memory is per container).
FUNCTIONS = ("PartnerAuthorizerFunction", "KnowledgeListFunction")


@pytest.fixture
def api(aws_server: str) -> Iterator[str]:
    template = load_template()
    roles = iam.default_function_roles()
    with iam_enforcement.paused():
        credentials = {
            function_id: iam.create_role(roles[function_id], aws_server).environment()
            for function_id in FUNCTIONS
        }
    runtime = LambdaRuntime(
        template,
        aws_server,
        pool_size=1,
        log=lambda line: None,
        reload_on_change=False,
        credentials=credentials,
    )
    server = GatewayServer("127.0.0.1", 0)
    server.start(ApiGateway(template, runtime.invoke, log=lambda line: None))
    try:
        yield server.url
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
    api: str, authorizer_reads: list[str]
) -> None:
    # Given a tenant with a valid token
    tenant = store.create_tenant("Riverside County 911").tenant_id
    valid = store.issue_credential(
        tenant, CredentialKind.PARTNER, frozenset({Permission.VIEW_KNOWLEDGE}), "t"
    ).token
    unknown = new_token("partner")
    typo = valid[:-1] + ("A" if valid[-1] != "A" else "B")
    # When one unknown token, a mistyped one and malformed ones flood in
    answers: list[Any] = []
    for number in range(25):
        for token in (unknown, typo, f"psap_partner_{number}"):
            answers.append(knowledge(api, token))
    # Then all are 401 ErrorInfo, and only the first unknown token was read
    assert {answer.status_code for answer in answers} == {401}
    assert answers[0].json() == {"info": "Authentication required", "reason": "UNAUTHENTICATED"}
    assert len(authorizer_reads) == 1
    # And the valid token still works during the flood
    assert knowledge(api, valid).status_code == 200
    assert len(authorizer_reads) == 2
