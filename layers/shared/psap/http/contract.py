"""The contract side of the light GET path: a query rule (psap.http.query) as the Powertools
Query a validating resolver declares, and so as the OpenAPI document lists it.

Only the functions' contract.py modules import this, never a function at run time: Powertools'
OpenAPI parameters import pydantic.
"""

from aws_lambda_powertools.event_handler.openapi.params import Query

from psap.http.query import IntegerRule, QueryRule


def declared(rule: QueryRule, *, aliased: bool = False) -> Query:
    """The rule as a Query; `aliased` when the Python parameter's name is not the wire name."""
    alias = rule.name if aliased else None
    if isinstance(rule, IntegerRule):
        return Query(ge=rule.minimum, le=rule.maximum, alias=alias, description=rule.description)
    return Query(alias=alias, description=rule.description)
