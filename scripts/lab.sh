#!/usr/bin/env bash
# Start JupyterLab from the course's venv on 127.0.0.1, opening the first notebook.
# Security stays at Jupyter's default: a random token is required (it is in the printed URL).
# Extra arguments go to `jupyter lab` (e.g. --port=8899); a first argument --lang=ko opens the
# Korean edition (notebooks/ko/) with JupyterLab's own Korean interface (its language pack is in
# requirements.txt; `make lab LAB_LANG=ko`, `make lab LANG=ko`, or any ko* LANG, passes it).
# The course language is chosen here, never by the C locale: when LANG/LC_* name a locale this
# system does not have (LANG=ko, or ko_KR.UTF-8 on a Debian without locales-all), the lab and its
# kernels run with C.UTF-8, which every Debian has, so setlocale(LC_ALL, '') never fails.
#
# The lab works on a COPY of the course, in lab/ (git-ignored; KAFKASIM_LAB_DIR chooses another
# place), so running cells, autosave and the learner's own saves never touch the repository's
# notebooks: `git status` stays clean after an evening in the lab, and `git pull` never conflicts
# with a learner's answers. A notebook is copied only when lab/ has none of that name, so the
# learner's work is kept from one session to the next; when the course's version of a notebook is
# newer than the learner's copy, a note says so (delete the copy to get the new version).
# assets/, README.md and requirements.txt (read by notebook 00) are refreshed on every start.
set -euo pipefail
cd "$(dirname "$0")/.."

lang=en
if [[ "${1:-}" == --lang=* ]]; then
    lang=${1#--lang=}
    shift
fi
case "$lang" in
    en) locale=en; start=notebooks/00-start-here.ipynb ;;
    ko) locale=ko_KR; start=notebooks/ko/00-start-here.ipynb ;;
    *) echo "lab: unknown course language '$lang' (choose en or ko)" >&2; exit 2 ;;
esac

# A relative KAFKASIM_LAB_DIR is relative to the repository (where `make lab` runs); from here on
# $lab is absolute, so the settings path JupyterLab is given is right for both kinds.
lab=${KAFKASIM_LAB_DIR:-lab}
case "$lab" in
    /*) ;;
    *) lab=$PWD/$lab ;;
esac

# A locale the system lacks makes every kernel's setlocale(LC_ALL, '') fail (Python's locale
# module, Spark's JVM); `locale` says so on stderr. Then the lab runs with C.UTF-8 instead.
if command -v locale > /dev/null && [ -n "$(locale 2>&1 > /dev/null)" ]; then
    echo "lab: the locale '${LC_ALL:-${LANG:-}}' is not installed here; the lab runs with C.UTF-8" \
         "(the course language is --lang=$lang, not the locale)" >&2
    for var in $(compgen -e | grep '^LC_' || true); do
        unset "$var"
    done
    export LANG=C.UTF-8
fi
# The copy is refreshed in place (assets/ is replaced), so it must be a directory this script made:
# it carries a .kafkasim-lab marker. A directory that exists, is not empty and has no marker is
# refused, never overwritten (a lab copy from before the marker, recognised by its
# .jupyterlab-settings/ and notebooks/00-start-here.ipynb, gets the marker).
marker="$lab/.kafkasim-lab"
if [ -e "$lab" ] && [ ! -e "$marker" ]; then
    if [ ! -d "$lab" ]; then
        echo "lab: $lab exists and is not a directory; set KAFKASIM_LAB_DIR to a new directory" >&2
        exit 2
    elif [ -d "$lab/.jupyterlab-settings" ] && [ -e "$lab/notebooks/00-start-here.ipynb" ]; then
        : # a lab copy made before the marker existed
    elif [ -n "$(ls -A "$lab")" ]; then
        echo "lab: $lab is not empty and was not made by 'make lab' (no .kafkasim-lab file in it);" >&2
        echo "lab: it is left untouched. Set KAFKASIM_LAB_DIR to a new or empty directory." >&2
        exit 2
    fi
fi
mkdir -p "$lab/notebooks/ko"
echo "a course copy made by kafkasim's scripts/lab.sh (make lab); safe to delete" > "$marker"
for nb in notebooks/*.ipynb notebooks/ko/*.ipynb; do
    copy="$lab/$nb"
    if [ ! -e "$copy" ]; then
        cp -p "$nb" "$copy"
    elif [ "$nb" -nt "$copy" ] && ! cmp -s "$nb" "$copy"; then
        echo "lab: the course's $nb is newer than your copy $copy (kept; delete it to get the new one)" >&2
    fi
done
rm -rf "$lab/assets"
cp -rp assets "$lab/assets"
cp -p README.md requirements.txt "$lab/"

# JupyterLab's interface language, in a settings directory of this lab copy (one per language)
settings="$lab/.jupyterlab-settings/$lang"
mkdir -p "$settings/@jupyterlab/translation-extension" "$settings/@jupyterlab/apputils-extension"
printf '{"locale": "%s"}\n' "$locale" \
    > "$settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings"
# No first-run "get notified about official Jupyter news?" prompt over the first notebook (and no
# request to jupyter.org): fetchNews "false" is the prompt's "No". Written once; a learner who
# changes it in Settings keeps the choice.
notification="$settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
if [ ! -e "$notification" ]; then
    printf '{"fetchNews": "false", "checkForUpdates": false}\n' > "$notification"
fi
export JUPYTERLAB_SETTINGS_DIR="$settings"

args=(
    --ip=127.0.0.1
    --no-browser
    # Serve the course copy (notebooks can show ../assets/ images), and make the printed URL open
    # the first notebook.
    --ServerApp.root_dir=.
    "--LabApp.default_url=/lab/tree/$start"
)
if [ "$(id -u)" = 0 ]; then
    # Jupyter refuses to start as root without this flag. It changes nothing about authentication.
    args+=(--allow-root)
fi
echo "lab: serving the course copy in $lab/ (the repository's notebooks/ are not modified)" >&2
repo=$PWD
cd "$lab"
exec "$repo/.venv/bin/jupyter" lab "${args[@]}" "$@" "$start"
