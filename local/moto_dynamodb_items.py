"""DynamoDB items answered from their stored form, not walked through the service model.

moto builds every answer with a generic serializer that visits the service model's shapes
and, for each member, tries several spellings of its name on the Python object. For items
(attribute maps) that walk cost about 1.4 ms per item of twenty attributes: a BatchGetItem
that found 8 items took 13 ms of the embedded AWS's time, where DynamoDB answers in a few
ms, and made a search's page read the slowest step of a local request. Items are already
near their wire form ({"S": ...}, {"N": ...}, {"M": {...}}), so an attribute map (a map
whose values are AttributeValue) is converted here by one small recursive function that
applies the walk's own rules to each of the ten AttributeValue members; every other shape
goes through the walk as before. tests/unit/local/test_local_moto_dynamodb_items.py holds
the two equal on items that Hypothesis generates, and round-trips them through a server.
"""

from collections.abc import Callable
from typing import Any

from moto.core.serialize import BaseJSONSerializer

type Walk = Callable[[BaseJSONSerializer, Any, Any, Any, str], None]

_STRINGS = frozenset({"S", "N"})
_STRING_SETS = frozenset({"SS", "NS"})
_FLAGS = frozenset({"NULL", "BOOL"})


def _wire_string(value: Any) -> Any:
    # The walk's string rule (BaseJSONSerializer._serialize_type_string).
    return str(value) if value not in (None, {}, []) else value


def _wire_value(serializer: BaseJSONSerializer, value: dict[str, Any]) -> dict[str, Any] | None:
    """One AttributeValue as the walk would answer it, or None where this function does not
    know a member (the caller then walks the whole map)."""
    wire: dict[str, Any] = {}
    for member, content in value.items():
        if content is None:
            continue  # the walk leaves out a member whose value is None
        if member in _STRINGS:
            wire[member] = _wire_string(content)
        elif member == "B":
            wire[member] = serializer._base64(content)
        elif member in _STRING_SETS:
            wire[member] = [_wire_string(element) for element in content]
        elif member == "BS":
            wire[member] = [serializer._base64(element) for element in content]
        elif member in _FLAGS and isinstance(content, bool):
            wire[member] = content
        elif member == "M" and type(content) is dict:
            nested = _wire_map(serializer, content)
            if nested is None:
                return None
            wire[member] = nested
        elif member == "L" and type(content) is list:
            elements = [
                _wire_value(serializer, element) if type(element) is dict else None
                for element in content
            ]
            if any(element is None for element in elements):
                return None
            wire[member] = elements
        else:
            return None
    return wire


def _wire_map(serializer: BaseJSONSerializer, attributes: dict[str, Any]) -> dict[str, Any] | None:
    wire: dict[str, Any] = {}
    for name, value in attributes.items():
        if type(value) is not dict:
            return None
        converted = _wire_value(serializer, value)
        if converted is None:
            return None
        wire[name] = converted
    return wire


def install() -> None:
    if getattr(BaseJSONSerializer, "_psap_walk_map", None) is not None:
        return
    walk: Walk = BaseJSONSerializer._serialize_type_map

    # botocore's _serialize_type_map, argument for argument: botocore calls it positionally.
    def serialize_map(  # noqa: PLR0917
        self: BaseJSONSerializer, serialized: Any, value: Any, shape: Any, key: str
    ) -> None:
        if type(value) is dict and getattr(shape.value, "name", None) == "AttributeValue":
            converted = _wire_map(self, value)
            if converted is not None:
                self._default_serialize(serialized, converted, shape, key)
                return
        walk(self, serialized, value, shape, key)

    BaseJSONSerializer._psap_walk_map = walk  # type: ignore[attr-defined]
    BaseJSONSerializer._serialize_type_map = serialize_map  # type: ignore[method-assign]
