# Hierarchy Inspector: every target sets itself up on a fresh machine.
#   make demo   run the main job on the built-in demo scene
#   make test   the whole test suite (core + add-on in real Blender via bpy from PyPI)
#   make bench  timing tables
#   make lint   ruff, and a type check of addon/ against fake-bpy-module (own venv)

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
TYPES  := .venv-types
TYPES_STAMP := $(TYPES)/.installed-stamp

.PHONY: all demo test bench lint typecheck clean

all: test

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { \
	  echo "error: '$(PYTHON)' was not found. Hierarchy Inspector needs Python 3.11 (bpy 5.0.1 from PyPI is built for 3.11 only)."; \
	  echo "       Install Python 3.11, or point to it: make PYTHON=/path/to/python3.11 $(MAKECMDGOALS)"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' || { \
	  echo "error: '$(PYTHON)' is Python $$($(PYTHON) -c 'import sys; print(*sys.version_info[:2], sep=".")'), not 3.11 (bpy 5.0.1 needs 3.11)."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "bpy==5.0.1" -e ".[test,lint]"
	@touch $(STAMP)

demo: $(STAMP)
	$(PY) -m hierarchy_inspector demo --out build/demo

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) benchmarks/bench_hierarchy.py

lint: $(STAMP) typecheck
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# fake-bpy-module shadows the real bpy, so it lives in a venv of its own.
$(TYPES_STAMP): pyproject.toml
	$(PYTHON) -m venv $(TYPES)
	$(TYPES)/bin/python -m pip install --quiet --upgrade pip
	$(TYPES)/bin/python -m pip install --quiet "fake-bpy-module-4.2" mypy "numpy<2"
	@touch $(TYPES_STAMP)

typecheck: $(TYPES_STAMP)
	@rm -rf build/typecheck && mkdir -p build/typecheck && ln -s "$(CURDIR)" build/typecheck/hierarchy_inspector
	cd build/typecheck && MYPYPATH=. ../../$(TYPES)/bin/mypy --config-file ../../pyproject.toml -p hierarchy_inspector.addon

clean:
	rm -rf $(VENV) $(TYPES) build dist .pytest_cache .hypothesis .ruff_cache .mypy_cache
