#!/usr/bin/env bash
# Start JupyterLab from the course's venv on 127.0.0.1, opening the first notebook.
# Security stays at Jupyter's default: a random token is required (it is in the printed URL).
# Extra arguments go to `jupyter lab` (e.g. --port=8899); a first argument --lang=ko opens the
# Korean edition (notebooks/ko/) with JupyterLab's own Korean interface (its language pack is in
# requirements.txt; `make lab LANG=ko`, or any ko* LANG, passes it).
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

lab=${KAFKASIM_LAB_DIR:-lab}
mkdir -p "$lab/notebooks/ko"
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
mkdir -p "$settings/@jupyterlab/translation-extension"
printf '{"locale": "%s"}\n' "$locale" \
    > "$settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings"
export JUPYTERLAB_SETTINGS_DIR="$PWD/$settings"

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
