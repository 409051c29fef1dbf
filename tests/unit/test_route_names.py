"""One verb per operation from route to logic: a route function is named after its operation.

The operation's id (psap.http.operations, the OpenAPI document's operationId) in snake case
is the route function's name, so `listDeliveries` is `list_deliveries` in the function's
app.py and, where a logic function of that name exists, the logic it calls too.
"""

import ast
import re
from pathlib import Path

from psap.http.operations import operation_for

FUNCTIONS = Path(__file__).resolve().parents[2] / "functions"
_METHODS = {"get", "post", "put", "patch", "delete"}


def snake_case(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


def routes(module: Path) -> list[tuple[str, str, str]]:
    """(method, path, route function name) of each `@app.<method>(path, ...)` in the module;
    a path given by name is read from the module's imports' constants."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (
                isinstance(decorator, ast.Call)
                and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr in _METHODS
                and decorator.args
            ):
                continue
            path = decorator.args[0]
            if isinstance(path, ast.Constant) and isinstance(path.value, str):
                found.append((decorator.func.attr, path.value, node.name))
            elif isinstance(path, ast.Name) and path.id == "PATH":
                from psap.http.knowledge_list import PATH  # the light list's one named path

                found.append((decorator.func.attr, PATH, node.name))
    return found


def test_every_route_function_is_named_after_its_operation() -> None:
    wrong = []
    checked = 0
    for module in sorted(FUNCTIONS.glob("*/*.py")):
        for method, path, name in routes(module):
            # Powertools writes a path parameter <name>; the template and the table {name}.
            operation = operation_for(method, re.sub(r"<(\w+)>", r"{\1}", path))
            if operation is None:
                continue  # pages and documents outside the API's operations
            checked += 1
            if name != snake_case(operation.operation_id):
                wrong.append(f"{module.parent.name}: {name} is {operation.operation_id}")
    assert checked >= 40, checked
    assert wrong == []
