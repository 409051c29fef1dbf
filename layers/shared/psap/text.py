"""The one text policy for every string the service stores, and the JSON depth limit.

- No string may hold a lone surrogate (U+D800..U+DFFF): it is not text, and no store or
  encoder can write it.
- No string may hold a control character (Unicode category Cc: U+0000..U+001F, U+007F..U+009F),
  except that free-text fields (descriptions, instructions, notes, transcript text) may hold
  tab, line feed and carriage return.
- A JSON document may nest arrays and objects at most MAX_JSON_DEPTH levels deep; deeper is
  refused by a linear scan before any recursive parse.

Request bodies, query and path parameters, import lines and upload rows all go through these
functions; a refusal names the field (a JSON path such as `questionList[0].questionText`).
"""

import json
import re
from collections.abc import Iterator
from typing import Any, Final

MAX_JSON_DEPTH: Final = 64
FREE_TEXT_CONTROLS: Final = frozenset("\t\n\r")

TEXT_POLICY_DESCRIPTION: Final = (
    "Text policy (every operation): strings must not contain lone surrogates or control "
    "characters (U+0000-U+001F, U+007F-U+009F); free-text fields (descriptions, instruction "
    "and question text, notes, transcript text) may contain tab, line feed and carriage "
    f"return. JSON bodies may nest at most {MAX_JSON_DEPTH} levels, must be UTF-8, and "
    "unknown fields are refused. A refusal is 400 with ErrorInfo naming the field."
)


class TextRefused(ValueError):
    """A string breaks the text policy; `path` names where (empty for a bare value)."""

    def __init__(self, problem: str, path: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.path = path

    def __str__(self) -> str:
        return f"'{self.path}' {self.problem}" if self.path else self.problem


def first_violation(value: str, *, free_text: bool = False) -> tuple[int, str] | None:
    """(character position, what) of the first character the policy refuses, or None."""
    if value.isascii() and value.isprintable():
        return None  # the common case, checked at C speed
    for position, char in enumerate(value):
        code = ord(char)
        if 0xD800 <= code <= 0xDFFF:
            return position, f"a lone surrogate (U+{code:04X})"
        if (code < 0x20 or 0x7F <= code <= 0x9F) and not (free_text and char in FREE_TEXT_CONTROLS):
            return position, f"a control character (U+{code:04X})"
    return None


def text_problem(value: str, *, free_text: bool = False) -> str | None:
    """Why `value` breaks the policy, or None."""
    violation = first_violation(value, free_text=free_text)
    if violation is None:
        return None
    position, what = violation
    return f"contains {what} at character {position}"


def check_line(value: str) -> str:
    """A single-line string (names, ids, codes): no control character at all."""
    problem = text_problem(value)
    if problem is not None:
        raise TextRefused(problem)
    return value


def check_free_text(value: str) -> str:
    """A free-text string: tab, line feed and carriage return allowed."""
    problem = text_problem(value, free_text=True)
    if problem is not None:
        raise TextRefused(problem)
    return value


class _FreeTextMarker:
    """Marks a str annotation as free text (psap.models.FreeText, RequestModel)."""

    def __repr__(self) -> str:
        return "FREE_TEXT"


FREE_TEXT: Final = _FreeTextMarker()
# The policy as JSON Schema patterns, for the OpenAPI document (tools/openapi.py).
SINGLE_LINE_PATTERN: Final = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"
FREE_TEXT_PATTERN: Final = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$"


def _strings(document: Any) -> Iterator[tuple[str, str, str]]:
    """(path, last key, string) for every key and string value of a JSON document,
    iteratively (a document's depth is bounded, but recursion is not needed)."""
    stack: list[tuple[str, str, Any]] = [("", "", document)]
    while stack:
        path, key, value = stack.pop()
        if isinstance(value, str):
            yield path, key, value
        elif isinstance(value, dict):
            for name, item in value.items():
                child = f"{path}.{name}" if path else str(name)
                yield child, "", str(name)
                stack.append((child, str(name), item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", key, item) for index, item in enumerate(value))


def check_document(document: Any, free_text_fields: frozenset[str] | None = None) -> None:
    """Every key and string of a parsed JSON document by the policy; raises TextRefused
    naming the first offending path. `free_text_fields` names the fields (by key, at any
    depth) that may hold tab and newlines; None: every field may (the body decoder's
    baseline, which the request models then narrow)."""
    for path, key, value in _strings(document):
        free = free_text_fields is None or key in free_text_fields
        problem = text_problem(value, free_text=free)
        if problem is not None:
            raise TextRefused(problem, path or "(document)")


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays/objects nest deeper than `limit`, by one linear pass (brackets inside
    strings do not count). Runs before json.loads, which recurses."""
    depth = 0
    for bracket in _BRACKET.findall(_JSON_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


class JsonTooDeep(ValueError):
    """A JSON text nests deeper than MAX_JSON_DEPTH."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str) -> Any:
    """Parses a JSON text after the depth check; NaN and Infinity are refused (not JSON).
    Raises JsonTooDeep, or ValueError (json.JSONDecodeError is one) for malformed JSON."""
    if json_depth_exceeds(text):
        raise JsonTooDeep(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return json.loads(text, parse_constant=_refuse_constant)
