"""DynamoDB attribute values <-> Python values.

Written here rather than taken from boto3.dynamodb.types: importing anything under boto3
imports s3transfer too, which costs every function's cold start for nothing.
"""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

type Item = dict[str, Any]
type AttributeValue = dict[str, Any]


def marshal(value: Any) -> AttributeValue:
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | Decimal):
        return {"N": str(value)}
    if isinstance(value, float):
        return {"N": repr(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bytes):
        return {"B": value}
    if isinstance(value, Mapping):
        return {"M": {key: marshal(inner) for key, inner in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [marshal(inner) for inner in value]}
    if isinstance(value, set | frozenset):
        return {"SS": sorted(str(inner) for inner in value)}
    raise TypeError(f"cannot store a value of type {type(value).__name__}")


def unmarshal(attribute: AttributeValue) -> Any:
    ((kind, value),) = attribute.items()
    match kind:
        case "NULL":
            return None
        case "S" | "BOOL" | "B":
            return value
        case "N":
            return _number(value)
        case "M":
            return {key: unmarshal(inner) for key, inner in value.items()}
        case "L":
            return [unmarshal(inner) for inner in value]
        case "SS":
            return set(value)
        case "NS":
            return {_number(inner) for inner in value}
        case _:
            raise TypeError(f"unsupported attribute type {kind}")


def to_item(values: Mapping[str, Any]) -> dict[str, AttributeValue]:
    """Marshals a whole item; None values are left out rather than stored as NULL."""
    return {key: marshal(value) for key, value in values.items() if value is not None}


def from_item(item: Mapping[str, Any]) -> Item:
    return {key: unmarshal(value) for key, value in item.items()}


def _number(text: str) -> int | float:
    if any(mark in text for mark in ".eE"):
        return float(text)
    return int(text)
