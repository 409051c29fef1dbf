"""The one request-body decoder: every operation that takes a body declares a BodyRule
(psap.http.operations), and the shared entrypoint runs `decode_body` before any route or
model sees the body. In this order:

1. Content-Type must be one of the rule's media types, with no charset or charset=utf-8
   (else 415, UNSUPPORTED_MEDIA_TYPE);
2. at most `max_bytes` bytes (else 413, PAYLOAD_TOO_LARGE);
3. the bytes are UTF-8 (else 400, INVALID_ENCODING, naming the byte);
4. JSON media types: nested at most psap.text.MAX_JSON_DEPTH levels, checked by a linear scan
   before any recursive parse (else 400, TOO_DEEP), then valid JSON (else 400, INVALID_JSON)
   and an object (or null, the same as no body), as every JSON body of the API is (else 400,
   INVALID_INPUT: an optional body of another JSON type would otherwise pass for no body);
5. the text policy (psap.text) on every string and key of a JSON body, on every line of a
   text body (else 400, INVALID_TEXT, naming the field or line).

An empty body skips the checks: the operation itself says whether it needs one.
"""

import base64
from dataclasses import dataclass, field
from typing import Any

from psap.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType
from psap.text import JsonTooDeep, TextRefused, check_document, first_violation, parse_json

JSON_MEDIA_TYPE = "application/json"


class InvalidEncoding(InvalidInput):
    reason = "INVALID_ENCODING"


class InvalidJson(InvalidInput):
    reason = "INVALID_JSON"


class TooDeep(InvalidInput):
    reason = "TOO_DEEP"


class InvalidText(InvalidInput):
    reason = "INVALID_TEXT"


@dataclass(frozen=True)
class BodyRule:
    """What an operation's body may be."""

    max_bytes: int
    media_types: frozenset[str] = frozenset({JSON_MEDIA_TYPE})
    # Media types among `media_types` whose bodies are JSON documents (depth, parse, text).
    json_types: frozenset[str] = field(default_factory=lambda: frozenset({JSON_MEDIA_TYPE}))
    # A file whose rows the operation checks one by one (encoding and text policy included),
    # rejecting a bad row alone: here only its media type and size are checked.
    checked_by_row: bool = False
    # Media types another operation takes (media type, that operation): a 415 says where to go.
    elsewhere: tuple[tuple[str, str], ...] = ()

    @property
    def accepted(self) -> str:
        return ", ".join(sorted(self.media_types))


def request_bytes(body: str | None, is_base64_encoded: bool | None) -> bytes:
    """The body as the client sent it: API Gateway base64s bodies of binary media types."""
    if not body:
        return b""
    if is_base64_encoded:
        try:
            return base64.b64decode(body, validate=True)
        except ValueError as error:  # binascii.Error, or a character that is not ASCII
            raise InvalidEncoding("The request body could not be decoded") from error
    return body.encode("utf-8", errors="surrogatepass")


def media_type_of(content_type: str | None, rule: BodyRule) -> str:
    """The request's media type, if the rule accepts it (and its charset is UTF-8)."""
    media_type, _, parameters = (content_type or "").partition(";")
    media_type = media_type.strip().lower()
    if media_type not in rule.media_types:
        given = media_type or "none"
        where = dict(rule.elsewhere).get(media_type)
        hint = f"; a {media_type} body is {where}" if where else ""
        raise UnsupportedMediaType(
            f"Content-Type {given[:100]!r} is not accepted here; use one of: {rule.accepted}" + hint
        )
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise UnsupportedMediaType("The body must be UTF-8 (charset=utf-8)")
    return media_type


def _header(event: dict[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name and isinstance(value, str):
            return value
    return None


def decode_body(event: dict[str, Any], rule: BodyRule) -> str | None:
    """The body as checked text (None when empty); raises a DomainError for the caller."""
    raw_body = event.get("body")
    if not raw_body:
        return None
    media_type = media_type_of(_header(event, "content-type"), rule)
    data = request_bytes(raw_body, event.get("isBase64Encoded"))
    if len(data) > rule.max_bytes:
        raise PayloadTooLarge(
            f"The request body is larger than this operation's {rule.max_bytes} bytes"
        )
    if rule.checked_by_row:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InvalidEncoding(
            f"The request body is not UTF-8: byte {error.start} (line {line}) cannot be decoded"
        ) from error
    if media_type in rule.json_types:
        _check_json(text)
    else:
        _check_lines(text)
    return text


def _check_json(text: str) -> None:
    try:
        document = parse_json(text)
    except JsonTooDeep as error:
        raise TooDeep(f"The request body is {error}") from error
    except ValueError as error:
        raise InvalidJson(f"The request body is not valid JSON: {error}") from error
    if document is not None and not isinstance(document, dict):
        raise InvalidInput(f"The request body must be a JSON object, not {_json_type(document)}")
    try:
        check_document(document)
    except TextRefused as refused:
        raise InvalidText(f"Invalid field '{refused.path}': {refused.problem}") from refused


def _json_type(document: object) -> str:
    if isinstance(document, bool):
        return "a boolean"
    if isinstance(document, list):
        return "an array"
    return "a string" if isinstance(document, str) else "a number"


def _check_lines(text: str) -> None:
    """A text file (CSV, JSON Lines, SRT): no control character but tab and newlines."""
    violation = first_violation(text, free_text=True)
    if violation is None:
        return
    position, what = violation
    line = text.count("\n", 0, position) + 1
    raise InvalidText(f"The request body contains {what} on line {line}")
