#!/usr/bin/env bash
# Find the Python 3.11 the course is built and tested on, and print its path on stdout.
# Honours PYTHON=/path/to/python. Any other version gets a clear message (exit 1): the pins in
# requirements.txt are tested on 3.11 only.
set -euo pipefail

want="3.11"
found=""
seen=""
if [ -n "${PYTHON:-}" ]; then
    # An explicit PYTHON is used or refused, never silently replaced.
    ver=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
        || { echo "error: PYTHON=$PYTHON does not run." >&2; exit 1; }
    if [ "$ver" != "$want" ]; then
        echo "error: PYTHON=$PYTHON is Python $ver; kafkasim courseware needs Python $want." >&2
        exit 1
    fi
    found=$(command -v "$PYTHON")
else
    for cand in python3.11 python3; do
        path=$(command -v "$cand" 2>/dev/null) || continue
        ver=$("$path" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
        if [ "$ver" = "$want" ]; then
            found="$path"
            break
        fi
        seen="$seen $cand=$ver"
    done
fi

if [ -z "$found" ]; then
    cat >&2 <<MSG
error: kafkasim courseware needs Python $want (found:${seen:- no python3 on PATH}).
  Debian 12 / Ubuntu: apt-get install python3.11 python3.11-venv
  Or point make at one:  make test PYTHON=/path/to/python3.11
MSG
    exit 1
fi

# Debian splits venv/ensurepip into a separate package.
if ! "$found" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$found" = /usr/bin/python3.11 -o "$found" = /usr/bin/python3 ]; then
        echo "python: $found cannot create virtual environments; installing python3.11-venv..." >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq --no-install-recommends python3.11-venv >&2
    else
        echo "error: $found cannot create virtual environments (no ensurepip)." >&2
        echo "  Debian/Ubuntu: apt-get install python3.11-venv (as root)" >&2
        exit 1
    fi
fi

echo "$found"
