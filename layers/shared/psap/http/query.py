"""Table-driven query parameters for the light GET path: validation without pydantic.

A light GET function (docs/design.md, "The light GET path") declares its query parameters as
a tuple of rules and reads them with `read_query`. The answers are exactly those the
validating resolver gives for the same declaration (Powertools' OpenAPI validation, that is
pydantic's lax mode): the same values, and for bad input the same 400 ErrorInfo, every
failing parameter named in declaration order, joined by "; ". A function's contract module
(its `contract.py`, read by tools/openapi.py) declares the same rules through
psap.http.contract, and tests/unit/test_light_path.py holds the two together.

How a value is read, as Powertools reads a REST event: a name in
multiValueQueryStringParameters takes its values from there, else from
queryStringParameters; one value is the parameter's text, several are a list (refused with
the type's message).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from psap.errors import InvalidInput

_NOT_INTEGER = "Input should be a valid integer, unable to parse string as an integer"
_TOO_LONG = "Unable to parse input string as an integer, exceeded maximum size"
_MAX_DIGITS = 4300  # pydantic's (and CPython's) bound on the digits of an integer string
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
# Rust's char::is_whitespace, which pydantic trims (str.strip() would take U+001C-U+001F too).
_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


class InvalidParameters(InvalidInput):
    """One or more query parameters are wrong; `info` names each, as the validating resolver
    does (psap.http.errors.describe_validation_error)."""

    reason = "INVALID_PARAMETER"

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        super().__init__(
            "; ".join(f"Invalid parameter '{name}': {problem}" for name, problem in problems)
        )
        self.problems = tuple(problems)


class Refused(ValueError):
    """A value breaks its rule; the message is the problem as the 400 answer says it."""


@dataclass(frozen=True)
class IntegerRule:
    """An integer with inclusive bounds and a default (absent: the default)."""

    name: str
    default: int
    minimum: int
    maximum: int
    description: str

    def parse(self, text: str) -> int:
        value = parse_integer(text)
        if value < self.minimum:
            raise Refused(f"Input should be greater than or equal to {self.minimum}")
        if value > self.maximum:
            raise Refused(f"Input should be less than or equal to {self.maximum}")
        return value

    def value(self, values: Mapping[str, object]) -> int:
        return _typed(values, self.name, int)

    @property
    def list_problem(self) -> str:
        """The answer to a repeated parameter (several values)."""
        return "Input should be a valid integer"


@dataclass(frozen=True)
class TextRule:
    """An optional string, taken as given (the text policy has been checked before)."""

    name: str
    description: str
    default: None = None

    def parse(self, text: str) -> str:
        return text

    def value(self, values: Mapping[str, object]) -> str | None:
        return None if values[self.name] is None else _typed(values, self.name, str)

    @property
    def list_problem(self) -> str:
        return "Input should be a valid string"


@dataclass(frozen=True)
class ChoiceRule[E: StrEnum]:
    """An optional enumeration value, matched exactly."""

    name: str
    choices: type[E]
    description: str
    default: None = None

    def parse(self, text: str) -> E:
        try:
            return self.choices(text)
        except ValueError:
            raise Refused(self.list_problem) from None

    def value(self, values: Mapping[str, object]) -> E | None:
        return None if values[self.name] is None else _typed(values, self.name, self.choices)

    @property
    def list_problem(self) -> str:
        """The answer to a repeated parameter, and to a value that is not a choice."""
        quoted = [repr(choice.value) for choice in self.choices]
        listed = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
        return f"Input should be {listed}"


def _typed[T](values: Mapping[str, object], name: str, kind: type[T]) -> T:
    """A value read_query gave, as its rule's type (else the rule was not in the table read)."""
    found = values[name]
    if not isinstance(found, kind):
        raise TypeError(f"query parameter {name!r} is {type(found).__name__}, not {kind.__name__}")
    return found


type QueryRule = IntegerRule | TextRule | ChoiceRule[Any]


def read_query(event: Mapping[str, Any], rules: Sequence[QueryRule]) -> dict[str, object]:
    """Every rule's value by its name (the default when absent); raises InvalidParameters
    naming every parameter that breaks its rule."""
    many: Mapping[str, Any] = event.get("multiValueQueryStringParameters") or {}
    single: Mapping[str, Any] = event.get("queryStringParameters") or {}
    values: dict[str, object] = {}
    problems: list[tuple[str, str]] = []
    for rule in rules:
        given: Any = many[rule.name] if rule.name in many else single.get(rule.name)
        if isinstance(given, list) and len(given) == 1:
            given = given[0]
        if given is None:
            values[rule.name] = rule.default
        elif not isinstance(given, str):
            problems.append((rule.name, rule.list_problem))
        else:
            try:
                values[rule.name] = rule.parse(given)
            except Refused as refused:
                problems.append((rule.name, str(refused)))
    if problems:
        raise InvalidParameters(problems)
    return values


def parse_integer(text: str) -> int:
    """An integer as pydantic's lax mode reads a string: a JSON integer as is, else trimmed,
    with a sign, leading zeros, a `.` and zeros, or single underscores between digits."""
    if _JSON_INTEGER.fullmatch(text):
        if len(text) > _MAX_DIGITS:
            raise Refused(_TOO_LONG)
        return int(text)
    cleaned = _cleaned_integer(text)
    if cleaned is None or len(cleaned) > _MAX_DIGITS or not _JSON_INTEGER.fullmatch(cleaned):
        raise Refused(_NOT_INTEGER)
    return int(cleaned)


def _cleaned_integer(text: str) -> str | None:
    """pydantic-core's clean_int_str: None when nothing could be cleaned."""
    cleaned = text.strip(_WHITESPACE)
    if cleaned.startswith("+"):
        cleaned = cleaned[1:]
        if cleaned.startswith("-"):
            return None
    negative = cleaned.startswith("-")
    if negative:
        cleaned = cleaned[1:]
        if cleaned[:1] in ("-", "+"):
            return None
    digits = _without_leading_zeros(cleaned)
    if digits is None:
        return None
    point = digits.find(".")
    if point >= 0 and set(digits[point + 1 :]) == {"0"}:
        digits = digits[:point]
    sign = "-" if negative else ""
    if not (digits.startswith("_") or digits.endswith("_") or "__" in digits) and "_" in digits:
        return sign + digits.replace("_", "")
    if len(digits) == len(text):
        return None
    return sign + digits


def _without_leading_zeros(text: str) -> str | None:
    """pydantic-core's strip_leading_zeros: one zero kept before a `.` or when all are."""
    if not text:
        return None
    if text[0] != "0":
        return text if text[0] in "123456789-" else None
    for index in range(1, len(text)):
        char = text[index]
        if char in "0_":
            continue
        if char in "123456789-":
            return text[index:]
        if char == ".":
            return text[index - 1 :]
        return None
    return text[-1:]
