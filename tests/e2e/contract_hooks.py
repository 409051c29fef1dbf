"""Schemathesis hooks for the contract run (loaded by the `hooks` setting of its config).

Schemathesis serializes only the media types it knows; the radio-traffic upload's raw form
takes `application/x-subrip`, the SRT file as text, which goes on the wire as its UTF-8 bytes.
"""

import json
from typing import Any

import schemathesis


@schemathesis.serializer("application/x-subrip")
def subrip_text(_context: schemathesis.SerializationContext, value: Any) -> dict[str, Any]:
    if isinstance(value, bytes):
        return {"data": value}
    # Negative cases may draw a number or an object for the file: send it as text anyway.
    text = value if isinstance(value, str) else json.dumps(value)
    return {"data": text.encode("utf-8", errors="surrogatepass")}
