# Two entry points: `make demo` and `make test`. Each builds .venv from the
# project's own files the first time (torch pinned to the local CPU wheel).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= build/demo

.PHONY: demo test bench clean

$(STAMP): pyproject.toml requirements/test.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements/test.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python scripts/demo.py --out $(DEMO_DIR)

# Type check first (config in pyproject.toml's [tool.mypy]): a type error fails `make test`.
test: $(STAMP)
	$(BIN)/mypy src/novabench
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(BIN)/python -m pytest -n 2 -q \
		--doctest-modules tests src/novabench scripts nova_dataset.py

bench: $(STAMP)
	$(BIN)/python scripts/bench_dataset.py
	$(BIN)/python scripts/bench_metric.py

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache
