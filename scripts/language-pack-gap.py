#!/usr/bin/env python3
"""How many of JupyterLab's interface strings the pinned Korean language pack leaves in English.

It reads the translatable strings (trans.__, _n, _p calls) out of the installed JupyterLab's
compiled front end (share/jupyter/lab/static/*.js) and looks each one up in the pack's
jupyterlab.json. With --old STATIC_DIR (the static/ folder of an older JupyterLab wheel, unzipped)
it also says how many of the English ones are new since that version. The extraction is a regular
expression over minified code, so the counts are close, not exact.

    .venv/bin/python scripts/language-pack-gap.py [--old /tmp/jl45/.../static] [--list]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

CALL = re.compile(r'\.(?:__|_p|_n)\(\s*("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')')


def bundle_strings(static: Path) -> set[str]:
    found = set()
    for path in sorted(static.glob("*.js")):
        for match in CALL.finditer(path.read_text(encoding="utf-8")):
            literal = match.group(1)
            if literal[0] == "'":
                literal = '"' + literal[1:-1].replace('"', '\\"').replace("\\'", "'") + '"'
            try:
                found.add(json.loads(literal))
            except ValueError:
                continue
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, help="static/ folder of an older JupyterLab")
    parser.add_argument("--list", action="store_true", help="print the English strings")
    args = parser.parse_args()
    prefix = Path(sys.prefix)
    import jupyterlab_language_pack_ko_KR as pack_module

    pack_file = (Path(pack_module.__file__).parent
                 / "locale/ko_KR/LC_MESSAGES/jupyterlab.json")
    pack = {key for key in json.loads(pack_file.read_text(encoding="utf-8")) if key}
    # a _p(context, text) entry is stored as "context\x04text"
    contextual = {key.split("\x04", 1)[1] for key in pack if "\x04" in key}
    strings = bundle_strings(prefix / "share/jupyter/lab/static")
    english = sorted(s for s in strings if s not in pack and s not in contextual)
    print(f"JupyterLab strings: {len(strings)}; left in English by the pack: {len(english)}")
    if args.old:
        new = set(english) - bundle_strings(args.old)
        print(f"  of which new since {args.old}: {len(new)}")
    if args.list:
        print("\n".join(english))
    return 0


if __name__ == "__main__":
    sys.exit(main())
