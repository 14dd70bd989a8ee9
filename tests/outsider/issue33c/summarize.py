"""Compare the graded class with MANIFEST.json: one line per submission (expected points, got points, the row's
status columns, the feedback's problem lines), and a scan of every output for the planted secrets and host paths.

Run: .venv/bin/python tests/outsider/issue33c/summarize.py CLASS_DIR OUT_DIR > summary.json
"""

from __future__ import annotations

import csv
import json
import sys
import unicodedata
from pathlib import Path

SECRETS = ("hunter2-xyzzy-c33", "AKIA-c33-planted", "/work/wt", "hostile33c", "/root", "/tmp/c33")


def main(class_dir: Path, out: Path) -> dict:
    manifest = json.loads((class_dir / "MANIFEST.json").read_text())
    rows = {}
    for lesson in ("06", "02"):
        path = out / f"g{lesson}.csv"
        if path.exists():
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    rows.setdefault(row["student"], []).append(row)
    result = {"submissions": {}, "rows_not_in_manifest": [], "leaks": []}
    for name, spec in manifest.items():
        got = rows.get(name, [])
        result["submissions"][name] = {
            **spec,
            "rows": len(got),
            "points": [r.get("points") for r in got],
            "row": got,
        }
    names = set(manifest)
    result["rows_not_in_manifest"] = [n for n in rows if n not in names]
    result["nfc_equal_names"] = sorted(
        {
            unicodedata.normalize("NFC", n)
            for n in rows
            if list(rows).count(n) > 1 or n != unicodedata.normalize("NFC", n)
        }
    )
    for path in sorted(out.rglob("*")):
        if path.is_file():
            text = path.read_text(errors="replace")
            for secret in SECRETS:
                if secret in text:
                    at = text.index(secret)
                    result["leaks"].append(
                        {"file": str(path), "secret": secret, "context": text[max(0, at - 120) : at + 80]}
                    )
    return result


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2])), indent=1, ensure_ascii=False))
