#!/usr/bin/env bash
# The browser suite (tests/browser/, run by `make test`) and `make bench`'s browser latency drive
# JupyterLab in Chromium through Playwright, using the system's browser, never Playwright's own
# download (`playwright install` needs the network and pins another build). If chromium is missing
# and we are root on a Debian-like machine, install Debian's chromium; otherwise stop with a message
# saying what to do. KAFKASIM_SKIP_BROWSER=1 skips the browser suite and this check.
set -euo pipefail

if [ -n "${KAFKASIM_SKIP_BROWSER:-}" ] && [ "${KAFKASIM_SKIP_BROWSER}" != 0 ]; then
    echo "chromium: not checked (KAFKASIM_SKIP_BROWSER=$KAFKASIM_SKIP_BROWSER: browser tests skipped)"
    exit 0
fi

find_chromium() {
    command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true
}

can_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

explain() {
    cat >&2 <<MSG
error: $1
  The browser suite (tests/browser/) drives JupyterLab in the system's Chromium.
  Debian/Ubuntu:  sudo apt-get install chromium     (Ubuntu: chromium-browser)
  Or skip the browser suite: KAFKASIM_SKIP_BROWSER=1 make test
MSG
    exit 1
}

bin=$(find_chromium)
if [ -z "$bin" ]; then
    can_install || explain "chromium not found, and this user cannot install it (needs root and apt-get)."
    echo "chromium: installing Debian's chromium (for the browser tests)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium
    hash -r
    bin=$(find_chromium)
    [ -n "$bin" ] || explain "chromium still not found on PATH after installing it."
fi

echo "chromium: $bin ($("$bin" --version 2>/dev/null | head -n 1))"
