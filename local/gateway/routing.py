"""Routing: the template's Api events matched the way API Gateway walks its resources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from local.template import ApiEvent, RestApi, StackTemplate


@dataclass(frozen=True)
class Route:
    api: RestApi
    function_id: str
    event: ApiEvent
    segments: tuple[str, ...]

    @property
    def resource_path(self) -> str:
        return self.event.path

    @property
    def precedence(self) -> tuple[int, ...]:
        # API Gateway prefers a static segment to a {param}, and a {param} to a {greedy+}.
        return tuple(
            2 if segment.endswith("+}") else 1 if segment.startswith("{") else 0
            for segment in self.segments
        )


@dataclass(frozen=True)
class RouteMatch:
    route: Route
    path_parameters: dict[str, str] | None


def _segments(path: str) -> list[str]:
    stripped = path.strip("/")
    return stripped.split("/") if stripped else []


def _match_segments(template: Sequence[str], actual: Sequence[str]) -> dict[str, str] | None:
    parameters: dict[str, str] = {}
    for index, segment in enumerate(template):
        if segment.startswith("{") and segment.endswith("+}"):
            rest = actual[index:]
            if not rest:
                return None
            parameters[segment[1:-2]] = unquote("/".join(rest))
            return parameters
        if index >= len(actual):
            return None
        if segment.startswith("{") and segment.endswith("}"):
            if not actual[index]:
                return None
            parameters[segment[1:-1]] = unquote(actual[index])
        elif segment != actual[index]:
            return None
    return parameters if len(template) == len(actual) else None


class Router:
    """Every Api event of the template, matched the way API Gateway walks its resources."""

    def __init__(self, template: StackTemplate) -> None:
        self.routes: list[Route] = [
            Route(
                api=template.apis[event.api_id],
                function_id=function.logical_id,
                event=event,
                segments=tuple(_segments(event.path)),
            )
            for function, event in template.api_events()
        ]

    def match(self, method: str, raw_path: str) -> RouteMatch | None:
        """The route for a request, or None when API Gateway would not find the method."""
        actual = _segments(raw_path)
        candidates: list[tuple[Route, dict[str, str]]] = []
        for route in self.routes:
            parameters = _match_segments(route.segments, actual)
            if parameters is not None:
                candidates.append((route, parameters))
        if not candidates:
            return None
        # The most specific resource wins; a method missing on it is not looked up elsewhere.
        best = min(route.precedence for route, _ in candidates)
        on_resource = [(route, params) for route, params in candidates if route.precedence == best]
        for wanted in (method.upper(), "ANY"):
            for route, parameters in on_resource:
                if route.event.method == wanted:
                    return RouteMatch(route=route, path_parameters=parameters or None)
        return None
