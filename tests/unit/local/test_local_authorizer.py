"""Lambda authorizer semantics: IAM policy evaluation, answer validation and the cache."""

from typing import Any

import pytest

from local.gateway import (
    AuthorizerAnswer,
    AuthorizerAnswerError,
    AuthorizerCache,
    PolicyDecision,
    evaluate_policy,
    parse_authorizer_answer,
    wildcard_matches,
)

ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/api/v1/external/knowledge"


def _policy(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def _allow(resource: str, action: str = "execute-api:Invoke") -> dict[str, Any]:
    return {"Effect": "Allow", "Action": action, "Resource": resource}


def _deny(resource: str, action: str = "execute-api:Invoke") -> dict[str, Any]:
    return {"Effect": "Deny", "Action": action, "Resource": resource}


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("arn:aws:execute-api:*", ARN, True),
        ("arn:aws:execute-api:us-east-1:123456789012:abc123/*/GET/*", ARN, True),
        ("arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/api/v?/external/*", ARN, True),
        ("arn:aws:execute-api:us-east-1:123456789012:abc123/prod/POST/*", ARN, False),
        ("arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/api/v1", ARN, False),
        ("a?c", "abc", True),
        ("a?c", "abbc", False),
        ("a.c", "abc", False),  # a dot is a dot, not a regex wildcard
        ("*", "", True),
    ],
)
def test_resource_wildcards_star_spans_anything_and_question_mark_one_character(
    pattern, value, matches
):
    assert wildcard_matches(pattern, value) is matches


def test_resource_patterns_are_case_sensitive():
    assert not wildcard_matches(ARN.upper(), ARN)


def test_an_allow_for_the_method_arn_allows():
    assert evaluate_policy(_policy(_allow(ARN)), ARN) is PolicyDecision.ALLOW


def test_an_explicit_deny_wins_over_any_allow():
    # Given an allow for everything and a deny for this method
    policy = _policy(_allow("*"), _deny(ARN))
    # Then the request is denied explicitly
    assert evaluate_policy(policy, ARN) is PolicyDecision.EXPLICIT_DENY


def test_without_a_matching_allow_the_request_is_implicitly_denied():
    policy = _policy(_allow(ARN.replace("/GET/", "/POST/")))
    assert evaluate_policy(policy, ARN) is PolicyDecision.IMPLICIT_DENY


@pytest.mark.parametrize(
    "action", ["execute-api:Invoke", "execute-api:*", "*", "EXECUTE-API:invoke"]
)
def test_invoke_actions_match_with_wildcards_and_any_case(action):
    assert evaluate_policy(_policy(_allow(ARN, action)), ARN) is PolicyDecision.ALLOW


def test_a_statement_for_another_action_does_not_allow():
    policy = _policy(_allow(ARN, "execute-api:ManageConnections"))
    assert evaluate_policy(policy, ARN) is PolicyDecision.IMPLICIT_DENY


def test_single_statement_object_and_resource_lists_are_accepted():
    # Given the statement as an object (not a list) with a list of resources
    policy = {
        "Statement": {"Effect": "Allow", "Action": ["execute-api:Invoke"], "Resource": ["x", ARN]}
    }
    assert evaluate_policy(policy, ARN) is PolicyDecision.ALLOW


def test_authorizer_context_values_reach_the_integration_as_strings():
    # Given an answer whose context holds a number and a boolean
    answer = parse_authorizer_answer(
        {
            "principalId": 42,
            "policyDocument": _policy(_allow(ARN)),
            "context": {"tenantId": 7, "admin": True, "name": "x", "ratio": 0.5},
        }
    )
    # Then API Gateway hands them over as strings
    assert answer.context == {"tenantId": "7", "admin": "true", "name": "x", "ratio": "0.5"}
    assert answer.principal_id == "42"


@pytest.mark.parametrize(
    "payload",
    [
        None,
        "Allow",
        {"principalId": "x"},
        {"policyDocument": {"Version": "2012-10-17"}},
        {"policyDocument": _policy({"Effect": "Maybe", "Action": "*", "Resource": "*"})},
        {"policyDocument": _policy({"Effect": "Allow", "Resource": "*"})},
        {"policyDocument": _policy({"Effect": "Allow", "Action": "*"})},
        {"policyDocument": _policy(_allow("*")), "context": {"nested": {"a": 1}}},
        {"policyDocument": _policy(_allow("*")), "context": {"list": [1]}},
        {"policyDocument": _policy(_allow("*")), "context": "tenant=1"},
    ],
)
def test_malformed_authorizer_answers_are_rejected(payload):
    with pytest.raises(AuthorizerAnswerError):
        parse_authorizer_answer(payload)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


ANSWER = AuthorizerAnswer(principal_id="p", policy=_policy(_allow("*")), context={})


def test_a_cached_answer_lives_exactly_reauthorize_every_seconds():
    # Given an answer cached with a 300 s TTL
    clock = FakeClock()
    cache = AuthorizerCache(clock)
    cache.put(("api", "auth", "token"), ANSWER, 300)
    # When 299 s pass it is still served; at 300 s it is gone
    clock.now += 299
    assert cache.get(("api", "auth", "token")) is ANSWER
    clock.now += 1
    assert cache.get(("api", "auth", "token")) is None


def test_a_zero_ttl_caches_nothing():
    cache = AuthorizerCache(FakeClock())
    cache.put(("api", "auth", "token"), ANSWER, 0)
    assert cache.get(("api", "auth", "token")) is None


def test_answers_are_cached_per_identity():
    cache = AuthorizerCache(FakeClock())
    cache.put(("api", "auth", "token-a"), ANSWER, 300)
    assert cache.get(("api", "auth", "token-b")) is None
    assert cache.get(("api", "other-auth", "token-a")) is None
