"""Schemathesis hooks for the contract run (loaded by the `hooks` setting of its config).

Schemathesis serializes only the media types it knows; the radio-traffic upload's raw form
takes `application/x-subrip`, the SRT file as text, which goes on the wire as text/plain does.
"""

import schemathesis

schemathesis.serializer.alias("application/x-subrip", "text/plain")
