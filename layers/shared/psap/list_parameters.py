"""Query parameters that several list operations declare alike (their handlers' signatures).

Only handlers import this module: Powertools' OpenAPI parameters cost import time that no
store or worker should pay.
"""

from typing import Any

from aws_lambda_powertools.event_handler.openapi.params import Query

from psap.models import INT32_MAX


def page_number() -> Any:
    """A Spring-style page's `page`: 0-based."""
    return Query(ge=0, le=INT32_MAX, description="0-based page number")


def page_size(maximum: int) -> Any:
    """A Spring-style page's `size`: any positive number, silently capped at `maximum`."""
    return Query(ge=1, le=INT32_MAX, description=f"Page size, capped at {maximum}")


def cursor(pattern: str) -> Any:
    """An admin list's `cursor`: the `nextCursor` of the page before."""
    return Query(
        max_length=200,
        description="nextCursor of the page before",
        # Documented here, checked by the logic (its words: not a cursor this API returned)
        json_schema_extra={"pattern": pattern},
    )
