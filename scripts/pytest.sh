#!/usr/bin/env bash
# Run the whole suite in ONE pytest invocation: tests/ and every notebook (nbval), as configured in
# pyproject.toml, spread over the machine's cores by pytest-xdist (--dist loadgroup: the cells of a
# notebook, the browser suite and the Spark tests each stay on one worker; tests/conftest.py and
# notebooks/conftest.py group them). PYTEST_WORKERS sets the number of workers (default: auto, one
# per core; 0 runs everything in this one process). pytest's exit code 5 ("no tests ran") is turned
# into a loud failure.
set -uo pipefail
cd "$(dirname "$0")/.."

# Bytecode is written (__pycache__/, git-ignored): the suite starts many Python processes (the
# xdist workers, 34 notebook kernels for nbval and more for the browser suite, the fault
# schedules' pools, Spark's Python workers, the command-line tests), each importing kafkasim.
# With PYTHONDONTWRITEBYTECODE set, as some images set it, every one of them compiled kafkasim's
# ~140 modules anew: `from kafkasim.course import *` cost 1.66 CPU-s instead of 1.17.
# (PYTHONPYCACHEPREFIX would keep the tree free of __pycache__, but it ignores the bytecode pip
# wrote into site-packages and compiles all of that again.)
unset PYTHONDONTWRITEBYTECODE

workers="${PYTEST_WORKERS:-auto}"
.venv/bin/python -m pytest -n "$workers" --dist loadgroup "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "error: pytest collected no tests (exit code 5). Treating that as a failure:" >&2
    echo "  check testpaths in pyproject.toml and that tests/ and notebooks/ exist." >&2
    exit 1
fi
exit "$rc"
