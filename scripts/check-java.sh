#!/usr/bin/env bash
# PySpark 4 needs Java 17 or newer. If java is missing (or too old) and we are root on a Debian-like
# machine, install Debian's openjdk-17-jre-headless; otherwise stop with a message saying what to do.
# Checks the java PySpark will use: $JAVA_HOME/bin/java when JAVA_HOME is set, else java on PATH.
set -euo pipefail

need=17

java_bin() {
    if [ -n "${JAVA_HOME:-}" ]; then
        echo "$JAVA_HOME/bin/java"
    else
        command -v java 2>/dev/null || true
    fi
}

# "17.0.15" -> 17, "1.8.0_392" -> 8, "21-ea" -> 21
java_major() {
    local v
    v=$("$1" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
    case "$v" in
        1.*) v=${v#1.} ;;
    esac
    v=${v%%[!0-9]*}
    echo "${v:-0}"
}

can_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

install_jre() {
    echo "java: installing Debian's openjdk-17-jre-headless (PySpark 4 needs Java $need+)..."
    # Slim Debian images delete man directories; the JRE's postinst links a man page there.
    mkdir -p /usr/share/man/man1
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless
    hash -r
}

explain() {
    cat >&2 <<MSG
error: $1
  PySpark 4 (used by the course's experiments and tests) needs Java $need or newer.
  Debian/Ubuntu:  sudo apt-get install openjdk-17-jre-headless
  Elsewhere: install any Java $need+ runtime and put it on PATH (or set JAVA_HOME), then re-run make.
MSG
    exit 1
}

if [ -n "${JAVA_HOME:-}" ] && [ ! -x "$JAVA_HOME/bin/java" ]; then
    explain "JAVA_HOME=$JAVA_HOME has no bin/java."
fi

bin=$(java_bin)
if [ -z "$bin" ]; then
    can_install || explain "java not found, and this user cannot install it (needs root and apt-get)."
    install_jre
    bin=$(java_bin)
    [ -n "$bin" ] || explain "java still not found on PATH after installing openjdk-17-jre-headless."
fi

major=$(java_major "$bin")
if [ "$major" -lt "$need" ]; then
    if [ -z "${JAVA_HOME:-}" ] && can_install; then
        install_jre
        bin=$(java_bin)
        major=$(java_major "$bin")
    fi
    [ "$major" -ge "$need" ] || explain "$bin is Java $major. Select Java $need+ (update-alternatives --config java, or JAVA_HOME)."
fi

echo "java: $bin (Java $major)"
