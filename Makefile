# The two commands of the README: `make demo` (the main job on the embedded default) and
# `make test` (the whole test suite). Each creates .venv and installs the project first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make test` workers: each takes whole test files (--dist loadfile), so a module's expensive
# fixture (the demo's run, a trained checkpoint) runs once; 2 fits CI's 2 cores.
TEST_WORKERS ?= 2

# `make demo`: the story with a model that learns (the shipped `toy-long` base, 20-24 minutes
# on 2 cores); `make demo-quick`: the same steps on the tiny `test` base (every model scores
# 0), about 2 minutes, to check the machinery.
DEMO_CONFIG ?= examples/configs/retrain_demo_toylong.yaml

.PHONY: install demo demo-quick test test-fast lint services browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/hat demo --config $(DEMO_CONFIG)

demo-quick: install
	$(BIN)/hat demo

# PostgreSQL runs before every session and CI run; start it if it was stopped.
services:
	@pg_isready -q -h 127.0.0.1 -p 5432 || \
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start

# Debian chromium for the console's real-browser tests (never `playwright install`);
# a CJK font so screenshots show the Chinese harness text.
browser:
	@command -v chromium >/dev/null || \
	  (apt-get update && apt-get install -y chromium chromium-driver fonts-wqy-microhei)

test: install services browser
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

test-fast: install
	$(BIN)/pytest -m "not slow and not postgres and not browser"

lint: install
	$(BIN)/ruff check hat_core db flows ui hat_cli tests benchmarks

clean:
	rm -rf $(VENV) .hat .pytest_cache .hypothesis
