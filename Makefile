# House commands. `make run` and `make test` are the two a newcomer needs; both build the
# virtual environment themselves from the pinned requirement files.
SHELL := /bin/bash
PYTHON_VERSION := $(shell cat .python-version)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export SAM_CLI_TELEMETRY := 0
export PYTHONPATH := layers/shared:.

.PHONY: run test lint unit integration e2e bench openapi build check clean

$(STAMP): requirements-dev.txt layers/shared/requirements.txt layers/search/requirements.txt
	@bash tools/bootstrap.sh "$(PYTHON_VERSION)" "$(VENV)"
	@touch $(STAMP)

run: $(STAMP)
	@$(PY) -m local.stack

test: $(STAMP) lint
	@$(PY) -m pytest

unit: $(STAMP)
	@$(PY) -m pytest tests/unit

integration: $(STAMP)
	@$(PY) -m pytest tests/integration

e2e: $(STAMP)
	@$(PY) -m pytest tests/e2e

lint: $(STAMP)
	@echo "== ruff"; $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	@echo "== mypy"; $(VENV)/bin/mypy
	@echo "== template"; $(PY) -m tools.lint_template

openapi: $(STAMP)
	@$(PY) -m tools.openapi --write

bench: $(STAMP)
	@$(PY) -m tools.bench

build: $(STAMP)
	@PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/sam build

check: test bench

clean:
	rm -rf $(VENV) .aws-sam .local .pytest_cache .mypy_cache .ruff_cache
