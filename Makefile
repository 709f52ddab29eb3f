# The two commands of the README: `make demo` (the main job on the embedded default) and
# `make test` (the whole test suite). Each creates .venv and installs the project first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast lint services clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/hat demo

# PostgreSQL runs before every session and CI run; start it if it was stopped.
services:
	@pg_isready -q -h 127.0.0.1 -p 5432 || \
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start

test: install services
	$(BIN)/pytest

test-fast: install
	$(BIN)/pytest -m "not slow and not postgres and not browser"

lint: install
	$(BIN)/ruff check hat_core db flows ui hat_cli tests benchmarks

clean:
	rm -rf $(VENV) .hat .pytest_cache .hypothesis
