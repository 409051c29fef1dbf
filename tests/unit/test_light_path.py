"""The light GET path (docs/design.md) and its contract held together: the list function
imports no pydantic, its query rules are the ones its contract declares and answer as
pydantic does, and the audit line it writes is AuditRecord's JSON."""

import importlib.util
import inspect
import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, get_args, get_origin

import pytest
from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import TypeAdapter, ValidationError

from psap.audit.changes import Change
from psap.audit.lines import AuditCaller, AuditedCall, audit_record, audit_text
from psap.audit.recording import AuditRecord, audit_line
from psap.errors import DomainError
from psap.http import knowledge_list
from psap.http.query import IntegerRule, QueryRule, Refused, parse_integer, read_query
from psap.http.resolver import create_resolver
from psap.knowledge.listing import summary_of
from psap.knowledge.models import ExternalKnowledgeDto, ExternalKnowledgePageDto

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "shared"
# Each light function, with the module that declares its rules.
LIGHT_FUNCTIONS = {"knowledge_list": knowledge_list}
PYDANTIC_PACKAGES = {"pydantic", "pydantic_core", "annotated_types", "typing_inspection"}


def _contract(function: str) -> ModuleType:
    source = ROOT / "functions" / function / "contract.py"
    spec = importlib.util.spec_from_file_location(f"psap_contract_{function}", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _declared_parameters(function: str) -> list[inspect.Parameter]:
    route = _contract(function).list_knowledge
    return list(inspect.signature(route).parameters.values())


@pytest.mark.parametrize("function", sorted(LIGHT_FUNCTIONS))
def test_a_light_function_imports_no_pydantic(function: str) -> None:
    # Given the function laid out as Lambda lays it out (code directory first, layer on the path)
    code_dir = ROOT / "functions" / function
    probe = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import app; "
        "print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))"
    )
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(LAYER),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": "psap-api",
        "POWERTOOLS_METRICS_NAMESPACE": "Psap",
        "AWS_DEFAULT_REGION": "us-east-1",
        "KNOWLEDGE_TABLE": "light-path",
    }
    # When its module is imported in a fresh interpreter
    done = subprocess.run(
        [sys.executable, "-c", probe, str(code_dir)],
        cwd=code_dir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # Then no pydantic package was loaded
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert loaded & PYDANTIC_PACKAGES == set()
    assert "psap" in loaded


@pytest.mark.parametrize("function", sorted(LIGHT_FUNCTIONS))
def test_the_contract_declares_exactly_the_light_rules(function: str) -> None:
    rules: tuple[QueryRule, ...] = LIGHT_FUNCTIONS[function].PARAMETERS
    declared = _declared_parameters(function)
    assert len(declared) == len(rules)
    for parameter, rule in zip(declared, rules, strict=True):
        assert get_origin(parameter.annotation) is Annotated
        kind, query = get_args(parameter.annotation)
        assert isinstance(query, Query)
        assert (query.alias or parameter.name) == rule.name
        assert parameter.default == rule.default
        assert query.description == rule.description
        bounds = {type(item).__name__: item for item in query.metadata}
        if isinstance(rule, IntegerRule):
            assert kind is int
            assert (bounds["Ge"].ge, bounds["Le"].le) == (rule.minimum, rule.maximum)
        else:
            assert bounds == {}


def _pydantic_integer(text: str) -> int | str:
    try:
        return TypeAdapter(int).validate_python(text)
    except ValidationError as error:
        return str(error.errors()[0]["msg"])


def _light_integer(text: str) -> int | str:
    try:
        return parse_integer(text)
    except Refused as refused:
        return str(refused)


def _integer_texts() -> list[str]:
    generator = random.Random(16)  # noqa: S311 - a fixed corpus, not a secret
    alphabet = "0123456789+-._ \u00a0\u3000e\u0663\uff15"  # and Arabic-Indic, fullwidth digits
    texts = ["".join(generator.choices(alphabet, k=generator.randint(0, 7))) for _ in range(4000)]
    texts += ["0" * 4301, "1" * 4300, "1" * 4301, "-" + "1" * 4299, "-" + "1" * 4300]
    texts += [" " + "1" * 4300, "1" * 4300 + ".0", "1_" * 2200 + "1", "+" + "1" * 4300]
    texts += ["-1_000", "-0_1", "+1_0", "-00_5", "-007.00", "0_0.0", "1__0", "_1", "- 1", "+-1"]
    return texts


def test_integers_are_read_as_pydantic_reads_them() -> None:
    differences = {
        text: (_light_integer(text), _pydantic_integer(text))
        for text in _integer_texts()
        if _light_integer(text) != _pydantic_integer(text)
    }
    assert differences == {}


def _query_corpus() -> list[dict[str, list[str]]]:
    values = ["-1", "0", "1", "7", "first", "1.5", "5.0", "2147483647", "2147483648", ""]
    values += [" 5", "+5", "1e3", "1_000", "00012", "-0", "9" * 40, "POLICY", "policy", "NENA"]
    corpus: list[dict[str, list[str]]] = [{}]
    for name in ("page", "size", "provider", "knowledgeType", "unknown"):
        corpus += [{name: [value]} for value in values]
        corpus.append({name: ["1", "2"]})
    corpus += [
        {"page": ["x"], "size": ["y"], "knowledgeType": ["Z"]},
        {"knowledgeType": ["GUIDE_CARD"], "size": ["0"], "page": ["-3"]},
        {"provider": ["a", "b"], "knowledgeType": ["TRAINING"]},
    ]
    return corpus


def _validated_answer(function: str, query: dict[str, list[str]]) -> tuple[int, Any]:
    """What the contract's validating resolver answers, its route only echoing the values."""
    declared = _declared_parameters(function)
    probe = create_resolver()

    def echo(**values: Any) -> dict[str, Any]:
        return {
            name: value.value if isinstance(value, Enum) else value
            for name, value in values.items()
        }

    echo.__signature__ = inspect.Signature(declared, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    probe.get(knowledge_list.PATH)(echo)
    event = {
        "httpMethod": "GET",
        "path": knowledge_list.PATH,
        "resource": knowledge_list.PATH,
        "headers": {},
        "multiValueQueryStringParameters": query or None,
        "queryStringParameters": {name: given[-1] for name, given in query.items()} or None,
        "requestContext": {},
    }
    answer = probe.resolve(event, None)  # type: ignore[arg-type]
    return answer["statusCode"], json.loads(answer["body"])


def _light_answer(function: str, query: dict[str, list[str]]) -> tuple[int, Any]:
    rules = LIGHT_FUNCTIONS[function].PARAMETERS
    event = {
        "multiValueQueryStringParameters": query or None,
        "queryStringParameters": {name: given[-1] for name, given in query.items()} or None,
    }
    try:
        values = read_query(event, rules)
    except DomainError as refused:
        return 400, {"info": refused.info, "reason": refused.reason}
    names = [parameter.name for parameter in _declared_parameters(function)]
    return 200, {
        name: value.value if isinstance(value, Enum) else value
        for name, value in zip(names, (values[rule.name] for rule in rules), strict=True)
    }


@pytest.mark.parametrize("function", sorted(LIGHT_FUNCTIONS))
def test_the_light_rules_answer_every_query_as_validation_does(function: str) -> None:
    differences = [
        (query, light, validated)
        for query in _query_corpus()
        if (light := _light_answer(function, query))
        != (validated := _validated_answer(function, query))
    ]
    assert differences == []


def test_a_summary_is_the_dtos_json() -> None:
    item = {
        "id": 12,
        "name": "Chest Pain — adult",
        "description": None,
        "source": "API_IMPORT",
        "provider": "NENA",
        "knowledgeType": "GUIDE_CARD",
        "publishedVersion": 3,
        "createdAt": "2026-11-23T02:32:15.123Z",
        "updatedAt": "2026-11-24T10:00:00.000Z",
        "latestVersion": 4,
    }
    summary = summary_of(item)
    dto = ExternalKnowledgeDto.model_validate(summary)
    assert summary == dto.model_dump(mode="json", by_alias=True)
    page = {"items": [summary], "page": 0, "size": 50, "totalItems": 1, "totalPages": 1}
    assert json.dumps(page) == json.dumps(
        ExternalKnowledgePageDto.model_validate(page).model_dump(mode="json", by_alias=True)
    )


def test_the_audit_line_is_audit_records_json() -> None:
    event = {
        "httpMethod": "POST",
        "path": "/api/v1/external/knowledge/5/versions/2/publish",
        "pathParameters": {"knowledgeId": "5", "version": "2"},
        "headers": {"User-Agent": "Intégration/2.0 " + "x" * 300},
        "requestContext": {"requestId": "r-1", "identity": {"sourceIp": "203.0.113.10"}},
    }
    started = datetime(2026, 11, 23, 2, 32, 15, 123456, tzinfo=UTC)
    entry = audit_record(
        event,
        AuditCaller(
            tenant_id=7,
            credential_id="cred-1",
            principal="Dispatch sync",
            credential_kind="partner",
        ),
        AuditedCall(
            operation="publishKnowledgeVersion",
            status=200,
            started=started,
            finished=started + timedelta(milliseconds=42),
            changes=[Change("knowledge", "5", "UPDATED", 2), Change("media", "9", "CREATED")],
        ),
    )
    line = audit_text(entry)
    assert audit_line(AuditRecord.model_validate_json(line)) == line
