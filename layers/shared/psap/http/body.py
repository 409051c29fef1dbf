"""The request body's bytes, for operations that take a file rather than a JSON model."""

import base64
import binascii

from psap.errors import InvalidInput


def request_bytes(body: str | None, is_base64_encoded: bool | None) -> bytes:
    """The body as the client sent it: API Gateway base64s bodies of binary media types."""
    if not body:
        return b""
    if is_base64_encoded:
        try:
            return base64.b64decode(body, validate=True)
        except binascii.Error as error:
            raise InvalidInput("The request body could not be decoded") from error
    return body.encode("utf-8")
