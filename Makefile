# Entry points, each doing all set-up on a fresh machine:
#   make gate       - the main job: the gate over the shipped goldsets, offline, embedded defaults
#   make test       - the whole test suite (what CI runs, through .ci/run)
#   make test-fast  - the fast tier, for every edit: the tests not marked `heavy`, i.e. none that
#                     runs pytest or another process, loads the embedding model or computes for
#                     seconds (tests/conftest.py sets the marker and holds the rule)
# torch is installed first and pinned: 2.13.0 is a CPU build this machine has locally; a bare
# `torch` requirement would pull a multi-GB CUDA build.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export RAGAS_DO_NOT_TRACK := true
export ANONYMIZED_TELEMETRY := False
# Python caches compiled modules, and pytest its assertion-rewritten ones, only when it may write
# bytecode: with PYTHONDONTWRITEBYTECODE set, every process the suite starts (xdist workers,
# each pytest a test runs) compiles and rewrites every module again (the fast tier: 42 s vs 35 s)
unexport PYTHONDONTWRITEBYTECODE

GATE_ARGS ?= -n 2 --junitxml=out/junit.xml --ragate-results=out/results.jsonl --ragate-report=out/report.md --ragate-html=out/report.html --ragate-history=out/history.jsonl

.PHONY: install browser gate test test-fast lint bench
install: $(VENV)/.ready

# Debian's Chromium, for the test that opens the HTML report headless (playwright drives it;
# nothing is downloaded by playwright itself). Installed only when asked (`make browser`: it
# takes root); CI asks (.ci/run). Without it, `make test` skips that one test and says how.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
		|| { $(SUDO) apt-get update -q && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

$(VENV)/.ready: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[all,dev]'
	$(BIN)/pip check
	touch $@

gate: install
	mkdir -p out
	$(BIN)/pytest -m rag_gate goldsets/ $(GATE_ARGS)

test: install
	$(BIN)/pytest tests/ -n 2

test-fast: install
	$(BIN)/pytest tests/ -n 2 -m "not heavy"

lint: install
	$(BIN)/ruff check pytest_ragate tests benchmarks scripts examples

bench: install
	$(BIN)/python benchmarks/run_all.py
