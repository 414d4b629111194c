# The single source of set-up: every target installs what it needs into .venv first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
ROOT := $(abspath .)

# Nothing to export: from the repo root, `scorecard`, `dg dev` and `dagster dev` use ./dagster.yaml
# (instance under .dagster/instance/, state under .dagster/) unless DAGSTER_HOME / SCORECARD_* are set.
# Reports go to the config's output_dir (the sample's: this checkout's reports/), or $SCORECARD_OUTPUT_DIR.
# numpy on 2 cores: BLAS threading only adds contention for our small matrix products.
export OPENBLAS_NUM_THREADS ?= 1

.PHONY: scorecard week test fuzz lint dev bench sample clean install install-dev deploy-test install-deploy-test install-browser-test lock

# Every package CI needs (runtime + the dev, deploy and deploy-test extras), pinned with hashes:
# `make install` installs exactly these, then the project itself without resolving again.
# `make lock` refreshes it (and deploy/requirements.txt, the image's runtime pins, from the same resolver).
LOCK := requirements.lock
UV_VERSION := 0.13.8

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: pyproject.toml $(LOCK) | $(PY)
	$(PIP) install -q -r $(LOCK)
	$(PIP) install -q --no-deps -e .
	touch $@

# The lock already holds the dev and deploy extras; the target stays for the commands that name it.
$(VENV)/.installed-dev: $(VENV)/.installed
	touch $@

$(VENV)/.installed-deploy-test: $(VENV)/.installed-dev
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev
# the deployment contract test's needs: the deploy extras, moto, and Debian's PostgreSQL server
install-deploy-test: $(VENV)/.installed-deploy-test
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql; \
	  else \
	    echo "error: the PostgreSQL server (initdb, pg_ctl) is missing; install Debian's postgresql package" >&2; \
	    exit 1; \
	  fi; \
	fi

# the real-browser UI test's needs (scorecard_tests/e2e): selenium (in the lock) and Debian's chromium
install-browser-test: $(VENV)/.installed-dev
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; \
	  else \
	    echo "note: chromium and chromedriver are missing (Debian's chromium, chromium-driver); the browser test skips" >&2; \
	  fi; \
	fi

## make scorecard: materialize the whole asset graph on the bundled sample fleet (or $SCORECARD_CONFIG)
## for the latest complete week before the config's as_of, and print where the report is.
scorecard: $(VENV)/.installed
	$(VENV)/bin/scorecard run

## make week WEEK=2026-10-26: render one past week (partition key = its Monday).
week: $(VENV)/.installed
	@test -n "$(WEEK)" || { echo "usage: make week WEEK=YYYY-MM-DD (a Monday)"; exit 2; }
	$(VENV)/bin/scorecard run --partition $(WEEK)

## make test: install the test extras and run the whole suite (offline).
test: $(VENV)/.installed-dev install-browser-test
	$(PY) -m pytest

## make fuzz: the fuzz targets of every reader (scorecard_tests/fuzz/, docs/reliability.md), long:
## FUZZ_EXAMPLES random examples per target (default 20000), at most FUZZ_TIMEOUT seconds in all.
FUZZ_EXAMPLES ?= 20000
FUZZ_TIMEOUT ?= 1800
fuzz: $(VENV)/.installed-dev
	SCORECARD_FUZZ=1 FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) timeout $(FUZZ_TIMEOUT) nice -n 10 \
	  $(PY) -m pytest -p no:cacheprovider scorecard_tests/fuzz

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check scorecard_assets scorecard_tests bench
	$(VENV)/bin/ruff format --check scorecard_assets scorecard_tests bench
	$(VENV)/bin/dg check defs

## make deploy-test: the no-shared-disk contract test (PostgreSQL and an S3 API on 127.0.0.1, deploy/).
deploy-test: install-deploy-test
	$(PY) -m pytest -m deploy scorecard_tests/deploy

## make dev: the Dagster UI (and daemon: schedules, backfills) on http://127.0.0.1:3000
dev: $(VENV)/.installed-dev
	set -m; $(VENV)/bin/dg dev -h 127.0.0.1 -p 3000

## make bench SIZES="S M L XL XXL": generate benchmark fleets (cached in bench/fleets/) and print the CLI
## measures (cold, warm, +1 week, backfill, fixed cost), the input floor, throughput, memory, requests.
SIZES ?= S M
bench: $(VENV)/.installed-dev
	$(PY) -m bench.run $(SIZES) --json bench/out/latest.json

## make sample: regenerate the bundled sample fleet (deterministic; the committed copy must match).
sample: $(VENV)/.installed
	$(PY) -m scorecard_assets.sample_fleet.generate --out scorecard_assets/sample_fleet/data

## make lock: resolve pyproject.toml's dependencies and the dev + deploy extras again into requirements.lock
## (every platform, hashes); versions already locked are kept unless UPGRADE=1.
lock: | $(PY)
	$(PIP) install -q uv==$(UV_VERSION)
	$(VENV)/bin/uv pip compile pyproject.toml --extra dev --extra deploy --extra deploy-test --universal \
	  --python-version 3.11 --generate-hashes --custom-compile-command 'make lock' --quiet \
	  $(if $(UPGRADE),--upgrade) -o $(LOCK)
	$(VENV)/bin/uv pip compile pyproject.toml --extra deploy --python-platform x86_64-manylinux_2_28 \
	  --python-version 3.11 --no-annotate --custom-compile-command 'make lock' --quiet \
	  --constraint $(LOCK) -o deploy/requirements.txt

clean:
	rm -rf $(VENV) .dagster reports bench/out bench/fleets
