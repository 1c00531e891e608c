#!/usr/bin/env bash
# Create .venv with Python 3.11 if it is missing (or broken), install the pinned requirements,
# then the kafkasim package itself (editable, no deps). Safe to re-run: pip skips what is in place.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
python=$(scripts/check-python.sh)

if [ -e "$venv/bin/python" ]; then
    have=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null \
        || echo broken)
    if [ "$have" != "3.11" ]; then
        echo "setup: $venv has Python $have, not 3.11; recreating it"
        rm -rf "$venv"
    fi
fi
if [ ! -x "$venv/bin/python" ]; then
    echo "setup: creating $venv with $python"
    "$python" -m venv "$venv"
fi

pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -r requirements.txt
# setuptools is pinned in requirements.txt, so the editable build needs no isolated download.
"${pip[@]}" install --no-deps --no-build-isolation -e .
"${pip[@]}" check
