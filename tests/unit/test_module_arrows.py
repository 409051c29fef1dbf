"""Which way the imports of the shared layer run: the HTTP layer may use the
domain, the domain never uses the HTTP layer, and no two packages import each other."""

import ast
from pathlib import Path

PSAP = Path(__file__).resolve().parents[2] / "layers" / "shared" / "psap"
# Interface layers: they translate between a transport and the domain.
INTERFACES = ("psap.http", "psap.mcp")
# The one arrow still running up, and why: the audit export's `operation` filter checks its
# values against the operation table, which lives with the HTTP layer.
KNOWN_UPWARD = {("psap.audit.exports.models", "psap.http.operations")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PSAP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> the psap modules it imports, at any depth of its code (lazy imports too)."""
    found: dict[str, set[str]] = {}
    for path in PSAP.rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[_module_name(path)] = {name for name in names if name.startswith("psap")}
    return found


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_domain_module_imports_the_http_layer() -> None:
    upward = {
        (module, imported)
        for module, imported_names in _imports().items()
        if not any(_inside(module, interface) for interface in INTERFACES)
        for imported in imported_names
        if _inside(imported, "psap.http")
    }
    assert upward == KNOWN_UPWARD


def test_the_http_layer_does_not_import_media() -> None:
    crossing = {
        (module, imported)
        for module, imported_names in _imports().items()
        if _inside(module, "psap.http")
        for imported in imported_names
        if _inside(imported, "psap.media")
    }
    assert crossing == set()


def test_no_two_packages_import_each_other() -> None:
    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges = {
        (package(module), package(imported))
        for module, imported_names in _imports().items()
        for imported in imported_names
        if package(module) != package(imported) and (module, imported) not in KNOWN_UPWARD
    }
    mutual = sorted((a, b) for a, b in edges if (b, a) in edges and a < b)
    assert mutual == []
