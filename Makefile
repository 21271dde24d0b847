# The two commands: `make smoke` (set up, then run the offline smoke grid) and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
# The locked environment (exact versions and hashes, `make lock` writes it from pyproject.toml):
# the lock installed in $(VENV) (its negcse-lock.txt), else the CPU lock. Another is installed
# when named; on a GPU box, once: make setup LOCK=locks/cuda.txt (later targets keep it)
INSTALLED_LOCK := $(shell cat $(VENV)/negcse-lock.txt 2>/dev/null)
LOCK ?= $(or $(firstword $(INSTALLED_LOCK)),locks/cpu.txt)
# torch's CPU build lies in /opt/wheels on the CI disk; elsewhere it comes from PyTorch's CPU index.
TORCH_CPU_SOURCE := $(if $(wildcard /opt/wheels/torch-*+cpu-*.whl),--find-links /opt/wheels,\
  --index https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
# The mirror when one is given or ../shared/mirror exists; otherwise models come from the installed
# `models` packages and data files fill the cache (~/.cache/negcse) from their pinned URLs.
ifneq ($(wildcard ../shared/mirror),)
export NEGCSE_MIRROR ?= $(abspath ../shared/mirror)
endif

.PHONY: setup lock smoke report dvc-lock paper-dry-run test lint llama-server gpu-mirror doctor gpu-quickstart FORCE

# The venv follows the lock: make setup reinstalls whenever the lock installed (its file and
# sha256, recorded in $(VENV)/negcse-lock.txt) is not the requested LOCK as it is now, not only
# when a file is newer. Another lock file (CPU <-> CUDA) starts from a fresh venv, so nothing of
# the other lock stays behind.
LOCK_SHA := $(firstword $(shell sha256sum $(LOCK) 2>/dev/null))
ifneq ($(INSTALLED_LOCK),$(LOCK) $(LOCK_SHA))
$(VENV)/.installed: FORCE
endif
ifneq ($(INSTALLED_LOCK),)
ifneq ($(firstword $(INSTALLED_LOCK)),$(LOCK))
FRESH_VENV := @echo "make setup: $(VENV) holds $(firstword $(INSTALLED_LOCK)), $(LOCK) requested: \
  a fresh venv" && rm -rf $(VENV)
endif
endif

# pip installs the lock's own uv (its entry, with its hashes); uv then installs the whole lock,
# every file checked against its --hash (5-10x faster than pip: benchmarks/base.md). Then the
# installed torch, its CUDA and the GPUs it sees (negcse doctor).
$(VENV)/.installed: pyproject.toml $(LOCK)
	$(FRESH_VENV)
	python3 -m venv $(VENV)
	awk '/^uv==/ {p = 1; print; next} /^[^ ]/ {p = 0} p' $(LOCK) > $(VENV)/uv-lock.txt
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(VENV)/uv-lock.txt
	$(UV) pip install --python $(PY) --require-hashes --no-deps --compile-bytecode \
	  -r $(LOCK) $(TORCH_CPU_SOURCE)
	$(UV) pip install --python $(PY) --quiet --no-deps -e .
	echo "$(LOCK) $$(sha256sum $(LOCK) | cut -d' ' -f1)" > $(VENV)/negcse-lock.txt
	$(UV) pip install --python $(PY) --quiet --no-deps --require-hashes -r envs/llm-model.txt
	$(PY) -m negcse doctor --lock $(LOCK) || true
	touch $@

setup: $(VENV)/.installed .dvc/plots-offline.html

# torch, CUDA, GPUs, driver, the device setting, the lock installed vs LOCK, mirror, cache, disk
doctor:
	$(PY) -m negcse doctor --lock $(LOCK)

# The page template of `dvc plots show` (.dvc/config names it): Vega, Vega-Lite and vega-embed
# inlined from snakemake's wheel, so the plots render offline (not in git: ~2 MB, generated).
.dvc/plots-offline.html: $(VENV)/.installed
	$(PY) -m negcse plots-template --out $@

# Re-lock after editing pyproject.toml's dependencies (uses .venv's uv, in the dev extra), then
# regenerate envs/negcse.yaml from the CUDA lock; tests/workflow/test_lock.py checks all three agree.
LOCK_FLAGS := --extra dev --extra spacy-model --extra models --extra llm --generate-hashes \
  --python-version 3.11 --python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock"
lock:
	$(VENV)/bin/uv pip compile -q pyproject.toml $(LOCK_FLAGS) $(TORCH_CPU_SOURCE) \
	  -c locks/constraints-cpu.txt -o locks/cpu.txt
	$(VENV)/bin/uv pip compile -q pyproject.toml $(LOCK_FLAGS) -c locks/constraints-cuda.txt \
	  -o locks/cuda.txt
	PYTHONPATH=src $(PY) -m negcse.workflow.lockfile conda locks/cuda.txt envs/negcse.yaml
	PYTHONPATH=src $(PY) -m negcse.workflow.lockfile conda --llm locks/cuda.txt envs/llm.yaml

# llama.cpp's server, for tests/llm/ (the openai backend against a real server; they skip without
# it): built from the llama.cpp in the pinned llama-cpp-python sdist (envs/llama-server.txt), CPU
# only, into .venv/bin. About 12 CPU-minutes of compiling (benchmarks/gcse.md); needs cmake, g++.
LLAMA_DIR := $(VENV)/llama-server-build
llama-server: $(VENV)/bin/llama-server
$(VENV)/bin/llama-server: envs/llama-server.txt | setup
	rm -rf $(LLAMA_DIR) && mkdir -p $(LLAMA_DIR)/src
	$(PY) -m pip download -q --no-deps --no-binary :all: --require-hashes -r $< -d $(LLAMA_DIR)
	tar xzf $(LLAMA_DIR)/llama_cpp_python-*.tar.gz -C $(LLAMA_DIR)/src --strip-components=3 \
	  --wildcards '*/vendor/llama.cpp/*'
	cmake -S $(LLAMA_DIR)/src -B $(LLAMA_DIR)/build -DCMAKE_BUILD_TYPE=Release \
	  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF
	cmake --build $(LLAMA_DIR)/build --target llama-server -j $$(nproc)
	cp $(LLAMA_DIR)/build/bin/llama-server $@
	rm -rf $(LLAMA_DIR)

smoke: setup
	source $(VENV)/bin/activate && snakemake --profile profiles/smoke

# Every table, figure and paper page of a run in one HTML file (the committed results: the smoke
# grid's; PROFILE=profiles/local for the paper grid's). In a fresh clone Snakemake has no record
# of the committed files and warns once per file ("Missing metadata"): harmless, left out here.
PROFILE ?= profiles/smoke
report: setup
	set -o pipefail; source $(VENV)/bin/activate && \
	  snakemake --profile $(PROFILE) --report results/report.html 2>&1 | grep -v "^Missing metadata for file"

# After `make smoke` (a complete run, the workflow's files committed): write dvc.lock, check that
# a clone's `dvc status` would list only the heavy outputs (absent until `dvc pull`), `git add` it
# (docs/collaborate.md). Then commit it with results/ and `dvc push`.
dvc-lock: setup
	source $(VENV)/bin/activate && python -m negcse dvc-lock

# SimCSE's headline in one command on a CUDA GPU (docs/gpu.md): unsupervised SimCSE, BERT-base,
# wiki1m, one epoch, then the STS average beside the paper's 76.25. ARGS=--tiny: smoke size, CPU.
gpu-quickstart: setup
	$(PY) -m negcse quickstart $(ARGS)

# The paper grid's plan in ~10 KB: the GPU-hours estimate, then jobs per rule (`--quiet rules`
# leaves out each job's block, 2.8 MB for the paper grid; drop it to see every job).
paper-dry-run: setup
	source $(VENV)/bin/activate && snakemake -n --quiet rules --profile profiles/local

lint: setup
	source $(VENV)/bin/activate && ruff check src tests benchmarks && \
	  snakefmt --check Snakefile rules && snakemake --lint

# pytest in six parts side by side (.ci/pytest-parallel: tests/test_slurm.py and
# tests/test_workflow.py, each followed by files of the longest parts, then tests/evaluation
# with tests/data, the workflow-in-a-clone tests and the rest, in two, at a lower priority)
test: lint
	source $(VENV)/bin/activate && .ci/pytest-parallel

# What benchmarks/gpu_workflow.sh carries to a lent GPU machine (benchmarks/gpu.md, "Prepared GPU
# call"): the mirror subset in .gpu-mirror/ and the missing wheels in .whl/ (git-ignored).
gpu-mirror:
	NEGCSE_MIRROR=$(NEGCSE_MIRROR) benchmarks/gpu_carry.sh
