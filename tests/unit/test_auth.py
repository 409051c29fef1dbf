"""Permissions, 403 messages and bearer tokens."""

import pytest

from psap.auth.permissions import Permission, denial_message, parse_permissions
from psap.auth.tokens import bearer_token, new_token, token_hash


@pytest.mark.spec("errors-403-body")
def test_403_message_for_the_knowledge_list_is_the_spec_text() -> None:
    message = denial_message((Permission.VIEW_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE))
    assert message == "Access denied — View Knowledge or Manage Knowledge permission required"


@pytest.mark.spec("endpoints-permission-knowledge-card")
def test_403_message_lists_three_permissions_in_the_same_pattern() -> None:
    message = denial_message(
        (Permission.VIEW_KNOWLEDGE, Permission.MANAGE_KNOWLEDGE, Permission.ADMIN)
    )
    assert (
        message == "Access denied — View Knowledge, Manage Knowledge or Admin permission required"
    )


def test_unknown_permission_names_grant_nothing() -> None:
    assert parse_permissions("VIEW_KNOWLEDGE,RETIRED_THING,,") == {Permission.VIEW_KNOWLEDGE}
    assert parse_permissions("") == frozenset()


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("  Bearer   abc  ", "abc"),
        ("Bearer", None),
        ("Bearer a b", None),
        ("Basic abc", None),
        ("", None),
        (None, None),
    ],
)
@pytest.mark.spec("data-auth-rule-1")
def test_bearer_token_parsing(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_tokens_are_random_256_bits_and_hashed_with_sha256() -> None:
    first, second = new_token("partner"), new_token("partner")
    assert first != second
    assert first.startswith("psap_partner_")
    # 256 random bits in 43 base62 characters, then a 6-character checksum
    assert len(first.removeprefix("psap_partner_")) == 49
    assert len(token_hash(first)) == 64 and token_hash(first) != first
