"""Where the console lives on the API, and how its API paths map to the admin API's.

The console calls the tenant admin API under `/console/api/v1/external/...`: the same
operations, behind the console's session authorizer instead of the bearer one (API Gateway
binds one authorizer to a method, so the cookie path needs routes of its own).
"""

CONSOLE_PREFIX = "/console"
CONSOLE_API_PREFIX = "/console/api/"
SESSION_COOKIE = "psap_console"
CSRF_HEADER = "X-Console-Csrf"


def api_resource(resource: str) -> str:
    """The admin API's resource path for a console API path; any other path unchanged."""
    if resource.startswith(CONSOLE_API_PREFIX):
        return resource.removeprefix(CONSOLE_PREFIX)
    return resource


def is_console_api(resource: str) -> bool:
    return resource.startswith(CONSOLE_API_PREFIX)
