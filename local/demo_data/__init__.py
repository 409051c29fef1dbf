"""The demo content as JSON Lines files, one record a line, read by the local.demo_* loaders.

Data, not code: the files ship with the package (pyproject.toml's package-data) and a writer
edits them without touching the generators that turn them into tenants' records.
"""

import json
from importlib import resources
from typing import Any


def read_records(name: str) -> list[dict[str, Any]]:
    """The records of local/demo_data/<name>.jsonl, in file order (blank lines skipped)."""
    text = resources.files(__name__).joinpath(f"{name}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
