"""Pydantic conventions shared by every wire model: camelCase on the wire, `<ts>` format."""

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer, WithJsonSchema
from pydantic.alias_generators import to_camel

from psap.clock import format_timestamp


def _assume_utc(moment: datetime) -> datetime:
    """A timestamp read without an offset (an imported record) is UTC, never local time."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# `<ts>`: ISO 8601 UTC with milliseconds and Z, e.g. 2026-11-23T02:32:15.123Z
Timestamp = Annotated[
    datetime,
    AfterValidator(_assume_utc),
    PlainSerializer(format_timestamp, return_type=str, when_used="json-unless-none"),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "example": "2026-11-23T02:32:15.123Z"}
    ),
]


class WireModel(BaseModel):
    """A response or request shape of the spec: Python names snake_case, wire camelCase."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


# A spec `number`: an integer stays an integer on the wire (5, not 5.0), a fraction a float.
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
