"""S3 in the embedded AWS: a PUT's body is the object, whatever its Content-Type says.

`curl -X PUT --data-binary @file "$UPLOAD_URL"` (a presigned PUT URL) sends
`Content-Type: application/x-www-form-urlencoded`. S3 stores that header as the object's
content type and the body byte for byte. moto's server got it wrong twice:

- a request without an Authorization header (a presigned URL) and with that content type
  has its body read to guess the service from an `Action=` field; a body that is not UTF-8
  was read and not put back, so the request then waited for bytes already consumed and
  never got an answer;
- werkzeug parses such a body as an HTML form, so moto stored 0 bytes.

Both are fixed here at their source: the sniffed body is always put back as the bytes read,
and form parsing is off for PUT. No AWS API takes an HTML form in a PUT (S3's browser upload
is a POST; SQS's query protocol is a POST), so every other request is parsed as before.
"""

import io
from typing import Any


def _sniffed_body(_application: Any, environ: dict[str, Any]) -> str | None:
    """moto's DomainDispatcherApplication._get_body, putting back exactly the bytes read."""
    try:
        simple_form = environ["CONTENT_TYPE"].startswith("application/x-www-form-urlencoded")
        size = int(environ["CONTENT_LENGTH"])
    except (KeyError, ValueError):
        return None
    if not (simple_form and size):
        return None
    raw: bytes = environ["wsgi.input"].read(size)
    environ["wsgi.input"] = io.BytesIO(raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # not a query-protocol body, so no Action to find
        return None


def store_put_bodies_verbatim() -> None:
    """Idempotent; patches moto's server (moto loads lazily, hence the imports here)."""
    from moto.moto_server.werkzeug_app import (  # noqa: PLC0415
        BackendRequest,
        DomainDispatcherApplication,
    )

    if getattr(BackendRequest, "_psap_put_bodies_verbatim", False):
        return
    parsed_by_werkzeug = BackendRequest.want_form_data_parsed

    def want_form_data_parsed(self: Any) -> bool:
        if self.method == "PUT":
            return False
        return bool(parsed_by_werkzeug.__get__(self))

    BackendRequest.want_form_data_parsed = property(want_form_data_parsed)  # type: ignore[assignment,method-assign]
    DomainDispatcherApplication._get_body = _sniffed_body  # type: ignore[assignment,method-assign]
    BackendRequest._psap_put_bodies_verbatim = True  # type: ignore[attr-defined]
