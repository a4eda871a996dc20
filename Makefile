# Two commands: `make run` serves the lab, `make test` checks everything.
# Both set themselves up on a fresh machine with nothing but python3 (>= 3.11) and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint typecheck pytest bench docs conformance clean compiled test-compiled fuzz FORCE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps re-run pip when pyproject.toml changes.
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(BIN)/autograd-lab serve --host $(HOST) --port $(PORT)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check app engine tests bench fuzz setup.py

typecheck: $(VENV)/.installed-test
	$(BIN)/mypy

pytest: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -rs

# Then the same tests against the compiled build, where a C compiler can build it (CI sets
# REQUIRE_COMPILED=1 so that a missing compiler fails instead of skipping).
test: lint typecheck pytest
	@if $(HAVE_CC); then $(MAKE) --no-print-directory test-compiled; \
	elif [ "$(REQUIRE_COMPILED)" = 1 ]; then \
	  echo "test-compiled: no C compiler that builds against Python.h ($(PY_CC))"; exit 1; \
	else echo "test-compiled: skipped: no C compiler (with Python's headers) to build it"; fi

# The README's screenshots (docs/*.png), made here and only here: no test writes them.
docs: $(VENV)/.installed-test
	$(BIN)/python -m tests.browser.screenshots docs
	$(BIN)/python -m tests.browser.present_screenshots docs

# Coverage-guided fuzzing of the parser and the interpreter (fuzz/harness.py) for
# FUZZ_SECONDS, seeded with the conformance programs; not part of `make test`. atheris is
# its own extra: where it cannot be installed (no wheel, no clang), this says so and stops.
FUZZ_SECONDS ?= 300
fuzz: $(VENV)/.installed-test
	@$(BIN)/python -c 'import atheris' 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[fuzz]' \
	  || true
	@if $(BIN)/python -c 'import atheris' 2>/dev/null; then \
	  mkdir -p build/fuzz-corpus build/fuzz-crashes && \
	  $(BIN)/python fuzz/harness.py -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	    -artifact_prefix=build/fuzz-crashes/ build/fuzz-corpus; \
	else echo "fuzz: skipped: atheris cannot be installed here (pip install atheris)"; fi

conformance: $(VENV)/.installed-run
	$(BIN)/python ../shared/conformance/check.py --show 5

# The compiled build is measured beside pure Python where a C compiler can build it.
bench: $(VENV)/.installed-test
	@if $(HAVE_CC); then $(MAKE) --no-print-directory compiled; \
	else echo "bench: no C compiler (with Python's headers): pure Python only"; fi
	$(BIN)/python -m bench

# -- the compiled build ---------------------------------------------------------------
# The hot modules compiled with mypyc (see setup.py), installed out of the source tree in
# build/compiled with their pure siblings; the stamp is newer than every source of it, and
# build/compiled.sources changes when a module is added or removed. Nothing compiled is
# ever beside the sources: `make run` and the tests above run them as they are.
COMPILED := build/compiled
SOURCES  := $(shell find app engine -name '*.py' -o -name '*.c' -o -name '*.h' | LC_ALL=C sort)
# `app` and `engine` from build/compiled, `tests` and `bench` from here; PYTHONSAFEPATH
# keeps the current directory from going first on sys.path.
WITH_COMPILED := PYTHONSAFEPATH=1 PYTHONPATH=$(CURDIR)/$(COMPILED):$(CURDIR)
PY_CC      = $(shell $(BIN)/python -c 'import sysconfig; print(sysconfig.get_config_var("CC") or "cc")')
PY_INCLUDE = $(shell $(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
# True when the compiler Python builds extensions with works here, Python.h included.
HAVE_CC    = echo '\#include <Python.h>' | $(PY_CC) -x c -c -o /dev/null -I$(PY_INCLUDE) - \
             >/dev/null 2>&1

compiled: $(COMPILED)/.stamp

# Built aside and moved in whole, so a failed build leaves no half build. app/web/pages.py
# finds static/ and templates/ beside the app package: links to the sources' own.
# The stamp takes the time the build began: a source edited while mypyc worked is newer.
$(COMPILED)/.stamp: setup.py pyproject.toml $(SOURCES) build/compiled.sources \
                    | $(VENV)/.installed-test
	rm -rf $(COMPILED) $(COMPILED).tmp build/setuptools build/mypyc
	mkdir -p $(COMPILED).tmp && touch $(COMPILED).tmp/.began
	AUTOGRAD_LAB_COMPILE=1 $(BIN)/python -m pip install --quiet --no-deps \
	    --no-build-isolation --target $(COMPILED).tmp .
	ln -s ../../static ../../templates $(COMPILED).tmp/
	mv $(COMPILED).tmp $(COMPILED)
	mv $(COMPILED)/.began $@

build/compiled.sources: FORCE
	@mkdir -p build
	@echo '$(SOURCES)' | cmp -s - $@ || echo '$(SOURCES)' > $@

FORCE:

test-compiled: compiled
	$(WITH_COMPILED) AUTOGRAD_LAB_EXPECT_COMPILED=1 $(BIN)/python -m pytest -q -rs \
	    -m "not browser" --import-mode=append

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis build
