# rnngrade — course-in-a-repo for recurrent networks. `make help` lists the targets.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= out

.PHONY: help setup demo test test-slow test-pytest-range validate check-cuda lint bench clean

help:
	@echo "make demo       set up $(VENV) and grade the sample submissions into $(OUT)/"
	@echo "make test       set up $(VENV) and run the test suite (slow tests excluded)"
	@echo "make test-slow  the slow, training-style and long end-to-end tests"
	@echo "make test-pytest-range  the reusable-session tests on the lowest and highest pytest pinned"
	@echo "make validate   rnngrade validate: reference full, stubs 0, every mutant caught and named"
	@echo "make check-cuda on a machine with a GPU: the CUDA tests, and validate on CUDA in-process and sandboxed"
	@echo "make lint       ruff and mypy"
	@echo "make bench      the benchmarks in benchmarks/"

# torch is installed first, pinned, from PyTorch's CPU wheel index: PyPI's torch pulls the CUDA
# libraries (several GB). Only torch comes from that index (--no-deps): its requirements come with
# the next line, from the default index. The same command as the Gradescope bundle's setup.sh
# (rnngrade.gradescope.scripts.torch_install; tests/release/test_torch_install.py compares them).
TORCH_VERSION := 2.13.0
TORCH_INDEX   := https://download.pytorch.org/whl/cpu
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-deps "torch==$(TORCH_VERSION)" --index-url $(TORCH_INDEX)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/rnngrade batch fixtures/submissions/lab1 fixtures/submissions/hostile --lab lab1 --out $(OUT)

# One pytest worker per core (`make test WORKERS=1` runs them one after another).
WORKERS ?= auto
test: setup
	$(BIN)/python -m pytest -m "not slow" -q -n $(WORKERS) --dist worksteal

test-slow: setup
	$(BIN)/python -m pytest -m slow -q

# The grader drives pytest through private API (rnngrade/grading/session.py): run the tests of
# the reusable session on both ends of the pytest range that pyproject.toml pins.
PYTEST_RANGE ?= 8.0.0 9.2.0
test-pytest-range: setup
	@for version in $(PYTEST_RANGE); do \
	  dir=$$(mktemp -d) || exit 1; \
	  $(BIN)/python -m pip install --quiet --target $$dir "pytest==$$version" || exit 1; \
	  PYTHONPATH=$$dir $(BIN)/python -c "import pytest; print('pytest', pytest.__version__)"; \
	  PYTHONPATH=$$dir $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow" \
	    tests/batch/test_reusable_grader.py; status=$$?; \
	  rm -rf $$dir; \
	  [ $$status -eq 0 ] || exit $$status; \
	done

validate: setup
	$(BIN)/rnngrade validate

# Needs a CUDA build of torch, which the pinned CPU build of `setup` is not: run it with an
# interpreter that has one and rnngrade installed, e.g. `make check-cuda CUDA_PYTHON=python3`.
# Every lab is validated in-process and sandboxed, CUDA_JOBS at a time (one after another, the
# slowest labs alone take about 10 minutes); each run's output is in $(OUT)/check-cuda/.
CUDA_PYTHON ?= $(BIN)/python
CUDA_JOBS ?= 8
# Every lab of the registry, the largest time budget first (the slowest start first).
CUDA_LABS ?= $(shell $(CUDA_PYTHON) -c "from rnngrade.labs import available_labs; print(*[lab.name for lab in sorted(available_labs(), key=lambda lab: -lab.budget_seconds)])")
check-cuda:
	$(CUDA_PYTHON) -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 'no CUDA device, or torch without CUDA')"
	$(CUDA_PYTHON) -m pytest -q -p no:cacheprovider -m cuda tests
	$(CUDA_PYTHON) -m pytest -q -p no:cacheprovider tests/sandbox/test_isolation.py -k "cuda or zygote"
	@[ -n "$(CUDA_LABS)" ] || { echo "check-cuda: no labs: $(CUDA_PYTHON) cannot read the lab registry"; exit 1; }
	@mkdir -p $(OUT)/check-cuda
	@for lab in $(CUDA_LABS); do for mode in inprocess sandbox; do echo "$$lab $$mode"; done; done \
	  | OMP_NUM_THREADS=2 xargs -P $(CUDA_JOBS) -n 2 sh -c ' \
	      flag=$$( [ "$$1" = sandbox ] && echo --sandbox ); \
	      if $(CUDA_PYTHON) -m rnngrade.cli validate --device cuda --lab $$0 $$flag \
	          > $(OUT)/check-cuda/$$0-$$1.log 2>&1; \
	      then echo "$$0 ($$1): holds"; \
	      else echo "$$0 ($$1): PROBLEMS, see $(OUT)/check-cuda/$$0-$$1.log"; \
	        grep "^PROBLEM\|^  test_" $(OUT)/check-cuda/$$0-$$1.log | head -20; exit 1; fi'

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: setup
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) $(OUT)
