#!/usr/bin/env bash
# Start JupyterLab from the course's venv on 127.0.0.1, opening the first notebook.
# Security stays at Jupyter's default: a random token is required (it is in the printed URL).
# Extra arguments go to `jupyter lab` (e.g. --port=8899).
set -euo pipefail
cd "$(dirname "$0")/.."

start=notebooks/00-start-here.ipynb
args=(
    --ip=127.0.0.1
    --no-browser
    # Serve the whole course folder (notebooks can show ../assets/ images), and make the printed
    # URL open the first notebook.
    --ServerApp.root_dir=.
    "--LabApp.default_url=/lab/tree/$start"
)
if [ "$(id -u)" = 0 ]; then
    # Jupyter refuses to start as root without this flag. It changes nothing about authentication.
    args+=(--allow-root)
fi
exec .venv/bin/jupyter lab "${args[@]}" "$@" "$start"
