"""moto's KMS keys without the RSA key a symmetric key never uses, and its signing calls
authorized on their key.

moto gives every new KMS key a 2,048-bit RSA private key for Sign and Verify, whatever its
spec: about a quarter of a second of CPU per key. KMS refuses Sign and Verify on a
symmetric key, so the stack's keys (all SYMMETRIC_DEFAULT) never use it; the test suite
creates the template's keys for every test, and the local stack at each start. Here a
symmetric key's private key is made on first use only (never, in practice); asymmetric
keys are made as before.

moto authorizes a KMS call against resource "*", where AWS checks the key's ARN: a role's
`kms:Sign` scoped to its key (the audit sealer's) would match nothing. Sign, Verify and
GetPublicKey are authorized here against the ARN of the key they name.
"""

from typing import Any

_SYMMETRIC = "SYMMETRIC_DEFAULT"
_KEY_ACTIONS = frozenset({"Sign", "Verify", "GetPublicKey"})


class _OnFirstUse:
    """Stands for the private key moto would have made; makes it when first touched."""

    def __init__(self, make: Any, key_spec: str) -> None:
        self._make = make
        self._key_spec = key_spec
        self._key: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._key is None:
            self._key = self._make(self._key_spec)
        return getattr(self._key, name)


def install() -> None:
    """Idempotent: moto's KMS backend makes symmetric keys' RSA keys lazily from now on."""
    from moto.kms import models as kms_models  # noqa: PLC0415 - only where AWS is embedded

    models: Any = kms_models  # the name patched is moto's import of its own helper
    if getattr(models, "_psap_lazy_private_keys", False):
        return
    make = models.generate_private_key

    def generate_private_key(key_spec: str) -> Any:
        if key_spec == _SYMMETRIC:
            return _OnFirstUse(make, key_spec)
        return make(key_spec)

    models.generate_private_key = generate_private_key
    models._psap_lazy_private_keys = True
    _authorize_on_the_key()


def _authorize_on_the_key() -> None:
    from moto.kms.responses import KmsResponse  # noqa: PLC0415 - only where AWS is embedded

    def determine_resource(self: Any) -> str:
        if self._get_action() not in _KEY_ACTIONS:
            return "*"
        try:
            return str(self.kms_backend.describe_key(self._get_param("KeyId")).arn)
        except Exception:
            return "*"  # an unknown key: KMS answers NotFound after the check

    responses: Any = KmsResponse
    responses._determine_resource = determine_resource
