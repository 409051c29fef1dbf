"""The map from the specification's rules to their tests (tools/spec_map.py): the committed
page is what the markers make, every rule has a test, the catalog follows docs/spec.md, and a
marker naming anything but a rule of the catalog fails collection."""

import ast
import functools
import re
from pathlib import Path

import pytest
from pymdownx.slugs import slugify

from tools.spec_map import PAGE, MarkedTest, MarkerError, render, rule_to_tests, scan, scan_file
from tools.spec_rules import OPEN_ITEM_IDS, OPEN_ITEMS, RULES, RULES_BY_ID, SECTIONS

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec.md"
# The spec's numbered rule lists, by their heading's anchor: the number is the id's.
NUMBERED_LISTS = {
    "knowledge-rules-create-append-read": "knowledge",
    "list-knowledge-entries": "knowledge-list",
    "data-interface": "data-auth",
    "cad-to-the-service": "cad-auth",
    "service-to-cad-baseline-webhook-profile": "webhook-profile",
    "versioning": "versioning",
}
_HEADING = re.compile(r"^#{1,6} (?P<title>.+)$")
_NUMBERED = re.compile(r"^(?P<number>\d+)\. (?P<text>.+)$")


@functools.cache
def marked_tests() -> list[MarkedTest]:
    return scan()


def spec_sections() -> dict[str, list[str]]:
    """docs/spec.md's lines under each heading, by the heading's anchor (as the site makes it)."""
    anchor_of = slugify(case="lower")
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = sections.setdefault(anchor_of(heading.group("title"), "-"), [])
        else:
            current.append(line)
    return sections


def test_committed_spec_rules_page_is_up_to_date() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(marked_tests()), (
        "docs/reference/spec-rules.md is stale: run `python -m tools.spec_map --write`"
    )


def test_every_rule_of_the_spec_has_a_test() -> None:
    untested = [rule_id for rule_id, tests in rule_to_tests(marked_tests()).items() if not tests]
    assert untested == [], "rules without a @pytest.mark.spec test"


# `test_rule4_...`, `test_versioning_rule2_...`, `test_knowledge_list_rule4_...`: a name that
# cites a rule by its number, with or without its section (the id's prefix, `_` for `-`).
_NAMED_RULE = re.compile(r"^test_(?:(?P<section>[a-z_]+?)_)?rule(?P<number>\d+)_")


def test_a_test_named_after_a_rule_number_is_marked_with_that_rule() -> None:
    # The number alone is ambiguous (rule 4 of the knowledge rules, rule 4 of the list's):
    # the marker says which section's rule it is, and must agree with the name.
    marked = {test.node_id: test.rule_ids for test in marked_tests()}
    disagreeing = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not (named := _NAMED_RULE.match(node.name)):
                continue
            section, number = named.group("section"), named.group("number")
            section = section.replace("_", "-") if section else None
            node_id = f"{path.relative_to(ROOT).as_posix()}::{node.name}"
            cited = [
                rule_id
                for rule_id in marked.get(node_id, ())
                if rule_id.endswith(f"-rule-{number}")
                and (section is None or rule_id == f"{section}-rule-{number}")
            ]
            if not cited:
                disagreeing.append(node_id)
    assert disagreeing == []


def test_every_numbered_rule_of_the_spec_is_in_the_catalog_or_left_open() -> None:
    for anchor, lines in spec_sections().items():
        numbered = [match for line in lines if (match := _NUMBERED.match(line))]
        if anchor not in NUMBERED_LISTS:
            assert numbered == [], f"a numbered list under #{anchor} the catalog does not name"
            continue
        prefix = NUMBERED_LISTS[anchor]
        assert [int(m.group("number")) for m in numbered] == list(range(1, len(numbered) + 1))
        for match in numbered:
            rule_id = f"{prefix}-rule-{match.group('number')}"
            # A rule the spec leaves open says "not shown"; it is a design choice, not a rule.
            if "not shown" in match.group("text"):
                assert rule_id in OPEN_ITEM_IDS, rule_id
            else:
                assert rule_id in RULES_BY_ID, rule_id
        catalogued = {
            rule.id for rule in (*RULES, *OPEN_ITEMS) if rule.id.startswith(f"{prefix}-rule-")
        }
        assert len(catalogued) == len(numbered), prefix


def test_every_section_the_catalog_names_is_a_heading_of_the_spec() -> None:
    headings = set(spec_sections())
    assert {section.anchor for section in SECTIONS} <= headings
    assert {rule.section for rule in (*RULES, *OPEN_ITEMS)} <= set(SECTIONS)


def test_rule_ids_are_unique_lowercase_words() -> None:
    ids = [rule.id for rule in (*RULES, *OPEN_ITEMS)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", rule_id) for rule_id in ids)


# pytester runs pytest in this process on a file of its own, with the project's settings.
pytest_plugins = ("pytester",)

MARKED_TEST = """
import pytest

@pytest.mark.spec({ids})
def test_something():
    pass
"""


def collect(pytester: pytest.Pytester, ids: str) -> pytest.RunResult:
    """Collects one marked test with the project's pytest settings and the spec plugin."""
    pytester.makepyfile(test_marked=MARKED_TEST.format(ids=ids))
    return pytester.runpytest_inprocess(
        "--collect-only",
        "-q",
        "-c",
        str(ROOT / "pyproject.toml"),
        "-p",
        "tests.support.spec_marker",
    )


def test_a_marker_naming_rules_of_the_catalog_is_collected(pytester: pytest.Pytester) -> None:
    result = collect(pytester, '"knowledge-rule-4", "errors-error-info"')
    assert result.ret == pytest.ExitCode.OK, result.outlines + result.errlines
    assert any(line.endswith("::test_something") for line in result.outlines)


@pytest.mark.parametrize(
    ("ids", "complaint"),
    [
        ('"knowledge-rule-16"', "'knowledge-rule-16' is not a rule"),
        ('"knowledge-rule-4", "limits-page-size-max"', "'limits-page-size-max' is not a rule"),
        ('"versioning-rule-5"', "'versioning-rule-5' is left open by the spec"),
        ("", "spec() takes one or more rule ids"),
    ],
)
def test_a_marker_naming_anything_else_fails_collection(
    pytester: pytest.Pytester, ids: str, complaint: str
) -> None:
    result = collect(pytester, ids)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.outlines + result.errlines
    assert any("::test_something" in line and complaint in line for line in result.errlines), (
        result.errlines
    )


@pytest.mark.parametrize(
    "source",
    [
        'pytestmark = pytest.mark.spec("knowledge-rule-4")\n',
        '@pytest.mark.spec("knowledge-rule-4")\nclass TestRule:\n    def test_x(self): ...\n',
        'RULE = "knowledge-rule-4"\n@pytest.mark.spec(RULE)\ndef test_x(): ...\n',
        '@pytest.mark.parametrize("n", [pytest.param(1, marks=pytest.mark.spec("x"))])\n'
        "def test_x(n): ...\n",
        '@pytest.mark.spec("knowledge-rule-4")\ndef helper(): ...\n',
    ],
)
def test_the_scan_refuses_a_marker_it_cannot_read(tmp_path: Path, source: str) -> None:
    test_file = tmp_path / "test_hidden.py"
    test_file.write_text("import pytest\n" + source, encoding="utf-8")
    with pytest.raises(MarkerError):
        scan_file(test_file, root=tmp_path)


def test_the_scan_names_tests_as_pytest_does(tmp_path: Path) -> None:
    test_file = tmp_path / "tests" / "test_named.py"
    test_file.parent.mkdir()
    test_file.write_text(
        "import pytest\n\n"
        '@pytest.mark.spec("knowledge-rule-4", "errors-error-info")\n'
        "def test_top(): ...\n\n"
        "class TestGroup:\n"
        '    @pytest.mark.spec("knowledge-rule-9")\n'
        "    def test_inner(self): ...\n\n"
        "def test_unmarked(): ...\n",
        encoding="utf-8",
    )
    assert [(test.node_id, test.rule_ids) for test in scan_file(test_file, root=tmp_path)] == [
        ("tests/test_named.py::test_top", ("knowledge-rule-4", "errors-error-info")),
        ("tests/test_named.py::TestGroup::test_inner", ("knowledge-rule-9",)),
    ]
