"""The embedded KMS makes a symmetric key's unused RSA key lazily, and nothing else changes."""

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from local import moto_kms_keys


@pytest.fixture
def kms() -> Iterator[Any]:
    moto_kms_keys.install()
    with mock_aws():
        yield boto3.client("kms", region_name="us-east-1")


def test_a_symmetric_key_encrypts_without_an_rsa_key_being_made(kms: Any) -> None:
    from moto.kms.models import kms_backends  # moto's state under mock_aws

    client = kms
    key_id = client.create_key()["KeyMetadata"]["KeyId"]
    sealed = client.encrypt(KeyId=key_id, Plaintext=b"incident")
    opened = client.decrypt(CiphertextBlob=sealed["CiphertextBlob"])
    assert opened["Plaintext"] == b"incident"
    key = kms_backends["123456789012"]["us-east-1"].keys[key_id]
    assert type(key.private_key).__name__ == "_OnFirstUse"
    assert getattr(key.private_key, "_key", "made") is None  # never made


def test_an_asymmetric_key_still_signs_and_verifies(kms: Any) -> None:
    client = kms
    key_id = client.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    signed = client.sign(KeyId=key_id, Message=b"m", SigningAlgorithm="RSASSA_PSS_SHA_256")
    verified = client.verify(
        KeyId=key_id,
        Message=b"m",
        Signature=signed["Signature"],
        SigningAlgorithm="RSASSA_PSS_SHA_256",
    )
    assert verified["SignatureValid"] is True
