"""GET /console and /console/{asset+}: the administrators' console, plain files.

The page is static (HTML, ES modules, one stylesheet, no build step, nothing from another
origin); it calls the admin API through /console/api/... with its session cookie. The
Content-Security-Policy admits this origin's files only: no inline script or style, no
framing.
"""

from pathlib import Path

from aws_lambda_powertools.event_handler import Response

from psap.errors import NotFound
from psap.http.resolver import create_resolver, lambda_handler

_STATIC = Path(__file__).parent / "static"
_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Read once per container; a name not listed here is 404, so no path reaches the disk.
ASSETS = {
    path.name: (path.read_text(encoding="utf-8"), _MEDIA_TYPES[path.suffix])
    for path in sorted(_STATIC.iterdir())
    if path.suffix in _MEDIA_TYPES
}
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    "script-src 'self'; "
    "style-src 'self'; "
    "img-src 'self' data:; "
    "connect-src 'self'; "
    "base-uri 'none'; "
    "form-action 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

app = create_resolver()


def _asset(name: str) -> Response[str]:
    found = ASSETS.get(name)
    if found is None:
        raise NotFound("No such console page")
    body, media_type = found
    return Response(status_code=200, content_type=media_type, body=body, headers=HEADERS)


@app.get("/console", include_in_schema=False)
def get_console() -> Response[str]:
    return _asset("index.html")


@app.get("/console/<asset>", include_in_schema=False)
def console_asset(asset: str) -> Response[str]:
    return _asset(asset)


@app.get("/console/console/<asset>", include_in_schema=False)
def console_asset_below(asset: str) -> Response[str]:
    # The page loaded as /console/ asks for console/app.js relative to itself.
    return _asset(asset)


handler = lambda_handler(app)
