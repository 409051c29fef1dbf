"""The authorizer's cheap refusal path, counted in credential reads: a flood of bad tokens
costs no read after the first, and nothing about a valid, legacy or revoked token changes.
The store is a counting `find_credential` (the real one, over the embedded AWS, is counted in
tests/integration/test_authorizer.py)."""

import secrets
import string
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from psap.auth.authorizer import Unauthorized, authorize
from psap.auth.credentials import Credential, CredentialKind
from psap.auth.permissions import Permission
from psap.auth.refusals import (
    REFUSALS_PER_SOURCE,
    REMEMBER_SECONDS,
    RefusalBudget,
    RefusalGuard,
    RefusalMemory,
    RefusalReason,
)
from psap.auth.tokens import TokenForm, new_token, token_form, token_hash

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
ARN = "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/prod/GET/api/v1/external/knowledge"
BASE62 = string.digits + string.ascii_letters


def legacy_token(kind: str = "partner") -> str:
    """A token as issued before the checksum."""
    return f"psap_{kind}_{secrets.token_urlsafe(32)}"


def random_shaped_token() -> str:
    """Today's shape with a made-up checksum: what a flood without our algorithm sends."""
    return "psap_partner_" + "".join(secrets.choice(BASE62) for _ in range(49))


class CountingStore:
    """The credential table as the authorizer sees it, counting its reads."""

    def __init__(self) -> None:
        self.credentials: dict[str, Credential] = {}
        self.reads = 0

    def issue(self, token: str, kind: CredentialKind = CredentialKind.PARTNER) -> Credential:
        credential = Credential(
            credential_id=f"cred-{secrets.token_hex(4)}",
            tenant_id=1,
            kind=kind,
            permissions=frozenset({Permission.VIEW_KNOWLEDGE}),
            label="test",
            created_at=NOW - timedelta(days=1),
            expires_at=None,
            revoked=False,
        )
        self.credentials[token_hash(token)] = credential
        return credential

    def revoke(self, token: str) -> None:
        hashed = token_hash(token)
        self.credentials[hashed] = replace(self.credentials[hashed], revoked=True)

    def find(self, hashed_token: str) -> Credential | None:
        self.reads += 1
        return self.credentials.get(hashed_token)


@pytest.fixture
def store() -> CountingStore:
    return CountingStore()


@pytest.fixture
def guard() -> RefusalGuard:
    return RefusalGuard.for_container()


def event(token: str, source_ip: str = "203.0.113.10") -> dict[str, Any]:
    return {
        "headers": {"Authorization": f"Bearer {token}"},
        "methodArn": ARN,
        "requestContext": {"identity": {"sourceIp": source_ip}},
    }


def call(
    store: CountingStore,
    guard: RefusalGuard,
    token: str,
    source_ip: str = "203.0.113.10",
    now: datetime = NOW,
    kind: CredentialKind = CredentialKind.PARTNER,
) -> Credential | Unauthorized:
    try:
        credential, _ = authorize(event(token, source_ip), kind, store.find, now=now, guard=guard)
    except Unauthorized as refusal:
        return refusal
    return credential


def refused(outcome: Credential | Unauthorized) -> RefusalReason:
    assert isinstance(outcome, Unauthorized), outcome
    return outcome.reason


# ------------------------------------------------------------------------- the token's form


def test_new_tokens_are_base62_with_a_crc32_checksum() -> None:
    token = new_token("partner")
    body = token.removeprefix("psap_partner_")
    assert len(body) == 49 and set(body) <= set(BASE62)  # 256 random bits + 6 checksum chars
    assert token_form(token, "partner") is TokenForm.CHECKSUMMED
    assert token_form(new_token("cad"), "cad") is TokenForm.CHECKSUMMED


def test_any_one_character_changed_breaks_the_checksum() -> None:
    token = new_token("partner")
    start = len("psap_partner_")
    for position in range(start, len(token)):
        other = "0" if token[position] != "0" else "1"
        typo = token[:position] + other + token[position + 1 :]
        assert token_form(typo, "partner") is TokenForm.BAD_CHECKSUM


def test_legacy_tokens_are_told_apart_by_their_length() -> None:
    assert token_form(legacy_token(), "partner") is TokenForm.LEGACY
    assert token_form("psap_partner_" + "-" * 43, "partner") is TokenForm.LEGACY


@pytest.mark.parametrize(
    "token",
    [
        "unknown-token",
        "psap_partner_example-token",
        "psap_partner_",
        "ghp_" + "a" * 36,
        "psap_partner_" + "a" * 44,
        "psap_partner_" + "a" * 42 + "!",
        "psap__" + "a" * 43,
    ],
)
def test_malformed_tokens(token: str) -> None:
    assert token_form(token, "partner") is TokenForm.MALFORMED


def test_a_token_of_the_other_kind_is_known_by_its_prefix() -> None:
    assert token_form(new_token("cad"), "partner") is TokenForm.OTHER_KIND
    assert token_form(legacy_token("partner"), "cad") is TokenForm.OTHER_KIND


# ------------------------------------------------------------------------------ the floods


def test_malformed_and_bad_checksum_floods_cost_no_read_at_all(
    store: CountingStore, guard: RefusalGuard
) -> None:
    # Given a flood of made-up tokens from one source and from many
    for number in range(500):
        source = "198.51.100.7" if number % 2 else f"10.0.{number // 250}.{number % 250}"
        malformed = f"psap_partner_{secrets.token_hex(8)}"
        assert refused(call(store, guard, malformed, source)) is RefusalReason.MALFORMED
        forged = random_shaped_token()
        assert refused(call(store, guard, forged, source)) is RefusalReason.BAD_CHECKSUM
    # Then not one credential was read
    assert store.reads == 0


def test_a_token_of_the_other_kind_costs_no_read(store: CountingStore, guard: RefusalGuard) -> None:
    cad = new_token("cad")
    store.issue(cad, CredentialKind.CAD)
    assert refused(call(store, guard, cad)) is RefusalReason.OTHER_KIND
    assert store.reads == 0


@pytest.mark.parametrize("make_token", [lambda: new_token("partner"), legacy_token])
def test_a_replayed_unknown_token_costs_one_read_from_any_number_of_sources(
    store: CountingStore, guard: RefusalGuard, make_token: Any
) -> None:
    # Given one well-formed token that was never issued (its checksum computed by the caller)
    unknown = make_token()
    # When it is replayed 300 times from 300 addresses
    outcomes = [call(store, guard, unknown, f"10.1.{n // 200}.{n % 200}") for n in range(300)]
    # Then the first refusal read the table, the others were remembered
    assert store.reads == 1
    assert refused(outcomes[0]) is RefusalReason.UNKNOWN
    assert {refused(outcome) for outcome in outcomes[1:]} == {RefusalReason.REMEMBERED}


def test_a_legacy_shaped_flood_from_one_source_costs_at_most_its_budget_of_reads(
    store: CountingStore, guard: RefusalGuard
) -> None:
    # Given distinct random tokens of the legacy shape, all from one address
    reasons = [refused(call(store, guard, legacy_token(), "198.51.100.7")) for _ in range(300)]
    # Then only the budget's worth were read; the rest were refused unread
    assert store.reads == REFUSALS_PER_SOURCE
    assert reasons.count(RefusalReason.UNKNOWN) == REFUSALS_PER_SOURCE
    assert reasons.count(RefusalReason.OVER_BUDGET) == 300 - REFUSALS_PER_SOURCE
    # And another address is not held to that source's budget
    assert refused(call(store, guard, legacy_token(), "192.0.2.1")) is RefusalReason.UNKNOWN


def test_a_valid_token_still_works_from_a_flooding_source(
    store: CountingStore, guard: RefusalGuard
) -> None:
    # Given a source over its refusal budget
    valid = new_token("partner")
    credential = store.issue(valid)
    for _ in range(REFUSALS_PER_SOURCE * 3):
        call(store, guard, legacy_token(), "198.51.100.7")
        call(store, guard, random_shaped_token(), "198.51.100.7")
    reads = store.reads
    # When the valid (checksummed) token is presented from that source
    # Then it is read and accepted, every time
    for _ in range(3):
        assert call(store, guard, valid, "198.51.100.7") == credential
    assert store.reads == reads + 3


def test_a_legacy_token_from_a_flooding_source_waits_out_the_minute(
    store: CountingStore, guard: RefusalGuard
) -> None:
    # The documented trade-off: while its source floods, a legacy token cannot be told from
    # a random one without a read, so it is refused until the source's minute is over.
    valid = legacy_token()
    credential = store.issue(valid)
    for _ in range(REFUSALS_PER_SOURCE):
        call(store, guard, legacy_token(), "198.51.100.7")
    assert refused(call(store, guard, valid, "198.51.100.7")) is RefusalReason.OVER_BUDGET
    assert call(store, guard, valid, "192.0.2.1") == credential
    later = NOW + timedelta(seconds=61)
    assert call(store, guard, valid, "198.51.100.7", now=later) == credential


# ------------------------------------------------------------ what must not change (safety)


def test_a_legacy_token_still_works(store: CountingStore, guard: RefusalGuard) -> None:
    token = legacy_token()
    credential = store.issue(token)
    assert call(store, guard, token) == credential
    assert store.reads == 1


def test_a_retired_legacy_form_is_refused_without_a_read(store: CountingStore) -> None:
    # Given an operator who retired the legacy form (LegacyTokens=refused)
    guard = RefusalGuard.for_container(legacy_tokens_accepted=False)
    token = legacy_token()
    store.issue(token)
    assert refused(call(store, guard, token)) is RefusalReason.RETIRED_FORM
    assert store.reads == 0
    checksummed = new_token("partner")
    credential = store.issue(checksummed)
    assert call(store, guard, checksummed) == credential


def test_an_accepted_token_is_read_every_time_so_a_revocation_applies_at_once(
    store: CountingStore, guard: RefusalGuard
) -> None:
    token = new_token("partner")
    credential = store.issue(token)
    for _ in range(5):
        assert call(store, guard, token) == credential
    assert store.reads == 5
    # When it is revoked
    store.revoke(token)
    # Then the very next request is refused, and stays refused, without more reads
    first = call(store, guard, token)
    assert refused(first) is RefusalReason.REVOKED
    assert isinstance(first, Unauthorized) and first.credential_id == credential.credential_id
    replay = call(store, guard, token)
    assert refused(replay) is RefusalReason.REMEMBERED
    assert isinstance(replay, Unauthorized) and replay.why == "revoked credential"
    assert store.reads == 6


def test_a_remembered_refusal_is_read_again_after_its_time_and_stays_refused(
    store: CountingStore, guard: RefusalGuard
) -> None:
    token = new_token("partner")
    store.issue(token)
    store.revoke(token)
    call(store, guard, token)
    later = NOW + timedelta(seconds=REMEMBER_SECONDS)
    assert refused(call(store, guard, token, now=later)) is RefusalReason.REVOKED
    assert store.reads == 2


def test_an_unknown_token_issued_later_works_once_the_memory_has_expired(
    store: CountingStore, guard: RefusalGuard
) -> None:
    # A refusal is remembered for a bounded time only.
    token = new_token("partner")
    assert refused(call(store, guard, token)) is RefusalReason.UNKNOWN
    credential = store.issue(token)
    assert refused(call(store, guard, token)) is RefusalReason.REMEMBERED
    later = NOW + timedelta(seconds=REMEMBER_SECONDS + 1)
    assert call(store, guard, token, now=later) == credential


def test_no_bearer_token_is_refused_without_a_read(
    store: CountingStore, guard: RefusalGuard
) -> None:
    with pytest.raises(Unauthorized) as refusal:
        authorize(
            {"headers": {}, "methodArn": ARN},
            CredentialKind.PARTNER,
            store.find,
            now=NOW,
            guard=guard,
        )
    assert refusal.value.reason is RefusalReason.MISSING
    assert store.reads == 0


# ---------------------------------------------------------------- bounded memory and budget


def test_the_memory_holds_at_most_its_capacity_least_recent_first_out() -> None:
    memory = RefusalMemory(seconds=60, capacity=3)
    for name in "abcd":
        memory.remember(name, 0.0, "unknown token", credential_id=None)
    assert len(memory) == 3
    assert memory.recall("a", 1.0) is None
    assert memory.recall("d", 1.0) is not None


def test_the_budget_tracks_at_most_its_capacity_of_sources_and_resets_each_window() -> None:
    budget = RefusalBudget(refusals=2, window_seconds=60, capacity=2)
    for source in ("a", "a", "b", "c"):
        budget.spend(source, 0.0)
    assert not budget.exhausted("a", 1.0)  # dropped to make room for c
    budget.spend("c", 1.0)
    assert budget.exhausted("c", 59.0)
    assert not budget.exhausted("c", 60.0)
    assert not budget.exhausted(None, 1.0)
