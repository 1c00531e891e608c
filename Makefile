# kafkasim courseware
#
#   make lab     set up (first time only) and start JupyterLab on the first notebook (LAB_LANG=ko: Korean)
#   make test    set up, then lint (ruff), pytest on the package and nbval on every notebook
#   make quick   set up, then lint and the unit tests only (no notebooks, browser or Spark)
#   make bench   set up, then run benchmarks/bench_*.py   (make bench BENCH_ARGS=--quick)
#   make editions  learner and instructor copies of the course under build/editions/
#   make book    the static, offline HTML edition (English and Korean) under build/book/
#
# Set-up = Java 17+ check (installs openjdk-17-jre-headless when root), Hangul font check for the
# Korean edition's figures (installs fonts-nanum when root; never fails), .venv with Python 3.11,
# pinned requirements.txt, then kafkasim itself (editable). It re-runs only when requirements.txt,
# pyproject.toml or the set-up scripts change. `make test` and `make bench` also check for Chromium
# (the browser suite; installs Debian's chromium when root). CI runs .ci/run, which runs `make test`.
# Both test targets spread the tests over the cores (pytest-xdist, scripts/pytest.sh); PYTEST_WORKERS
# sets the number of workers (default auto: one per core; 0: one process).

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
STAMP := $(VENV)/.installed

# Extra arguments, e.g.  make test PYTEST_ARGS="-k spark -x"   make lab LAB_ARGS=--port=8899
PYTEST_ARGS ?=
LAB_ARGS ?=
BENCH_ARGS ?=

.PHONY: help setup java fonts chromium lab test quick lint bench editions book clean

help:
	@sed -n '3,9p' Makefile | sed 's/^# *//'

java:
	@scripts/check-java.sh

fonts:
	@scripts/check-fonts.sh

chromium:
	@scripts/check-chromium.sh

$(STAMP): requirements.txt pyproject.toml scripts/setup-venv.sh scripts/check-python.sh
	scripts/setup-venv.sh
	@touch $@

setup: java fonts $(STAMP)

# make lab LAB_LANG=ko: the Korean edition. The course language is its own variable, not the C
# locale; `make lab LANG=ko` and a ko* LANG in the environment choose it too, and scripts/lab.sh
# runs the lab with C.UTF-8 when LANG names a locale the system lacks (LANG=ko is none).
LAB_LANG ?= $(if $(filter ko ko_%,$(LANG)),ko,en)

lab: setup
	scripts/lab.sh --lang=$(LAB_LANG) $(LAB_ARGS)

lint: setup
	$(VENV)/bin/ruff check .

test: lint chromium
	scripts/pytest.sh $(PYTEST_ARGS)

# The unit tests in parallel, without the notebooks (nbval), the browser suite and the Spark tests.
quick: lint
	scripts/pytest.sh tests --ignore=tests/browser -m "not spark" $(PYTEST_ARGS)

bench: setup chromium
	$(VENV)/bin/python -m benchmarks.run $(BENCH_ARGS)

editions: setup
	$(VENV)/bin/python scripts/editions.py --out build/editions --check

book: setup
	$(VENV)/bin/python scripts/book.py --out build/book

# Removes the venv and ignored build/test leftovers; never touches tracked files.
clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis
