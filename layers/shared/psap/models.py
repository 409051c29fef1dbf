"""Pydantic conventions shared by every wire model: camelCase on the wire, `<ts>` format."""

import re
from datetime import UTC, date, datetime
from functools import cache
from typing import Annotated, Any, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel

from psap.clock import format_timestamp

# Re-exported: the function modules have always found the formats' bounds here.
from psap.limits import INT32_MAX as INT32_MAX  # noqa: PLC0414
from psap.limits import INT64_MAX as INT64_MAX  # noqa: PLC0414
from psap.text import FREE_TEXT, FREE_TEXT_PATTERN, check_free_text, check_line

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?"
)


def _iso_date_time(value: Any) -> Any:
    """A date-time is an ISO 8601 string (or already a datetime): never a number, which
    pydantic would otherwise read as seconds since 1970."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and _ISO_DATE_TIME.fullmatch(value.strip()):
        return value
    raise ValueError("an ISO 8601 date-time is expected, e.g. 2026-11-23T02:32:15Z")


def _iso_date(value: Any) -> Any:
    """A date is YYYY-MM-DD (or already a date): never a number or a timestamp."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        return value
    raise ValueError("an ISO 8601 date (YYYY-MM-DD) is expected")


def _representable_in_utc(moment: datetime) -> datetime:
    """A time whose UTC instant falls outside years 1-9999 (`0001-01-01T00:00+14:00`) cannot
    be stored, compared or shown: it is bad input, not a server error later."""
    if moment.tzinfo is not None:
        try:
            moment.astimezone(UTC)
        except OverflowError as error:
            raise ValueError("a time between years 0001 and 9999 in UTC is expected") from error
    return moment


# A date-time as sent: an ISO 8601 string, offset kept as given (no number, no bare date).
StrictDateTime = Annotated[
    datetime, BeforeValidator(_iso_date_time), AfterValidator(_representable_in_utc)
]
# `<date>`: strictly YYYY-MM-DD.
StrictDate = Annotated[date, BeforeValidator(_iso_date)]


def _assume_utc(moment: datetime) -> datetime:
    """A timestamp read without an offset (an imported record) is UTC, never local time."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# `<ts>`: ISO 8601 UTC with milliseconds and Z, e.g. 2026-11-23T02:32:15.123Z
Timestamp = Annotated[
    datetime,
    BeforeValidator(_iso_date_time),
    AfterValidator(_representable_in_utc),
    AfterValidator(_assume_utc),
    PlainSerializer(format_timestamp, return_type=str, when_used="json-unless-none"),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "example": "2026-11-23T02:32:15.123Z"}
    ),
]


class ErrorInfo(BaseModel):
    """The error body of every operation (psap.http.errors makes the responses)."""

    info: str
    reason: str


class WireModel(BaseModel):
    """A response or request shape of the spec: Python names snake_case, wire camelCase."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


# A spec `number`: an integer stays an integer on the wire (5, not 5.0), a fraction a float.
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]


@cache
def _is_free_text(model: type[BaseModel], field_name: str) -> bool:
    field = model.model_fields.get(field_name)
    if field is None:
        return False
    return FREE_TEXT in field.metadata or _mentions_free_text(field.annotation)


def _mentions_free_text(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated and FREE_TEXT in annotation.__metadata__:
        return True
    return any(_mentions_free_text(argument) for argument in get_args(annotation))


def _check_lines(value: Any) -> None:
    """Single-line text policy on a field's strings, in lists and dicts too (nested models
    check themselves)."""
    if isinstance(value, str):
        check_line(value)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _check_lines(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_lines(key)
            _check_lines(item)


class RequestModel(BaseModel):
    """A request shape (body, import line, upload row): camelCase on the wire, unknown fields
    refused (400 naming them), and the text policy of psap.text on every string: fields
    typed FreeText may hold tab and newlines, every other string is a single line."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    @field_validator("*", mode="after")
    @classmethod
    def _text_policy(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is not None and not _is_free_text(cls, info.field_name):
            _check_lines(value)
        return value


# A free-text string (tab and newlines allowed), with its pattern in the OpenAPI document.
FreeText = Annotated[
    str,
    AfterValidator(check_free_text),
    FREE_TEXT,
    Field(json_schema_extra={"pattern": FREE_TEXT_PATTERN}),
]
