# Hierarchy Inspector: every target sets itself up on a fresh machine.
#   make demo   run the main job on the built-in demo scene
#   make test   the whole test suite (core + add-on in real Blender via bpy from PyPI; real glTF
#               clients under node: three.js and the Khronos glTF validator, pinned in tests/js)
#   make test-nobpy  the Blender-free layers' tests (core, model) in a venv without bpy
#   make bench  timing tables
#   make lint   ruff (incl. Blender modules only in addon/scene, ui, cli), the layers' import
#               direction (tools/check_layers.py), a type check of addon/ against fake-bpy-module
#   make package       build/dist/<id>-<version>-<platform>.zip, one per platform with its ufbx wheels
#                      (downloaded from PyPI by pip into wheels/, hashes checked), with Blender's
#                      extension tooling (from the bpy wheel): build --split-platforms, validated
#   make test-blender  install this machine's zip into a real Blender >= 4.2 ($$BLENDER, PATH, or Debian's
#                      in a chroot it provisions) and run $(BLENDER_TEST_PATHS) inside it
#   make test-ui       the same zip in a real Blender window (Xvfb, software OpenGL): the sidebar panel
#                      and the overlay checked from screenshots (tests/window; pictures in build/ui/)
#   make docs-images   make test-ui, then the pictures in docs/ cut from its screenshots
#                      (tools/docs_images.py), so the user guide never shows a stale panel
#   make cli-reference docs/command_line.md's reference, generated from the argument parser

PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
TYPES  := .venv-types
TYPES_STAMP := $(TYPES)/.installed-stamp

# test-blender: which tests run inside Blender, and where its isolated user files go.
BLENDER_TEST_PATHS ?= tests/core tests/model tests/scene tests/ui tests/cli
BLENDER_SH   := tools/blender.sh
EXT_ID       := $(shell sed -n 's/^id *= *"\(.*\)"/\1/p' blender_manifest.toml)
BLENDER_USER := $(CURDIR)/build/blender-user

.PHONY: all demo test test-nobpy bench lint typecheck clean package test-blender test-ui test-versions docs-images cli-reference

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

# Real glTF clients for the tests, under node: three.js and the Khronos glTF validator, at the
# versions pinned in tests/js/package-lock.json (npm ci: exactly those, nothing resolved anew).
JS       := tests/js
JS_STAMP := $(JS)/node_modules/.installed-stamp
$(JS_STAMP): $(JS)/package.json $(JS)/package-lock.json
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  echo "error: node and npm were not found. The tests run real glTF clients (three.js, the Khronos glTF validator)"; \
	  echo "       under node: install Node.js >= 18 with npm (Debian/Ubuntu: apt-get install nodejs npm)."; exit 1; }
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' || { \
	  echo "error: node $$(node --version) is too old; the glTF clients in $(JS) need Node.js >= 18."; exit 1; }
	cd $(JS) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

demo: $(STAMP)
	$(PY) -m hierarchy_inspector demo --out build/demo

test: $(STAMP) $(JS_STAMP)
	$(PY) -m pytest

# The Blender-free layers' tests in a venv without bpy (pip install -e .[test] only):
# proves core/ and addon/model/ need nothing of Blender.
NOBPY := .venv-nobpy
$(NOBPY)/.installed-stamp: pyproject.toml
	$(PYTHON) -m venv $(NOBPY)
	$(NOBPY)/bin/python -m pip install --quiet --upgrade pip
	$(NOBPY)/bin/python -m pip install --quiet -e ".[test]"
	@touch $@

test-nobpy: $(NOBPY)/.installed-stamp
	@! $(NOBPY)/bin/python -c "import bpy" 2>/dev/null || { echo "error: $(NOBPY) has bpy; it must not"; exit 1; }
	$(NOBPY)/bin/python -m pytest tests/core tests/model tests/test_layers.py

# The add-on and command-line tests against the other Blender versions the manifest claims
# (bpy from PyPI, Python 3.11, one venv each): the oldest claimed LTS and
# the current LTS. The main venv covers 5.0, make test-blender the 4.3 binary.
BPY_42 := 4.2.23
BPY_45 := 4.5.15
VERSION_TEST_PATHS ?= tests/scene tests/ui tests/cli
.venv-bpy%/.installed-stamp: pyproject.toml
	$(PYTHON) -m venv .venv-bpy$*
	.venv-bpy$*/bin/python -m pip install --quiet --upgrade pip
	.venv-bpy$*/bin/python -m pip install --quiet "bpy==$(BPY_$*)" -e ".[test]"
	@touch $@

# The two versions run side by side (a process each; logs in build/, printed at the end).
# One pytest process per test folder (tools/per_folder.sh: a folder whose process dies by a
# signal runs once more, and says so; a test that fails is never rerun).
test-versions: .venv-bpy42/.installed-stamp .venv-bpy45/.installed-stamp
	@mkdir -p build
	@for v in 42 45; do \
	  ( echo "== bpy $$(.venv-bpy$$v/bin/python -c 'import bpy; print(bpy.app.version_string)') =="; \
	    tools/per_folder.sh "test-versions: bpy $$v" .venv-bpy$$v/bin/python -m pytest -p no:cacheprovider \
	      --- $(VERSION_TEST_PATHS) ) > build/test-versions-$$v.log 2>&1 & pids="$$pids $$!"; \
	done; \
	failed=0; for pid in $$pids; do wait $$pid || failed=1; done; \
	cat build/test-versions-42.log build/test-versions-45.log; exit $$failed

bench: $(STAMP)
	$(PY) benchmarks/bench_hierarchy.py
	$(PY) benchmarks/bench_dynamics.py
	$(PY) benchmarks/bench_rotations.py
	$(PY) benchmarks/bench_addon.py
	$(PY) benchmarks/bench_frames.py
	$(PY) benchmarks/bench_audit.py
	$(PY) benchmarks/bench_export.py
	$(PY) benchmarks/bench_panel.py

lint: $(STAMP) typecheck
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) tools/check_layers.py

# fake-bpy-module shadows the real bpy, so it lives in a venv of its own.
$(TYPES_STAMP): pyproject.toml
	$(PYTHON) -m venv $(TYPES)
	$(TYPES)/bin/python -m pip install --quiet --upgrade pip
	$(TYPES)/bin/python -m pip install --quiet "fake-bpy-module-4.2" mypy "numpy<2"
	@touch $(TYPES_STAMP)

typecheck: $(TYPES_STAMP)
	@rm -rf build/typecheck && mkdir -p build/typecheck && ln -s "$(CURDIR)" build/typecheck/hierarchy_inspector
	cd build/typecheck && MYPYPATH=. ../../$(TYPES)/bin/mypy --config-file ../../pyproject.toml -p hierarchy_inspector.addon

package: $(STAMP)
	$(PY) tools/package_extension.py --output-dir build/dist

# Blender first (it may need provisioning), then the test packages for Blender's Python, the
# zips (the last line names this machine's), a fresh user directory, Blender's own install
# command, and pytest inside Blender, one Blender per test folder (tools/per_folder.sh).
test-blender: $(STAMP)
	$(BLENDER_SH) --ensure
	$(PY) tools/blender_pylib.py --dest build/blender-pylib
	@mkdir -p build
	$(PY) tools/package_extension.py --output-dir build/dist > build/package.log
	@cat build/package.log
	rm -rf $(BLENDER_USER)
	BLENDER_USER_RESOURCES=$(BLENDER_USER) $(BLENDER_SH) --factory-startup --offline-mode \
	  --command extension install-file -r user_default --enable "$$(tail -n 1 build/package.log)"
	BLENDER_USER_RESOURCES=$(BLENDER_USER) HIERARCHY_INSPECTOR_MODULE=bl_ext.user_default.$(EXT_ID) \
	  tools/per_folder.sh test-blender $(BLENDER_SH) --background --factory-startup --offline-mode \
	  --python-exit-code 1 --python tests/blender_runner.py -- --- $(BLENDER_TEST_PATHS)

# Blender first (it may need provisioning); the tests build the zip, install it into build/blender-user-ui,
# run Blender with a window under Xvfb and check its screenshots. pyproject's addopts ignore tests/window
# (plain pytest stays binary-free), hence the override here.
test-ui: $(STAMP)
	$(BLENDER_SH) --ensure
	$(PY) -m pytest -p no:cacheprovider -o addopts="--import-mode=importlib -q" tests/window

# The user guide's pictures from make test-ui's run (default 291 px sidebar, Blender 4.3.2):
# cut and joined by tools/docs_images.py, written into docs/ (commit them).
docs-images: test-ui
	$(PY) tools/docs_images.py

# docs/command_line.md's reference section, generated from the argument parser
# (tests/test_cli_reference.py fails when it is stale).
cli-reference: $(STAMP)
	$(PY) tools/cli_reference.py

# Refuses while anything is mounted under build/ (a chroot's /dev or /repo would be deleted through it).
clean:
	@! awk -v r="$(CURDIR)/build/" 'index($$5, r) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo 2>/dev/null || { \
	  echo "error: file systems are mounted under build/ (findmnt | grep '$(CURDIR)/build'); unmount them before make clean"; exit 1; }
	rm -rf $(VENV) $(TYPES) $(NOBPY) .venv-bpy42 .venv-bpy45 build dist wheels $(JS)/node_modules .pytest_cache .hypothesis .ruff_cache .mypy_cache
