"""Pydantic conventions shared by every wire model: camelCase on the wire, `<ts>` format."""

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer, WithJsonSchema
from pydantic.alias_generators import to_camel

from psap.clock import format_timestamp

# `<ts>`: ISO 8601 UTC with milliseconds and Z, e.g. 2026-11-23T02:32:15.123Z
Timestamp = Annotated[
    datetime,
    PlainSerializer(format_timestamp, return_type=str, when_used="json-unless-none"),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "example": "2026-11-23T02:32:15.123Z"}
    ),
]


class WireModel(BaseModel):
    """A response or request shape of the spec: Python names snake_case, wire camelCase."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)
