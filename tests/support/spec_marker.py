"""The `spec` marker: `@pytest.mark.spec("knowledge-rule-4", ...)` names the rules of the
specification a test proves, by their ids in tools/spec_rules.py.

Registered in pyproject.toml; this plugin (loaded by tests/conftest.py) makes collection
fail when a marker names an id the catalog does not have, names an item the spec leaves
open, or names no rule at all, so a typo never leaves a rule looking tested.
"""

import pytest

from tools.spec_rules import OPEN_ITEM_IDS, RULES_BY_ID


def spec_marker_errors(item: pytest.Item) -> list[str]:
    """What is wrong with the `spec` markers of one test (nothing when they are valid)."""
    errors: list[str] = []
    for marker in item.iter_markers("spec"):
        if not marker.args or marker.kwargs:
            errors.append(f"{item.nodeid}: spec() takes one or more rule ids and nothing else")
        for rule_id in marker.args:
            if rule_id in OPEN_ITEM_IDS:
                errors.append(f"{item.nodeid}: {rule_id!r} is left open by the spec, not a rule")
            elif not isinstance(rule_id, str) or rule_id not in RULES_BY_ID:
                errors.append(f"{item.nodeid}: {rule_id!r} is not a rule of tools/spec_rules.py")
    return errors


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    errors = [error for item in items for error in spec_marker_errors(item)]
    if errors:
        raise pytest.UsageError("invalid spec markers:\n" + "\n".join(errors))
