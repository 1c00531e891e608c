#!/usr/bin/env bash
# The Korean edition (notebooks/ko/, `make lab LAB_LANG=ko`) draws its figures' titles, axis labels and
# legends in Hangul, which needs a font with Hangul glyphs (the course adds it to matplotlib as a
# fallback after its usual font: kafkasim.viz.style.use_hangul_fallback). If fontconfig lists none
# (`fc-list :lang=ko`) and we are root on a Debian-like machine, install Debian's fonts-nanum;
# otherwise say how to install one and carry on: without it the figures show empty boxes for Hangul.
# Never fails the set-up.
set -uo pipefail

hangul_font() {
    command -v fc-list >/dev/null 2>&1 || return 0
    fc-list :lang=ko family 2>/dev/null | head -n 1
}

can_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1
}

explain() {
    cat >&2 <<MSG
fonts: $1
  The Korean edition's figures need a font with Hangul glyphs; without one their Korean
  labels show as empty boxes.
  Debian/Ubuntu:  sudo apt-get install fonts-nanum      (or fonts-noto-cjk)
  macOS and Windows have one already (Apple SD Gothic Neo, Malgun Gothic).
MSG
}

font=$(hangul_font)
if [ -z "$font" ]; then
    if can_install; then
        echo "fonts: installing Debian's fonts-nanum (Hangul for the Korean edition's figures)..."
        export DEBIAN_FRONTEND=noninteractive
        if apt-get update -qq && apt-get install -y -qq --no-install-recommends fonts-nanum; then
            font=$(hangul_font)
        fi
        [ -n "$font" ] || explain "fonts-nanum did not install a Hangul font fontconfig can see (continuing)."
    elif command -v fc-list >/dev/null 2>&1; then
        explain "no Hangul font found (fc-list :lang=ko is empty), and this user cannot install one (continuing)."
    else
        echo "fonts: fontconfig (fc-list) not found; not checking for a Hangul font."
        exit 0
    fi
fi

[ -n "$font" ] && echo "fonts: Hangul font ${font%%,*}"
exit 0
