# House commands. `make run` and `make test` are the two a newcomer needs; both build the
# virtual environment themselves from the pinned requirement files.
SHELL := /bin/bash
PYTHON_VERSION := $(shell cat .python-version)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export SAM_CLI_TELEMETRY := 0
# Material for MkDocs prints a banner about its successor on every build; the build's own
# warnings are what `make docs` should show.
export NO_MKDOCS_2_WARNING := 1
# Options for `make run` and `make bench`, e.g. make bench ARGS="--only search".
ARGS ?=

.PHONY: run test lint unit integration e2e bench openapi build check clean docs docs-serve \
	browser-deps console-test

# pyproject.toml too: it declares the console scripts the bootstrap installs.
$(STAMP): requirements-dev.txt layers/shared/requirements.txt layers/search/requirements.txt \
		pyproject.toml
	@bash tools/bootstrap.sh "$(PYTHON_VERSION)" "$(VENV)"
	@touch $(STAMP)

run: $(STAMP)
	@$(VENV)/bin/psap-local $(ARGS)

# One pytest worker per core (at most four): the e2e tests run as one unit on one worker
# beside the unit and integration tests on the others. `make test PARALLEL=` runs serially.
PARALLEL ?= -n auto --maxprocesses 4

# Coverage is measured on the code the tests run in their own process (unit, integration,
# and the e2e tests' in-process parts); the local stack's worker processes are not traced.
# sys.monitoring keeps its cost small on Python 3.13. The figure is reported, not gated.
test: $(STAMP) lint docs browser-deps
	@COVERAGE_CORE=sysmon $(PY) -m pytest --cov --cov-report= --durations=15 $(PARALLEL)
	@echo "== coverage: $$($(PY) -m coverage report --format=total)% of the statements in layers/shared, functions, local and tools"

unit: $(STAMP)
	@$(PY) -m pytest tests/unit

integration: $(STAMP)
	@$(PY) -m pytest tests/integration

e2e: $(STAMP) browser-deps
	@$(PY) -m pytest tests/e2e

# The console's browser tests drive Debian's headless Chromium (docs/console.md).
browser-deps:
	@test -x /usr/bin/chromium -a -x /usr/bin/chromedriver || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver)

console-test: $(STAMP) browser-deps
	@$(PY) -m pytest tests/e2e/test_console_browser.py

lint: $(STAMP)
	@echo "== ruff"; $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .
	@echo "== mypy"; $(VENV)/bin/mypy
	@echo "== template"; $(PY) -m tools.lint_template

# The documentation site (mkdocs.yml), into .local/site. Strict: a broken link, a broken
# anchor or a page missing from the nav fails the build.
docs: $(STAMP)
	@echo "== docs"; $(VENV)/bin/mkdocs build --strict --quiet

docs-serve: $(STAMP)
	@$(VENV)/bin/mkdocs serve --strict

openapi: $(STAMP)
	@$(PY) -m tools.openapi --write

bench: $(STAMP)
	@$(PY) -m tools.bench $(ARGS)

# The functions have no requirements.txt of their own (their dependencies ship in the
# layers), and SAM's builder says so once per function; that line alone is dropped.
build: $(STAMP)
	@set -o pipefail; PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/sam build 2>&1 \
		| { grep -v "requirements.txt file not found. Continuing the build without dependencies." || true; }

check: test bench

clean:
	rm -rf $(VENV) .aws-sam .local .pytest_cache .mypy_cache .ruff_cache
