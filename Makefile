# Entry points: `make demo`, `make test` (fast suite) and `make test-slow`. Each builds .venv
# from the project's own files the first time (torch pinned to the local CPU wheel).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= build/demo

.PHONY: demo test test-slow dist bench mutation clean

$(STAMP): pyproject.toml requirements/test.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements/test.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python scripts/demo.py --out $(DEMO_DIR)

# Lint, format check and type check first (config in pyproject.toml): any finding fails `make test`.
# Then every test not marked slow, and every docstring example. Bytecode is cached (in the ignored
# __pycache__ folders) even where the environment sets PYTHONDONTWRITEBYTECODE: without it each
# xdist worker compiles the package and rewrites every test module's asserts on every run, half of
# its collection time. (scripts/mutation_check.py sets it again for its mutants, rightly.)
# The pytest step costs about 90 CPU s (user+sys, bytecode cached, 6,277 tests, suite28: 89.8 s
# and 50.0 s wall at load 0.6-1.4; the tree before, 8aba094, 6,294 tests, 119-123 s and 65-67 s
# at load 1.2-1.9 that hour, 59 s at a quiet moment; about 130 s on a first run, which compiles
# every module); its wall time is at least CPU / 2 on 2 cores and follows the load (measured
# figures in CONTRIBUTING.md, "Tests"). The tests
# set OMP_NUM_THREADS=1 in each xdist worker (tests/conftest.py) unless you set it. mypy takes ~12
# CPU s without its .mypy_cache (a fresh clone; ~43 s while it analysed transformers and torch
# whole), ~5 s with it.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy src/novabench
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONDONTWRITEBYTECODE= \
		$(BIN)/python -m pytest -n 2 -q -m "not slow" \
		--doctest-modules tests src/novabench scripts nova_dataset.py

# The tests marked @pytest.mark.slow (among them the other seeds and sizes of the random-input
# sweeps, whose first seed or a smaller size runs in `make test`), and every Hypothesis
# property test again at its full depth (the fast suite runs each on 20 examples; profiles in
# tests/conftest.py). CI runs both targets. pytest exits with 5 when no test is selected: nothing there to fail.
test-slow: $(STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONDONTWRITEBYTECODE= \
		$(BIN)/python -m pytest -n 2 -q -m "slow or hypothesis" \
		--hypothesis-profile=thorough tests || [ $$? -eq 5 ]

# The sdist and the wheel into dist/, then `twine check` of both. Built without isolation
# (offline) with the venv's setuptools; the version comes from src/novabench/__init__.py.
dist: $(STAMP)
	rm -rf dist build/lib src/novabench.egg-info
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/twine check --strict dist/*

bench: $(STAMP)
	$(BIN)/python scripts/bench_dataset.py
	$(BIN)/python scripts/bench_metric.py

# Single-token mutants of the scoring and parsing cores against their own tests, one module
# at a time (a tool, not a test: minutes per module). One module: make mutation MODULE=src/...
# Add MUTATION_ARGS="--sample 80" to draw a random sample of mutants.
MUTATION_MODULES ?= src/novabench/metrics/diagnosis.py src/novabench/run/parsers/boxes.py \
	src/novabench/metrics/localization.py src/novabench/metrics/captioning.py \
	src/novabench/metrics/stats.py
MODULE ?= $(MUTATION_MODULES)
mutation: $(STAMP)
	for module in $(MODULE); do \
		HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python scripts/mutation_check.py \
			$$module $(MUTATION_ARGS) || exit $$?; \
	done

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache
