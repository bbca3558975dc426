VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck layers citations unit bench clean shape any-count

$(PY):
	python3 -m venv $(VENV)

CONTRIB := contrib/scheduler-plugins

$(STAMP): $(PY) pyproject.toml setup.py src/kubesched/storage/protobuf/_wire.pyx $(CONTRIB)/pyproject.toml
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m pip install -q -e $(CONTRIB)
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kubesched demo

test: $(STAMP) lint typecheck layers citations unit

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench tools $(CONTRIB)
	$(VENV)/bin/ruff format --check src tests bench tools $(CONTRIB)

typecheck: $(STAMP)
	$(VENV)/bin/mypy

layers: $(STAMP)
	$(VENV)/bin/lint-imports

citations: $(STAMP)
	$(VENV)/bin/kubesched citations

unit: $(STAMP)
	$(VENV)/bin/pytest

shape: $(STAMP)
	$(PY) -m tools.shape

any-count: $(STAMP)
	$(PY) -m tools.shape --any

bench: $(STAMP)
	$(PY) -m bench.store
	$(PY) -m bench.nodes
	$(PY) -m bench.http

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
