#!/usr/bin/env bash
# Run the whole suite in ONE pytest invocation: tests/ and every notebook (nbval), as configured in
# pyproject.toml. pytest's exit code 5 ("no tests ran") is turned into a loud failure.
set -uo pipefail
cd "$(dirname "$0")/.."

.venv/bin/python -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "error: pytest collected no tests (exit code 5). Treating that as a failure:" >&2
    echo "  check testpaths in pyproject.toml and that tests/ and notebooks/ exist." >&2
    exit 1
fi
exit "$rc"
